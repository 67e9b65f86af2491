/**
 * The policy world: several occurrences of one job under an overlap policy, in the simulated world of sim/world.ts
 * (the real handlers over the fakes), under the same fault families (crashes, freezes, duplicate deliveries, lost
 * responses, skew, an upstream outage that fails attempts). A slow first occurrence, one that dies and whose lease
 * expires, one whose attempts fail while others wait, and cancelOther all arise from the generated plans.
 *
 * Its invariants are the single occurrence's (sim/invariants.ts) per occurrence, and those of the policies:
 *   P1 at most one report per occurrence, never overwritten
 *   P2 each SUCCEEDED occurrence announced exactly once, nothing else announced
 *   P3 no write by a worker that lost its lease; no two leases' job side effects overlap within the skew bound, across
 *      occurrences too unless the policy is allowAll
 *   P4 every occurrence ends SUCCEEDED, FAILED, SKIPPED or CANCELLED by the end of the run
 *   P5 every row tells the truth: SUCCEEDED ⇒ its report exists; FAILED ⇒ lastError; SKIPPED ⇒ skipReason (overlap ⇒
 *      yieldedTo); CANCELLED ⇒ cancelledBy or cancelledByOperator; every write keeps the status index key and the
 *      worker
 *   P6 bufferAll: the BUFFERED occurrences start in scheduled-time order: one BUFFERED before a later BUFFERED one
 *      first started starts before it, unless the later one held the running slot when the earlier one was BUFFERED
 *      and kept it up to its start (an occurrence that took the free slot before an earlier one was recorded or
 *      delivered runs first: the buffer orders waiting occurrences, not arrivals; the slot naming an occurrence is
 *      taken back by its next attempt before anything buffered, also when the attempt that took it never started).
 *      A start counts under a lease still its own: not one logged by a worker that froze past its lease while the
 *      occurrence was claimed again
 * and, on the runs that generate them (a late delivery, a short catch-up window, the operator's pause and resume,
 * pauseAfterFailures), those of the catch-up window, the pause and the job-state row's second writer:
 *   P7 missed: an occurrence first recorded (its row's createdAt, read by the trigger or the resume that created it)
 *      later than the catch-up window after its scheduled time is SKIPPED/missed and never runs; one recorded within
 *      the window is not missed
 *   P8 paused: no attempt whose claim was applied after a pause's write starts its job before the resume's write;
 *      nobody takes the running slot of a paused row; an occurrence claimed and closed within one pause ends
 *      SKIPPED/paused, or FAILED with its attempts or its deadline used up (claims whose start failed before it was
 *      decided count as attempts)
 *   P9 the job-state row: every write raises its version by one; only the operator's resume lifts a pause; a pause's
 *      fields stand until then; each pause or resume the operator was told it wrote is in the row's history
 *   P10 pauseAfterFailures N: the worker pauses the job only after N FAILED run ends counted in a row (the count
 *      job-slot.ts keeps: run ends in the order the table applied their counts, reset by a counted SUCCEEDED one or
 *      a resume), with N occurrences FAILED by then, and then disables the schedule; a count that reaches N on a
 *      running job is followed by a pause or a reset; both unless that worker died
 * and, on the runs where an operator cancels occurrences (cancelOccurrence racing claims, heartbeats, commits and
 * buffer wake-ups), those of the cancel:
 *   P11 a CANCELLED occurrence has no report committed after its cancel was recorded
 *   P12 no occurrence is ever both SUCCEEDED and CANCELLED (across its whole life); an operator's cancel reported
 *       `cancelled` left its occurrence CANCELLED by the operator
 * Where a schedule was disabled, the fire times it held back have no row unless a resume that followed caught up on
 * them (P4 asks for a row there).
 */
import fc from 'fast-check';
import { catchupWindowSecondsOf, OVERLAP_POLICIES } from '../functions/protocol/job-settings';
import { CATCHUP_WINDOW_SECONDS_RANGE } from '../functions/protocol/setting-basics';
import type { Row } from './fakes/dynamo-expressions';
import { isOverlapChecked, sideEffectSpans } from './invariants';
import type { JobStateWriteRecord, WorldOutcome } from './outcome';
import { anyPlan, type FaultPlan } from './plan';
import { boundsLines, formatTrace, type TimeBounds, timeBoundsOf } from './simulate';
import { JOB_ID, type OperatorAction, type PolicyScenario, runWorld, scenarioTimes, T0, WORKER_ID } from './world';

export type PolicyInvariantId = 'P1' | 'P2' | 'P3' | 'P4' | 'P5' | 'P6' | 'P7' | 'P8' | 'P9' | 'P10' | 'P11' | 'P12';

