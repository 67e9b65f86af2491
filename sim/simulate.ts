/**
 * Runs many generated fault plans through the world and checks the invariants on each, with fast-check: every run
 * is reproducible from the seed, and a failing plan is shrunk to a small one whose trace is printed.
 */
import fc from 'fast-check';
import { stuckAfterSeconds } from '../functions/protocol/worker-limits';
import { checkInvariants, INVARIANTS, type Violation } from './invariants';
import type { TraceLine, WorldOutcome } from './outcome';
import { anyPlan, BOUNDS, type FaultPlan } from './plan';
import { OURS, type ProtocolVariant } from './variants';
import { finishBoundMs, RECONCILE_EVERY_MS, repairBoundMs, runWorld, T0 } from './world';

export interface Tally {
  runs: number;
  succeeded: number;
  failed: number;
  events: number;
  /** Runs in which the FIFO topic's deduplication id dropped a second publish. */
  dedupAbsorbed: number;
  adoptedCommittedReport: number;
  /** Runs in which a worker claimed before the commit ran the job on after it (cannot know; see invariant 6). */
  ranAfterCommit: number;
  workerCrashes: number;
  freezes: number;
  sqsDuplicates: number;
  /**
   * Writes by a worker that no longer held the row, all refused by their condition (a violation otherwise), and late
   * extends refused because a newer one had set a later expiry (the trace does not tell the two apart).
   */
  staleWritesRefused: number;
  lateUncontestedWrites: number;
  overlapNotChecked: number;
  overlapsOutsideBound: number;
  reportWithFailedRow: number;
  skipped: { crashes: number; triggerFaults: number; notifierFaults: number };
  /** Latest finish relative to the deadline, s (negative: before it). */
  latestFinishVsDeadlineS: number;
  reconcilerTicks: number;
  reconcilerRuns: number;
  reconcilerRequeues: number;
  /** Runs in which the reconciler re-enqueued the occurrence (its row had no message left). */
  repairedByReconciler: number;
  /** The time bounds of the runs (the same for every run of one variant), from the first run. */
  bounds?: TimeBounds;
}

/** How long a run is simulated, and the parts of the bound invariant 4 holds the finish to, in seconds. */
export interface TimeBounds {
  readonly deadlineS: number;
  readonly visibilityS: number;
  readonly stuckAfterS: number;
  readonly repairS: number;
  readonly finishS: number;
  /** The run's horizon after the scheduled time: deadline + finish bound (+ the scenario's spread in the policy world). */
  readonly horizonS: number;
}

export function timeBoundsOf(o: WorldOutcome): TimeBounds {
  return {
    deadlineS: o.settings.retry.deadlineSeconds,
    visibilityS: o.limits.queueVisibilityTimeoutSeconds,
    stuckAfterS: stuckAfterSeconds(o.limits),
    repairS: repairBoundMs(o.limits) / 1000,
    finishS: finishBoundMs(o.limits) / 1000,
    horizonS: (o.horizon - T0) / 1000,
  };
}

/** The summary's lines on the time simulated and on the reconciler. */
export function boundsLines(b: TimeBounds | undefined, reconciler: string, horizonNote = ''): string[] {
  if (b === undefined) return [];
  const h = (s: number) => `${(s / 3600).toFixed(2)} h`;
  return [
    `time simulated: each run until nothing is left to happen or its horizon, ${h(b.horizonS)} after the first scheduled time${horizonNote ? ` (${horizonNote})` : ''}: ` +
      `the deadline (${h(b.deadlineS)}) plus the finish bound (${h(b.finishS)}: ${BOUNDS.maxWorkerCrashes + 2} visibility timeouts of ` +
      `${b.visibilityS} s, and the reconciler's repair, ${b.repairS} s: stuck after ${b.stuckAfterS} s, then its next run)`,
    `reconciler: as deployed, every ${RECONCILE_EVERY_MS / 60_000} minutes (its first tick at a phase drawn per plan) until the horizon, ` +
      `with the stack's thresholds (functions/protocol/worker-limits.ts); ${reconciler}`,
  ];
}

export interface SimulationReport {
  readonly variant: string;
  readonly seed: number;
  readonly requestedRuns: number;
  readonly tally: Tally;
  readonly elapsedMs: number;
  readonly failure?: {
    readonly plan: FaultPlan;
    readonly violations: Violation[];
    readonly trace: TraceLine[];
    /** fast-check's replay path, with the seed: `fc.assert(..., { seed, path })` replays the shrunk plan. */
    readonly path: string;
    readonly shrinks: number;
  };
}

