/**
 * The bill's measured inputs on moto: what the deployed runtime writes and emits, and the deployed reconciler over
 * seeded finished rows (a few jobs, so the run stays short).
 */
import { describe, expect, it } from 'vitest';
import { measureDeployedRuntime } from '../../bench/emitted-metrics';
import { measureDeployedReconciler } from '../../bench/reconciler-deployed';
import { useBenchSession } from '../support/bench-session';

describe('the monthly bill on moto', () => {
  const session = useBenchSession();

  it("captures the deployed handlers' log lines, and no custom metric of a healthy occurrence or an idle reconciler run", async () => {
    const f = await measureDeployedRuntime(session());
    expect(f.logBytesPerOccurrence).toBeGreaterThan(0);
    expect(f.infoLines.length).toBeGreaterThan(0);
    // The detailed metrics (Started, Succeeded, JobDuration) are opt-in, and the rest are written only on a failure:
    // a healthy stack pays for no custom metric. The counting itself is bill-inputs.test.ts's, on written lines.
    expect(f.series).toEqual([]);
    expect(f.counts).toEqual({ perJob: 0, perWorker: 0, perStack: 0, reconcilerIdle: 0 });
  });

  it('runs the reconciler with the deployed thresholds over 55 h of finished rows, and reads none of them', async () => {
    const f = await measureDeployedReconciler(session(), 3);
    expect(f.seededRows).toBe(3 * Math.floor(f.seededSpanSeconds / 3600));
    // Announced successes leave the status index: the seeded window adds no query, no index entry, no read unit.
    expect(f.seeded.requests['DynamoDB.Query']).toBe(f.idle.requests['DynamoDB.Query']);
    expect(f.seeded.examined).toBe(f.idle.examined);
    expect(f.readUnitsPerOccurrence).toBe(0);
  });
});
