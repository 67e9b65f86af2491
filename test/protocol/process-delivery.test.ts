/**
 * protocol/process-delivery.ts: what the worker does with one queue message (claim, run under the lease, commit
 * write-once, record the outcome), driven through the worker handler over the real adapters and the stateful fakes.
 * What the handler itself adds (a batch of messages, a delivery that throws, the invocation's deadline, a job without
 * an implementation) is tested in test/functions/worker.test.ts.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import { JobTimeoutError, LeaseExpiringError, LeaseLostError } from '../../functions/protocol/errors';
import type { Occurrence } from '../../functions/protocol/occurrence';
import { mayHaveCommittedReport } from '../../functions/protocol/process-delivery';
import { faults } from '../../sim/fakes/fake-aws';
import { indexed } from '../aws/fixtures';
import {
  type Harness,
  makeHarness,
  SCHEDULED,
  SEED_TIMING,
  startDelivery as startDeliveryOn,
  T0,
  TEST_STUCK_AFTER_SECONDS,
  TEST_WORKER,
  timedJob,
  useHarnessTime,
} from '../support/harness';

const KEY = { jobId: 'report', scheduledTime: SCHEDULED };
const MESSAGE = encodeEnvelope(KEY);
const REPORT_KEY = `reports/report/${SCHEDULED}.txt`;

let h: Harness;

useHarnessTime();

const startDelivery = (body = MESSAGE, remainingMs?: number) => startDeliveryOn(h, body, remainingMs);
const recordOccurrence = () => h.trigger({ jobId: KEY.jobId, scheduledTime: KEY.scheduledTime });

/** The row as a worker leaves it that claimed at T0 and died: RUNNING, in the status index, its lease running out. */
function leaveAsDiedWorker(leaseExpiresAt: number) {
  h.aws.table.set(
    `report|${SCHEDULED}`,
    indexed({
      ...h.aws.row(KEY.jobId, KEY.scheduledTime)!,
      status: 'RUNNING',
      attempt: 1,
      leaseId: 'dead',
      claimedAt: new Date(T0).toISOString(),
      leaseExpiresAt: new Date(leaseExpiresAt).toISOString(),
    }),
  );
}

describe('processDelivery: claim, run, commit, complete', () => {
  it('runs a pending occurrence once, commits the report write-once and marks it SUCCEEDED', async () => {
    const job = timedJob(10_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await run.promise).toEqual([]);

    const row = h.aws.row(KEY.jobId, KEY.scheduledTime)!;
    expect(row).toMatchObject({ status: 'SUCCEEDED', attempt: 1, reportKey: REPORT_KEY, leaseId: 'lease-1' });
    expect(row.succeededAt).toBe(new Date(T0 + 10_000).toISOString());
    expect(job.log.runs).toBe(1);
    expect(h.aws.objects.get(REPORT_KEY)?.body).toContain('attempt 1');
    const put = h.aws.s3.commandCalls(PutObjectCommand);
    expect(put[0].args[0].input.IfNoneMatch).toBe('*');
  });

  it('acknowledges a message for a finished occurrence without running anything', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    const first = startDelivery();
    await vi.advanceTimersByTimeAsync(1_000);
    await first.promise;
    const putsBefore = h.aws.count('PutObject');

    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(job.log.runs).toBe(1);
    expect(h.aws.count('PutObject')).toBe(putsBefore);
    expect(h.logs.some((l) => l.message.includes('already finished'))).toBe(true);
  });

  it('drops a duplicate message while another worker holds a live lease, and lets the holder finish', async () => {
    const job = timedJob(60_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    const holder = startDelivery();
    await vi.advanceTimersByTimeAsync(5_000);

    expect(await h.deliver(MESSAGE)).toEqual([]); // acknowledged: the holder's own message covers a crash
    await vi.advanceTimersByTimeAsync(60_000);
    await holder.promise;
    expect(job.log.runs).toBe(1);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.status).toBe('SUCCEEDED');
  });

  it('takes over a RUNNING occurrence whose lease expired (the first worker died) and runs it as attempt 2', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    // A worker claimed it and died: RUNNING under a lease that expires at T0 + 120 s.
    leaveAsDiedWorker(T0 + 120_000);
    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(job.log.runs).toBe(0); // lease still live: held elsewhere

    vi.setSystemTime(T0 + 121_000);
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(1_000);
    await run.promise;
    expect(job.log.runs).toBe(1);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({
      status: 'SUCCEEDED',
      attempt: 2,
      leaseId: 'lease-2',
    });
  });
});

