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

import { simRunOptions } from './sim-run-options';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '1000' },
      seed: { type: 'string' },
      redeploy: { type: 'boolean', default: false },
      minutes: { type: 'string' },
    },
  });
  const options = simRunOptions(values);
  const { runs, seed } = options;
  console.error(`simulating ${runs} registry plans with seed ${seed}…`);
  const report = await simulateRegistry({ ...options, plans: registryPlans({ redeploy: values.redeploy }) });
  console.log(formatRegistryReport(report));
  if (report.failure) {
    console.error(
      `\nFAILED: seed ${seed}. Replay with: npm run sim:registry -- --runs ${runs} --seed ${seed}${values.redeploy ? ' --redeploy' : ''}`,
    );
    process.exitCode = 1;
  }
}

void main();
