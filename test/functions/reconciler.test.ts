/**
 * The reconciler handler's own part: a run in which some reads or writes failed goes on with the rest, then throws
 * ReconcileIncompleteError with its report, so that the invocation counts as an error. What a run repairs is
 * protocol/reconcile.ts, tested in test/protocol/reconcile.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { STATUS_INDEX_SHARDS } from '../../functions/protocol/table-schema';
import { ReconcileIncompleteError } from '../../functions/reconciler';
import { faults } from '../../sim/fakes/fake-aws';
import {
  type Harness,
  makeHarness,
  SCHEDULED,
  TEST_STUCK_AFTER_SECONDS,
  timedJob,
  useHarnessTime,
} from '../support/harness';

const KEY = { jobId: 'report', scheduledTime: SCHEDULED };
const STUCK_MS = TEST_STUCK_AFTER_SECONDS * 1000;

let h: Harness;
useHarnessTime();

describe('reconciler: a run with failed reads or writes', () => {
  it('goes on with the other rows when one re-enqueue fails, then throws so the run counts as an error', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    const other = '2026-11-30T07:00:00Z';
    h.aws.failAlways('SendMessage', faults.unavailable);
    await expect(h.trigger(KEY)).rejects.toThrow();
    await expect(h.trigger({ jobId: 'report', scheduledTime: other })).rejects.toThrow();
    h.aws.clearFaults();
    await vi.advanceTimersByTimeAsync(3_600_000 + STUCK_MS);
    h.aws.failNext('SendMessage', faults.throttled);

    const error = await h.reconciler().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReconcileIncompleteError);
    const { report } = error as ReconcileIncompleteError;
    expect(report.errors).toBe(1);
    expect(report.fixed.map((f) => f.scheduledTime)).toEqual([other]);
    expect(
      h.logs.find((l) => l.message === 'reconciler could not re-enqueue a stuck occurrence')?.fields,
    ).toMatchObject({ ...KEY, error: expect.stringContaining('ThrottlingException') });
  });

  it('goes on with the other statuses when one index read fails', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    h.aws.failAlways('SendMessage', faults.unavailable);
    await expect(h.trigger(KEY)).rejects.toThrow();
    h.aws.clearFaults();
    await vi.advanceTimersByTimeAsync(STUCK_MS + 1_000);
    h.aws.failNext('Query', faults.unavailable); // PENDING is read first
    const error = (await h.reconciler().catch((e: unknown) => e)) as ReconcileIncompleteError;
    expect(error.report).toMatchObject({ errors: 1, fixed: [] });
    // Every shard of the other three statuses was still read.
    expect(h.aws.count('Query')).toBeGreaterThan(3 * STATUS_INDEX_SHARDS);
    // The next run reads PENDING again and repairs it.
    expect((await h.reconciler()).fixed).toHaveLength(1);
  });
});
