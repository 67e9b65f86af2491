/**
 * Leases, stolen leases, a crash after the commit and poison messages, over HTTP against moto with the real
 * condition expressions. Assertions read the emulator's state: the row, the objects, the queues.
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { documentClient, s3Client } from '../../functions/aws/clients';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { S3ReportStore } from '../../functions/aws/report-store';
import { LeaseLostError } from '../../functions/protocol/errors';
import { reportKeyOf } from '../../functions/protocol/occurrence';
import type { OccurrenceStore, ReportStore } from '../../functions/protocol/ports';
import { createWorkerHandler } from '../../functions/worker';
import { lambdaContext, receiveBatch, sqsEvent } from '../../testing/local/sqs-event-source';
import { countingJob, JOB_ID, occurrences, pipeline, recordHandlerRequests, testSettings, useMoto } from './emulator';

const emulator = useMoto();
const SETTLE_MS = 40_000;

describe('claim, extend and steal with the real condition expressions', () => {
  it('refuses a second claim while the lease lives, fences extend and complete by lease id, and lets an expired lease be taken', async () => {
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: countingJob() } });
    const [key] = occurrences(1);
    await p.fire([key]); // the trigger's conditional put; nothing polls the queue in this test
    const store = p.store;
    const t0 = Date.now();
    const claim = (leaseId: string, now: number) =>
      store.claim(key, { leaseId, owner: leaseId, now, leaseExpiresAt: now + 10_000, maxAttempts: 3 });

    expect(await claim('lease-a', t0)).toMatchObject({
      claimed: true,
      occurrence: { status: 'RUNNING', leaseId: 'lease-a', attempt: 1 },
    });
    expect(await claim('lease-b', t0 + 5_000)).toMatchObject({ claimed: false, current: { leaseId: 'lease-a' } });

    await store.extend({ key, leaseId: 'lease-a' }, t0 + 20_000, t0 + 8_000);
    expect((await store.get(key))?.leaseExpiresAt).toBe(new Date(t0 + 20_000).toISOString());
    await expect(store.extend({ key, leaseId: 'lease-b' }, t0 + 30_000, t0 + 9_000)).rejects.toBeInstanceOf(
      LeaseLostError,
    );

    // Lease a expires at t0 + 20 s; at t0 + 21 s another worker may take the occurrence.
    expect(await claim('lease-b', t0 + 21_000)).toMatchObject({
      claimed: true,
      occurrence: { leaseId: 'lease-b', attempt: 2 },
    });
    await expect(store.extend({ key, leaseId: 'lease-a' }, t0 + 40_000, t0 + 22_000)).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    await expect(
      store.complete({ key, leaseId: 'lease-a' }, reportKeyOf(key, 'txt'), t0 + 23_000),
    ).rejects.toBeInstanceOf(LeaseLostError);

    expect(await store.get(key)).toMatchObject({ status: 'RUNNING', leaseId: 'lease-b', attempt: 2 });
    expect((await store.get(key))?.succeededAt).toBeUndefined();
  });

  it('aborts a running job within one heartbeat of its lease being stolen, and its outcome write changes nothing', async () => {
    const job = countingJob(60_000);
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: job } });
    const [key] = occurrences(1);
    p.start();
    await p.fire([key]);
    await waitFor(async () => (await p.store.get(key))?.status === 'RUNNING' && job.runs.length === 1);

    // Another worker takes the occurrence, as it would after this worker's lease had expired (a GC pause, a
    // partition): its clock is past the expiry.
    const running = await p.store.get(key);
    const thiefNow = Date.parse(running?.leaseExpiresAt ?? '') + 1_000;
    const stolen = await p.store.claim(key, {
      leaseId: 'thief',
      owner: 'thief',
      now: thiefNow,
      leaseExpiresAt: thiefNow + 600_000,
      maxAttempts: 3,
    });
    expect(stolen.claimed).toBe(true);

    // The next heartbeat (every 2 s) finds the lease gone and aborts the 60 s job then, not at its end.
    await waitFor(async () => job.aborted.length === 1);
    await p.stop();

    expect(job.abortReasons[0]).toBeInstanceOf(LeaseLostError);
    expect(await p.store.get(key)).toMatchObject({ status: 'RUNNING', leaseId: 'thief', attempt: 2 });
    expect(await p.reportKeys()).toEqual([]);
    expect(await p.drainAnnouncements()).toEqual([]);
  });
});

describe('commit-then-die', () => {
  it('adopts the committed report after a worker died between the S3 commit and complete: SUCCEEDED, one object, one announcement', async () => {
    const job = countingJob();
    // The stack's visibility timeout outlasts the longest invocation plus the lease (workerLimits), so the message
    // comes back after the dead worker's lease has expired. 12 s keeps that order for this instant job's 10 s lease.
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: job }, visibilityTimeoutSeconds: 12 });
    const requests = recordHandlerRequests();
    const [key] = occurrences(1);
    await p.fire([key]);

    // The first worker runs in a process that dies right after PutObject succeeds: from then on none of its
    // requests reaches AWS and its invocation never returns (Lambda ends it at the timeout).
    const doomed = dyingProcess();
    const worker = createWorkerHandler({
      jobs: { [JOB_ID]: job },
      settings: new Map([[JOB_ID, testSettings()]]),
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
      store: doomed.wrap<OccurrenceStore>(new DynamoOccurrenceStore(documentClient(), p.resources.tableName)),
      reports: doomed.wrap<ReportStore>(new S3ReportStore(s3Client(), p.resources.bucketName), 'putIfAbsent'),
    });
    const messages = await receiveBatch(p.clients.sqs, p.resources.jobQueueUrl, 1, 1);
    expect(messages).toHaveLength(1);
    let firstInvocationReturned = false;
    void worker(
      sqsEvent(messages, p.resources.jobQueueArn),
      lambdaContext('worker', p.resources.limits.functionTimeoutSeconds),
    ).finally(() => {
      firstInvocationReturned = true;
    });
    await waitFor(async () => doomed.dead);
    expect(await p.reportKeys()).toEqual([reportKeyOf(key, 'txt')]);
    expect((await p.store.get(key))?.status).toBe('RUNNING');

    // The queue delivers the message again; a live worker waits out the dead lease, claims, and finds the report.
    p.start();
    const [row] = await p.waitUntilSettled([key], SETTLE_MS);
    await p.stop();

    expect(firstInvocationReturned).toBe(false); // the message was never deleted by the dead worker
    expect(row).toMatchObject({ status: 'SUCCEEDED', attempt: 2, reportKey: reportKeyOf(key, 'txt') });
    expect(job.runs).toHaveLength(1);
    expect(await p.reportBody(reportKeyOf(key, 'txt'))).toContain('attempt 1');
    expect(await p.reportKeys()).toHaveLength(1);
    expect(await p.drainAnnouncements()).toHaveLength(1);
    // Attempt 1 (a first claim) did not look for a report; attempt 2 did, once, and found it: no second put.
    expect(requests.filter((r) => r === 'HeadObject')).toHaveLength(1);
    expect(requests.filter((r) => r === 'PutObject')).toHaveLength(1);
  });
});

describe('poison messages', () => {
  it("park in the DLQ of their own worker only: another worker's queues are left alone", async () => {
    const p = await pipeline(emulator, {
      jobs: { [JOB_ID]: countingJob() },
      settings: [testSettings()],
      workers: 1,
      worker: { poisonRetrySeconds: 1 },
    });
    // A second worker of the same stack: its own queue with its own DLQ, as lib/job-worker.ts builds them.
    const other = async (name: string, attributes: Record<string, string> = {}) =>
      (await p.clients.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl!;
    const otherDlq = await other('other-worker-dlq');
    const otherDlqArn = (
      await p.clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: otherDlq, AttributeNames: ['QueueArn'] }))
    ).Attributes!.QueueArn!;
    const otherQueue = await other('other-worker-queue', {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: otherDlqArn, maxReceiveCount: 6 }),
    });
    await p.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: p.resources.jobQueueUrl, MessageBody: '{"v":1,"jobId":"no-such-job"' }),
    );
    p.start();
    await waitFor(async () => (await p.deadLetterCount()) === 1, SETTLE_MS);
    await p.stop();

    const count = async (url: string) =>
      Number(
        (
          await p.clients.sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }),
          )
        ).Attributes!.ApproximateNumberOfMessages,
      );
    expect(await count(p.resources.jobDeadLetterQueueUrl)).toBe(1);
    expect(await count(otherDlq)).toBe(0);
    expect(await count(otherQueue)).toBe(0);
  });

  it('sends a malformed message to the DLQ after maxReceiveCount receives while the good messages of its batches succeed', async () => {
    const job = countingJob();
    // allowAll: the good messages are occurrences of one job, run in parallel, not one at a time by a policy.
    const settings = testSettings({ overlap: 'allowAll', retry: { maxAttempts: 1 } });
    const p = await pipeline(emulator, {
      jobs: { [JOB_ID]: job },
      settings: [settings],
      workers: 1,
      worker: { poisonRetrySeconds: 1 },
    });
    const keys = occurrences(3);
    await p.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: p.resources.jobQueueUrl, MessageBody: '{"v":1,"jobId":' }),
    );
    await p.fire(keys);
    p.start();
    const rows = await p.waitUntilSettled(keys, SETTLE_MS);
    await waitFor(async () => (await p.deadLetterCount()) === 1, SETTLE_MS);
    await p.stop();

    expect(rows.map((r) => r?.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(p.resources.limits.maxReceiveCount).toBe(6);
    const dead = await p.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: p.resources.jobDeadLetterQueueUrl,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        WaitTimeSeconds: 1,
      }),
    );
    expect(dead.Messages?.map((m) => m.Body)).toEqual(['{"v":1,"jobId":']);
    const left = await p.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: p.resources.jobQueueUrl, WaitTimeSeconds: 1 }),
    );
    expect(left.Messages ?? []).toEqual([]);
    expect(p.workerSource.totals.received).toBe(3 + 6);
  });
});

/** A worker process that dies after a chosen call returns: later calls, and that call's reply, never come back. */
function dyingProcess() {
  const state = { dead: false };
  const never = new Promise<never>(() => undefined);
  return {
    get dead() {
      return state.dead;
    },
    wrap<T extends object>(target: T, dieAfter?: keyof T): T {
      return new Proxy(target, {
        get(obj, prop, receiver) {
          const value = Reflect.get(obj, prop, receiver);
          if (typeof value !== 'function') return value;
          return async (...args: unknown[]) => {
            if (state.dead) return never;
            const result = await value.apply(obj, args);
            if (prop === dieAfter) {
              state.dead = true;
              return never;
            }
            return result;
          };
        },
      });
    },
  };
}

async function waitFor(condition: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