export const POLICY_INVARIANTS: Readonly<Record<PolicyInvariantId, string>> = {
  P1: 'at most one report object per occurrence, never overwritten',
  P2: 'each SUCCEEDED occurrence announced exactly once, nothing else announced',
  P3: 'no write by a worker that lost its lease; no overlapping job side effects within the skew bound (across occurrences too, unless allowAll)',
  P4: 'every occurrence ends SUCCEEDED, FAILED, SKIPPED or CANCELLED',
  P5: 'every row tells the truth: SUCCEEDED ⇒ report; FAILED ⇒ lastError; SKIPPED ⇒ skipReason (overlap ⇒ yieldedTo); CANCELLED ⇒ cancelledBy or cancelledByOperator; index key and worker kept after every write',
  P6: 'bufferAll: the BUFFERED occurrences start in scheduled-time order (one BUFFERED before a later BUFFERED one first started starts before it, unless the later one held the slot from before then up to its start)',
  P7: 'missed: an occurrence first recorded later than the catch-up window after its scheduled time is SKIPPED/missed and never runs (no job side effect, no report, not announced); one recorded within the window is not missed',
  P8: 'paused: no attempt claimed after a pause starts its job before the resume; no running slot is taken on a paused row; an occurrence claimed and closed within one pause ends SKIPPED/paused (or FAILED with its attempts or deadline used up)',
  P9: "job-state row: every write raises its version by one; only the operator's resume lifts a pause, whose fields stand until then; every pause and resume the operator was told it wrote is in the row's history",
  P10: 'pauseAfterFailures N: the worker pauses the job only after N counted FAILED run ends in a row, with N occurrences FAILED by then, and disables the schedule; a count reaching N on a running job is followed by a pause or a reset; both unless that worker died',
  P11: 'a CANCELLED occurrence has no report committed after its cancel was recorded',
  P12: 'no occurrence is ever both SUCCEEDED and CANCELLED; a cancel the operator was told succeeded left its occurrence CANCELLED by the operator',
};

export interface PolicyViolation {
  readonly invariant: PolicyInvariantId;
  readonly message: string;
}

export interface PolicyPlan {
  readonly plan: FaultPlan;
  readonly scenario: PolicyScenario;
}

const overlap = fc.constantFrom(...OVERLAP_POLICIES);
const jobMs = fc.integer({ min: 1_000, max: 150_000 });
/** Up to 15 minutes late: beyond a short catch-up window, within the default one (the retry deadline, 6 hours). */
const lateMs = fc.integer({ min: 0, max: 900_000 });
/** Short windows (the default is the retry deadline, which a late delivery here never exceeds). */
const catchupWindowSeconds = fc.integer({ min: CATCHUP_WINDOW_SECONDS_RANGE.min, max: 900 });
const pauseAfterFailures = fc.integer({ min: 1, max: 3 });
const OPTIONAL = { requiredKeys: ['overlap', 'others'] as ('overlap' | 'others')[] };

/** One to three more occurrences, within a few minutes of the first, working from a second to over two minutes. */
const plainScenario: fc.Arbitrary<PolicyScenario> = fc.record({
  overlap,
  others: fc.array(fc.record({ afterMs: fc.integer({ min: 5_000, max: 300_000 }), jobMs }), {
    minLength: 1,
    maxLength: 3,
  }),
});

/** The same, with late deliveries, maybe a short catch-up window, maybe the pause after failures. */
const windowScenario: fc.Arbitrary<PolicyScenario> = fc.record(
  {
    overlap,
    others: fc.array(
      fc.record(
        { afterMs: fc.integer({ min: 5_000, max: 300_000 }), jobMs, lateMs },
        { requiredKeys: ['afterMs', 'jobMs'] },
      ),
      { minLength: 1, maxLength: 3 },
    ),
    catchupWindowSeconds,
    pauseAfterFailures,
  },
  OPTIONAL,
);

/** The operator's actions: the first within the first seven minutes (mostly a pause), then up to two more. */
const operatorActions: fc.Arbitrary<OperatorAction[]> = fc
  .tuple(
    fc.integer({ min: 1_000, max: 420_000 }),
    fc.oneof(
      { weight: 4, arbitrary: fc.constant('pause' as const) },
      { weight: 1, arbitrary: fc.constant('resume' as const) },
    ),
    fc.array(
      fc.record({
        gapMs: fc.integer({ min: 5_000, max: 1_200_000 }),
        action: fc.oneof(
          { weight: 3, arbitrary: fc.constant('resume' as const) },
          { weight: 1, arbitrary: fc.constant('pause' as const) },
        ),
      }),
      { maxLength: 2 },
    ),
  )
  .map(([atMs, action, rest]) => {
    const actions: OperatorAction[] = [{ atMs, action }];
    for (const next of rest) actions.push({ atMs: (actions.at(-1)?.atMs ?? 0) + next.gapMs, action: next.action });
    return actions;
  });