describe('processDelivery: heartbeat with the original timing (lease 120 s, heartbeat 45 s)', () => {
  it('absorbs one failed extend: the retry 15 s later renews the lease and the job finishes', async () => {
    const job = timedJob(200_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    const run = startDelivery(MESSAGE, 900_000);
    await vi.advanceTimersByTimeAsync(1);
    h.aws.failNext('UpdateItem', faults.throttled); // the extend at t = 45 s

    await vi.advanceTimersByTimeAsync(200_000);
    expect(await run.promise).toEqual([]);
    expect(job.log.abortedAt).toBeUndefined();
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.status).toBe('SUCCEEDED');
    // Extends: 45 (failed), 60 (retry), then every 45 s: 105, 150, 195.
    const heartbeats = h.logs.filter((l) => l.message.startsWith('lease extend failed'));
    expect(heartbeats).toHaveLength(1);
  });

  it('aborts the job at 105 s, before the lease expires at 120 s, when extends keep failing (the original design lost it at 120 and found out at Complete)', async () => {
    const job = timedJob(300_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(1);
    // The original design's two ticks at 45 and 90 fail, and so do our retries at 60 and 75.
    h.aws.failNext('UpdateItem', faults.throttled, 4);

    await vi.advanceTimersByTimeAsync(120_000);
    expect(run.settled()).toBe(true);
    expect(job.log.abortedAt! - T0).toBe(105_000);
    expect(job.log.abortReason).toBeInstanceOf(LeaseExpiringError);
    expect(await run.promise).toEqual(['msg-1']); // retried later
    expect(h.aws.count('PutObject')).toBe(0);
    const row = h.aws.row(KEY.jobId, KEY.scheduledTime)!;
    expect(row).toMatchObject({ status: 'RETRY_WAIT', attempt: 1 });
    expect(String(row.lastError)).toContain('LeaseExpiringError');
  });

  it('aborts within one heartbeat when another worker takes the lease, and writes nothing after', async () => {
    const job = timedJob(300_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(50_000);
    // Another worker claims the occurrence (e.g. after a long pause of this one).
    const stolen = {
      ...h.aws.row(KEY.jobId, KEY.scheduledTime)!,
      leaseId: 'thief',
      leaseOwner: 'other-worker',
      attempt: 2,
    };
    h.aws.table.set(`report|${SCHEDULED}`, stolen);

    await vi.advanceTimersByTimeAsync(45_000);
    expect(run.settled()).toBe(true);
    expect(job.log.abortReason).toBeInstanceOf(LeaseLostError);
    expect(job.log.abortedAt! - (T0 + 50_000)).toBeLessThanOrEqual(45_000);
    expect(await run.promise).toEqual([]); // acknowledged: the thief's message owns the occurrence
    expect(h.aws.count('PutObject')).toBe(0);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toEqual(stolen);
  });

  it('aborts the job at its time limit and schedules a retry', async () => {
    const job = timedJob(10 * 60_000);
    h = makeHarness({ jobs: { report: job }, settings: [{ id: 'report', ...SEED_TIMING, timeoutSeconds: 100 }] });
    await recordOccurrence();
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(100_000);
    expect(job.log.abortReason).toBeInstanceOf(JobTimeoutError);
    expect(await run.promise).toEqual(['msg-1']);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.status).toBe('RETRY_WAIT');
  });
});

describe('processDelivery: write-once commit', () => {
  it('adopts a report committed by an earlier attempt (commit-then-die) without running the job again', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    leaveAsDiedWorker(T0 - 1);
    h.aws.objects.set(REPORT_KEY, { body: 'from the attempt that died' });

    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(job.log.runs).toBe(0);
    expect(h.aws.objects.get(REPORT_KEY)?.body).toBe('from the attempt that died');
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'SUCCEEDED', reportKey: REPORT_KEY });
  });

  it('treats 412 on its own retried write (the first response was lost) as committed, and does not overwrite', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    let lost = false;
    h.aws.afterWrite = (operation) => {
      if (operation === 'PutObject' && !lost) {
        lost = true;
        throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError', $metadata: {} });
      }
    };
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await run.promise).toEqual([]);
    expect(h.aws.count('PutObject')).toBe(2); // the lost one, then 412
    expect(h.aws.objects.size).toBe(1);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.status).toBe('SUCCEEDED');
  });

  it('retries a 409 ConditionalRequestConflict and commits', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await recordOccurrence();
    h.aws.failNext('PutObject', faults.s3Conflict);
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await run.promise).toEqual([]);
    expect(h.aws.count('PutObject')).toBe(2);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.status).toBe('SUCCEEDED');
  });

  it('gets a lease-lost error at complete when the lease was taken after the commit, and changes nothing', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await recordOccurrence();
    let stolen: Record<string, unknown> | undefined;
    h.aws.afterWrite = (operation) => {
      if (operation === 'PutObject') {
        stolen = { ...h.aws.row(KEY.jobId, KEY.scheduledTime)!, leaseId: 'thief' };
        h.aws.table.set(`report|${SCHEDULED}`, stolen);
      }
    };
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await run.promise).toEqual([]);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toEqual(stolen);
    expect(h.logs.some((l) => l.message.startsWith('lease lost before complete'))).toBe(true);
  });
});

