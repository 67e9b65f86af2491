/**
 * The exactly-once guarantees, end to end over HTTP against moto: the real trigger, worker and notifier handlers
 * with their real SDK clients, the event sources played by scripts/local. Assertions read the emulator's state.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { s3Client } from '../../functions/aws/clients';
import { S3ReportStore } from '../../functions/aws/report-store';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import { InvalidInputError } from '../../functions/protocol/errors';
import { reportKeyOf } from '../../functions/protocol/occurrence';
import type { ReportStore } from '../../functions/protocol/ports';
import {
  countingJob,
  HEARTBEAT,
  JOB_ID,
  occurrences,
  pipeline,
  recordHandlerRequests,
  testSettings,
  useMoto,
} from './emulator';

const emulator = useMoto();
const SETTLE_MS = 30_000;

describe('duplicate triggers', () => {
  it('records one item and runs the job once when two triggers for the same occurrence arrive at once', async () => {
    const job = countingJob();
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: job } });
    const [key] = occurrences(1);
    p.start();
    const outcomes = await p.fire([key], 2);
    const [row] = await p.waitUntilSettled([key], SETTLE_MS);
    await p.stop();

    expect(outcomes.map((o) => (o.ok ? o.result : o.error)).sort()).toEqual(['pending-re-enqueued', 'recorded']);
    const items = await p.clients.documents.send(
      new QueryCommand({
        TableName: p.resources.tableName,
        KeyConditionExpression: 'jobId = :j',
        ExpressionAttributeValues: { ':j': JOB_ID },
      }),
    );
    // One occurrence row, beside the job-state row (its running slot) that the query of the job id returns too.
    expect(items.Items?.map((i) => i.scheduledTime)).toEqual(['#job', key.scheduledTime]);
    expect(row).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
    expect(job.runs).toEqual([key.scheduledTime]);
    expect(await p.reportKeys()).toEqual([reportKeyOf(key, 'txt')]);
    expect(await p.drainAnnouncements()).toHaveLength(1);
  });

  it('suppresses a trigger that arrives after the occurrence finished: nothing is enqueued or run again', async () => {
    const { job, p, key } = await oneFinishedOccurrence();
    const late = await p.fire([key]);
    await p.stop();

    expect(late).toEqual([{ ok: true, result: 'duplicate-suppressed', attempts: 1 }]);
    expect(job.runs).toHaveLength(1);
    expect(p.workerSource.totals.received).toBe(1);
    expect(await p.drainAnnouncements()).toHaveLength(1);
  });
});

describe('rejected schedule events', () => {
  it('writes no item and enqueues nothing for a time whose UTC form is past 2199', async () => {
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: countingJob() } });
    // In range as written; +010000-01-01T00:00:59Z in UTC, a key the worker's envelope check would refuse.
    const attempt = p.trigger({ jobId: JOB_ID, scheduledTime: '9999-12-31T23:59:59-00:01' });
    await expect(attempt).rejects.toBeInstanceOf(InvalidInputError);
    await expect(attempt).rejects.toThrow(/from 1970-01-01T00:00:00Z to 2199-12-31T23:59:59Z in UTC/);

    const items = await p.clients.documents.send(new ScanCommand({ TableName: p.resources.tableName }));
    expect(items.Items).toEqual([]);
    const queue = await p.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: p.resources.jobQueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(queue.Attributes).toEqual({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
  });
});

describe('write-once reports', () => {
  it('answers a second PutObject with If-None-Match: * with 412 and keeps the first object', async () => {
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: countingJob() } });
    const reports = new S3ReportStore(s3Client(), p.resources.bucketName);
    const key = 'reports/itest/once.txt';

    expect(await reports.putIfAbsent(key, { body: 'first', contentType: 'text/plain' }, {})).toBe('created');
    expect(await reports.putIfAbsent(key, { body: 'second', contentType: 'text/plain' }, {})).toBe('existed');
    expect(await reports.exists(key)).toBe(true);
    expect(await reports.exists('reports/itest/absent.txt')).toBe(false);
    expect(await p.reportBody(key)).toBe('first');
  });

  it('adopts a report another attempt committed between its check and its put: SUCCEEDED, the first object, one announcement', async () => {
    const [key] = occurrences(1);
    const reportKey = reportKeyOf(key, 'txt');
    const job = countingJob();
    let checks = 0;
    // The earlier attempt's commit lands after this worker's HEAD said "absent" (were it asked): the race If-None-Match
    // closes.
    // (The real store is made on first use: the handlers' clients exist once the pipeline has set the endpoint.)
    const real = (): S3ReportStore => new S3ReportStore(s3Client(), p.resources.bucketName);
    const racing: ReportStore = {
      exists: async (k) => (checks++ === 0 ? false : real().exists(k)),
      putIfAbsent: (k, r, m, s) => real().putIfAbsent(k, r, m, s),
    };
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: job }, worker: { reports: racing } });
    // A first claim does not look (nothing can have committed a report before it): the put's If-None-Match meets the
    // object, and the 412 is adopted. The look-up would not have closed this race anyway.
    await p.clients.s3.send(
      new PutObjectCommand({ Bucket: p.resources.bucketName, Key: reportKey, Body: 'committed earlier' }),
    );

    p.start();
    await p.fire([key]);
    const [row] = await p.waitUntilSettled([key], SETTLE_MS);
    await p.stop();

    expect(row).toMatchObject({ status: 'SUCCEEDED', reportKey });
    expect(checks).toBe(0);
    expect(job.runs).toHaveLength(1);
    expect(await p.reportBody(reportKey)).toBe('committed earlier');
    expect(await p.reportKeys()).toEqual([reportKey]);
    expect(await p.drainAnnouncements()).toHaveLength(1);
  });

  it('acknowledges a redelivered message of a finished occurrence without running or announcing again', async () => {
    const { job, p, key } = await oneFinishedOccurrence();
    const before = await p.reportBody(reportKeyOf(key, 'txt'));
    await p.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: p.resources.jobQueueUrl, MessageBody: encodeEnvelope(key) }),
    );
    await waitFor(() => p.workerSource.totals.deleted === 2);
    await p.stop();

    expect(job.runs).toHaveLength(1);
    expect(await p.reportBody(reportKeyOf(key, 'txt'))).toBe(before);
    expect(await p.drainAnnouncements()).toHaveLength(1);
  });
});

describe('the request floor', () => {
  it('the happy path of an instant job: 10 requests, trigger 2, worker 6 (2 for the slot, 1 for the commit point; no look-up on a first claim), notifier 2', async () => {
    const job = countingJob();
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: job } });
    const requests = recordHandlerRequests();
    const [key] = occurrences(1);
    await p.fire([key]);
    expect(requests).toEqual(['PutItem', 'SendMessage']);
    p.start();
    await p.waitUntilSettled([key], SETTLE_MS);
    await p.stop();

    expect(job.runs).toHaveLength(1);
    // Lease extensions are counted apart: a busy machine runs even an instant job past a heartbeat now and then.
    const floor = requests.filter((request) => request !== HEARTBEAT);
    // In protocol order up to the commit, which nothing else can overtake: the trigger's put and enqueue, then the
    // worker's claim, running slot (overlap skip, the default) and commit point, then the report.
    expect(floor.slice(0, 6)).toEqual([
      'PutItem',
      'SendMessage',
      'UpdateItem',
      'UpdateItem',
      'UpdateItem',
      'PutObject',
    ]);
    // After it, the worker's complete and slot release race the notifier's publish and record (from the stream
    // image, no GetItem): which comes first is the machine's timing, so they are compared as a set.
    expect(floor.slice(6).sort()).toEqual(['Publish', 'UpdateItem', 'UpdateItem', 'UpdateItem']);
    expect(floor).toHaveLength(10);
  });
});

describe('concurrent workers', () => {
  it('turns M occurrences, each triggered twice, into exactly M runs, M reports and M announcements with 4 pollers', async () => {
    const m = 12;
    const job = countingJob(50);
    // allowAll: M occurrences of one job run in parallel (under the default, skip, they would yield to each other).
    const p = await pipeline(emulator, {
      jobs: { [JOB_ID]: job },
      workers: 4,
      settings: [testSettings({ overlap: 'allowAll' })],
    });
    const keys = occurrences(m);
    p.start();
    await p.fire(keys, 2);
    const rows = await p.waitUntilSettled(keys, SETTLE_MS);
    await p.stop();

    expect(rows.map((r) => r?.status)).toEqual(Array(m).fill('SUCCEEDED'));
    expect([...job.runs].sort()).toEqual(keys.map((k) => k.scheduledTime).sort());
    expect(await p.reportKeys()).toEqual(keys.map((k) => reportKeyOf(k, 'txt')).sort());
    const announced = (await p.drainAnnouncements()).map(
      (body) => (JSON.parse(body) as { scheduledTime: string }).scheduledTime,
    );
    expect(announced.sort()).toEqual(keys.map((k) => k.scheduledTime).sort());
  });
});

/** One occurrence triggered and run to SUCCEEDED, with the pipeline still running. */
async function oneFinishedOccurrence() {
  const job = countingJob();
  const p = await pipeline(emulator, { jobs: { [JOB_ID]: job } });
  const [key] = occurrences(1);
  p.start();
  await p.fire([key]);
  await p.waitUntilSettled([key], SETTLE_MS);
  return { job, p, key };
}

async function waitFor(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