/** Operator actions, on a schedule of whole minutes (a resume catches up on its fire times: world.ts scheduleOf). */
const operatorScenario: fc.Arbitrary<PolicyScenario> = fc.record(
  {
    overlap,
    others: fc
      .uniqueArray(
        fc.record({ minute: fc.integer({ min: 1, max: 5 }), jobMs, lateMs }, { requiredKeys: ['minute', 'jobMs'] }),
        {
          minLength: 1,
          maxLength: 3,
          selector: (o) => o.minute,
        },
      )
      .map((others) => others.map(({ minute, ...o }) => ({ afterMs: minute * 60_000, ...o }))),
    catchupWindowSeconds,
    pauseAfterFailures,
    operator: operatorActions,
  },
  { requiredKeys: ['overlap', 'others', 'operator'] },
);

/**
 * The operator's cancels: one to three, each of one occurrence, either at any time in the first seven minutes or
 * within two seconds of when that occurrence's job would end (its scheduled time plus its job's duration), where the
 * cancel races the worker's commit point, its complete and the release of the slot.
 */
const cancelActions = (occurrences: number, jobEnds: readonly number[]): fc.Arbitrary<OperatorAction[]> =>
  fc
    .array(
      fc.record({
        target: fc.integer({ min: 0, max: occurrences - 1 }),
        near: fc.boolean(),
        anyMs: fc.integer({ min: 0, max: 420_000 }),
        deltaMs: fc.integer({ min: -2_000, max: 2_000 }),
      }),
      { minLength: 1, maxLength: 3 },
    )
    .map((cancels) =>
      cancels
        .map(({ target, near, anyMs, deltaMs }) => ({
          action: 'cancel' as const,
          target,
          atMs: near ? Math.max(0, (jobEnds[target] ?? 0) + deltaMs) : anyMs,
        }))
        .sort((a, b) => a.atMs - b.atMs),
    );

/** Any policy, one to three more occurrences close together (a running slot holder, buffered ones), and cancels. */
export const cancelPlan: fc.Arbitrary<PolicyPlan> = fc
  .tuple(
    anyPlan,
    overlap,
    fc.array(fc.record({ afterMs: fc.integer({ min: 2_000, max: 180_000 }), jobMs }), { minLength: 1, maxLength: 3 }),
  )
  .chain(([plan, policy, others]) => {
    const jobEnds = [plan.jobMs, ...others.map((o) => o.afterMs + o.jobMs)];
    return cancelActions(jobEnds.length, jobEnds).map(
      (operator): PolicyPlan => ({ plan, scenario: { overlap: policy, others, operator } }),
    );
  });

/**
 * The job's upstream down from early on for a while (some occurrences fail, later ones may not), few attempts: runs
 * of FAILED occurrences for pauseAfterFailures to count.
 */
const failingPlan: fc.Arbitrary<FaultPlan> = fc
  .tuple(
    anyPlan,
    fc.record({ fromMs: fc.integer({ min: 0, max: 300_000 }), forMs: fc.integer({ min: 30_000, max: 1_200_000 }) }),
    fc.integer({ min: 1, max: 3 }),
  )
  .map(([plan, outage, maxAttempts]) => ({ ...plan, outage, maxAttempts }));

const withPauseAfterFailures = (scenario: fc.Arbitrary<PolicyScenario>) =>
  fc.tuple(scenario, pauseAfterFailures).map(([s, n]) => ({ ...s, pauseAfterFailures: n }));

/**
 * Six in eleven runs as before; the others with a catch-up window and late deliveries, the operator's actions, or
 * pauseAfterFailures on a plan whose upstream fails (each field also on some runs of the others).
 */
export const policyPlan: fc.Arbitrary<PolicyPlan> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ plan: anyPlan, scenario: plainScenario }) },
  { weight: 2, arbitrary: fc.record({ plan: anyPlan, scenario: windowScenario }) },
  { weight: 2, arbitrary: fc.record({ plan: anyPlan, scenario: operatorScenario }) },
  { weight: 2, arbitrary: cancelPlan },
  {
    weight: 1,
    arbitrary: fc.record({
      plan: failingPlan,
      scenario: withPauseAfterFailures(fc.oneof(windowScenario, operatorScenario)),
    }),
  },
);