describe('processDelivery: the look-up for a committed report (HeadObject) only where one may exist', () => {
  /** Leave the row as an operator's retry of a FAILED occurrence does (the real conditional write). */
  async function reopenAsOperator(now: number) {
    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: 'eu-central-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } }),
    );
    const operator = new OperatorOccurrenceStore(doc, 'occurrences');
    return operator.reopenFailed(KEY, {
      now,
      deadlineAt: now + 3600_000,
      ttl: Math.floor(now / 1000) + 86_400,
      worker: TEST_WORKER,
    });
  }

  it('makes no look-up on the first claim of a fresh occurrence: nothing can have committed a report', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await run.promise).toEqual([]);
    expect(h.aws.count('HeadObject')).toBe(0);
    expect(job.log.runs).toBe(1);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
  });

  it('the write-once put still protects the report: a report at the key of a first claim is adopted at the 412', async () => {
    // Cannot happen in the protocol (only a claimed attempt commits); it shows what a wrong skip would cost: one
    // more run of the job, never a second report or a changed one.
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    h.aws.objects.set(REPORT_KEY, { body: 'already there' });
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await run.promise).toEqual([]);
    expect(job.log.runs).toBe(1);
    expect(h.aws.objects.get(REPORT_KEY)?.body).toBe('already there');
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'SUCCEEDED', reportKey: REPORT_KEY });
    expect(h.logs.some((l) => l.message === 'report was already committed; adopting it')).toBe(true);
  });

  it('looks on a second attempt (an earlier claim died), and runs the job when there is no report', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    leaveAsDiedWorker(T0 - 1);
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await run.promise).toEqual([]);
    expect(h.aws.count('HeadObject')).toBe(1);
    expect(job.log.runs).toBe(1);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
  });

  it('looks on a reopened occurrence (attempts count from 1 again), and adopts a report that landed after FAILED', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    h.aws.table.set(`report|${SCHEDULED}`, {
      ...h.aws.row(KEY.jobId, KEY.scheduledTime)!,
      status: 'FAILED',
      attempt: 3,
      lastError: 'attempt 3: upstream returned 503',
    });
    // The put of a worker that lost its lease landed after the row was marked FAILED.
    h.aws.objects.set(REPORT_KEY, { body: 'landed after FAILED' });
    expect(await reopenAsOperator(T0 + 60_000)).toEqual({ reopened: true });
    vi.setSystemTime(T0 + 61_000);
    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(h.aws.count('HeadObject')).toBe(1);
    expect(job.log.runs).toBe(0);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({
      status: 'SUCCEEDED',
      attempt: 1,
      previousAttempts: 3,
      reportKey: REPORT_KEY,
    });
  });

  it("looks on the reconciler's re-enqueue of an expired RUNNING row, and adopts what the dead worker committed", async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    leaveAsDiedWorker(T0 + 1_000);
    h.aws.objects.set(REPORT_KEY, { body: 'from the attempt that died' });
    // Its message went to the DLQ; the reconciler finds the row stuck past its threshold and sends a new one.
    vi.setSystemTime(T0 + 1_000 + (TEST_STUCK_AFTER_SECONDS + 1) * 1000);
    await h.reconciler();
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'RUNNING', requeueCount: 1 });
    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(h.aws.count('HeadObject')).toBe(1);
    expect(job.log.runs).toBe(0);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
  });

  it('looks on a row recorded a day or more after its scheduled time: it may replace one that expired (TTL)', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    const row = h.aws.row(KEY.jobId, KEY.scheduledTime)!;
    h.aws.table.set(`report|${SCHEDULED}`, { ...row, createdAt: new Date(T0 + 100 * 86_400_000).toISOString() });
    h.aws.objects.set(REPORT_KEY, { body: 'outlived its row' });
    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(h.aws.count('HeadObject')).toBe(1);
    expect(job.log.runs).toBe(0);
  });
});

