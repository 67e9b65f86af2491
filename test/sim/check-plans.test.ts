/** sim/check-plans.ts: what the registry and keyed worlds' many-plan runs rest on. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPlans } from '../../sim/check-plans';

const simulate = async (n: number) => ({ n, violations: n >= 50 ? [`${n} is too big`] : [] });

describe('checkPlans', () => {
  it('passes when no plan violates, counting every run', async () => {
    const counted: number[] = [];
    const result = await checkPlans({
      plans: fc.integer({ min: 0, max: 49 }),
      simulate,
      count: (n) => counted.push(n),
      runs: 40,
      seed: 3,
      world: 'test',
    });
    expect(result.failure).toBeUndefined();
    expect(counted).toHaveLength(40);
  });

  it('shrinks a failing plan to the smallest and replays it; the shrinking runs are not counted', async () => {
    let counted = 0;
    const result = await checkPlans({
      plans: fc.integer({ min: 0, max: 1000 }),
      simulate,
      count: () => counted++,
      runs: 200,
      seed: 3,
      world: 'test',
    });
    expect(result.failure?.plan).toBe(50);
    expect(result.failure?.replay.violations).toEqual(['50 is too big']);
    expect(result.failure?.shrinks).toBeGreaterThan(0);
    // Runs up to and including the first failing one; none of the shrinking.
    expect(counted).toBeLessThan(200);
    expect(counted).toBeGreaterThan(0);
  });
});