export function checkPolicyInvariants(o: WorldOutcome, scenario: PolicyScenario): PolicyViolation[] {
  const violations: PolicyViolation[] = [];
  const fail = (invariant: PolicyInvariantId, message: string) => violations.push({ invariant, message });
  const times = scenarioTimes(scenario);
  for (const [i, time] of times.entries()) {
    const row = o.rows[i];
    const reports = [...o.objects.keys()].filter((k) => k.startsWith(`reports/${JOB_ID}/${time}.`));
    if (reports.length > 1) fail('P1', `${time}: ${reports.length} report objects`);
    const announced = o.announcedTimes.filter((t) => t === time).length;
    if (row?.status === 'SUCCEEDED' && announced !== 1) fail('P2', `${time}: SUCCEEDED, announced ${announced} times`);
    if (row?.status !== 'SUCCEEDED' && announced > 0) fail('P2', `${time}: ${String(row?.status)}, announced`);
    const unfired = row === undefined && heldBackUncaught(o, time);
    if (
      !unfired &&
      (row === undefined || !['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED'].includes(String(row.status)))
    )
      fail('P4', `${time}: ended ${String(row?.status ?? 'without a row')}`);
    for (const problem of rowProblems(row, o)) fail('P5', `${time}: ${problem}`);
  }
  for (const w of o.overwrites) fail('P1', `${w.who} ${w.what}`);
  for (const w of o.staleWrites) fail('P3', `${w.who}'s ${w.what} changed a row it did not hold (${w.rowBefore})`);
  if (isOverlapChecked(o)) for (const overlap of overlaps(o, scenario.overlap !== 'allowAll')) fail('P3', overlap);
  for (const mismatch of o.indexKeyMismatches) fail('P5', mismatch);
  if (scenario.overlap === 'bufferAll') for (const problem of bufferOrderProblems(o, times)) fail('P6', problem);
  for (const problem of missedProblems(o, times)) fail('P7', problem);
  for (const problem of pausedProblems(o, times)) fail('P8', problem);
  for (const problem of jobStateProblems(o)) fail('P9', problem);
  for (const problem of selfPauseProblems(o, times)) fail('P10', problem);
  for (const problem of cancelCommitProblems(o, times)) fail('P11', problem);
  for (const problem of cancelledAndSucceededProblems(o, times)) fail('P12', problem);
  return violations;
}

const at = (t: number) => `+${((t - T0) / 1000).toFixed(3)} s`;

/** A fire time the disabled schedule held back, and no resume returned after it (to catch up on it). */
function heldBackUncaught(o: WorldOutcome, time: string): boolean {
  const held = o.firesHeldBack.find((f) => f.scheduledTime === time);
  if (held === undefined) return false;
  return !o.operatorActions.some((a) => a.outcome === 'resumed' && (a.endedAt ?? 0) > held.at);
}

function missedProblems(o: WorldOutcome, times: readonly string[]): string[] {
  const windowMs = catchupWindowSecondsOf(o.settings) * 1000;
  const problems: string[] = [];
  for (const [i, time] of times.entries()) {
    const row = o.rows[i];
    if (row === undefined) continue;
    const lateMs = Date.parse(String(row.createdAt)) - Date.parse(time);
    const late = `first recorded ${(lateMs / 1000).toFixed(3)} s after its scheduled time (window ${windowMs / 1000} s)`;
    if (lateMs <= windowMs) {
      if (row.skipReason === 'missed') problems.push(`${time}: ${late}, but SKIPPED as missed`);
      continue;
    }
    if (row.status !== 'SKIPPED' || row.skipReason !== 'missed')
      problems.push(`${time}: ${late}, but ${String(row.status)}/${String(row.skipReason)}`);
    const ran = [
      o.sideEffects.some((e) => e.scheduledTime === time) && 'a job side effect',
      o.runStarts.some((r) => r.scheduledTime === time) && 'an attempt started',
      [...o.objects.keys()].some((k) => k.startsWith(`reports/${JOB_ID}/${time}.`)) && 'a report',
      o.announcedTimes.includes(time) && 'an announcement',
    ].filter((x): x is string => typeof x === 'string');
    if (ran.length > 0) problems.push(`${time}: ${late}, yet it has ${ran.join(', ')}`);
  }
  return problems;
}

const wasPaused = (w: JobStateWriteRecord) => w.before?.pausedAt !== undefined;
const isPausedAfter = (w: JobStateWriteRecord) => w.after.pausedAt !== undefined;
const liftsPause = (w: JobStateWriteRecord) => wasPaused(w) && !isPausedAfter(w);
const setsPause = (w: JobStateWriteRecord) => !wasPaused(w) && isPausedAfter(w);

/** The spans (true time) the table's job-state row was paused: from a pause's write to the write that lifted it. */
export function pausedSpans(o: WorldOutcome): { from: number; to: number }[] {
  const spans: { from: number; to: number }[] = [];
  for (const w of o.jobStateWrites) {
    if (setsPause(w)) spans.push({ from: w.at, to: Number.POSITIVE_INFINITY });
    const open = spans.at(-1);
    if (liftsPause(w) && open !== undefined) open.to = w.at;
  }
  return spans;
}