describe('mayHaveCommittedReport: from the row as claimed', () => {
  const claimed: Occurrence = {
    jobId: 'report',
    scheduledTime: SCHEDULED,
    status: 'RUNNING',
    attempt: 1,
    deadlineAt: '2026-11-30T12:00:00.000Z',
    createdAt: '2026-11-30T06:00:00.120Z',
    ttl: 2_000_000_000,
  };

  it.each([
    ['the first claim of a fresh occurrence', {}, false],
    ['a trigger that recorded it hours late (a Scheduler retry)', { createdAt: '2026-11-30T23:00:00.000Z' }, false],
    ['a second attempt', { attempt: 2 }, true],
    ['a reopened occurrence (previousAttempts)', { previousAttempts: 3 }, true],
    ['a reopened occurrence (manualRetries)', { manualRetries: 1, previousAttempts: 0 }, true],
    ['a reopened occurrence (history)', { history: [{ outcome: 'reopened', at: '2026-11-30T07:00:00.000Z' }] }, true],
    ['a row recorded a day after its scheduled time', { createdAt: '2026-12-01T06:00:00.000Z' }, true],
    ['a row with an unreadable createdAt', { createdAt: 'yesterday' }, true],
    ['a row whose attempt is not a number', { attempt: '1' }, true],
  ])('%s: %s', (_name, change, expected) => {
    expect(mayHaveCommittedReport({ ...claimed, ...change } as Occurrence)).toBe(expected);
  });
});

