/**
 * How the rolling audit (reconcile-schedules.ts) divides every job's schedule group: into slices by the first
 * character of a schedule's name, so that together they list every schedule in the group, whatever its name.
 *
 * Scheduler's names are `[0-9a-zA-Z-_.]+`: 65 possible first characters, 65 slices. The registry names a key's
 * schedule `bb.…` (bb its audit bucket in two lowercase hex digits, schedule-registry.ts), so its schedules are all in
 * the 16 slices of the hex digits, a sixteenth of them each, and the slice of digit d is compared with the registry
 * rows of the 16 buckets `d0` to `df`. The other 49 slices hold only what the registry never wrote (a schedule made
 * by hand, `hand-made-by-ops`): one ListSchedules call each, usually empty, and whatever it lists is an orphan.
 *
 * Each reconciler run audits the next `slicesPerRun` slices of EVERY job, from one cursor that all jobs share, so a
 * full cycle is ceil(65 / slicesPerRun) runs whatever the number of jobs: 17 runs (85 minutes at a 5-minute period)
 * at the default 4. The walk spreads the 16 heavy slices among the light ones (one hex digit, then three others), so
 * that no run of at most 4 slices lists more than one sixteenth of a job's schedules.
 */
import { AUDIT_BUCKETS } from './schedule-registry';
import { JobSettingsError } from './setting-basics';

const HEX_DIGITS = '0123456789abcdef';
/** The first characters of a name that no registry schedule has, in code point order. */
const OTHER_FIRST_CHARACTERS = ['-', '.', ...'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '_', ...'ghijklmnopqrstuvwxyz'] as const;

/** The slices (a name's first character each) in the order the audit walks them: one hex digit, three others. */
export const AUDIT_SLICES: readonly string[] = (() => {
  const walk: string[] = [];
  const others = [...OTHER_FIRST_CHARACTERS];
  for (const digit of HEX_DIGITS) walk.push(digit, ...others.splice(0, 3));
  return [...walk, ...others];
})();

/** Slices audited per run by default: a cycle of ceil(65 / 4) = 17 runs. */
export const DEFAULT_AUDIT_SLICES_PER_RUN = 4;

/** The audit buckets whose schedules a slice lists: `d0` to `df` for a hex digit d, none for any other character. */
export function bucketsOfSlice(slice: string): readonly number[] {
  const digit = HEX_DIGITS.indexOf(slice);
  if (slice.length !== 1 || digit < 0) return [];
  const perDigit = AUDIT_BUCKETS / HEX_DIGITS.length;
  return Array.from({ length: perDigit }, (_, i) => digit * perDigit + i);
}

/** Where the audit stands: the index in AUDIT_SLICES of the next slice, and how many full cycles it has completed. */
export interface AuditPosition {
  readonly slice: number;
  readonly cycle: number;
}

/** The next `count` slices from `from` (wrapping, and counting a cycle when it does), and the position after them. */
export function auditWindow(
  from: AuditPosition | undefined,
  count: number,
): { readonly slices: readonly string[]; readonly next: AuditPosition } {
  const total = AUDIT_SLICES.length;
  let slice =
    from !== undefined && Number.isInteger(from.slice) && from.slice >= 0 && from.slice < total ? from.slice : 0;
  let cycle = from !== undefined && Number.isInteger(from.cycle) && from.cycle >= 0 ? from.cycle : 0;
  const slices: string[] = [];
  for (let i = 0; i < Math.min(count, total); i++) {
    slices.push(AUDIT_SLICES[slice]);
    slice++;
    if (slice === total) {
      slice = 0;
      cycle++;
    }
  }
  return { slices, next: { slice, cycle } };
}

/** The runs of a full cycle at `slicesPerRun`, the same for any number of jobs. */
export const runsPerCycle = (slicesPerRun: number): number => Math.ceil(AUDIT_SLICES.length / slicesPerRun);

/**
 * The runs after a drift by which it is repaired, at most (with no failed request). A slice is listed every
 * runsPerCycle runs at most (65 slices at slicesPerRun a run), so one of the runsPerCycle runs after the drift lists
 * it; the one more covers an orphan made less than ORPHAN_MIN_AGE_MS (60 s) before its slice's listing, which is left
 * to the next.
 */
export const repairBoundRuns = (slicesPerRun: number): number => runsPerCycle(slicesPerRun) + 1;

/** slicesPerRun from the stack (SCHEDULE_AUDIT_SLICES_PER_RUN), 1 to 65; undefined when not set (the default, 4). */
export function parseAuditSlicesPerRun(value: string | undefined, source: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const k = Number(value);
  if (!/^\d+$/.test(value) || k < 1 || k > AUDIT_SLICES.length)
    throw new JobSettingsError([`${source} must be a whole number from 1 to ${AUDIT_SLICES.length}, got ${value}`]);
  return k;
}
