import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FRESH_IMAGE_MS } from '../../functions/protocol/announce-report';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import type { Row as Item } from '../../sim/fakes/dynamo-expressions';
import { faults } from '../../sim/fakes/fake-aws';
import { streamEvent } from '../../sim/fakes/stream-event';
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

  it('announces from the stream image: no read of the row', async () => {
    const before = h.aws.count('GetItem');
    expect(await h.streamChange(runningRow)).toEqual([]);
    expect(h.aws.count('GetItem')).toBe(before);
    expect(h.aws.published).toHaveLength(1);
  });

  it('the same stream record delivered twice within the minute: the topic delivers one, the row keeps the first record', async () => {
    // The record as the stream keeps it: the image of the transition, without notifiedAt, on every delivery.
    const record = streamEvent(runningRow, h.aws.row('report', SCHEDULED)!);
    expect((await h.notifier(record)).batchItemFailures).toEqual([]);
    await vi.advanceTimersByTimeAsync(5_000); // the whole batch re-sent after a crash further on, say
    expect((await h.notifier(record)).batchItemFailures).toEqual([]);
    expect(h.aws.published).toHaveLength(2);
    expect(h.aws.published[0].MessageDeduplicationId).toBe(h.aws.published[1].MessageDeduplicationId);
    expect(h.aws.delivered).toHaveLength(1);
    expect(h.aws.row('report', SCHEDULED)).toMatchObject({ notificationId: 'sns-1' });
  });

  it('a record older than a minute is announced from the row as it is now: an announced one is not published again', async () => {
    const record = streamEvent(runningRow, h.aws.row('report', SCHEDULED)!);
    await h.notifier(record);
    await vi.advanceTimersByTimeAsync(FRESH_IMAGE_MS + 240_000); // past the topic's deduplication window
    const reads = h.aws.count('GetItem');
    expect((await h.notifier(record)).batchItemFailures).toEqual([]);
    expect(h.aws.count('GetItem')).toBe(reads + 1);
    expect(h.aws.published).toHaveLength(1);
  });

  it('a malformed image is reported and the batch goes on', async () => {
    const succeeded = h.aws.row('report', SCHEDULED)!;
    const noKey = streamEvent(runningRow, { ...succeeded, jobId: 7 } as unknown as Item).Records[0];
    const unreadable = streamEvent(runningRow, succeeded).Records[0];
    unreadable.dynamodb = {
      ...unreadable.dynamodb,
      NewImage: { status: { S: 'SUCCEEDED' }, jobId: { BOGUS: 1 } as never },
    };
    const good = streamEvent(runningRow, succeeded).Records[0];
    const event: DynamoDBStreamEvent = { Records: [noKey, unreadable, good] };

    expect((await h.notifier(event)).batchItemFailures).toEqual([]);
    expect(h.aws.published).toHaveLength(1);
    expect(h.logs.filter((l) => l.level === 'ERROR').map((l) => l.message)).toEqual([
      'malformed stream image of a change to SUCCEEDED; not announcing from it',
      'unreadable stream record; skipped (the reconciler announces the row if it is SUCCEEDED)',
    ]);
  });

  it('an image without its report key is reported, and the row is read instead', async () => {
    const { reportKey: _, ...withoutReportKey } = h.aws.row('report', SCHEDULED)!;
    const reads = h.aws.count('GetItem');
    expect((await h.notifier(streamEvent(runningRow, withoutReportKey as Item))).batchItemFailures).toEqual([]);
    expect(h.aws.count('GetItem')).toBe(reads + 1);
    expect(h.aws.published).toHaveLength(1); // the row itself is well formed
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
    h.aws.failNext('Publish', faults.throttled);
    expect(await h.streamChange(runningRow)).toHaveLength(1);
    expect(h.aws.published).toHaveLength(0);
  });
});
