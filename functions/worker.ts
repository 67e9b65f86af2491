/**
 * Worker Lambda: SQS batches from the job queue. Thin: wires the adapters and hands each message to
 * protocol/process-delivery.ts. Messages of a batch run concurrently; each failure is reported per message
 * (ReportBatchItemFailures), never by throwing, so one bad message cannot fail its neighbours.
 *
 * To run your own jobs, make a file like this one that calls createWorkerHandler({ jobs: yourJobs }).
 */
import { randomUUID } from 'node:crypto';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { POISON_MESSAGE_RETRY_SECONDS } from '../lib/resource-definitions';
import { documentClient, s3Client, sqsClient } from './aws/clients';
import { DynamoOccurrenceStore } from './aws/occurrence-store';
import { S3ReportStore } from './aws/report-store';
import { SqsWorkQueue } from './aws/work-queue';
import { jobs as sampleJobs } from './jobs';
import { messageOf } from './protocol/errors';
import { type JobSettings, OUTCOME_RESERVE_SECONDS, parseJobSettingsList } from './protocol/job-settings';
import type { Clock, JobDefinition, Logger, OccurrenceStore, ReportStore, WorkQueue } from './protocol/ports';
import { systemClock } from './protocol/ports';
import { type DeliveryOutcome, processDelivery, type RegisteredJob } from './protocol/process-delivery';
import { ENV, requireEnv } from './runtime-env';
import { jsonLogger } from './runtime/json-logger';

export interface WorkerOptions {
  /** Job implementations by job id. A job in the settings without one is logged at start and its messages rejected. */
  readonly jobs: Readonly<Record<string, JobDefinition>>;
  /** Defaults to the JOB_SETTINGS the stack sets. */
  readonly settings?: ReadonlyMap<string, JobSettings>;
  readonly store?: OccurrenceStore;
  readonly reports?: ReportStore;
  readonly queue?: WorkQueue;
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly random?: () => number;
  readonly newLeaseId?: () => string;
  /** How long a message that cannot be processed is hidden before its next receive; tests shorten it. */
  readonly poisonRetrySeconds?: number;
}

export type WorkerHandler = (event: SQSEvent, context: Pick<Context, 'getRemainingTimeInMillis' | 'logStreamName' | 'awsRequestId'>) => Promise<SQSBatchResponse>;

export function createWorkerHandler(options: WorkerOptions): WorkerHandler {
  const settings = options.settings ?? parseJobSettingsList(process.env[ENV.jobSettings], ENV.jobSettings);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? jsonLogger({ fn: 'worker' });
  const registered = new Map<string, RegisteredJob>();
  for (const [id, s] of settings) {
    if (options.jobs[id] !== undefined) registered.set(id, { settings: s, definition: options.jobs[id] });
  }
  const missing = [...settings.keys()].filter((id) => !registered.has(id));
  if (missing.length > 0) {
    // The other jobs keep running; these jobs' messages are rejected (and reach the DLQ) until it is deployed.
    logger.error('no implementation for scheduled job(s); their messages will be rejected', {
      missing, hint: 'pass them in createWorkerHandler({ jobs }) and redeploy',
    });
  }
  const store = options.store ?? new DynamoOccurrenceStore(documentClient(), requireEnv(ENV.tableName));
  const reports = options.reports ?? new S3ReportStore(s3Client(), requireEnv(ENV.bucketName));
  const queue = options.queue ?? new SqsWorkQueue(sqsClient(), requireEnv(ENV.queueUrl));

  return async (event, context) => {
    // Leave the reserve to record outcomes before Lambda stops the invocation.
    const mustFinishBy = clock.now() + context.getRemainingTimeInMillis() - OUTCOME_RESERVE_SECONDS * 1000;
    const deps = {
      store, reports, queue, clock, logger, jobs: registered,
      owner: `${context.logStreamName}/${context.awsRequestId}`,
      newLeaseId: options.newLeaseId ?? randomUUID,
      random: options.random ?? Math.random,
      poisonRetrySeconds: options.poisonRetrySeconds ?? POISON_MESSAGE_RETRY_SECONDS,
    };
    const outcomes = await Promise.all(event.Records.map(async (record): Promise<DeliveryOutcome> => {
      try {
        return await processDelivery(deps, { messageId: record.messageId, body: record.body, receiptHandle: record.receiptHandle }, mustFinishBy);
      } catch (error) {
        // A store or queue call failed before an outcome could be recorded; SQS delivers the message again.
        logger.error('delivery failed; it will be redelivered', { messageId: record.messageId, error: messageOf(error) });
        return { ack: false, result: 'outcome-not-recorded' };
      }
    }));
    const batchItemFailures = event.Records
      .filter((_, i) => !outcomes[i].ack)
      .map((record) => ({ itemIdentifier: record.messageId }));
    logger.info('batch done', { records: event.Records.length, results: outcomes.map((o) => o.result), failures: batchItemFailures.length });
    return { batchItemFailures };
  };
}

let deployed: WorkerHandler | undefined;
export const handler: WorkerHandler = (event, context) => (deployed ??= createWorkerHandler({ jobs: sampleJobs }))(event, context);
