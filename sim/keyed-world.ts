/**
 * The keyed world: occurrences of several schedule keys of one job that takes schedules at run time, in the world
 * of sim/world.ts (the real trigger, worker, notifier and reconciler over the fakes, with the core's series: the
 * occurrence table's partition, the running slot and the overlap policy are per (job, key)), under the fault plans
 * of sim/plan.ts (crashes, freezes and lease expiries, duplicate deliveries, lost responses, skew, an upstream
 * outage). Occurrences of different keys are often due at the same time or while another key's slow run holds its
 * slot: "one customer's slow report never skips another's".
 *
 * Invariants:
 *   K1 per-key overlap: two leases of the SAME series never run the job at once (unless allowAll; within the skew
 *      bound, as P3), while different keys' runs may
 *   K2 an occurrence is never SKIPPED, BUFFERED or CANCELLED because of another key: its yieldedTo names a time its
 *      own series' slot held, its cancelledBy an occurrence of its own key, and it was BUFFERED only in its own
 *      series' buffer
 *   K3 per occurrence, as the policy world's P1, P2, P4 and P5: at most one report, at reports/{job}/{key}/{time};
 *      announced exactly once if SUCCEEDED, never otherwise; ends SUCCEEDED, FAILED, SKIPPED or CANCELLED; the row
 *      tells the truth and keeps its status index key and worker
 *   K4 no write by a worker that lost its lease
 *   K5 a pause of the whole job (`occurrences pause`, on some runs, maybe resumed later): no attempt claimed while it
 *      stands (later than the worker's pause cache and the skew bound after its write) starts its job, whatever its
 *      key; and it strands no key's buffer: an occurrence still BUFFERED at the end is reported with what heads its
 *      buffer (the case it missed once: b1 SKIPPED as paused but left at the head, b2 behind it never woken)
 */
import fc from 'fast-check';
import { OVERLAP_POLICIES } from '../functions/protocol/job-settings';
import { reportKeyOf } from '../functions/protocol/occurrence';
import { seriesOf } from '../functions/protocol/schedule-key';
import { WHOLE_JOB_PAUSE_CACHE_MS } from '../functions/protocol/whole-job-pause';
import { checkPlans } from './check-plans';
import type { Row } from './fakes/dynamo-expressions';
import { isOverlapChecked, sideEffectSpans } from './invariants';
import type { WorldOutcome } from './outcome';
import { anyPlan, BOUNDS, type FaultPlan } from './plan';
import { formatTrace } from './simulate';
import {
  JOB_ID,
  type OperatorAction,
  occurrenceIdOf,
  type PolicyScenario,
  runWorld,
  type ScenarioOccurrence,
  scenarioOccurrences,
  T0,
  WORKER_ID,
} from './world';

export type KeyedInvariantId = 'K1' | 'K2' | 'K3' | 'K4' | 'K5';

export const KEYED_INVARIANTS: Readonly<Record<KeyedInvariantId, string>> = {
  K1: 'per-key overlap: two leases of the same series never run the job at once (unless allowAll), within the skew bound',
  K2: "never SKIPPED, BUFFERED or CANCELLED because of another key: yieldedTo is a time its own series' slot held, cancelledBy an occurrence of its own key, BUFFERED only in its own series' buffer",
  K3: 'per occurrence: at most one report, under its key; announced once if SUCCEEDED, never otherwise; ends SUCCEEDED, FAILED, SKIPPED or CANCELLED; the row tells the truth',
  K4: 'no write by a worker that lost its lease; the status index key and the worker kept after every write',
  K5: "a whole-job pause: no attempt claimed while it stands (past the worker's pause cache and the skew bound) starts its job, whatever its key; no key's buffer is left stranded (nothing ends BUFFERED)",
};

export interface KeyedViolation {
  readonly invariant: KeyedInvariantId;
  readonly message: string;
}

export interface KeyedPlan {
  readonly plan: FaultPlan;
  readonly scenario: PolicyScenario;
}

/** Two or three keys; two to five more occurrences, each of one key, often at the same second as another key's. */
/**
 * On half the runs, the operator pauses the whole job (pauseJob on the job's own state row) while occurrences of the
 * keys are due, running or BUFFERED, and on most of those resumes it later.
 */
