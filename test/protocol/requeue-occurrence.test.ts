/**
 * The re-enqueue the occurrences CLI builds on, over the real DynamoDB adapter and the stateful fakes: a FAILED
 * occurrence retried by an operator runs again, once, even when two operators retry it at the same moment.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import type { Occurrence } from '../../functions/protocol/occurrence';
import { requeueOccurrence, retryFailedOccurrence } from '../../functions/protocol/requeue-occurrence';
import { makeHarness, SCHEDULED, T0, type Harness } from '../support/harness';

const KEY = { jobId: 'report', scheduledTime: SCHEDULED };
const config = { region: 'eu-central-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } };

let h: Harness;
let deps: Parameters<typeof retryFailedOccurrence>[0];
beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  h?.aws.restore();
  vi.useRealTimers();
});

/** A job that fails until `works` is set. */
function switchableJob() {
  const state = { works: false, runs: 0 };
  return {
    state,
    job: {
      reportExtension: 'txt',
      async run() {
        state.runs++;
        if (!state.works) throw new Error('upstream down');
        return { body: 'ok', contentType: 'text/plain' };
      },
    },
  };
}

async function failedOccurrence() {
  const { state, job } = switchableJob();
  h = makeHarness({ jobs: { report: job }, settings: [{ id: 'report', retry: { maxAttempts: 1 } }] });
  deps = {
    store: new DynamoOccurrenceStore(DynamoDBDocumentClient.from(new DynamoDBClient(config)), 'occurrences'),
    queue: new SqsWorkQueue(new SQSClient(config), 'https://sqs.eu-central-1.amazonaws.com/123456789012/jobs'),
    clock: { now: () => Date.now() },
  };
  await h.trigger(KEY);
  await h.deliver(encodeEnvelope(KEY));
  const row = h.aws.row(KEY.jobId, KEY.scheduledTime) as unknown as Occurrence;
  expect(row.status).toBe('FAILED');
  return { state, row };
}

describe('retryFailedOccurrence', () => {
  it('reopens a FAILED occurrence with fresh attempts and a new deadline, enqueues it, and the worker finishes it', async () => {
    const { state, row } = await failedOccurrence();
    await vi.advanceTimersByTimeAsync(24 * 3_600_000); // a day later, long past the old deadline
    state.works = true;

    expect(await retryFailedOccurrence(deps, row, h.settings.get('report')!)).toBe('requeued');
    const reopened = h.aws.row(KEY.jobId, KEY.scheduledTime)!;
    expect(reopened).toMatchObject({
      status: 'RETRY_WAIT', attempt: 0, nextAttemptAt: new Date(Date.now()).toISOString(),
      deadlineAt: new Date(Date.now() + 21_600_000).toISOString(), reopenedAt: new Date(Date.now()).toISOString(),
    });
    expect(reopened.failedAt).toBeUndefined();
    expect(h.aws.sent.at(-1)).toBe(encodeEnvelope(KEY));

    expect(await h.deliver(h.aws.sent.at(-1)!)).toEqual([]);
    const done = h.aws.row(KEY.jobId, KEY.scheduledTime)!;
    expect(done).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
    expect((done.history as { outcome: string }[]).map((e) => e.outcome)).toEqual(['failed', 'reopened', 'succeeded']);
    expect(state.runs).toBe(2);
  });

  it('two operators retrying the same FAILED row at once: one reopen, one message', async () => {
    const { row } = await failedOccurrence();
    const sentBefore = h.aws.sent.length;
    const results = await Promise.all([
      retryFailedOccurrence(deps, row, h.settings.get('report')!),
      retryFailedOccurrence(deps, row, h.settings.get('report')!),
    ]);
    expect(results.sort()).toEqual(['changed-meanwhile', 'requeued']);
    expect(h.aws.sent.length - sentBefore).toBe(1);
    expect(h.aws.row(KEY.jobId, KEY.scheduledTime)!.requeueCount).toBe(1);
  });

  it('refuses a row that is not FAILED, and requeueOccurrence refuses a FAILED one', async () => {
    const { row } = await failedOccurrence();
    await expect(retryFailedOccurrence(deps, { ...row, status: 'SUCCEEDED' }, h.settings.get('report')!))
      .rejects.toThrow('only a FAILED occurrence can be retried; report 2026-11-30T06:00:00Z is SUCCEEDED');
    await expect(requeueOccurrence(deps, row, Date.now())).rejects.toThrow(/cannot re-enqueue a FAILED occurrence/);
  });
});
