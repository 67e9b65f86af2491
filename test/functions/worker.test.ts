/**
 * The worker handler's own part: a batch of messages with a result for each, a delivery that throws before an
 * outcome is recorded, the invocation's deadline, and a job without an implementation. What it does with one message
 * is protocol/process-delivery.ts, tested in test/protocol/process-delivery.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import { faults } from '../../sim/fakes/fake-aws';
import {
  type Harness,
  lambdaContext,
  makeHarness,
  SCHEDULED,
  SEED_TIMING,
  sqsEvent,
  startDelivery as startDeliveryOn,
  T0,
  timedJob,
  useHarnessTime,
} from '../support/harness';

const KEY = { jobId: 'report', scheduledTime: SCHEDULED };
const MESSAGE = encodeEnvelope(KEY);

let h: Harness;

useHarnessTime();

const startDelivery = (body = MESSAGE, remainingMs?: number) => startDeliveryOn(h, body, remainingMs);
const recordOccurrence = () => h.trigger({ jobId: KEY.jobId, scheduledTime: KEY.scheduledTime });

describe('worker: the invocation deadline', () => {
  it('aborts early enough before the Lambda timeout to record the outcome', async () => {
    const job = timedJob(10 * 60_000);
    h = makeHarness({ jobs: { report: job }, settings: [{ id: 'report', ...SEED_TIMING, timeoutSeconds: 600 }] });
    await recordOccurrence();
    const run = startDelivery(MESSAGE, 90_000); // the invocation has 90 s left
    await vi.advanceTimersByTimeAsync(90_000);
    expect(job.log.abortedAt! - T0).toBe(60_000); // 90 s - the 30 s outcome reserve
    expect(await run.promise).toEqual(['msg-1']);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.status).toBe('RETRY_WAIT');
  });
});

describe('worker: a delivery that throws', () => {
  it('reports the message for redelivery when the claim itself fails transiently', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await recordOccurrence();
    h.aws.failNext('UpdateItem', faults.unavailable);
    expect(await h.deliver(MESSAGE)).toEqual(['msg-1']);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.status).toBe('PENDING');
  });
});

describe('worker: bad messages', () => {
  it('reports each bad message as a batch item failure with a clear error, and processes the good one', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    const records = [
      { messageId: 'not-json', body: '{oops' },
      { messageId: 'unknown-job', body: encodeEnvelope({ jobId: 'nope', scheduledTime: SCHEDULED }) },
      { messageId: 'missing-time', body: JSON.stringify({ v: 1, jobId: 'report' }) },
      { messageId: 'no-row', body: encodeEnvelope({ jobId: 'report', scheduledTime: '2026-11-29T06:00:00Z' }) },
      { messageId: 'good', body: MESSAGE },
    ];
    const pending = h.worker(sqsEvent(records), lambdaContext(150_000));
    await vi.advanceTimersByTimeAsync(1_000);
    const res = await pending;

    expect(res.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([
      'not-json',
      'unknown-job',
      'missing-time',
      'no-row',
    ]);
    expect(job.log.runs).toBe(1);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.status).toBe('SUCCEEDED');
    const errors = h.logs.filter((l) => l.level === 'ERROR').map((l) => `${l.message} ${String(l.fields.error ?? '')}`);
    expect(errors.join('\n')).toMatch(/body is not JSON/);
    expect(errors.join('\n')).toMatch(/"nope" is not one of the jobs this worker's entry implements/);
    expect(errors.join('\n')).toMatch(/scheduledTime must be a string, got nothing/);
    expect(errors.join('\n')).toMatch(/no claimable occurrence row/);
    // Bad messages come back every 30 s on their way to the DLQ instead of waiting out the visibility timeout.
    expect(h.aws.hidden.filter((x) => x.seconds === 30)).toHaveLength(4);
    // Nothing half-written for them: the good one's row and its job's state row (its running slot) only.
    expect([...h.aws.table.keys()].sort()).toEqual([`${KEY.jobId}|#job`, `${KEY.jobId}|${KEY.scheduledTime}`]);
  });
});

describe('createWorkerHandler', () => {
  it('logs a scheduled job without an implementation at start, rejects its messages and keeps running the others', async () => {
    const job = timedJob(0);
    h = makeHarness({ jobs: { report: job }, settings: [{ id: 'report', ...SEED_TIMING }, { id: 'unbuilt' }] });
    expect(h.logs.find((l) => l.level === 'ERROR')?.fields.missing).toEqual(['unbuilt']);
    await recordOccurrence();
    const records = [
      { messageId: 'unbuilt', body: encodeEnvelope({ jobId: 'unbuilt', scheduledTime: SCHEDULED }) },
      { messageId: 'good', body: MESSAGE },
    ];
    const pending = h.worker(sqsEvent(records), lambdaContext(150_000));
    await vi.advanceTimersByTimeAsync(1);
    expect((await pending).batchItemFailures).toEqual([{ itemIdentifier: 'unbuilt' }]);
    expect(job.log.runs).toBe(1);
  });
});
