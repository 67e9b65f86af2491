/**
 * The keyed world (sim/keyed-world.ts): occurrences of several schedule keys of one job under an overlap policy and
 * the fault plans; invariants K1-K4 (per-key overlap, nothing stopped by another key). Exits 1 with the failing plan.
 *
 *   npm run sim:keyed -- [--runs 1000] [--seed <int>] [--minutes <stop after, with the runs done>]
 */
import { parseArgs } from 'node:util';
import { formatKeyedReport, simulateKeyed } from '../sim/keyed-world';
import { simRunOptions } from './sim-run-options';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { runs: { type: 'string', default: '1000' }, seed: { type: 'string' }, minutes: { type: 'string' } },
  });
  const options = simRunOptions(values);
  const { runs, seed } = options;
  console.error(`simulating ${runs} keyed plans with seed ${seed}…`);
  const report = await simulateKeyed(options);
  console.log(formatKeyedReport(report));
  if (report.failure) {
    console.error(`\nFAILED: seed ${seed}. Replay with: npm run sim:keyed -- --runs ${runs} --seed ${seed}`);
    process.exitCode = 1;
  }
}

void main();
