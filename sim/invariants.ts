/**
 * The six invariants, checked on the state a simulated run leaves behind and on what the simulation observed at
 * the service side while it ran. Each violation names its invariant, so a failing run says which guarantee broke.
 */

import { stuckAfterSeconds } from '../functions/protocol/worker-limits';
import type { WorldOutcome } from './outcome';
import { finishBoundMs, QUEUE_URL, REPORT_KEY, T0, WORKER_ID } from './world';

export type InvariantId = 1 | 2 | 3 | 4 | 5 | 6;

export const INVARIANTS: Readonly<Record<InvariantId, string>> = {
  1: 'at most one report object per occurrence, never overwritten',
  2: 'exactly one notification per SUCCEEDED occurrence, none for a FAILED one',
  3: 'no write by a worker that lost its lease; no overlapping job side effects within the skew bound',
  4: 'every triggered occurrence ends SUCCEEDED or FAILED by its deadline plus the bound',
  5: 'the row tells the truth: SUCCEEDED ⇒ the report exists at reportKey; FAILED ⇒ lastError, and no report committed before it failed; after every write its status index key matches its state (OPEN#k in flight and while a success is unannounced, none once announced, its own status key for FAILED, SKIPPED, CANCELLED), and it names the worker whose queue carries it and records the route (queue URL and stuck threshold), where the reconciler re-sends it',
  6: 'the job never runs on a claim made after its report was committed',
};

export interface Violation {
  readonly invariant: InvariantId;
  readonly message: string;
}

export interface Checked {
  readonly violations: Violation[];
  /** False when a freeze plus clock skew exceeded the margin, so overlap was measured but not required. */
  readonly overlapChecked: boolean;
  /** Pairs of workers whose side-effect intervals overlapped (a violation only when overlapChecked). */
  readonly overlaps: string[];
  /**
   * Leases other than the committer's that touched the job's upstream after the report was committed, all claimed
   * before the commit (a later claim is invariant 6): they had looked, or had no need to look, before it existed.
   */
  readonly ranAfterCommit: string[];
}

export function checkInvariants(o: WorldOutcome): Checked {
  const violations: Violation[] = [];
  const fail = (invariant: InvariantId, message: string) => violations.push({ invariant, message });
  const row = o.row;

  // 1. One report object, written once.
  const reportKeys = [...o.objects.keys()].filter((k) => k.startsWith(REPORT_KEY.replace(/\.txt$/, '')));
  if (reportKeys.length > 1) fail(1, `${reportKeys.length} report objects: ${reportKeys.join(', ')}`);
  for (const w of o.overwrites) fail(1, `${w.who} ${w.what} at +${(w.t / 1000).toFixed(3)} s`);

  // 2. Announced once, after deduplication by the FIFO topic (modelled: same id within 5 minutes is dropped).
  if (row?.status === 'SUCCEEDED' && o.delivered !== 1)
    fail(2, `SUCCEEDED but ${o.delivered} notifications reached subscribers (${o.published} published)`);
  if (row?.status === 'FAILED' && o.published > 0) fail(2, `FAILED but ${o.published} notification(s) published`);

  // 3. Fenced writes, and no two workers' side effects at overlapping times.
  for (const w of o.staleWrites)
    fail(3, `${w.who}'s ${w.what} changed a row it did not hold (${w.rowBefore}) at +${(w.t / 1000).toFixed(3)} s`);
  const overlaps = overlappingSideEffects(o);
  const overlapChecked = isOverlapChecked(o);
  if (overlapChecked) for (const overlap of overlaps) fail(3, overlap);

  // 4. Ends, in time. A row whose message went to the job DLQ (or was never sent) is the reconciler's, which runs in
  // every world as deployed; the bound includes its repair (world.ts finishBoundMs). A trigger that failed before it
  // recorded the row leaves nothing to repair: the bounds keep the plan out of that (plan.ts), and it is reported.
  if (row === undefined) {
    fail(4, `no occurrence row (trigger events dropped: ${o.triggerEventsDropped})`);
  } else if (row.status !== 'SUCCEEDED' && row.status !== 'FAILED') {
    fail(
      4,
      `stuck ${row.status} at the end of the run (+${((o.horizon - Date.parse(String(row.scheduledTime))) / 3600_000).toFixed(1)} h); ` +
        `messages in the DLQ: ${o.messagesInDlq}, trigger events dropped: ${o.triggerEventsDropped}`,
    );
  } else if (o.finishedAt !== undefined && o.finishedAt > o.deadlineAt + finishBoundMs(o.limits)) {
    fail(4, `finished ${((o.finishedAt - o.deadlineAt) / 1000).toFixed(0)} s after its deadline`);
  }

  // 5. The row matches the world.
  if (row?.status === 'SUCCEEDED' && (row.reportKey === undefined || !o.objects.has(String(row.reportKey)))) {
    fail(5, `SUCCEEDED with reportKey ${String(row.reportKey)}, but no object there`);
  }
  if (row?.status === 'FAILED' && !row.lastError) fail(5, 'FAILED without lastError');
  // The reconciler re-enqueues a row on the queue of the worker it names: a write that lost it strands the row.
  if (row !== undefined && row.worker !== WORKER_ID)
    fail(5, `the row names worker ${String(row.worker)}, not ${WORKER_ID} whose queue carried it`);
  // The reconciler re-sends to the route the row records (no function knows every worker's): a row without it, or
  // with another, would be re-sent nowhere or elsewhere.
  if (row !== undefined && (row.queueUrl !== QUEUE_URL || row.stuckAfterSeconds !== stuckAfterSeconds(o.limits)))
    fail(
      5,
      `the row records the route ${String(row.queueUrl)} / ${String(row.stuckAfterSeconds)} s, not its worker's ${QUEUE_URL} / ${stuckAfterSeconds(o.limits)} s`,
    );
  for (const mismatch of o.indexKeyMismatches) fail(5, mismatch);
  // A report that lands after the row failed (a put still in flight when its attempt gave up) is counted in the
  // summary; one committed before the row was marked FAILED means the row denies a report that exists.
  if (
    row?.status === 'FAILED' &&
    o.firstCommitAt !== undefined &&
    o.finishedAt !== undefined &&
    o.firstCommitAt < o.finishedAt
  ) {
    fail(
      5,
      `FAILED at +${((o.finishedAt - T0) / 1000).toFixed(3)} s although its report was committed at +${((o.firstCommitAt - T0) / 1000).toFixed(3)} s`,
    );
  }

  // 6. A claim made after the commit finds the report (it is never a first claim, so it looks) and does not run the
  // job. One made before it cannot know of it, and its run is counted, not flagged (ranAfterCommit).
  for (const lease of leasesClaimedAfterCommit(o)) {
    const touch = o.sideEffects.find((e) => e.leaseId === lease.leaseId);
    if (touch !== undefined)
      fail(
        6,
        `${lease.leaseId} (claimed at +${((lease.from - T0) / 1000).toFixed(3)} s) ran the job at +${((touch.at - T0) / 1000).toFixed(3)} s, ` +
          `although the report was committed at +${(((o.firstCommitAt ?? 0) - T0) / 1000).toFixed(3)} s`,
      );
  }

  return { violations, overlapChecked, overlaps, ranAfterCommit: ranAfterCommit(o) };
}

