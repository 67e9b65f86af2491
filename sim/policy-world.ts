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
 *      yieldedTo); CANCELLED ⇒ cancelledBy; every write keeps the status index key and the worker
 *   P6 bufferAll: the BUFFERED occurrences start in scheduled-time order: one BUFFERED before a later BUFFERED one
 *      first started starts before it (an occurrence that took the free slot before an earlier one was recorded or
 *      delivered runs first: the buffer orders waiting occurrences, not arrivals)
 */
import fc from 'fast-check';
import { OVERLAP_POLICIES } from '../functions/protocol/job-settings';
import type { Row } from './fakes/dynamo-expressions';
import { isOverlapChecked, sideEffectSpans } from './invariants';
import type { WorldOutcome } from './outcome';
import { anyPlan, type FaultPlan } from './plan';
import { formatTrace } from './simulate';
import { JOB_ID, type PolicyScenario, runWorld, scenarioTimes, T0, WORKER_ID } from './world';

export type PolicyInvariantId = 'P1' | 'P2' | 'P3' | 'P4' | 'P5' | 'P6';

export const POLICY_INVARIANTS: Readonly<Record<PolicyInvariantId, string>> = {
  P1: 'at most one report object per occurrence, never overwritten',
  P2: 'each SUCCEEDED occurrence announced exactly once, nothing else announced',
  P3: 'no write by a worker that lost its lease; no overlapping job side effects within the skew bound (across occurrences too, unless allowAll)',
  P4: 'every occurrence ends SUCCEEDED, FAILED, SKIPPED or CANCELLED',
  P5: 'every row tells the truth: SUCCEEDED ⇒ report; FAILED ⇒ lastError; SKIPPED ⇒ skipReason (overlap ⇒ yieldedTo); CANCELLED ⇒ cancelledBy; index key and worker kept after every write',
  P6: 'bufferAll: the BUFFERED occurrences start in scheduled-time order (one BUFFERED before a later BUFFERED one first started starts before it)',
};

export interface PolicyViolation {
  readonly invariant: PolicyInvariantId;
  readonly message: string;
}

export interface PolicyPlan {
  readonly plan: FaultPlan;
  readonly scenario: PolicyScenario;
}

/** One to three more occurrences, within a few minutes of the first, working from a second to over two minutes. */
export const policyPlan: fc.Arbitrary<PolicyPlan> = fc.record({
  plan: anyPlan,
  scenario: fc.record({
    overlap: fc.constantFrom(...OVERLAP_POLICIES),
    others: fc.array(
      fc.record({ afterMs: fc.integer({ min: 5_000, max: 300_000 }), jobMs: fc.integer({ min: 1_000, max: 150_000 }) }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
});

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
    if (row === undefined || !['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED'].includes(String(row.status)))
      fail('P4', `${time}: ended ${String(row?.status ?? 'without a row')}`);
    for (const problem of rowProblems(row, o)) fail('P5', `${time}: ${problem}`);
  }
  for (const w of o.overwrites) fail('P1', `${w.who} ${w.what}`);
  for (const w of o.staleWrites) fail('P3', `${w.who}'s ${w.what} changed a row it did not hold (${w.rowBefore})`);
  if (isOverlapChecked(o)) for (const overlap of overlaps(o, scenario.overlap !== 'allowAll')) fail('P3', overlap);
  for (const mismatch of o.indexKeyMismatches) fail('P5', mismatch);
  if (scenario.overlap === 'bufferAll') for (const problem of bufferOrderProblems(o, times)) fail('P6', problem);
  return violations;
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
  if (row.status === 'CANCELLED' && !row.cancelledBy) problems.push('CANCELLED without cancelledBy');
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

function bufferOrderProblems(o: WorldOutcome, times: readonly string[]): string[] {
  // Started: past the policy, with the slot (a failed attempt's retry is the same run).
  const firstRun = (time: string) => o.firstStartedAt.get(time);
  const problems: string[] = [];
  for (const x of times) {
    const bufferedAt = o.firstBufferedAt.get(x);
    const xRan = firstRun(x);
    if (bufferedAt === undefined || xRan === undefined) continue;
    for (const y of times) {
      const yRan = firstRun(y);
      if (y > x && o.firstBufferedAt.has(y) && yRan !== undefined && bufferedAt < yRan && xRan > yRan)
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
}

export interface PolicyReport {
  readonly seed: number;
  readonly requestedRuns: number;
  readonly tally: PolicyTally;
  readonly elapsedMs: number;
  readonly failure?: { readonly plan: PolicyPlan; readonly violations: PolicyViolation[]; readonly trace: string };
}

export async function simulatePolicyPlan(p: PolicyPlan) {
  const outcome = await runWorld(p.plan, { scenario: p.scenario, reconcile: true });
  return { outcome, violations: checkPolicyInvariants(outcome, p.scenario) };
}

/** Many generated policy plans, with fast-check (reproducible from the seed; the failing plan is shrunk). */
export async function simulatePolicies(options: {
  runs: number;
  seed: number;
  onRun?: (done: number) => void;
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
  };
  const started = performance.now();
  let failing = false;
  const property = fc.asyncProperty(policyPlan, async (p) => {
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
  );
  return lines.join('\n');
}
