/**
 * The simulation of long jobs: the world of sim/world.ts running a two-hour resumable job (virtual time) that streams
 * its report through the report writer across segments of 14 minutes, under the same fault plans, with the
 * invariants a resumable run adds to the six of invariants.ts:
 *
 *   R1  a SUCCEEDED occurrence's report is exactly the job's output: every part once, in order
 *   R2  at most one upload of the report is ever completed, and only for a SUCCEEDED (or succeeding) row
 *   R3  the progress the row shows never goes backwards
 *   R4  a checkpoint only ever extends the parts of the one before it on the same upload (none lost, none replaced)
 *   R5  a segment's end never costs an attempt: no attempt fails by the segment's deadline (JobTimeoutError), even in
 *       a segment whose job does not stop within its yield grace (a late yield, LateYields below); only the run's
 *       own maxRunSeconds end it that way
 *
 *   npm run sim:resumable -- --runs 10000 --seed 1
 */
import fc from 'fast-check';
import type { RunCheckpoint, RunProgress } from '../functions/protocol/checkpoint';
import { YieldRequestedError } from '../functions/protocol/errors';
import type { JobDefinition, StreamedReport } from '../functions/protocol/ports';
import { YIELD_GRACE_MAX_MS } from '../functions/protocol/resumable-run';
import { delay } from '../functions/protocol/transient-retry';
import type { FakeAws } from './fakes/fake-aws';
import { type FakeMultipart, multipartOf, SIM_PART_BYTES } from './fakes/fake-multipart';
import { checkInvariants, type Violation } from './invariants';
import type { SideEffect, WorldOutcome } from './outcome';
import { anyPlan, type FaultPlan } from './plan';
import { type TimeBounds, timeBoundsOf } from './simulate';
import type { ProtocolVariant } from './variants';
import { REPORT_KEY, runWorld, SCHEDULED_TIME, T0 } from './world';

/** Two hours of work in steps of five minutes, each step 1 KiB of report and one side effect on the upstream. */
export const RESUMABLE_RUN_MS = 2 * 60 * 60_000;
const STEP_MS = 5 * 60_000;
const STEPS = RESUMABLE_RUN_MS / STEP_MS;
const LINES_PER_STEP = 4;
const LINE_BYTES = 256;

/** Segments of 14 minutes (Lambda's 15 less the outcome reserve), a lease of 5 minutes extended every 2. */
export const RESUMABLE: ProtocolVariant = {
  name: 'ours, a two-hour resumable job',
  settings: { leaseSeconds: 300, heartbeatSeconds: 120, leaseSafetyMarginSeconds: 30, timeoutSeconds: 840 },
};

/** Line `n` of the report, exactly LINE_BYTES long: what every run of the job writes there. */
export function reportLine(n: number): string {
  const head = `{"scheduledTime":"${SCHEDULED_TIME}","line":${n},"pad":"`;
  return `${head}${'x'.repeat(LINE_BYTES - head.length - 3)}"}\n`;
}

export const expectedReport = (): string =>
  Array.from({ length: STEPS * LINES_PER_STEP }, (_, n) => reportLine(n)).join('');

/**
 * Segments (by their number, 0 for the run's first) whose job is slow to stop when asked to yield, as a job is whose
 * CPU is starved or whose last upload is slow: it goes on for `overrunMs` without looking at its signal, then writes
 * the lines it has ready and checkpoints them, and only then stops. Within the grace (20 s here) those writes are
 * recorded as for any yield. Past it the worker ends the segment without the job, and R5 holds it to no attempt;
 * the invocation then returns and the world freezes its process for good, so the job's late writes never run here
 * (the worker's refusal of them is tested in test/protocol/resumable-late-yield.test.ts).
 */
export interface LateYields {
  readonly segments: readonly number[];
  readonly overrunMs: number;
}

export const NO_LATE_YIELDS: LateYields = { segments: [], overrunMs: 0 };

export const lateYieldsArb: fc.Arbitrary<LateYields> = fc.record({
  segments: fc.uniqueArray(fc.integer({ min: 0, max: 9 }), { maxLength: 4 }),
  overrunMs: fc.oneof(fc.integer({ min: 1_000, max: 19_000 }), fc.integer({ min: 21_000, max: 180_000 })),
});

/** The job's late yields: how many it overran, and how many by more than the grace. */
interface LateYieldCounts {
  overran: number;
  pastGrace: number;
}

/** A timer the job does not let its signal cut short: the slow part of a late yield. */
const unheeded = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The two-hour job: checkpoints after every step, yields when asked (late in `late.segments`), fails while the plan's
 * upstream is down.
 */
