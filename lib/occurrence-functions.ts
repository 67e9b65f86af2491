/**
 * The three shared functions of ScheduledJobs and exactly the permissions their protocol steps need (each worker's
 * function is lib/job-worker.ts):
 *
 *   trigger     Scheduler ─▶ occurrence row (PENDING) + message on its worker's queue
 *   notifier    table stream (transition to SUCCEEDED only) ─▶ "report ready" on the FIFO topic
 *   reconciler  every RECONCILE_EVERY_MINUTES ─▶ re-enqueue stuck rows, announce reports never announced
 *
 * Every grant is an explicit action list with its reason beside it: no `grantReadWriteData`-style helpers, whose
 * action wildcards would let a function do things the protocol never asks of it. Built into the given scope, like
 * the other pieces of ScheduledJobs.
 */
import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { NOTIFIER_TIMEOUT_SECONDS } from '../functions/protocol/announce-report';
import { OccurrenceAttributes, OccurrenceStatus } from '../functions/protocol/occurrence';
import {
  NOTIFIER_BATCH_SIZE,
  RECONCILE_EVERY_MINUTES,
  TRIGGER_ASYNC_RETRY_ATTEMPTS,
} from '../functions/protocol/worker-limits';
import { ENV } from '../functions/runtime-env';
import { grantKeyUse } from './encryption';
import { handlerEntry } from './handler-entry';
import { allow, type FunctionLogging, jobFunction } from './job-function';
import { acknowledgeFailureQueueKeyFindings } from './nag-acknowledgements';
import { statusIndexArn } from './occurrence-storage';
import { secureQueue } from './secure-queue';

export const TRIGGER_TIMEOUT_SECONDS = 10;
/** In the protocol, where the notifier's fresh-image window is derived from it (announce-report.ts). */
export { NOTIFIER_TIMEOUT_SECONDS };
/** Up to maxFixesPerRun (200) re-enqueues and announcements at two or three requests each, with room to spare. */
export const RECONCILER_TIMEOUT_SECONDS = 120;

/** The resources the shared functions work on, and what every function is told. */
export interface OccurrenceResources {
  readonly table: dynamodb.Table;
  readonly reportBucket: s3.IBucket;
  readonly reportReadyTopic: sns.ITopic;
  /** The CloudWatch namespace of the functions' metrics (POWERTOOLS_METRICS_NAMESPACE). */
  readonly metricsNamespace: string;
  /** The functions' log levels (ScheduledJobsProps.logging); default DEFAULT_FUNCTION_LOGGING. */
  readonly logging?: FunctionLogging;
  /** Lambda tracing of the trigger, the notifier and the reconciler (ScheduledJobsProps.tracing); default none. */
  readonly tracing?: lambda.Tracing;
}

export interface TriggerPiece {
  readonly fn: nodejs.NodejsFunction;
  /** Scheduler invocations the trigger failed after its async retries. */
  readonly deadLetterQueue: sqs.Queue;
}

export function triggerFunction(scope: Construct, resources: OccurrenceResources): TriggerPiece {
  const { table } = resources;
  const deadLetterQueue = secureQueue(scope, 'TriggerDeadLetterQueue');
  const fn = jobFunction(scope, 'Trigger', {
    logging: resources.logging,
    tracing: resources.tracing,
    entry: handlerEntry('trigger'),
    description: 'Records one occurrence per scheduled time and enqueues it for the worker',
    timeoutSeconds: TRIGGER_TIMEOUT_SECONDS,
    retryAttempts: TRIGGER_ASYNC_RETRY_ATTEMPTS,
    deadLetterQueue,
    environment: {
      [ENV.tableName]: table.tableName,
      ...metricsEnv(resources),
    },
  });
  // sqs:SendMessage on each worker's queue is granted as the worker is added (ScheduledJobs.addWorker); each event
  // names its queue (protocol/worker-routes.ts), and the schedule group where an event without one finds it is set by
  // ScheduledJobs (allowRouteLookup).
  allow(fn, ['dynamodb:PutItem'], [table.tableArn]);
  // Under a customer-managed key: the row, the worker queues and its own dead-letter queue (Lambda sends with its role).
  grantKeyUse(fn, table.encryptionKey, 'write');
  return { fn, deadLetterQueue };
}

export interface NotifierPiece {
  readonly fn: nodejs.NodejsFunction;
  /** Where the stream event source puts descriptions of batches the notifier failed for good. */
  readonly failureQueue: sqs.Queue;
}