export function emptyTally(): Tally {
  return {
    runs: 0,
    succeeded: 0,
    failed: 0,
    events: 0,
    dedupAbsorbed: 0,
    adoptedCommittedReport: 0,
    ranAfterCommit: 0,
    workerCrashes: 0,
    freezes: 0,
    sqsDuplicates: 0,
    staleWritesRefused: 0,
    lateUncontestedWrites: 0,
    overlapNotChecked: 0,
    overlapsOutsideBound: 0,
    reportWithFailedRow: 0,
    skipped: { crashes: 0, triggerFaults: 0, notifierFaults: 0 },
    latestFinishVsDeadlineS: -Infinity,
    reconcilerTicks: 0,
    reconcilerRuns: 0,
    reconcilerRequeues: 0,
    repairedByReconciler: 0,
  };
}

/** Run one plan and check it; the outcome and the checks together. */
export async function simulateOne(plan: FaultPlan, variant: ProtocolVariant = OURS) {
  const outcome = await runWorld(plan, { variant });
  return { outcome, checked: checkInvariants(outcome) };
}

export async function simulateMany(options: {
  runs: number;
  seed: number;
  variant?: ProtocolVariant;
  /** False: report the first failing plan as found, without shrinking it (faster; the trace is longer). */
  shrink?: boolean;
  /** Defaults to anyPlan. */
  plans?: fc.Arbitrary<FaultPlan>;
  onRun?: (done: number) => void;
}): Promise<SimulationReport> {
  const variant = options.variant ?? OURS;
  const tally = emptyTally();
  const started = performance.now();
  let failing = false;
  const property = fc.asyncProperty(options.plans ?? anyPlan, async (plan) => {
    const { outcome, checked } = await simulateOne(plan, variant);
    const ok = checked.violations.length === 0;
    // Shrinking re-runs smaller plans: count only the runs of the search itself.
    if (!failing) {
      add(tally, outcome, checked);
      options.onRun?.(tally.runs);
    }
    if (!ok) failing = true;
    return ok;
  });
  const details = await fc.check(property, {
    numRuns: options.runs,
    seed: options.seed,
    endOnFailure: options.shrink === false,
  });
  const elapsedMs = performance.now() - started;
  const report = { variant: variant.name, seed: options.seed, requestedRuns: options.runs, tally, elapsedMs };
  if (!details.failed) return report;
  // A plan that threw (a bug in the simulation itself, not a violation) has no counterexample to replay.
  if (details.counterexample === null)
    throw details.errorInstance ?? new Error('simulation failed without a counterexample');
  const [plan] = details.counterexample;
  const replay = await simulateOne(plan, variant);
  return {
    ...report,
    failure: {
      plan,
      violations: replay.checked.violations,
      trace: replay.outcome.trace,
      path: details.counterexamplePath ?? '',
      shrinks: details.numShrinks,
    },
  };
}

function add(t: Tally, o: WorldOutcome, checked: ReturnType<typeof checkInvariants>): void {
  t.runs++;
  t.events += o.events;
  if (o.row?.status === 'SUCCEEDED') t.succeeded++;
  if (o.row?.status === 'FAILED') t.failed++;
  if (o.published > o.delivered) t.dedupAbsorbed++;
  if (o.trace.some((l) => l.what.includes('report already committed by an earlier attempt')))
    t.adoptedCommittedReport++;
  if (checked.ranAfterCommit.length > 0) t.ranAfterCommit++;
  t.workerCrashes += o.workerCrashes;
  t.freezes += o.trace.filter((l) => l.what.startsWith('FREEZES')).length;
  t.sqsDuplicates += o.trace.filter((l) => l.what.includes('a duplicate copy')).length;
  t.staleWritesRefused += o.trace.filter(
    (l) =>
      l.who === 'aws' &&
      /^worker#\d+ UpdateItem (extend|complete|release|fail) .*→ ConditionalCheckFailed/.test(l.what) &&
      !l.what.includes('Unheld'),
  ).length;
  t.lateUncontestedWrites += o.lateUncontestedWrites;
  if (!checked.overlapChecked) {
    t.overlapNotChecked++;
    if (checked.overlaps.length > 0) t.overlapsOutsideBound++;
  }
  if (
    o.row?.status === 'FAILED' &&
    o.firstCommitAt !== undefined &&
    o.finishedAt !== undefined &&
    o.firstCommitAt >= o.finishedAt
  )
    t.reportWithFailedRow++;
  t.skipped.crashes += o.skipped.crashes;
  t.skipped.triggerFaults += o.skipped.triggerFaults;
  t.skipped.notifierFaults += o.skipped.notifierFaults;
  if (o.finishedAt !== undefined)
    t.latestFinishVsDeadlineS = Math.max(t.latestFinishVsDeadlineS, (o.finishedAt - o.deadlineAt) / 1000);
  t.reconcilerTicks += o.reconcilerTicks;
  t.reconcilerRuns += o.reconcilerRuns;
  t.reconcilerRequeues += o.reconcilerRequeues;
  if (o.reconcilerRequeues > 0) t.repairedByReconciler++;
  t.bounds ??= timeBoundsOf(o);
}