export function resumableModelJob(
  plan: FaultPlan,
  now: () => number,
  sideEffects: SideEffect[],
  late: LateYields = NO_LATE_YIELDS,
  counts: LateYieldCounts = { overran: 0, pastGrace: 0 },
): JobDefinition {
  const upstreamDown = (t: number) =>
    plan.outage !== undefined && t >= T0 + plan.outage.fromMs && t < T0 + plan.outage.fromMs + plan.outage.forMs;
  return {
    reportExtension: 'txt',
    resumable: true,
    async run(occurrence, { signal, report, checkpoint, progress, resumeFrom, segment }): Promise<StreamedReport> {
      const leaseId = occurrence.leaseId ?? 'no lease';
      let step = (resumeFrom as { step: number } | undefined)?.step ?? 0;
      const writeStep = async () => {
        for (let i = 0; i < LINES_PER_STEP; i++) await report.write(reportLine(step * LINES_PER_STEP + i));
        step++;
        progress({ done: step, total: STEPS, note: 'steps' });
        await checkpoint({ step });
      };
      while (step < STEPS) {
        signal.throwIfAborted();
        if (upstreamDown(now())) throw new Error('upstream unavailable');
        sideEffects.push({ leaseId, at: now() });
        await writeStep();
        try {
          await delay(STEP_MS, signal);
        } catch (error) {
          if (!(error instanceof YieldRequestedError) || !late.segments.includes(segment)) throw error;
          counts.overran++;
          if (late.overrunMs > YIELD_GRACE_MAX_MS) counts.pastGrace++;
          await unheeded(late.overrunMs);
          // The lines it had ready: no side effect of their own (it looks at its signal before each of those).
          if (step < STEPS) await writeStep();
          throw error;
        }
      }
      return report.end();
    },
  };
}

/** What the resumable world watched at the service side while it ran. */
interface RunWatch {
  readonly progress: number[];
  readonly progressBackwards: string[];
  readonly checkpointProblems: string[];
  /** R5: attempts that failed by a segment's deadline. */
  readonly attemptsLostToSegmentEnd: string[];
  readonly segments: number;
}

/** Watch the row's writes: progress (R3) and each checkpoint against the one before it (R4). */
function watchRow(aws: FakeAws, now: () => number): RunWatch {
  const watch = {
    progress: [] as number[],
    progressBackwards: [] as string[],
    checkpointProblems: [] as string[],
    attemptsLostToSegmentEnd: [] as string[],
    segments: 0,
  };
  const inner = aws.onRowChange;
  aws.onRowChange = (before, after) => {
    inner?.(before, after);
    const at = `+${((now() - T0) / 1000).toFixed(3)} s`;
    const was = before?.progress as RunProgress | undefined;
    const is = after.progress as RunProgress | undefined;
    if (is !== undefined) watch.progress.push(is.done);
    if (was !== undefined && (is === undefined || is.done < was.done))
      watch.progressBackwards.push(`progress went from ${was.done} to ${is?.done ?? '(none)'} at ${at}`);
    const problem = checkpointProblem(
      before?.checkpoint as RunCheckpoint | undefined,
      after.checkpoint as RunCheckpoint | undefined,
    );
    if (problem !== undefined) watch.checkpointProblems.push(`${problem} at ${at}`);
    const lastError = after.lastError === before?.lastError ? undefined : String(after.lastError ?? '');
    if (lastError?.includes('JobTimeoutError') && !lastError.includes('maxRunSeconds'))
      watch.attemptsLostToSegmentEnd.push(`R5: an attempt failed at its segment's end at ${at}: ${lastError}`);
    watch.segments = Math.max(watch.segments, Number(after.segment ?? 0));
  };
  return watch;
}

/** R4: on one upload, a checkpoint's parts start with every part of the one before, unchanged. */
export function checkpointProblem(was: RunCheckpoint | undefined, is: RunCheckpoint | undefined): string | undefined {
  if (was?.upload === undefined) return undefined;
  if (is?.upload === undefined)
    return is === undefined ? 'the checkpoint was removed' : 'a checkpoint dropped its upload';
  if (is.upload.uploadId !== was.upload.uploadId)
    return `a checkpoint moved from upload ${was.upload.uploadId} to ${is.upload.uploadId}`;
  const kept = was.upload.parts.every(
    (p, i) => is.upload?.parts[i]?.partNumber === p.partNumber && is.upload.parts[i].etag === p.etag,
  );
  return kept ? undefined : 'a checkpoint lost or replaced a part of the one before';
}

export interface ResumableChecked {
  readonly outcome: WorldOutcome;
  readonly violations: Violation[];
  readonly resumableViolations: string[];
  readonly segments: number;
  readonly lateYields: LateYieldCounts;
}

