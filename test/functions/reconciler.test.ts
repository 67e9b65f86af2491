/**
 * The reconciler handler's own part: a run in which some reads or writes failed goes on with the rest, then throws
 * ReconcileIncompleteError with its report, so that the invocation counts as an error. What a run repairs is
 * protocol/reconcile.ts, tested in test/protocol/reconcile.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { STATUS_INDEX_SHARDS, shardOf } from '../../functions/protocol/table-schema';
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
    const other = { jobId: 'report', scheduledTime: '2026-11-30T07:00:00Z' };
    h.aws.failAlways('SendMessage', faults.unavailable);
    await expect(h.trigger(KEY)).rejects.toThrow();
    await expect(h.trigger(other)).rejects.toThrow();
    h.aws.clearFaults();
    await vi.advanceTimersByTimeAsync(3_600_000 + STUCK_MS);
    h.aws.failNext('SendMessage', faults.throttled);

    const error = await h.reconciler().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReconcileIncompleteError);
    const { report } = error as ReconcileIncompleteError;
    expect(report.errors).toBe(1);
    // The shards are read in order: the row in the lower shard meets the failure, the other is still re-enqueued.
    const [first, second] = shardOf(KEY) < shardOf(other) ? [KEY, other] : [other, KEY];
    expect(report.fixed.map((f) => f.scheduledTime)).toEqual([second.scheduledTime]);
    expect(
      h.logs.find((l) => l.message === 'reconciler could not re-enqueue a stuck occurrence')?.fields,
    ).toMatchObject({ ...first, error: expect.stringContaining('ThrottlingException') });
  });

  it('goes on with the other shards when one shard cannot be read, and the next run reads it again', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    // One row in the first shard the run reads (OPEN#0), one elsewhere.
    const inFirst = { jobId: 'report', scheduledTime: timeInShard(0) };
    expect(shardOf(KEY)).not.toBe(0);
    h.aws.failAlways('SendMessage', faults.unavailable);
    await expect(h.trigger(KEY)).rejects.toThrow();
    await expect(h.trigger(inFirst)).rejects.toThrow();
    h.aws.clearFaults();
    await vi.advanceTimersByTimeAsync(3_600_000 + STUCK_MS);
    h.aws.failNext('Query', faults.unavailable);
    const error = (await h.reconciler().catch((e: unknown) => e)) as ReconcileIncompleteError;
    expect(error.report).toMatchObject({ errors: 1, fixed: [expect.objectContaining(KEY)] });
    expect(h.logs.find((l) => l.message === 'reconciler could not list occurrences')?.fields).toMatchObject({
      shard: 'OPEN#0',
    });
    // One Query per open shard, the failed one included.
    expect(h.aws.count('Query')).toBe(STATUS_INDEX_SHARDS);
    expect((await h.reconciler()).fixed).toEqual([expect.objectContaining(inFirst)]);
  });
});

describe('reconciler: what a run reads', () => {
  it('reads an idle table with one Query per open shard (64), and nothing else', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    const report = await h.reconciler();
    expect(report).toMatchObject({ examined: 0, fixed: [], errors: 0 });
    expect(h.aws.count('Query')).toBe(STATUS_INDEX_SHARDS);
    expect(h.aws.count('BatchGetItem')).toBe(0);
  });

  it('no longer examines a success once its announcement is recorded: the row has left the index', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger(KEY);
    const run = h.deliver(h.aws.sent.at(-1)!);
    await vi.advanceTimersByTimeAsync(2_000);
    await run;
    const succeeded = h.aws.row(KEY.jobId, KEY.scheduledTime)!;
    expect(succeeded).toMatchObject({ status: 'SUCCEEDED', statusShard: `OPEN#${shardOf(KEY)}` });
    // Unannounced, it is examined (and left alone: too young to be owed an announcement).
    expect(await h.reconciler()).toMatchObject({ examined: 1, fixed: [] });

    expect(await h.streamChange({ ...succeeded, status: 'RUNNING' })).toEqual([]);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).not.toHaveProperty('statusShard');
    const before = { queries: h.aws.count('Query'), batchGets: h.aws.count('BatchGetItem') };
    expect(await h.reconciler()).toMatchObject({ examined: 0, fixed: [] });
    expect(h.aws.count('Query') - before.queries).toBe(STATUS_INDEX_SHARDS);
    expect(h.aws.count('BatchGetItem')).toBe(before.batchGets);
  });
});

/** A scheduled time (a few seconds after SCHEDULED) whose occurrence of job `report` is in this shard. */
function timeInShard(shard: number): string {
  for (let second = 1; second < 10_000; second++) {
    const scheduledTime = new Date(Date.parse(SCHEDULED) + second * 1000).toISOString().replace('.000Z', 'Z');
    if (shardOf({ jobId: 'report', scheduledTime }) === shard) return scheduledTime;
  }
  throw new Error(`no second in shard ${shard}`);
}
