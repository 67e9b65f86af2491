/**
 * An operator's cancel racing the worker (process-delivery.ts's commit point), through the worker handler over the
 * real adapters and the stateful fakes: a running job is stopped within one heartbeat and puts no report; a job that
 * ends after the cancel finds its commit point refused; a cancel after the commit point is refused.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { cancelOccurrence } from '../../functions/protocol/cancel-occurrence';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import { LeaseLostError } from '../../functions/protocol/errors';
import { type Harness, makeHarness, SCHEDULED, startDelivery, T0, timedJob, useHarnessTime } from '../support/harness';

const KEY = { jobId: 'report', scheduledTime: SCHEDULED };
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

useHarnessTime();

/** The operator's cancel, over the same fake table as the worker (the SDK mock is per client class). */
function cancel(note = 'upstream broken') {
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-central-1', credentials }));
  const store = new OperatorOccurrenceStore(doc, 'occurrences');
  return cancelOccurrence({ store, clock: { now: () => Date.now() }, newId: () => 'u1' }, KEY, { by: 'alice', note });
}

const row = (h: Harness) => h.aws.row(KEY.jobId, KEY.scheduledTime);

describe('an operator cancel racing the worker', () => {
  it('stops a running job within one heartbeat (45 s), puts no report, and leaves the row CANCELLED', async () => {
    const job = timedJob(300_000);
    const h = makeHarness({ jobs: { report: job } });
    await h.trigger(KEY);
    const run = startDelivery(h, encodeEnvelope(KEY));
    await vi.advanceTimersByTimeAsync(50_000);

    expect(await cancel()).toMatchObject({ outcome: 'cancelled', stopsBy: expect.any(String) });
    await vi.advanceTimersByTimeAsync(45_000);

    expect(run.settled()).toBe(true);
    expect(job.log.abortReason).toBeInstanceOf(LeaseLostError);
    expect(job.log.abortedAt! - (T0 + 50_000)).toBeLessThanOrEqual(45_000);
    expect(await run.promise).toEqual([]); // acknowledged: nothing is left to run
    expect(h.aws.count('PutObject')).toBe(0);
    expect(row(h)).toMatchObject({
      status: 'CANCELLED',
      cancelledByOperator: 'alice',
      cancelNote: 'upstream broken',
      leaseId: 'cancelled-by-operator-u1',
    });
    expect(row(h)?.committingLease).toBeUndefined();
  });

  it('a job that returns after the cancel, before any heartbeat, finds its commit point refused and puts nothing', async () => {
    const job = timedJob(10_000);
    const h = makeHarness({ jobs: { report: job } });
    await h.trigger(KEY);
    const run = startDelivery(h, encodeEnvelope(KEY));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await cancel()).toMatchObject({ outcome: 'cancelled' });

    await vi.advanceTimersByTimeAsync(10_000);
    expect(await run.promise).toEqual([]);
    expect(job.log.runs).toBe(1);
    expect(h.aws.count('PutObject')).toBe(0);
    expect(row(h)?.status).toBe('CANCELLED');
    expect(h.logs.some((l) => l.message.startsWith('lease lost'))).toBe(true);
  });

  it('on the happy path the worker writes its commit point before the put, and a cancel after it is refused', async () => {
    const job = timedJob(10_000);
    const h = makeHarness({ jobs: { report: job } });
    await h.trigger(KEY);
    const run = startDelivery(h, encodeEnvelope(KEY));
    await vi.advanceTimersByTimeAsync(10_000);
    await run.promise;

    expect(row(h)).toMatchObject({ status: 'SUCCEEDED', committingLease: 'lease-1' });
    expect(await cancel()).toMatchObject({ outcome: 'refused', status: 'SUCCEEDED' });
  });

  it('cancels a PENDING occurrence: its message is then acknowledged without running the job', async () => {
    const job = timedJob(1_000);
    const h = makeHarness({ jobs: { report: job } });
    await h.trigger(KEY);
    expect(await cancel()).toMatchObject({ outcome: 'cancelled', previous: { status: 'PENDING' } });

    expect(await h.deliver(encodeEnvelope(KEY))).toEqual([]);
    expect(job.log.runs).toBe(0);
    expect(row(h)?.status).toBe('CANCELLED');
  });
});