/**
 * One plan through the world with the two-hour job, late to yield in `late.segments`, checked by the six invariants
 * and R1-R5.
 */
export async function simulateResumableOne(
  plan: FaultPlan,
  late: LateYields = NO_LATE_YIELDS,
): Promise<ResumableChecked> {
  const sideEffects: SideEffect[] = [];
  const lateYields: LateYieldCounts = { overran: 0, pastGrace: 0 };
  let watch: RunWatch | undefined;
  let multipart: FakeMultipart | undefined;
  let now = (): number => Number.NaN;
  const outcome = await runWorld(plan, {
    variant: RESUMABLE,
    job: resumableModelJob(plan, () => now(), sideEffects, late, lateYields),
    observe: (aws, trueTime) => {
      now = trueTime;
      multipart = multipartOf(aws, SIM_PART_BYTES.min);
      watch = watchRow(aws, trueTime);
    },
  });
  const standard = checkInvariants({ ...outcome, sideEffects });
  const problems: string[] = [
    ...(watch?.progressBackwards ?? []),
    ...(watch?.checkpointProblems ?? []),
    ...(watch?.attemptsLostToSegmentEnd ?? []),
  ];
  const completed = [...(multipart?.uploads.values() ?? [])].filter((u) => u.state === 'completed');
  if (completed.length > 1) problems.push(`R2: ${completed.length} uploads of the report completed`);
  if (completed.length > 0 && outcome.row?.status !== 'SUCCEEDED')
    problems.push(`R2: the report was completed but the row is ${String(outcome.row?.status)}`);
  if (outcome.row?.status === 'SUCCEEDED' && outcome.objects.get(REPORT_KEY)?.body !== expectedReport())
    problems.push(
      `R1: the committed report is not the job's output (${outcome.objects.get(REPORT_KEY)?.body.length ?? 0} bytes)`,
    );
  return {
    outcome,
    violations: standard.violations,
    resumableViolations: problems,
    segments: watch?.segments ?? 0,
    lateYields,
  };
}

export interface ResumableTally {
  runs: number;
  succeeded: number;
  failed: number;
  maxSegments: number;
  /** Runs with more claims than segments + 1: resumed after a failed attempt, a crash or a lost lease. */
  resumedAfterLoss: number;
  /** Yields the job overran (LateYields), and those it overran by more than the grace: the worker ended them. */
  lateYields: number;
  lateYieldsPastGrace: number;
  /** The reconciler (every world runs it): ticks, runs in full, re-enqueues; and the time bounds of the runs. */
  reconcilerTicks: number;
  reconcilerRuns: number;
  reconcilerRequeues: number;
  bounds?: TimeBounds;
}

/** Many seeded plans; stops at the first violation and returns it with its plan. */
export async function simulateResumableMany(runs: number, seed: number) {
  const tally: ResumableTally = {
    runs: 0,
    succeeded: 0,
    failed: 0,
    maxSegments: 0,
    resumedAfterLoss: 0,
    lateYields: 0,
    lateYieldsPastGrace: 0,
    reconcilerTicks: 0,
    reconcilerRuns: 0,
    reconcilerRequeues: 0,
  };
  let failure: { plan: FaultPlan; late: LateYields; problems: string[] } | undefined;
  const property = fc.asyncProperty(anyPlan, lateYieldsArb, async (plan, late) => {
    const checked = await simulateResumableOne(plan, late);
    const problems = [...checked.violations.map((v) => `${v.invariant}: ${v.message}`), ...checked.resumableViolations];
    tally.runs++;
    if (checked.outcome.row?.status === 'SUCCEEDED') tally.succeeded++;
    if (checked.outcome.row?.status === 'FAILED') tally.failed++;
    tally.maxSegments = Math.max(tally.maxSegments, checked.segments);
    if (checked.outcome.claimsApplied.size > checked.segments + 1) tally.resumedAfterLoss++;
    tally.lateYields += checked.lateYields.overran;
    tally.lateYieldsPastGrace += checked.lateYields.pastGrace;
    tally.reconcilerTicks += checked.outcome.reconcilerTicks;
    tally.reconcilerRuns += checked.outcome.reconcilerRuns;
    tally.reconcilerRequeues += checked.outcome.reconcilerRequeues;
    tally.bounds ??= timeBoundsOf(checked.outcome);
    if (problems.length > 0 && failure === undefined) failure = { plan, late, problems };
    return problems.length === 0;
  });
  await fc.check(property, { numRuns: runs, seed, endOnFailure: true });
  return { tally, failure };
}
