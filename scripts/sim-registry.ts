/**
 * The registry world (sim/registry-world.ts): the schedules one job takes at run time, written by racing app calls
 * under faults, edited by hand in Scheduler, and kept by the reconciler as deployed; invariants S1-S5. Exits 1 with
 * the shrunk plan and its trace when one breaks.
 *
 *   npm run sim:registry -- [--runs 1000] [--seed <int>] [--redeploy] [--minutes <stop after, with the runs done>]
 *
 * `--redeploy` adds plans whose job template is redeployed mid-run (kept apart: see test/sim/found-bugs.test.ts).
 */
import { parseArgs } from 'node:util';
import { formatRegistryReport, registryPlans, simulateRegistry } from '../sim/registry-world';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '1000' },
      seed: { type: 'string' },
      redeploy: { type: 'boolean', default: false },
      minutes: { type: 'string' },
    },
  });
  const runs = Number(values.runs);
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  if (!Number.isSafeInteger(runs) || runs < 1)
    throw new Error(`--runs must be a positive whole number, got ${values.runs}`);
  if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be a whole number, got ${values.seed}`);
  const step = Math.max(100, Math.round(runs / 10));
  console.error(`simulating ${runs} registry plans with seed ${seed}…`);
  const report = await simulateRegistry({
    runs,
    seed,
    plans: registryPlans({ redeploy: values.redeploy }),
    ...(values.minutes === undefined ? {} : { timeLimitMs: Number(values.minutes) * 60_000 }),
    onRun: (done) => {
      if (done % step === 0 && done < runs) console.error(`  ${done} runs`);
    },
  });
  console.log(formatRegistryReport(report));
  if (report.failure) {
    console.error(
      `\nFAILED: seed ${seed}. Replay with: npm run sim:registry -- --runs ${runs} --seed ${seed}${values.redeploy ? ' --redeploy' : ''}`,
    );
    process.exitCode = 1;
  }
}

void main();
