/**
 * bench/fairness-model.ts: the tenants of the figure (1,000, unequal, the largest 10,000 keys, 100,000 in
 * all), no tenant's median start delay is more than 2x its fair share in the waiting list's fair order, and the same
 * check fails for first come first served (so it measures the order, not the arithmetic).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_FAIRNESS_ASSUMPTIONS, fairnessFigures, tenantSizes } from '../../bench/fairness-model';

describe('fairness model', () => {
  it('makes 1,000 tenants of unequal size, the largest 10,000 keys, 100,000 in all', () => {
    const sizes = tenantSizes(DEFAULT_FAIRNESS_ASSUMPTIONS);
    expect(sizes).toHaveLength(1_000);
    expect(Math.max(...sizes)).toBe(10_000);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(1);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(100_000);
  });

  it("keeps every tenant's median delay within 2x its fair share; first come first served does not", () => {
    const figures = fairnessFigures();
    expect(figures.drainSeconds).toBe(20_000);
    expect(figures.worst.ratio).toBeLessThanOrEqual(2);
    for (const t of figures.tenants) expect(t.medianSeconds).toBeLessThanOrEqual(2 * Math.max(t.fairShareSeconds, 10));
    expect(figures.fifoWorst.ratio).toBeGreaterThan(2);
  });

  it("puts the tick's waiting writes over the job partition's write limit, and says how long recording takes", () => {
    const { burst } = fairnessFigures();
    expect(burst.jobPartitionWritesPerSecond).toBeGreaterThan(
      DEFAULT_FAIRNESS_ASSUMPTIONS.partitionWriteUnitsPerSecond,
    );
    expect(burst.recordSecondsAtPartitionLimit).toBe(300);
  });
});
