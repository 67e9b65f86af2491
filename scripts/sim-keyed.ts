/**
 * The keyed world (sim/keyed-world.ts): occurrences of several schedule keys of one job under an overlap policy and
 * the fault plans; invariants K1-K4 (per-key overlap, nothing stopped by another key). Exits 1 with the failing plan.
 *
 *   npm run sim:keyed -- [--runs 1000] [--seed <int>] [--minutes <stop after, with the runs done>]
 */
import { parseArgs } from 'node:util';
import { formatKeyedReport, simulateKeyed } from '../sim/keyed-world';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { runs: { type: 'string', default: '1000' }, seed: { type: 'string' }, minutes: { type: 'string' } },
  });
  const runs = Number(values.runs);
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  if (!Number.isSafeInteger(runs) || runs < 1)
    throw new Error(`--runs must be a positive whole number, got ${values.runs}`);
  if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be a whole number, got ${values.seed}`);
  const step = Math.max(100, Math.round(runs / 10));
  console.error(`simulating ${runs} keyed plans with seed ${seed}…`);
  const report = await simulateKeyed({
    runs,
    seed,
    ...(values.minutes === undefined ? {} : { timeLimitMs: Number(values.minutes) * 60_000 }),
    onRun: (done) => {
      if (done % step === 0 && done < runs) console.error(`  ${done} runs`);
    },
  });
  console.log(formatKeyedReport(report));
  if (report.failure) {
    console.error(`\nFAILED: seed ${seed}. Replay with: npm run sim:keyed -- --runs ${runs} --seed ${seed}`);
    process.exitCode = 1;
  }
}

void main();
