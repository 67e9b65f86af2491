/**
 * The capacity world (sim/capacity-world.ts): one job with maxConcurrency, unequal keys, crashes, lost wake-ups, lost
 * answers, duplicates; invariants C1-C3 (the cap, every waiting occurrence started within the bound, fairness).
 * Exits 1 with the smallest failing plan.
 *
 *   npm run sim:capacity -- [--runs 1000] [--seed <int>]
 */
import { parseArgs } from 'node:util';
import { formatCapacityReport, simulateCapacity } from '../sim/capacity-world';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '1000' }, seed: { type: 'string' } } });
  const runs = Number(values.runs);
  const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
  console.error(`simulating ${runs} capacity plans with seed ${seed}…`);
  const started = Date.now();
  const report = await simulateCapacity({ runs, seed });
  console.log(formatCapacityReport(report));
  console.error(`${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (report.failure) {
    console.error(`\nFAILED: seed ${seed}. Replay with: npm run sim:capacity -- --runs ${runs} --seed ${seed}`);
    process.exitCode = 1;
  }
}

void main();
