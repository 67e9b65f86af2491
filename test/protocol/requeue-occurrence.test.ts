/**
 * requeueOccurrence over the real DynamoDB adapter and the stateful fakes, for what the reconciler tests do not
 * reach: a FAILED row is never re-enqueued by it (an operator's retry is protocol/manual-retry.ts).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import type { Occurrence } from '../../functions/protocol/occurrence';
import { requeueOccurrence } from '../../functions/protocol/requeue-occurrence';
import { type Harness, makeHarness, SCHEDULED, useHarnessTime } from '../support/harness';

const KEY = { jobId: 'report', scheduledTime: SCHEDULED };
const config = { region: 'eu-central-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } };

let h: Harness;
let deps: Parameters<typeof requeueOccurrence>[0];
useHarnessTime();

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

describe('requeueOccurrence', () => {
  it('refuses a FAILED occurrence: only an operator may reopen one', async () => {
    const { row } = await failedOccurrence();
    await expect(requeueOccurrence(deps, row, Date.now())).rejects.toThrow(/cannot re-enqueue a FAILED occurrence/);
  });
});