const wholeJobPause = fc.option(
  fc.record({
    // Two more occurrences of the first key soon after the first: under a buffer policy they wait in its buffer when
    // the pause lands, and are woken (and SKIPPED as paused) while it lasts.
    burstSeconds: fc.tuple(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 30 })),
    // Often while the first occurrences run and the ones behind them wait in their key's buffer.
    atMs: fc.oneof(fc.integer({ min: 5_000, max: 60_000 }), fc.integer({ min: 1_000, max: 240_000 })),
    resumeAfterMs: fc.option(fc.integer({ min: 5_000, max: 1_200_000 }), { nil: undefined, freq: 4 }),
  }),
  { nil: undefined, freq: 2 },
);

const operatorOf = (pause: { atMs: number; resumeAfterMs?: number } | undefined): OperatorAction[] | undefined => {
  if (pause === undefined) return undefined;
  const actions: OperatorAction[] = [{ atMs: pause.atMs, action: 'pause' }];
  if (pause.resumeAfterMs !== undefined) actions.push({ atMs: pause.atMs + pause.resumeAfterMs, action: 'resume' });
  return actions;
};

export const keyedScenario: fc.Arbitrary<PolicyScenario> = fc
  .record({
    pause: wholeJobPause,
    overlap: fc.constantFrom(...OVERLAP_POLICIES),
    keys: fc.constantFrom(['k0', 'k1'], ['k0', 'k1', 'k2'], ['tenant:42', 'user@example.com']),
    others: fc.array(
      fc.record({
        afterMs: fc.oneof(
          fc.constant(0),
          fc.integer({ min: 1, max: 240 }).map((s) => s * 1000),
        ),
        jobMs: fc.integer({ min: 1_000, max: 150_000 }),
        key: fc.nat({ max: 2 }),
      }),
      { minLength: 2, maxLength: 5 },
    ),
  })
  .map(({ pause, overlap, keys, others }) => {
    // One occurrence per (key, second): the first is keys[0] at 0.
    const seen = new Set([`0|0`]);
    const burst = (pause?.burstSeconds ?? []).map((s) => ({ afterMs: s * 1000, jobMs: 1_000, key: 0 }));
    const unique = [...burst, ...others]
      .map((o) => ({ ...o, key: o.key % keys.length }))
      .filter((o) => {
        const id = `${o.key}|${o.afterMs}`;
        if (seen.has(id)) return false;
        seen.add(id);
        return true;
      });
    const operator = operatorOf(pause);
    return { overlap, keys, others: unique, ...(operator && { operator }) };
  });

export const keyedPlan: fc.Arbitrary<KeyedPlan> = fc.record({ plan: anyPlan, scenario: keyedScenario });

const TERMINAL = ['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED'];
const at = (t: number) => `+${((t - T0) / 1000).toFixed(3)} s`;
const keyOfId = (id: string) => (id.includes('|') ? id.slice(0, id.indexOf('|')) : '');

export function checkKeyedInvariants(o: WorldOutcome, scenario: PolicyScenario): KeyedViolation[] {
  const violations: KeyedViolation[] = [];
  const fail = (invariant: KeyedInvariantId, message: string) => violations.push({ invariant, message });
  const occurrences = scenarioOccurrences(scenario);
  const seriesOfOcc = (x: ScenarioOccurrence) => seriesOf({ jobId: JOB_ID, ...x });
  for (const [i, x] of occurrences.entries()) {
    const id = occurrenceIdOf(x);
    const row = o.rows[i];
    const own = reportKeyOf({ jobId: JOB_ID, ...x }, 'txt');
    const reports = [...o.objects.keys()].filter((k) => k.startsWith(own.replace(/\.txt$/, '.')));
    if (reports.length > 1) fail('K3', `${id}: ${reports.length} report objects`);
    const announced = o.announcedTimes.filter((t) => t === id).length;
    if (row?.status === 'SUCCEEDED' && announced !== 1) fail('K3', `${id}: SUCCEEDED, announced ${announced} times`);
    if (row?.status !== 'SUCCEEDED' && announced > 0) fail('K3', `${id}: ${String(row?.status)}, announced`);
    if (row === undefined || !TERMINAL.includes(String(row.status)))
      fail('K3', `${id}: ended ${String(row?.status ?? 'without a row')}`);
    for (const problem of rowProblems(row, o, own)) fail('K3', `${id}: ${problem}`);
    for (const problem of otherKeyProblems(o, x, row, occurrences, seriesOfOcc(x))) fail('K2', `${id}: ${problem}`);
  }
  for (const w of o.overwrites) fail('K3', `${w.who} ${w.what}`);
  for (const w of o.staleWrites) fail('K4', `${w.who}'s ${w.what} changed a row it did not hold (${w.rowBefore})`);
  for (const mismatch of o.indexKeyMismatches) fail('K4', mismatch);
  if (scenario.overlap !== 'allowAll' && isOverlapChecked(o))
    for (const overlap of sameSeriesOverlaps(o)) fail('K1', overlap);
  for (const problem of wholeJobPauseProblems(o, occurrences)) fail('K5', problem);
  return violations;
}