function pausedProblems(o: WorldOutcome, times: readonly string[]): string[] {
  const spans = pausedSpans(o);
  const within = (from: number, to: number) => spans.find((s) => s.from <= from && to < s.to);
  const problems: string[] = [];
  for (const start of o.runStarts) {
    const claim = o.leaseClaims.get(start.leaseId);
    const span = claim && within(claim.at, start.at);
    if (claim && span)
      problems.push(
        `${start.scheduledTime}: ${start.leaseId} claimed at ${at(claim.at)} and started at ${at(start.at)}, while paused since ${at(span.from)}`,
      );
  }
  for (const w of o.jobStateWrites) {
    if (wasPaused(w) && w.after.slotLeaseId !== undefined && w.after.slotLeaseId !== w.before?.slotLeaseId)
      problems.push(`${w.who} took the running slot for ${String(w.after.slotTime)} on a paused row at ${at(w.at)}`);
  }
  for (const [i, time] of times.entries()) {
    const row = o.rows[i];
    const claims = [...o.leaseClaims.values()].filter((c) => c.scheduledTime === time).map((c) => c.at);
    const endedAt = o.terminalAt.get(time);
    if (row === undefined || claims.length === 0 || endedAt === undefined) continue;
    const lastClaim = Math.max(...claims);
    // A claim while paused whose start failed before it was decided still used an attempt: the last ones may leave
    // none (or the deadline may pass), and the next delivery records it FAILED without claiming it.
    const usedUp =
      row.status === 'FAILED' &&
      (Number(row.attempt) >= o.settings.retry.maxAttempts || endedAt > Date.parse(String(row.deadlineAt)));
    if (within(lastClaim, endedAt) && !usedUp && (row.status !== 'SKIPPED' || row.skipReason !== 'paused'))
      problems.push(
        `${time}: last claimed at ${at(lastClaim)} and closed at ${at(endedAt)} while paused, but ${String(row.status)}/${String(row.skipReason)}`,
      );
  }
  return problems;
}

const PAUSE_FIELDS = ['pausedAt', 'pausedBy', 'pauseNote', 'pauseCause'] as const;

function jobStateProblems(o: WorldOutcome): string[] {
  const problems: string[] = [];
  for (const w of o.jobStateWrites) {
    const expected = Number(w.before?.version ?? 0) + 1;
    if (Number(w.after.version) !== expected)
      problems.push(`${w.who}'s write at ${at(w.at)} made version ${String(w.after.version)}, not ${expected}`);
    if (liftsPause(w) && !w.who.startsWith('operator'))
      problems.push(`${w.who} lifted the pause at ${at(w.at)}; only a resume may`);
    const changed = PAUSE_FIELDS.filter((f) => w.before?.[f] !== w.after[f]);
    if (wasPaused(w) && isPausedAfter(w) && changed.length > 0)
      problems.push(`${w.who}'s write at ${at(w.at)} changed ${changed.join(', ')} of a standing pause`);
  }
  for (const a of o.operatorActions) {
    const version = a.state?.version;
    if (a.outcome !== 'paused' && a.outcome !== 'resumed') continue;
    const written = o.jobStateWrites.find((w) => w.who.startsWith('operator') && w.after.version === version);
    const says = a.outcome === 'paused' ? written?.after.pauseNote === a.note : written?.after.pausedAt === undefined;
    if (written === undefined || !says)
      problems.push(
        `the operator's ${a.action} at ${at(a.at)} returned ${a.outcome} (version ${String(version)}), but no such write is in the row's history`,
      );
  }
  return problems;
}

/** A pause written by the worker's pauseAfterFailures. */
const selfPause = (w: JobStateWriteRecord) => setsPause(w) && w.after.pauseCause === 'failures';
const failuresOf = (row: Row | undefined) => Number(row?.consecutiveFailures ?? 0);

function selfPauseProblems(o: WorldOutcome, times: readonly string[]): string[] {
  const limit = o.settings.pauseAfterFailures;
  const writes = o.jobStateWrites;
  if (limit === undefined)
    return writes.filter(selfPause).map((w) => `${w.who} paused the job at ${at(w.at)} without pauseAfterFailures`);
  const problems: string[] = [];
  for (const [i, w] of writes.entries()) {
    if (selfPause(w)) problems.push(...selfPauseChecks(o, w, limit, times));
    const counted = !liftsPause(w) && failuresOf(w.after) === failuresOf(w.before) + 1;
    if (!counted || failuresOf(w.after) < limit || isPausedAfter(w)) continue;
    const next = writes.slice(i + 1).find((x) => setsPause(x) || liftsPause(x) || failuresOf(x.after) === 0);
    // A worker that died (maybe before its count, sent earlier, was applied) cannot pause: the next failure does.
    if (next === undefined && !o.killedAt.has(w.who))
      problems.push(
        `${w.who} counted failure ${failuresOf(w.after)} of ${limit} at ${at(w.at)}, and the job was never paused`,
      );
  }
  return problems;
}

