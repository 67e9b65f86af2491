import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../functions/protocol/job-settings';
import { workerLimits } from '../../functions/protocol/worker-limits';

describe('workerLimits', () => {
  it('gives the worker the longest job timeout plus the 30 s outcome reserve', () => {
    const limits = workerLimits([
      withDefaults({ id: 'a', timeoutSeconds: 120 }),
      withDefaults({ id: 'b', timeoutSeconds: 300 }),
    ]);
    expect(limits.functionTimeoutSeconds).toBe(330);
  });

  it('hides a received message six times the function timeout, the SQS-with-Lambda rule', () => {
    expect(workerLimits([withDefaults({ id: 'a', timeoutSeconds: 120 })]).queueVisibilityTimeoutSeconds).toBe(6 * 150);
  });

  it("hides a message longer than the function timeout plus the longest lease, so a redelivery never meets a dead worker's live lease", () => {
    // A short job with a long lease: 6 x 40 s would bring the message back while the lease of a worker that died at
    // the end of its run still looks live, and the redelivery would be dropped as a duplicate.
    const limits = workerLimits([
      withDefaults({ id: 'a', timeoutSeconds: 10, leaseSeconds: 900, heartbeatSeconds: 60 }),
    ]);
    expect(limits.functionTimeoutSeconds).toBe(40);
    expect(limits.queueVisibilityTimeoutSeconds).toBeGreaterThan(40 + 900);
  });

  it('never asks SQS for more than its 12 h visibility limit', () => {
    const limits = workerLimits([withDefaults({ id: 'a', timeoutSeconds: 870, leaseSeconds: 900 })]);
    expect(limits.queueVisibilityTimeoutSeconds).toBeLessThanOrEqual(12 * 3600);
  });

  it('redrives after more receives than any job has attempts, and never fewer than 5', () => {
    expect(workerLimits([withDefaults({ id: 'a', retry: { maxAttempts: 1 } })]).maxReceiveCount).toBe(6);
    expect(workerLimits([withDefaults({ id: 'a', retry: { maxAttempts: 20 } })]).maxReceiveCount).toBe(25);
  });
});

describe('workerLimits: cancelOther', () => {
  it("gives a cancelOther job's worker its lease on top of its time limit: the start waits out the cancelled run's lease", () => {
    const plain = withDefaults({ id: 'a', timeoutSeconds: 300, leaseSeconds: 120 });
    const cancelling = withDefaults({ id: 'b', timeoutSeconds: 300, leaseSeconds: 120, overlap: 'cancelOther' });
    expect(workerLimits([plain]).functionTimeoutSeconds).toBe(330);
    expect(workerLimits([plain, cancelling]).functionTimeoutSeconds).toBe(450);
  });
});
