/**
 * The attention view's time on moto at 10, 100 and 1,000 jobs (docs/console.md, "What it reads"): for each, a fresh
 * table and schedule group seeded by console-attention-seed.ts, then the view over the last day on the CLI's real
 * adapters, the median of `--runs` after one warm-up, with the requests it made by command. Printed, never asserted:
 * moto's speed is the machine's, and the requests are what test/console/attention-requests.test.ts checks.
 *
 *   npx tsx bench/console-attention-bench.ts [--runs 5]
 */
import { parseArgs } from 'node:util';
import { workerLimits } from '../functions/protocol/worker-limits';
import { createResources, localClients } from '../testing/local/local-aws';
import { startMotoServer } from '../testing/local/moto-server';
import { countedAttentionView, seedAttentionStack } from './console-attention-seed';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a whole number from 1, got ${values.runs}`);
  const moto = await startMotoServer();
  try {
    for (const jobs of [10, 100, 1_000]) {
      await moto.reset();
      const clients = localClients(moto.endpoint);
      const resources = await createResources(clients, { limits: workerLimits([]) });
      const now = Date.now();
      await seedAttentionStack(moto.endpoint, resources.tableName, jobs, now);
      const times: number[] = [];
      let counts = new Map<string, number>();
      for (let run = 0; run <= runs; run++) {
        counts = new Map();
        const started = performance.now();
        await countedAttentionView(moto.endpoint, resources.tableName, now, counts);
        // The first run warms the clients and moto up.
        if (run > 0) times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      const median = times[Math.floor(times.length / 2)];
      const requests = [...counts.values()].reduce((a, b) => a + b, 0);
      console.log(
        `${jobs} jobs: ${Math.round(median)} ms (median of ${runs}), ${requests} requests ${JSON.stringify(Object.fromEntries(counts))}`,
      );
    }
  } finally {
    await moto.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
