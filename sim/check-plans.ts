/**
 * Many generated plans of one world, with fast-check: reproducible from the seed, optionally stopped after a wall-clock
 * limit with the runs done so far, each run counted until the first violation (the shrinking runs after it are not
 * counted), and the smallest failing plan replayed for its violations and trace.
 */
import fc from 'fast-check';

export interface PlanChecks<Plan, Run extends { readonly violations: readonly unknown[] }> {
  readonly plans: fc.Arbitrary<Plan>;
  /** One run of one plan: what it did, and what broke. */
  readonly simulate: (plan: Plan) => Promise<Run>;
  /** Counts one run in the caller's tally (not called for the runs of the shrinking). */
  readonly count: (plan: Plan, run: Run) => void;
  readonly runs: number;
  readonly seed: number;
  readonly timeLimitMs?: number;
  /** What the world is called, for the error when fast-check fails without a counterexample. */
  readonly world: string;
}

export interface PlanCheckResult<Plan, Run> {
  readonly elapsedMs: number;
  /** The smallest failing plan, replayed, and how many shrinks found it. */
  readonly failure?: { readonly plan: Plan; readonly replay: Run; readonly shrinks: number };
}

export async function checkPlans<Plan, Run extends { readonly violations: readonly unknown[] }>(
  checks: PlanChecks<Plan, Run>,
): Promise<PlanCheckResult<Plan, Run>> {
  const started = performance.now();
  let failing = false;
  const property = fc.asyncProperty(checks.plans, async (plan) => {
    const run = await checks.simulate(plan);
    if (!failing) checks.count(plan, run);
    if (run.violations.length > 0) failing = true;
    return run.violations.length === 0;
  });
  const details = await fc.check(property, {
    numRuns: checks.runs,
    seed: checks.seed,
    ...(checks.timeLimitMs === undefined ? {} : { interruptAfterTimeLimit: checks.timeLimitMs }),
  });
  const elapsedMs = performance.now() - started;
  if (!details.failed) return { elapsedMs };
  if (details.counterexample === null) throw details.errorInstance ?? new Error(`${checks.world} simulation failed`);
  const [plan] = details.counterexample;
  return { elapsedMs, failure: { plan, replay: await checks.simulate(plan), shrinks: details.numShrinks } };
}