export function notifierFunction(scope: Construct, resources: OccurrenceResources): NotifierPiece {
  const { table, reportReadyTopic } = resources;
  const failureQueue = secureQueue(scope, 'NotifierFailureQueue');
  const fn = jobFunction(scope, 'Notifier', {
    logging: resources.logging,
    tracing: resources.tracing,
    entry: handlerEntry('notifier'),
    description: 'Announces each report once when its occurrence becomes SUCCEEDED',
    timeoutSeconds: NOTIFIER_TIMEOUT_SECONDS,
    environment: {
      [ENV.tableName]: table.tableName,
      [ENV.topicArn]: reportReadyTopic.topicArn,
      [ENV.bucketName]: resources.reportBucket.bucketName,
      ...metricsEnv(resources),
    },
  });
  // GetItem: a stream record older than a minute is announced from the row as it is now, not from its image.
  allow(fn, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [table.tableArn]);
  allow(fn, ['sns:Publish'], [reportReadyTopic.topicArn]);
  // Under a customer-managed key: the row, the stream and the announcement (the topic shares the key).
  grantKeyUse(fn, table.encryptionKey, 'write');
  fn.addEventSource(
    new DynamoEventSource(table, {
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: NOTIFIER_BATCH_SIZE,
      bisectBatchOnError: true,
      reportBatchItemFailures: true,
      // No retryAttempts: retry until the record ages out of the stream (24 h). A bounded count would drop the
      // announcement during any SNS or DynamoDB outage longer than those retries.
      onFailure: new SqsDlq(failureQueue),
      filters: [succeededTransitionFilter()],
    }),
  );
  if (table.encryptionKey !== undefined) acknowledgeFailureQueueKeyFindings(fn);
  return { fn, failureQueue };
}

/**
 * Only the write that makes an occurrence SUCCEEDED reaches the notifier: not inserts, not heartbeats, and not the
 * notifier's own `notifiedAt` update (SUCCEEDED to SUCCEEDED), so it is never invoked by itself.
 */
export function succeededTransitionFilter(): Record<string, unknown> {
  const status = OccurrenceAttributes.status;
  return lambda.FilterCriteria.filter({
    eventName: lambda.FilterRule.isEqual('MODIFY'),
    dynamodb: {
      NewImage: { [status]: { S: lambda.FilterRule.isEqual(OccurrenceStatus.SUCCEEDED) } },
      OldImage: { [status]: { S: lambda.FilterRule.notEquals(OccurrenceStatus.SUCCEEDED) } },
    },
  });
}

export interface ReconcilerPiece {
  /** Re-enqueues stuck occurrences and announces unannounced reports, every RECONCILE_EVERY_MINUTES. */
  readonly fn: nodejs.NodejsFunction;
  readonly rule: events.Rule;
}

/**
 * `thresholdsJson`: the JSON ReconcileThresholds, a Lazy string over every job added to the stack;
 * `shortestStuckAfterSeconds`: the shortest stuck threshold of its workers, Lazy too.
 */
export function reconcilerFunction(
  scope: Construct,
  resources: OccurrenceResources,
  thresholdsJson: string,
  shortestStuckAfterSeconds: string,
): ReconcilerPiece {
  const { table, reportReadyTopic } = resources;
  const fn = jobFunction(scope, 'Reconciler', {
    logging: resources.logging,
    tracing: resources.tracing,
    entry: handlerEntry('reconciler'),
    description: 'Re-enqueues occurrences that fell through the cracks and announces reports never announced',
    timeoutSeconds: RECONCILER_TIMEOUT_SECONDS,
    // The next scheduled run is the retry; Lambda's async retries would only run the same sweep twice more.
    retryAttempts: 0,
    environment: {
      [ENV.tableName]: table.tableName,
      [ENV.shortestStuckAfterSeconds]: shortestStuckAfterSeconds,
      [ENV.topicArn]: reportReadyTopic.topicArn,
      [ENV.bucketName]: resources.reportBucket.bucketName,
      [ENV.reconcileThresholds]: thresholdsJson,
      ...metricsEnv(resources),
    },
  });
  // Query: the status index. BatchGetItem: the full rows of the candidates it picked there. UpdateItem: the
  // conditional re-enqueue mark and notifiedAt. GetItem: the announcement re-reads the row. SendMessage: the
  // re-enqueue (on each worker's queue, granted as the worker is added). Publish: the announcement.
  allow(fn, ['dynamodb:Query'], [statusIndexArn(table)]);
  allow(fn, ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'], [table.tableArn]);
  allow(fn, ['sns:Publish'], [reportReadyTopic.topicArn]);
  // Under a customer-managed key: the rows, the re-enqueue and the announcement.
  grantKeyUse(fn, table.encryptionKey, 'write');
  const rule = new events.Rule(scope, 'ReconcilerSchedule', {
    description: `Runs the reconciler every ${RECONCILE_EVERY_MINUTES} minutes`,
    schedule: events.Schedule.rate(Duration.minutes(RECONCILE_EVERY_MINUTES)),
    targets: [new eventTargets.LambdaFunction(fn, { retryAttempts: 0 })],
  });
  return { fn, rule };
}

function metricsEnv(resources: OccurrenceResources): Record<string, string> {
  return { [ENV.metricsNamespace]: resources.metricsNamespace };
}
