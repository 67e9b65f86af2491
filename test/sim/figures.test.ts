/**
 * The original design's commentary's numbers, reproduced by simulation for the original design's worker, and the same scenarios for ours.
 * `npm run sim:figures` prints the full table (ours at the original lease too).
 */
import { describe, expect, it } from 'vitest';
import { measureDesign } from '../../sim/figures';
import { ORIGINAL, OURS } from '../../sim/variants';

describe('timing figures by simulation', () => {
  it("the original design's worker: one failed tick is absorbed, two hand the occurrence to a second worker until Complete", async () => {
    const original = await measureDesign('original design', ORIGINAL);
    expect(original.failedTicksSurvived).toBe(1);
    // The lease dies at 120 s and the job (200 s) runs on; loss surfaces only when the job ends, 80 s later: at the
    // commit point's fenced write today (at Complete in the original design, which had none), and nothing is put.
    expect(original.stoppedBy).toMatch(/^lease lost; stopping without writing/);
    expect(original.lossToAbortS).toBeGreaterThan(75);
    expect(original.twoHoldersS).toBeGreaterThan(75);
    // 1 << min(attempt, 6) s: about a minute between wake-ups once capped, so near 60 in an hour.
    expect(original.outage.wakeUps).toBeGreaterThanOrEqual(50);
    expect(original.outage.wakeUps).toBeLessThanOrEqual(60);
  });

  it('ours: several failed ticks are absorbed, and the job is aborted before the lease expires, never shared', async () => {
    const ours = await measureDesign('ours', OURS);
    expect(ours.failedTicksSurvived).toBeGreaterThanOrEqual(2);
    expect(ours.stoppedBy).toBe('aborting job');
    expect(ours.lossToAbortS).toBeLessThanOrEqual(-15);
    expect(ours.twoHoldersS).toBe(0);
    expect(ours.outage.wakeUps).toBeLessThanOrEqual(10);
    // 11 before the commit point: one more fenced write, so that an operator's cancel never races the put.
    expect(ours.requestsHappyPath).toBe(12);
    expect(ours.requestsPerRetry).toBe(5);
  });
});