describe('processDelivery: lost responses (the SDK retries a write that had succeeded)', () => {
  it('runs the job when its claim succeeded but the response was lost: the retry finds its own lease', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    h.aws.loseResponseOf = 'UpdateItem';
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await run.promise).toEqual([]);
    expect(job.log.runs).toBe(1);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
  });

  it('keeps the retry when its release succeeded but the response was lost: the message is hidden, not dropped', async () => {
    h = makeHarness({ jobs: { report: failingJob('down') }, random: () => 0 });
    await recordOccurrence();
    let armed = false;
    h.aws.afterWrite = (operation) => {
      if (!armed && operation === 'UpdateItem') {
        armed = true;
        h.aws.loseResponseOf = 'UpdateItem'; // the claim went through; the next UpdateItem is the release
      }
    };
    expect(await h.deliver(MESSAGE)).toEqual(['msg-1']);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'RETRY_WAIT', leaseId: 'lease-1' });
    expect(h.aws.hidden).toEqual([{ receiptHandle: 'rh-msg-1', seconds: 20 }]);
  });

  it('counts a complete whose response was lost as SUCCEEDED, not as a lost lease', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await recordOccurrence();
    h.aws.afterWrite = (operation) => {
      if (operation === 'PutObject') h.aws.loseResponseOf = 'UpdateItem'; // the next UpdateItem is complete
    };
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await run.promise).toEqual([]);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.status).toBe('SUCCEEDED');
    expect(h.logs.some((l) => l.message.startsWith('lease lost'))).toBe(false);
    expect(h.logs.some((l) => l.message === 'occurrence SUCCEEDED')).toBe(true);
  });

  it('adopts the report of a last attempt that committed and died, instead of marking the occurrence FAILED', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job }, settings: [{ id: 'report', ...SEED_TIMING, retry: { maxAttempts: 1 } }] });
    await recordOccurrence();
    leaveAsDiedWorker(T0 - 1);
    h.aws.objects.set(REPORT_KEY, { body: 'committed by the last attempt' });
    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(job.log.runs).toBe(0);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({
      status: 'SUCCEEDED',
      reportKey: REPORT_KEY,
      attempt: 1,
    });
  });
});

