import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import type { Row as Item } from '../../sim/fakes/dynamo-expressions';
import { faults } from '../../sim/fakes/fake-aws';
import { type Harness, makeHarness, SCHEDULED, T0, timedJob } from '../support/harness';

let h: Harness;
let runningRow: Item;

beforeEach(async () => {
  vi.useFakeTimers({ now: T0 });
  h = makeHarness({ jobs: { report: timedJob(0) } });
  await h.trigger({ jobId: 'report', scheduledTime: SCHEDULED });
  runningRow = { ...h.aws.row('report', SCHEDULED)!, status: 'RUNNING' };
  const run = h.deliver(encodeEnvelope({ jobId: 'report', scheduledTime: SCHEDULED }));
  await vi.advanceTimersByTimeAsync(1);
  await run;
});
afterEach(() => {
  h.aws.restore();
  vi.useRealTimers();
});

describe('notifier', () => {
  it('announces a SUCCEEDED occurrence once, with the report location, and records it in the row', async () => {
    expect(await h.streamChange(runningRow)).toEqual([]);
    expect(h.aws.published).toHaveLength(1);
    const message = JSON.parse(h.aws.published[0].Message);
    expect(message).toMatchObject({
      type: 'report-ready',
      jobId: 'report',
      scheduledTime: SCHEDULED,
      reportKey: `reports/report/${SCHEDULED}.txt`,
      reportUri: `s3://reports-bucket/reports/report/${SCHEDULED}.txt`,
    });
    expect(h.aws.published[0]).toMatchObject({
      MessageGroupId: 'report',
      MessageDeduplicationId: `report#${SCHEDULED}`,
    });
    expect(h.aws.row('report', SCHEDULED)).toMatchObject({
      notifiedAt: new Date(T0 + 1).toISOString(),
      notificationId: 'sns-1',
    });
  });

  it('does not announce again when the same stream record is delivered twice', async () => {
    await h.streamChange(runningRow);
    await h.streamChange(runningRow);
    expect(h.aws.published).toHaveLength(1);
  });

  it('ignores changes that are not the transition to SUCCEEDED', async () => {
    const succeeded = h.aws.row('report', SCHEDULED)!;
    expect(await h.streamChange(succeeded)).toEqual([]); // SUCCEEDED -> SUCCEEDED (e.g. the notifiedAt update)
    expect(await h.streamChange(undefined)).toEqual([]); // an INSERT image
    expect(h.aws.published).toHaveLength(0);
  });

  it('closes the crash between publishing and recording: the retry publishes with the same deduplication id and the FIFO topic delivers one', async () => {
    h.aws.failNext('UpdateItem', faults.unavailable); // recording notifiedAt fails after the publish
    const failed = await h.streamChange(runningRow);
    expect(failed).toHaveLength(1); // the stream retries this record
    expect(h.aws.row('report', SCHEDULED)?.notifiedAt).toBeUndefined();

    await vi.advanceTimersByTimeAsync(2_000); // the stream's retry, seconds later
    expect(await h.streamChange(runningRow)).toEqual([]);
    expect(h.aws.published).toHaveLength(2);
    expect(h.aws.published[0].MessageDeduplicationId).toBe(h.aws.published[1].MessageDeduplicationId);
    expect(h.aws.delivered).toHaveLength(1);
    expect(h.aws.row('report', SCHEDULED)?.notifiedAt).toBeDefined();
  });

  it('reports the failed record and the rest of the batch so the stream retries from there', async () => {
    h.aws.failNext('GetItem', faults.throttled);
    expect(await h.streamChange(runningRow)).toHaveLength(1);
    expect(h.aws.published).toHaveLength(0);
  });
});