/** Claims applied at the table after the first commit (true time, as the service saw them). */
function leasesClaimedAfterCommit(o: WorldOutcome): { leaseId: string; from: number }[] {
  const committedAt = o.firstCommitAt;
  if (committedAt === undefined) return [];
  return [...o.claimsApplied].filter(([, at]) => at > committedAt).map(([leaseId, from]) => ({ leaseId, from }));
}

function ranAfterCommit(o: WorldOutcome): string[] {
  const committedAt = o.firstCommitAt;
  if (committedAt === undefined) return [];
  const committer = o.objects.get(REPORT_KEY)?.metadata?.['lease-id'];
  const late = o.sideEffects.filter((e) => e.at > committedAt && e.leaseId !== committer).map((e) => e.leaseId);
  return [...new Set(late)];
}

/** Overlap is required to be absent only when the freezes plus the clock skew stayed within the safety margin. */
export const isOverlapChecked = (o: WorldOutcome): boolean =>
  o.maxFreezeMs + o.skewSpreadMs <= o.settings.leaseSafetyMarginSeconds * 1000;

export interface SideEffectSpan {
  readonly from: number;
  readonly to: number;
  /** The scheduled time of the occurrence the lease ran ('' when the world did not record it). */
  readonly time: string;
}

/** Each lease's job side effects, from the first to the last. */
export function sideEffectSpans(o: WorldOutcome): Map<string, SideEffectSpan> {
  const spans = new Map<string, SideEffectSpan>();
  for (const e of o.sideEffects) {
    const s = spans.get(e.leaseId);
    spans.set(
      e.leaseId,
      s
        ? { ...s, from: Math.min(s.from, e.at), to: Math.max(s.to, e.at) }
        : { from: e.at, to: e.at, time: e.scheduledTime ?? '' },
    );
  }
  return spans;
}

/** Each lease's side effects span [first, last]; two leases whose spans intersect ran the job at the same time. */
function overlappingSideEffects(o: WorldOutcome): string[] {
  const list = [...sideEffectSpans(o).entries()];
  const found: string[] = [];
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const [a, sa] = list[i];
      const [b, sb] = list[j];
      if (sa.from <= sb.to && sb.from <= sa.to) {
        found.push(`side effects of ${a} and ${b} overlap: ${span(sa)} and ${span(sb)}`);
      }
    }
  }
  return found;
}

const span = (s: { from: number; to: number }) =>
  `[+${((s.from - T0) / 1000).toFixed(3)} s, +${((s.to - T0) / 1000).toFixed(3)} s]`;