/**
 * How long after the pause's write a claim may still miss it: the worker container's cached answer
 * (WHOLE_JOB_PAUSE_CACHE_MS, on the clock of whichever invocation read it), the skew between invocations, a second of
 * requests.
 */
const PAUSE_REACH_MS = WHOLE_JOB_PAUSE_CACHE_MS + BOUNDS.skewBoundMs + 1_000;

/** K5: runs started within a whole-job pause, and buffers left stranded. */
function wholeJobPauseProblems(o: WorldOutcome, occurrences: readonly ScenarioOccurrence[]): string[] {
  const problems: string[] = [];
  const spans = wholeJobPausedSpans(o);
  const within = (claimedAt: number) => spans.find((s) => s.from + PAUSE_REACH_MS < claimedAt && claimedAt < s.to);
  for (const effect of o.sideEffects) {
    const claim = o.leaseClaims.get(effect.leaseId);
    const span = claim && within(claim.at);
    if (claim && span && effect.at >= claim.at && effect.at < span.to)
      problems.push(
        `${effect.scheduledTime}: ${effect.leaseId} claimed at ${at(claim.at)} ran the job at ${at(effect.at)}, while the whole job was paused since ${at(span.from)}`,
      );
  }
  for (const [i, x] of occurrences.entries()) {
    if (o.rows[i]?.status !== 'BUFFERED') continue;
    const series = seriesOf({ jobId: JOB_ID, ...x });
    const buffer = (o.jobStateWrites.filter((w) => w.after.jobId === series).at(-1)?.after.buffer ?? []) as string[];
    const heads = buffer.slice(0, Math.max(0, buffer.indexOf(x.scheduledTime)));
    const statuses = heads.map((t) => {
      const j = occurrences.findIndex((y) => y.scheduleKey === x.scheduleKey && y.scheduledTime === t);
      return `${t} ${String(o.rows[j]?.status ?? '?')}`;
    });
    problems.push(
      `${occurrenceIdOf(x)}: stranded BUFFERED; its buffer is [${buffer.join(', ')}]${statuses.length > 0 ? `, ahead of it: ${statuses.join(', ')}` : ''}${spans.length > 0 ? ` (whole job paused at ${at(spans[0].from)})` : ''}`,
    );
  }
  return problems;
}

/** The spans (true time) the job's own state row was paused: from a pause's write to the write that lifted it. */
function wholeJobPausedSpans(o: WorldOutcome): { from: number; to: number }[] {
  const spans: { from: number; to: number }[] = [];
  for (const w of o.jobStateWrites) {
    if (w.after.jobId !== JOB_ID) continue;
    const was = w.before?.pausedAt !== undefined;
    const is = w.after.pausedAt !== undefined;
    if (!was && is) spans.push({ from: w.at, to: Number.POSITIVE_INFINITY });
    const open = spans.at(-1);
    if (was && !is && open !== undefined) open.to = w.at;
  }
  return spans;
}