function selfPauseChecks(o: WorldOutcome, w: JobStateWriteRecord, limit: number, times: readonly string[]): string[] {
  const problems: string[] = [];
  if (failuresOf(w.before) < limit)
    problems.push(`${w.who} paused the job at ${at(w.at)} after ${failuresOf(w.before)} counted failures of ${limit}`);
  if (w.after.pausedBy !== 'pauseAfterFailures' || !String(w.after.pauseNote).includes(`after ${limit} FAILED`))
    problems.push(
      `the pause at ${at(w.at)} does not say why: ${String(w.after.pausedBy)}, ${String(w.after.pauseNote)}`,
    );
  // Counted in the order the table applied the counts: a failure that ended before a resume may be counted after it.
  const failed = times.filter((t, i) => {
    const ended = o.terminalAt.get(t);
    return o.rows[i]?.status === 'FAILED' && ended !== undefined && ended <= w.at;
  });
  if (failed.length < limit)
    problems.push(`${w.who} paused the job at ${at(w.at)}, but only ${failed.length} occurrences had FAILED`);
  const disabled = o.scheduleChanges.some((c) => c.who === w.who && c.state === 'DISABLED' && c.at >= w.at);
  // A worker that died (maybe before its pause, sent earlier, was applied) cannot disable the schedule.
  if (!disabled && !o.killedAt.has(w.who))
    problems.push(`${w.who} paused the job at ${at(w.at)} but never disabled its schedule`);
  return problems;
}

/** P11: no report object written at an occurrence's key after an operator's cancel of it was recorded. */
function cancelCommitProblems(o: WorldOutcome, times: readonly string[]): string[] {
  const problems: string[] = [];
  for (const time of times) {
    const cancelledAt = o.operatorCancelledAt.get(time);
    if (cancelledAt === undefined) continue;
    for (const [key, commits] of o.commitsAt) {
      if (!key.startsWith(`reports/${JOB_ID}/${time}.`)) continue;
      const late = commits.filter((t) => t > cancelledAt);
      if (late.length > 0)
        problems.push(`${time}: CANCELLED at ${at(cancelledAt)}, yet its report was committed at ${at(late[0])}`);
    }
  }
  return problems;
}

/** P12: never both SUCCEEDED and CANCELLED; a cancel reported done is in the row. */
function cancelledAndSucceededProblems(o: WorldOutcome, times: readonly string[]): string[] {
  const problems: string[] = [];
  for (const time of times) {
    const seen = o.statusesSeen.get(time);
    if (seen?.has('SUCCEEDED') && seen.has('CANCELLED')) problems.push(`${time}: was both SUCCEEDED and CANCELLED`);
  }
  for (const a of o.operatorActions) {
    if (a.action !== 'cancel' || a.outcome !== 'cancelled' || a.target === undefined) continue;
    const i = times.indexOf(a.target);
    const row = i < 0 ? undefined : o.rows[i];
    if (row?.status !== 'CANCELLED' || row.cancelledByOperator === undefined)
      problems.push(`${a.target}: the cancel at ${at(a.at)} returned cancelled, but the row is ${String(row?.status)}`);
  }
  return problems;
}

function rowProblems(row: Row | undefined, o: WorldOutcome): string[] {
  if (row === undefined) return [];
  const problems: string[] = [];
  if (row.status === 'SUCCEEDED' && !o.objects.has(String(row.reportKey)))
    problems.push('SUCCEEDED without its report');
  if (row.status === 'FAILED' && !row.lastError) problems.push('FAILED without lastError');
  if (row.status === 'SKIPPED' && !row.skipReason) problems.push('SKIPPED without skipReason');
  if (row.status === 'SKIPPED' && row.skipReason === 'overlap' && !row.yieldedTo)
    problems.push('SKIPPED for overlap without yieldedTo');
  if (row.status === 'CANCELLED' && !row.cancelledBy && !row.cancelledByOperator)
    problems.push('CANCELLED without cancelledBy or cancelledByOperator');
  if (row.worker !== WORKER_ID) problems.push(`names worker ${String(row.worker)}`);
  return problems;
}

/** Each lease's side effects span [first, last]; two spans that intersect ran at once (same occurrence, or any). */
function overlaps(o: WorldOutcome, acrossOccurrences: boolean): string[] {
  const list = [...sideEffectSpans(o).entries()];
  const found: string[] = [];
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const [a, sa] = list[i];
      const [b, sb] = list[j];
      if (!acrossOccurrences && sa.time !== sb.time) continue;
      if (sa.from <= sb.to && sb.from <= sa.to)
        found.push(
          `side effects of ${a} (${sa.time}) and ${b} (${sb.time}) overlap at +${((Math.max(sa.from, sb.from) - T0) / 1000).toFixed(3)} s`,
        );
    }
  }
  return found;
}

/**
 * When each occurrence first started under a lease still its own: a worker that froze after taking the slot may log
 * its start after its lease expired and the occurrence was claimed again (it then stops without running the job).
 */
