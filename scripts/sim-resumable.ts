/**
 * The long-jobs simulation (sim/resumable-world.ts): a two-hour resumable job under the fault plans and late yields,
 * with the six invariants and R1-R5. Exits 1 with the failing plan and what broke.
 *
 *   npm run sim:resumable -- [--runs 10000] [--seed <int>]
 */
import { parseArgs } from 'node:util';
import { simulateResumableMany } from '../sim/resumable-world';
import { boundsLines } from '../sim/simulate';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { runs: { type: 'string', default: '10000' }, seed: { type: 'string', default: '1' } },
  });
  const runs = Number(values.runs);
  const seed = Number(values.seed);
  if (!Number.isSafeInteger(runs) || runs < 1)
    throw new Error(`--runs must be a positive whole number, got ${values.runs}`);
  if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be a whole number, got ${values.seed}`);
  const started = performance.now();
  const { tally, failure } = await simulateResumableMany(runs, seed);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `resumable: ${tally.runs} runs (seed ${seed}) in ${seconds} s: ${tally.succeeded} SUCCEEDED, ${tally.failed} FAILED; ` +
      `up to ${tally.maxSegments} segments in a run; ${tally.resumedAfterLoss} runs resumed after a failed attempt, a crash or a lost lease; ` +
      `${tally.lateYields} yields the job overran, ${tally.lateYieldsPastGrace} of them past the grace`,
  );
  console.log(
    boundsLines(
      tally.bounds,
      `${tally.reconcilerTicks} ticks, ${tally.reconcilerRuns} of them with a row stuck by its own test (run in full), ${tally.reconcilerRequeues} occurrences re-enqueued`,
    ).join('\n'),
  );
  if (failure === undefined) {
    console.log('violations: 0');
    return;
  }
  console.log(
    `VIOLATION:\n  ${failure.problems.join('\n  ')}\nplan: ${JSON.stringify(failure.plan)}\nlate yields: ${JSON.stringify(failure.late)}`,
  );
  process.exitCode = 1;
}

void main();