function rowProblems(row: Row | undefined, o: WorldOutcome, reportKey: string): string[] {
  if (row === undefined) return [];
  const problems: string[] = [];
  if (row.status === 'SUCCEEDED' && (row.reportKey !== reportKey || !o.objects.has(reportKey)))
    problems.push(
      `SUCCEEDED with reportKey ${String(row.reportKey)} (its key's is ${reportKey}; object there: ${o.objects.has(String(row.reportKey))})`,
    );
  if (row.status === 'FAILED' && !row.lastError) problems.push('FAILED without lastError');
  if (row.status === 'SKIPPED' && !row.skipReason) problems.push('SKIPPED without skipReason');
  if (row.status === 'CANCELLED' && !row.cancelledBy) problems.push('CANCELLED without cancelledBy');
  if (row.worker !== WORKER_ID) problems.push(`names worker ${String(row.worker)}`);
  return problems;
}

/** K2 for one occurrence: what made it yield, wait or stop was of its own series. */
function otherKeyProblems(
  o: WorldOutcome,
  x: ScenarioOccurrence,
  row: Row | undefined,
  occurrences: readonly ScenarioOccurrence[],
  series: string,
): string[] {
  const problems: string[] = [];
  const ownTimes = new Set(occurrences.filter((y) => y.scheduleKey === x.scheduleKey).map((y) => y.scheduledTime));
  const stateWrites = o.jobStateWrites.filter((w) => w.after.jobId === series);
  if (row?.status === 'SKIPPED' && row.skipReason === 'overlap') {
    const to = String(row.yieldedTo);
    if (!ownTimes.has(to)) problems.push(`SKIPPED for overlap, yielding to ${to}, which is no occurrence of its key`);
    else if (!stateWrites.some((w) => w.after.slotTime === to || JSON.stringify(w.after.buffer ?? []).includes(to)))
      problems.push(`SKIPPED for overlap, yielding to ${to}, which its series' slot never held`);
  }
  if (row?.status === 'CANCELLED' && !ownTimes.has(String(row.cancelledBy)))
    problems.push(`CANCELLED by ${String(row.cancelledBy)}, which is no occurrence of its key`);
  const id = occurrenceIdOf(x);
  if (o.firstBufferedAt.has(id)) {
    const inOwnBuffer = stateWrites.some((w) => JSON.stringify(w.after.buffer ?? []).includes(x.scheduledTime));
    const inOtherBuffer = o.jobStateWrites.some(
      (w) =>
        w.after.jobId !== series &&
        JSON.stringify(w.after.buffer ?? []).includes(`"${x.scheduledTime}"`) &&
        !ownTimesOf(occurrences, String(w.after.jobId)).has(x.scheduledTime),
    );
    if (!inOwnBuffer)
      problems.push(`BUFFERED at ${at(o.firstBufferedAt.get(id) ?? 0)}, but never in its series' buffer`);
    if (inOtherBuffer) problems.push(`its time is in another series' buffer`);
  }
  return problems;
}

function ownTimesOf(occurrences: readonly ScenarioOccurrence[], series: string): Set<string> {
  return new Set(occurrences.filter((y) => seriesOf({ jobId: JOB_ID, ...y }) === series).map((y) => y.scheduledTime));
}

/** Pairs of leases of one series whose side-effect spans intersect. */
function sameSeriesOverlaps(o: WorldOutcome): string[] {
  const list = [...sideEffectSpans(o).entries()];
  const found: string[] = [];
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const [a, sa] = list[i];
      const [b, sb] = list[j];
      if (keyOfId(sa.time) !== keyOfId(sb.time)) continue;
      if (sa.from <= sb.to && sb.from <= sa.to)
        found.push(
          `side effects of ${a} (${sa.time}) and ${b} (${sb.time}) overlap at ${at(Math.max(sa.from, sb.from))}`,
        );
    }
  }
  return found;
}

/** Runs in which side effects of two different keys overlapped (what per-key overlap allows, counted). */
export function crossKeyOverlap(o: WorldOutcome): boolean {
  const list = [...sideEffectSpans(o).values()];
  return list.some((a, i) =>
    list.some((b, j) => j > i && keyOfId(a.time) !== keyOfId(b.time) && a.from <= b.to && b.from <= a.to),
  );
}

export interface KeyedTally {
  runs: number;
  events: number;
  byPolicy: Record<string, number>;
  statuses: Record<string, number>;
  skipReasons: Record<string, number>;
  buffered: number;
  crossKeyOverlaps: number;
  overlapNotChecked: number;
  workerCrashes: number;
  occurrences: number;
  /** Runs in which the operator paused the whole job, and those in which a resume followed. */
  wholeJobPauses: number;
  resumed: number;
}