export function firstOwnStarts(o: WorldOutcome): Map<string, number> {
  const claims = [...o.leaseClaims.entries()];
  const superseded = (leaseId: string, at: number) => {
    const own = o.leaseClaims.get(leaseId);
    return claims.some(
      ([id, c]) => id !== leaseId && c.scheduledTime === own?.scheduledTime && c.at > own.at && c.at < at,
    );
  };
  const starts = new Map<string, number>();
  for (const s of o.runStarts) {
    if (superseded(s.leaseId, s.at)) continue;
    if (!starts.has(s.scheduledTime) || (starts.get(s.scheduledTime) ?? 0) > s.at) starts.set(s.scheduledTime, s.at);
  }
  return starts;
}

/**
 * Since when the job-state row's slot had named an occurrence without a break, up to a time (its start): the table's
 * time of the first of the consecutive writes that named it. Undefined when the slot did not name it then.
 */
export function slotHeldSince(o: WorldOutcome, time: string, until: number): number | undefined {
  let since: number | undefined;
  for (const w of o.jobStateWrites) {
    if (w.at > until) break;
    if (w.after.slotTime !== time) since = undefined;
    else if (since === undefined) since = w.at;
  }
  return since;
}

function bufferOrderProblems(o: WorldOutcome, times: readonly string[]): string[] {
  // Started: past the policy, with the slot (a failed attempt's retry is the same run), under a lease still its own.
  const starts = firstOwnStarts(o);
  const firstRun = (time: string) => starts.get(time);
  const problems: string[] = [];
  for (const x of times) {
    const bufferedAt = o.firstBufferedAt.get(x);
    const xRan = firstRun(x);
    if (bufferedAt === undefined || xRan === undefined) continue;
    for (const y of times) {
      const yRan = firstRun(y);
      if (!(y > x && o.firstBufferedAt.has(y) && yRan !== undefined && bufferedAt < yRan && xRan > yRan)) continue;
      // y held the slot when x was buffered behind it, and kept it up to its start: the slot naming the occurrence
      // itself is taken back before anything buffered (docs/schedule-policies.md), even when the take's response was
      // lost and only a later attempt of y logged its start.
      const heldSince = slotHeldSince(o, y, yRan);
      if (heldSince !== undefined && heldSince < bufferedAt) continue;
      problems.push(`${x} was BUFFERED before ${y} first started, but started after it`);
    }
  }
  return problems;
}

export interface PolicyTally {
  runs: number;
  events: number;
  byPolicy: Record<string, number>;
  statuses: Record<string, number>;
  skipReasons: Record<string, number>;
  buffered: number;
  overlapNotChecked: number;
  workerCrashes: number;
  /** Runs that generated a catch-up window, late deliveries, operator actions or pauseAfterFailures. */
  withWindow: number;
  withOperator: number;
  withPauseAfterFailures: number;
  operatorPauses: number;
  operatorResumes: number;
  /** The operator's cancels by outcome (cancelled, refused, or threw), and the refusals that said "too late". */
  cancels: Record<string, number>;
  cancelsTooLate: number;
  selfPauses: number;
  firesHeldBack: number;
  reconcilerTicks: number;
  reconcilerRuns: number;
  reconcilerRequeues: number;
  bounds?: TimeBounds;
}

export interface PolicyReport {
  readonly seed: number;
  readonly requestedRuns: number;
  readonly tally: PolicyTally;
  readonly elapsedMs: number;
  readonly failure?: { readonly plan: PolicyPlan; readonly violations: PolicyViolation[]; readonly trace: string };
}

export async function simulatePolicyPlan(p: PolicyPlan) {
  const outcome = await runWorld(p.plan, { scenario: p.scenario });
  return { outcome, violations: checkPolicyInvariants(outcome, p.scenario) };
}

/** Many generated policy plans, with fast-check (reproducible from the seed; the failing plan is shrunk). */
export async function simulatePolicies(options: {
  runs: number;
  seed: number;
  onRun?: (done: number) => void;
  /** The plans to generate; default policyPlan (cancelPlan: every run has operator cancels). */
  plans?: fc.Arbitrary<PolicyPlan>;
}): Promise<PolicyReport> {
  const tally: PolicyTally = {
    runs: 0,
    events: 0,
    byPolicy: {},
    statuses: {},
    skipReasons: {},
    buffered: 0,
    overlapNotChecked: 0,
    workerCrashes: 0,
    withWindow: 0,
    withOperator: 0,
    withPauseAfterFailures: 0,
    operatorPauses: 0,
    operatorResumes: 0,
    cancels: {},
    cancelsTooLate: 0,
    selfPauses: 0,
    firesHeldBack: 0,
    reconcilerTicks: 0,
    reconcilerRuns: 0,
    reconcilerRequeues: 0,
  };
  const started = performance.now();
  let failing = false;
  const property = fc.asyncProperty(options.plans ?? policyPlan, async (p) => {
    const { outcome, violations } = await simulatePolicyPlan(p);
    if (!failing) {
      count(tally, outcome, p.scenario);
      options.onRun?.(tally.runs);
    }
    if (violations.length > 0) failing = true;
    return violations.length === 0;
  });
  const details = await fc.check(property, { numRuns: options.runs, seed: options.seed });
  const report = { seed: options.seed, requestedRuns: options.runs, tally, elapsedMs: performance.now() - started };
  if (!details.failed) return report;
  if (details.counterexample === null) throw details.errorInstance ?? new Error('policy simulation failed');
  const [plan] = details.counterexample;
  const replay = await simulatePolicyPlan(plan);
  return { ...report, failure: { plan, violations: replay.violations, trace: formatTrace(replay.outcome.trace) } };
}