describe('processDelivery: failures and retries', () => {
  it('releases the lease, records lastError and nextAttemptAt, and hides the message until the retry is due plus the tolerated skew', async () => {
    h = makeHarness({ jobs: { report: failingJob('upstream returned 503') }, random: () => 0 });
    await recordOccurrence();
    const before = h.aws.calls.length;
    expect(await h.deliver(MESSAGE)).toEqual(['msg-1']);
    // A failed first attempt costs four requests: claim, take the running slot, release (RETRY_WAIT; the slot is kept
    // across the retry), visibility change (no report look-up: nothing can have committed one before the first
    // claim). Later attempts add the look-up.
    expect(h.aws.calls.slice(before)).toEqual(['UpdateItem', 'UpdateItem', 'UpdateItem', 'ChangeMessageVisibility']);
    const row = h.aws.row(KEY.jobId, KEY.scheduledTime)!;
    expect(row).toMatchObject({ status: 'RETRY_WAIT', attempt: 1, nextAttemptAt: new Date(T0 + 4_000).toISOString() });
    expect(row.leaseExpiresAt).toBeUndefined();
    expect(String(row.lastError)).toContain('upstream returned 503');
    // 4 s of backoff, 15 s (leaseSafetyMarginSeconds) so that a worker whose clock is behind does not find it early,
    // and 1 s for SQS's whole seconds.
    expect(h.aws.hidden).toEqual([{ receiptHandle: 'rh-msg-1', seconds: 20 }]);
  });

  it("records the cause chain of the job's error in lastError: fetch's 'fetch failed' keeps why it failed", async () => {
    const job = {
      reportExtension: 'txt',
      async run(): Promise<never> {
        throw new TypeError('fetch failed', { cause: new Error('getaddrinfo ENOTFOUND api.example.com') });
      },
    };
    h = makeHarness({ jobs: { report: job }, random: () => 0 });
    await recordOccurrence();
    await h.deliver(MESSAGE);

    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.lastError).toBe(
      'attempt 1: TypeError: fetch failed <- Error: getaddrinfo ENOTFOUND api.example.com',
    );
  });

  it("hides the retry's own message again when it arrives before the retry is due, without claiming", async () => {
    h = makeHarness({ jobs: { report: failingJob('down') }, random: () => 0 });
    await recordOccurrence();
    await h.deliver(MESSAGE);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.retryMessageId).toBe('msg-1');
    vi.setSystemTime(T0 + 1_000);
    // Its hide failed, say, so it came back at the queue's visibility timeout: same message id.
    expect(await h.deliver(MESSAGE, { messageId: 'msg-1' })).toEqual(['msg-1']);
    expect(h.aws.hidden.at(-1)).toEqual({ receiptHandle: 'rh-msg-1', seconds: 4 });
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.attempt).toBe(1);
  });

  it('keeps the message of a revoked lease that has not run out on its clock: hidden past the lease and the skew, not dropped', async () => {
    h = makeHarness({ jobs: { report: timedJob(0) } });
    await recordOccurrence();
    // Another occurrence's start revoked this row's expired lease on a clock 2 s ahead, and re-enqueued it.
    leaveAsDiedWorker(T0 + 2_000);
    const row = h.aws.row(KEY.jobId, KEY.scheduledTime)!;
    h.aws.table.set(`report|${SCHEDULED}`, { ...row, leaseId: 'revoked-by-2026-11-30T07:00:00Z-lease-b' });
    expect(await h.deliver(MESSAGE, { messageId: 'msg-revoker' })).toEqual(['msg-revoker']);
    // 2 s to the lease's end plus the 15 s margin, rounded up plus one (hideSecondsUntil).
    expect(h.aws.hidden.at(-1)).toEqual({ receiptHandle: 'rh-msg-revoker', seconds: 18 });
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'RUNNING', attempt: 1 });
  });

  it("drops another copy of the occurrence's message while a retry waits: one message carries the retry", async () => {
    h = makeHarness({ jobs: { report: failingJob('down') }, random: () => 0 });
    await recordOccurrence();
    await h.deliver(MESSAGE);
    vi.setSystemTime(T0 + 1_000);
    const hiddenBefore = h.aws.hidden.length;
    expect(await h.deliver(MESSAGE)).toEqual([]); // msg-2, e.g. the trigger's re-enqueue: acknowledged
    expect(h.aws.hidden).toHaveLength(hiddenBefore);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({
      status: 'RETRY_WAIT',
      attempt: 1,
      retryMessageId: 'msg-1',
    });
  });

  it('marks the occurrence FAILED after the last attempt, with the error, and acknowledges the message', async () => {
    h = makeHarness({
      jobs: { report: failingJob('bad data') },
      settings: [{ id: 'report', ...SEED_TIMING, retry: { maxAttempts: 2 } }],
      random: () => 0,
    });
    await recordOccurrence();
    expect(await h.deliver(MESSAGE)).toEqual(['msg-1']);
    vi.setSystemTime(T0 + 5_000);
    expect(await h.deliver(MESSAGE)).toEqual([]);
    const row = h.aws.row(KEY.jobId, KEY.scheduledTime)!;
    expect(row).toMatchObject({ status: 'FAILED', attempt: 2 });
    expect(String(row.lastError)).toMatch(/attempt 2: .*bad data.*no attempts left/);
    expect(row.failedAt).toBe(new Date(T0 + 5_000).toISOString());
  });

  it('on the last attempt, looks for a committed report before recording FAILED, and adopts it', async () => {
    // An earlier holder's put lands while this last attempt runs (it was in flight when that holder gave up).
    const lateCommit = {
      reportExtension: 'txt',
      async run() {
        h.aws.objects.set(REPORT_KEY, { body: 'committed by the earlier holder' });
        throw new Error('upstream returned 503');
      },
    };
    h = makeHarness({
      jobs: { report: lateCommit },
      settings: [{ id: 'report', ...SEED_TIMING, retry: { maxAttempts: 1 } }],
    });
    await recordOccurrence();
    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({
      status: 'SUCCEEDED',
      reportKey: REPORT_KEY,
      attempt: 1,
    });
    expect(h.aws.objects.get(REPORT_KEY)?.body).toBe('committed by the earlier holder');
  });

  it('records nothing when the last attempt cannot tell whether a report was committed: the message comes back', async () => {
    // S3 is down by the time the job has failed (a first attempt makes no look-up before its job).
    const failsThenS3Down = {
      reportExtension: 'txt',
      async run() {
        h.aws.failAlways('HeadObject', faults.unavailable);
        throw new Error('bad data');
      },
    };
    h = makeHarness({
      jobs: { report: failsThenS3Down },
      settings: [{ id: 'report', ...SEED_TIMING, retry: { maxAttempts: 1 } }],
    });
    await recordOccurrence();
    const run = startDelivery();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await run.promise).toEqual(['msg-1']);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'RUNNING', attempt: 1 });
    // The last attempt's look-up before FAILED, tried three times.
    expect(h.aws.count('HeadObject')).toBe(3);
  });

  it('marks the occurrence FAILED when the next attempt would start after the deadline', async () => {
    h = makeHarness({
      jobs: { report: failingJob('down') },
      settings: [
        {
          id: 'report',
          ...SEED_TIMING,
          timeoutSeconds: 60,
          retry: { deadlineSeconds: 60, baseDelaySeconds: 120, maxDelaySeconds: 120 },
        },
      ],
      random: () => 0,
    });
    await recordOccurrence();
    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'FAILED' });
    expect(String(h.aws.row(KEY.jobId, KEY.scheduledTime)!.lastError)).toContain('after the deadline');
  });

  it('marks FAILED a crashed last attempt whose lease expired, instead of claiming it again', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job }, settings: [{ id: 'report', ...SEED_TIMING, retry: { maxAttempts: 1 } }] });
    await recordOccurrence();
    leaveAsDiedWorker(T0 - 1);
    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(job.log.runs).toBe(0);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'FAILED' });
    expect(String(h.aws.row(KEY.jobId, KEY.scheduledTime)!.lastError)).toContain('all 1 attempts used');
  });

  it('marks FAILED an occurrence whose message arrives after its deadline, without running it', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    vi.setSystemTime(T0 + 6 * 3_600_000); // the default deadline: 6 h after the scheduled time
    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(job.log.runs).toBe(0);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'FAILED', attempt: 0 });
    expect(String(h.aws.row(KEY.jobId, KEY.scheduledTime)!.lastError)).toMatch(/deadline .* passed before attempt 1/);
  });

  it('adopts, and announces, a report found by a first delivery after the deadline: SUCCEEDED at attempt 0', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await recordOccurrence();
    // A put that landed late (a worker that lost its lease before a reopen, say) left the report behind.
    h.aws.objects.set(REPORT_KEY, { body: 'landed late' });
    const pending = h.aws.row(KEY.jobId, KEY.scheduledTime);
    vi.setSystemTime(T0 + 6 * 3_600_000); // the default deadline: 6 h after the scheduled time
    expect(await h.deliver(MESSAGE)).toEqual([]);
    expect(job.log.runs).toBe(0);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)).toMatchObject({ status: 'SUCCEEDED', attempt: 0 });

    expect(await h.streamChange(pending)).toEqual([]);
    expect(h.aws.published).toHaveLength(1);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.notifiedAt).toBeDefined();
  });

  it('with the default retry policy, a one-hour outage costs at most 10 wake-ups and the first retry comes within 20 s', async () => {
    let outageUntil = T0 + 3_600_000;
    const dependent = {
      reportExtension: 'txt',
      async run() {
        if (Date.now() < outageUntil) throw new Error('dependency unavailable');
        return { body: 'ok', contentType: 'text/plain' };
      },
    };
    // random = 1 gives the shortest jittered delays: the most wake-ups the policy can cost.
    h = makeHarness({ jobs: { report: dependent }, settings: [{ id: 'report', ...SEED_TIMING }], random: () => 1 });
    await recordOccurrence();
    const wakeUps: number[] = [];
    for (let i = 0; i < 50; i++) {
      const failures = await h.deliver(MESSAGE);
      if (failures.length === 0) break;
      vi.setSystemTime(Date.now() + h.aws.hidden.at(-1)!.seconds * 1000);
      wakeUps.push(Date.now() - T0);
    }
    const inOutage = wakeUps.filter((t) => t < 3_600_000);
    expect(wakeUps[0]).toBeLessThanOrEqual(20_000); // 4 s backoff + 15 s skew tolerance + 1 s rounding
    expect(inOutage.length).toBeLessThanOrEqual(10);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)?.status).toBe('SUCCEEDED');
    outageUntil = 0;
  });
});

function failingJob(message: string) {
  return {
    reportExtension: 'txt',
    async run(): Promise<never> {
      throw new Error(message);
    },
  };
}