export function formatTrace(trace: readonly TraceLine[]): string {
  return trace.map((l) => `${`+${(l.t / 1000).toFixed(3)} s`.padStart(14)}  ${l.who.padEnd(11)} ${l.what}`).join('\n');
}

/** The summary `npm run sim` prints, and what a failing test shows. */
export function formatReport(r: SimulationReport): string {
  const t = r.tally;
  const lines = [
    `protocol: ${r.variant}; seed ${r.seed}; ${t.runs} of ${r.requestedRuns} runs in ${(r.elapsedMs / 1000).toFixed(1)} s ` +
      `(${(t.runs / (r.elapsedMs / 1000)).toFixed(1)} runs/s, ${t.events} events)`,
  ];
  if (r.failure) {
    lines.push(
      `INVARIANT VIOLATED (shrunk ${r.failure.shrinks} times). Replay: seed ${r.seed}, path "${r.failure.path}"`,
      ...r.failure.violations.map((v) => `  invariant ${v.invariant} (${INVARIANTS[v.invariant]}): ${v.message}`),
      `plan: ${JSON.stringify(r.failure.plan)}`,
      'trace:',
      formatTrace(r.failure.trace),
    );
    return lines.join('\n');
  }
  lines.push(
    'all six invariants held in every run:',
    ...Object.entries(INVARIANTS).map(([id, text]) => `  ${id}. ${text}`),
    `outcomes: ${t.succeeded} SUCCEEDED, ${t.failed} FAILED (retries used up or past the deadline); latest finish ${t.latestFinishVsDeadlineS.toFixed(0)} s relative to the deadline`,
    `faults exercised: ${t.workerCrashes} worker crashes, ${t.freezes} freezes, ${t.sqsDuplicates} duplicate SQS deliveries; ` +
      `${t.adoptedCommittedReport} runs adopted a committed report instead of running the job again`,
    `runs again: in ${t.ranAfterCommit} runs a worker claimed before the commit ran the job on after the report was committed ` +
      `(it cannot know: it had looked before the commit, or it was the first claim); never one claimed after it (invariant 6)`,
    `fencing: ${t.staleWritesRefused} writes by workers that had lost their lease (or extends that arrived after a newer one), all refused by their condition; ` +
      `${t.lateUncontestedWrites} writes accepted after the writer's lease had expired with nobody else claiming (still its lease: by design)`,
    `notify once: in ${t.dedupAbsorbed} runs the notifier published twice and the SNS FIFO deduplication id (modelled: same id within 5 min is dropped) kept it to one`,
    `overlap of job side effects: required when a freeze + clock skew spread stays within leaseSafetyMarginSeconds (15 s); ` +
      `${t.overlapNotChecked} runs froze a worker longer, and ${t.overlapsOutsideBound} of them did overlap (a paused process cannot know it was paused)`,
    `bounds assumed (faults beyond them skipped, and counted): at most ${BOUNDS.maxWorkerCrashes} worker crashes per occurrence ` +
      `(skipped ${t.skipped.crashes}), ${BOUNDS.maxTriggerFailuresPerDelivery} failed trigger tries per Scheduler delivery (skipped ${t.skipped.triggerFaults}), ` +
      `${BOUNDS.maxNotifierFailures} failed notifier tries (skipped ${t.skipped.notifierFaults}), worker clocks within ±${BOUNDS.skewBoundMs / 2000} s`,
    ...boundsLines(
      t.bounds,
      `${t.reconcilerTicks} ticks, ${t.reconcilerRuns} of them with a row stuck by its own test (run in full; the others would read and write nothing); ` +
        `in ${t.repairedByReconciler} runs it re-enqueued the occurrence (${t.reconcilerRequeues} re-enqueues)`,
    ),
  );
  if (t.reportWithFailedRow > 0)
    lines.push(
      `note: ${t.reportWithFailedRow} FAILED occurrences got a report object after they failed (a put still in flight when its last attempt gave up; not announced)`,
    );
  return lines.join('\n');
}