function count(t: PolicyTally, o: WorldOutcome, scenario: PolicyScenario): void {
  const bump = (r: Record<string, number>, k: string) => {
    r[k] = (r[k] ?? 0) + 1;
  };
  t.runs++;
  t.events += o.events;
  t.workerCrashes += o.workerCrashes;
  bump(t.byPolicy, scenario.overlap);
  for (const row of o.rows) {
    bump(t.statuses, String(row?.status ?? 'none'));
    if (row?.status === 'SKIPPED') bump(t.skipReasons, String(row.skipReason));
  }
  t.buffered += o.firstBufferedAt.size;
  if (!isOverlapChecked(o)) t.overlapNotChecked++;
  if (scenario.catchupWindowSeconds !== undefined || scenario.others.some((x) => x.lateMs !== undefined))
    t.withWindow++;
  if (scenario.operator !== undefined) t.withOperator++;
  if (scenario.pauseAfterFailures !== undefined) t.withPauseAfterFailures++;
  t.operatorPauses += o.operatorActions.filter((a) => a.outcome === 'paused').length;
  t.operatorResumes += o.operatorActions.filter((a) => a.outcome === 'resumed').length;
  for (const a of o.operatorActions.filter((x) => x.action === 'cancel')) bump(t.cancels, a.outcome ?? 'threw');
  t.cancelsTooLate += o.trace.filter(
    (l) => l.who.startsWith('operator') && l.what.includes('refused: too late'),
  ).length;
  t.selfPauses += o.jobStateWrites.filter(selfPause).length;
  t.firesHeldBack += o.firesHeldBack.length;
  t.reconcilerTicks += o.reconcilerTicks;
  t.reconcilerRuns += o.reconcilerRuns;
  t.reconcilerRequeues += o.reconcilerRequeues;
  // The horizon differs per scenario (its spread of occurrences): keep the longest.
  const bounds = timeBoundsOf(o);
  if (t.bounds === undefined || bounds.horizonS > t.bounds.horizonS) t.bounds = bounds;
}

export function formatPolicyReport(r: PolicyReport): string {
  const t = r.tally;
  const lines = [
    `policy world: seed ${r.seed}; ${t.runs} of ${r.requestedRuns} runs in ${(r.elapsedMs / 1000).toFixed(1)} s (${t.events} events)`,
  ];
  if (r.failure) {
    lines.push(
      'POLICY INVARIANT VIOLATED:',
      ...r.failure.violations.map((v) => `  ${v.invariant} (${POLICY_INVARIANTS[v.invariant]}): ${v.message}`),
      `plan: ${JSON.stringify(r.failure.plan)}`,
      'trace:',
      r.failure.trace,
    );
    return lines.join('\n');
  }
  const list = (rec: Record<string, number>) =>
    Object.entries(rec)
      .sort()
      .map(([k, v]) => `${v} ${k}`)
      .join(', ');
  lines.push(
    'all policy invariants held in every run:',
    ...Object.entries(POLICY_INVARIANTS).map(([id, text]) => `  ${id}. ${text}`),
    `runs by policy: ${list(t.byPolicy)}`,
    `occurrences: ${list(t.statuses)}; skipped for ${list(t.skipReasons) || 'nothing'}; ${t.buffered} were BUFFERED at some point`,
    `faults: ${t.workerCrashes} worker crashes; ${t.overlapNotChecked} runs froze a worker past the margin (overlap measured, not required)`,
    `catch-up and pauses: ${t.withWindow} runs with a catch-up window or late deliveries, ${t.withOperator} with operator actions, ${t.withPauseAfterFailures} with pauseAfterFailures; ` +
      `${t.operatorPauses} operator pauses and ${t.operatorResumes} resumes written, ${t.selfPauses} pauses after failures, ${t.firesHeldBack} fire times held back by a disabled schedule`,
    `operator cancels: ${list(t.cancels) || 'none'}; ${t.cancelsTooLate} refused as too late (past the commit point)`,
    ...boundsLines(
      t.bounds,
      `${t.reconcilerTicks} ticks, ${t.reconcilerRuns} of them with a row stuck by its own test (run in full), ${t.reconcilerRequeues} occurrences re-enqueued`,
      "the longest of the runs: a run's horizon adds its scenario's last fire time or operator action",
    ),
  );
  return lines.join('\n');
}
