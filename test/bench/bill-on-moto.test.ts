/**
 * The bill's measured inputs on moto: what the deployed runtime writes and emits, and the deployed reconciler over
 * seeded finished rows (a few jobs, so the run stays short).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BenchSession } from '../../bench/bench-session';
import { measureDeployedRuntime } from '../../bench/emitted-metrics';
import { measureDeployedReconciler } from '../../bench/reconciler-deployed';
import { RECONCILE_EVERY_MINUTES } from '../../functions/protocol/worker-limits';

describe('the monthly bill on moto', () => {
  let session: BenchSession;
  beforeAll(async () => {
    session = await BenchSession.start();
  }, 60_000);
  afterAll(async () => {
    await session?.stop();
  });

  it("captures the deployed handlers' log and EMF lines: bytes, INFO lines and every metric series counted once", async () => {
    const f = await measureDeployedRuntime(session);
    expect(f.logBytesPerOccurrence).toBeGreaterThan(0);
    expect(f.infoLines.length).toBeGreaterThan(0);
    expect(f.series.length).toBeGreaterThan(0);
    const c = f.counts;
    expect(c.perJob + c.perWorker + c.perStack + c.reconcilerIdle).toBe(f.series.length);
    expect(f.series.every((s) => s.namespace === 'ScheduledJobs')).toBe(true);
  }, 120_000);

  it('runs the reconciler with the deployed thresholds: a finished row it reads, it reads in every run of its window', async () => {
    const f = await measureDeployedReconciler(session, 3);
    expect(f.seededRows).toBe(3 * Math.floor(f.seededSpanSeconds / 3600));
    expect(f.seeded.requests['DynamoDB.Query']).toBe(f.idle.requests['DynamoDB.Query']);
    if (f.seeded.examined > 0) {
      // The window between the look-back and the announce threshold, in runs, to the hour the rows are spaced by.
      const window =
        (f.thresholds.lookbackSeconds - f.thresholds.unannouncedAfterSeconds) / (RECONCILE_EVERY_MINUTES * 60);
      expect(Math.abs(f.runsPerOccurrence - window)).toBeLessThanOrEqual(3600 / (RECONCILE_EVERY_MINUTES * 60));
      // A few rows per shard fit in the half unit an empty query costs already: no extra units needed here.
    } else {
      expect(f.readUnitsPerOccurrence).toBe(0);
    }
  }, 300_000);
});