export interface KeyedReport {
  readonly seed: number;
  readonly requestedRuns: number;
  readonly tally: KeyedTally;
  readonly elapsedMs: number;
  readonly failure?: { readonly plan: KeyedPlan; readonly violations: KeyedViolation[]; readonly trace: string };
}

export async function simulateKeyedPlan(p: KeyedPlan) {
  const outcome = await runWorld(p.plan, { scenario: p.scenario });
  return { outcome, violations: checkKeyedInvariants(outcome, p.scenario) };
}

export async function simulateKeyed(options: {
  runs: number;
  seed: number;
  timeLimitMs?: number;
  onRun?: (done: number) => void;
}): Promise<KeyedReport> {
  const tally: KeyedTally = {
    runs: 0,
    events: 0,
    byPolicy: {},
    statuses: {},
    skipReasons: {},
    buffered: 0,
    crossKeyOverlaps: 0,
    overlapNotChecked: 0,
    workerCrashes: 0,
    occurrences: 0,
    wholeJobPauses: 0,
    resumed: 0,
  };
  const bump = (r: Record<string, number>, k: string) => {
    r[k] = (r[k] ?? 0) + 1;
  };
  const { elapsedMs, failure } = await checkPlans({
    plans: keyedPlan,
    simulate: simulateKeyedPlan,
    count: (p, { outcome }) => {
      tally.runs++;
      tally.events += outcome.events;
      tally.workerCrashes += outcome.workerCrashes;
      bump(tally.byPolicy, p.scenario.overlap);
      const actions = p.scenario.operator ?? [];
      if (actions.some((a) => a.action === 'pause')) tally.wholeJobPauses++;
      if (actions.some((a) => a.action === 'resume')) tally.resumed++;
      for (const row of outcome.rows) {
        tally.occurrences++;
        bump(tally.statuses, String(row?.status ?? 'none'));
        if (row?.status === 'SKIPPED') bump(tally.skipReasons, String(row.skipReason));
      }
      tally.buffered += outcome.firstBufferedAt.size;
      if (crossKeyOverlap(outcome)) tally.crossKeyOverlaps++;
      if (!isOverlapChecked(outcome)) tally.overlapNotChecked++;
      options.onRun?.(tally.runs);
    },
    runs: options.runs,
    seed: options.seed,
    ...(options.timeLimitMs === undefined ? {} : { timeLimitMs: options.timeLimitMs }),
    world: 'keyed',
  });
  const report = { seed: options.seed, requestedRuns: options.runs, tally, elapsedMs };
  if (failure === undefined) return report;
  const { plan, replay } = failure;
  return { ...report, failure: { plan, violations: replay.violations, trace: formatTrace(replay.outcome.trace) } };
}

export function formatKeyedReport(r: KeyedReport): string {
  const t = r.tally;
  const lines = [
    `keyed world: seed ${r.seed}; ${t.runs} of ${r.requestedRuns} runs in ${(r.elapsedMs / 1000).toFixed(1)} s (${t.events} events, ${t.occurrences} occurrences)`,
  ];
  if (r.failure) {
    lines.push(
      'KEYED INVARIANT VIOLATED:',
      ...r.failure.violations.map((v) => `  ${v.invariant} (${KEYED_INVARIANTS[v.invariant]}): ${v.message}`),
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
      .join(', ') || 'none';
  lines.push(
    'all keyed invariants held in every run:',
    ...Object.entries(KEYED_INVARIANTS).map(([id, text]) => `  ${id}. ${text}`),
    `runs by policy: ${list(t.byPolicy)}`,
    `occurrences: ${list(t.statuses)}; skipped for ${list(t.skipReasons)}; ${t.buffered} were BUFFERED at some point`,
    `whole-job pauses: ${t.wholeJobPauses} runs (${t.resumed} resumed later)`,
    `different keys ran side by side (side effects overlapping in time) in ${t.crossKeyOverlaps} runs`,
    `faults: ${t.workerCrashes} worker crashes; ${t.overlapNotChecked} runs froze a worker past the margin (overlap measured, not required)`,
  );
  return lines.join('\n');
}
