/**
 * sim/capacity-world.ts: the invariants C1-C3 of a job's maxConcurrency hold over random plans (crashes, lost
 * wake-ups, lost answers, duplicates, skew), and each of them catches the protocol broken the way it guards against.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CapacityWrite, WaitingEntry } from '../../functions/protocol/concurrency-ports';
import { anyCapacityPlan, type CapacityPlan, runCapacityWorld, simulateCapacity } from '../../sim/capacity-world';
import { MemoryCapacityStore } from '../../sim/fakes/memory-capacity';

const noFaults = { crashes: [], diesBeforeRelease: [], lostSends: [], lostAnswers: [], duplicates: [] };
const burst = (cap: number, perKey: number[], runMs = 1_000): CapacityPlan => {
  const n = perKey.reduce((a, b) => a + b, 0);
  return { cap, perKey, burst: true, runMs: Array(n).fill(runMs), arrivalMs: Array(n).fill(0), seed: 7, ...noFaults };
};
const invariantsOf = async (plan: CapacityPlan, store?: () => MemoryCapacityStore) => [
  ...new Set((await runCapacityWorld(plan, store)).map((v) => v.invariant)),
];

/** A store whose compare-and-swap does not compare: two takes of the last unit both land. */
class NoCasStore extends MemoryCapacityStore {
  override async writeIfVersion(jobId: string, _version: number | undefined, write: CapacityWrite) {
    return super.writeIfVersion(jobId, this.rows.get(jobId)?.version, write);
  }
}
/** A waiting list in arrival order (first come, first served): the big key's backlog goes first. */
class FifoStore extends MemoryCapacityStore {
  override async firstWaiting(jobId: string, limit: number): Promise<readonly WaitingEntry[]> {
    const all = [...(this.waiting.get(jobId)?.values() ?? [])];
    return all.sort((a, b) => a.since - b.since).slice(0, limit);
  }
}
/** Holds that never expire: a crashed worker's unit is never freed. */
class NeverExpiringStore extends MemoryCapacityStore {
  override async read(jobId: string) {
    const row = await super.read(jobId);
    return row && { ...row, holds: row.holds.map((h) => ({ ...h, expiresAt: Number.MAX_SAFE_INTEGER })) };
  }
}

describe('capacity world', () => {
  it('holds C1-C3 on 300 random plans (seed 3434)', async () => {
    const report = await simulateCapacity({ runs: 300, seed: 3434 });
    expect(report.failure).toBeUndefined();
    expect(report.runs).toBe(300);
  });

  it('C1 catches a take that is not a compare-and-swap', async () => {
    const plans = fc.sample(
      anyCapacityPlan.map((p) => ({ ...p, ...burst(1, [4, 4]), seed: p.seed })),
      { numRuns: 20, seed: 1 },
    );
    const found = await Promise.all(plans.map((p) => invariantsOf(p, () => new NoCasStore())));
    expect(found.flat()).toContain('C1');
  });

  it('C3 catches a waiting list served first come, first served', async () => {
    // The big key's ten arrive before the small key's one: FIFO serves all ten first.
    expect(await invariantsOf(burst(1, [10, 1]))).toEqual([]);
    const plans = fc.sample(fc.integer({ min: 1, max: 2 ** 30 }), { numRuns: 10, seed: 2 }).map((seed) => ({
      ...burst(1, [10, 1]),
      seed,
    }));
    const found = await Promise.all(plans.map((p) => invariantsOf(p, () => new FifoStore())));
    expect(found.flat()).toContain('C3');
  });

  it("C2 catches holds that never expire: a crashed worker's unit stays taken and the rest wait for good", async () => {
    const plan = { ...burst(1, [2, 2]), diesBeforeRelease: [0] };
    expect(await invariantsOf(plan)).toEqual([]);
    expect(await invariantsOf(plan, () => new NeverExpiringStore())).toContain('C2');
  });
});
