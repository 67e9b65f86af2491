/**
 * State-change events (opt-in, ScheduledJobsProps.stateChangeEvents): a function on the occurrences table's stream
 * that puts one EventBridge event per terminal transition of an occurrence and per job that paused itself after its
 * failures (functions/events.ts; the schema in docs/events.md).
 *
 *   table stream ─(filter: terminal transitions, self-pauses)─▶ events function ─PutEvents─▶ the bus (default or given)
 *                 └─ a batch that kept failing ─▶ EventsFailureQueue (alarmed with the other dead-letter queues)
 *
 * Built into the given scope, like the other pieces of ScheduledJobs.
 */
import { Token } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { JOB_STATE_SORT_KEY } from '../functions/protocol/job-state';
import { OccurrenceAttributes, OccurrenceStatus, TERMINAL_STATUSES } from '../functions/protocol/occurrence';
import { quoteValue } from '../functions/protocol/quote-value';
import { ENV } from '../functions/runtime-env';
import { handlerEntry } from './handler-entry';
import { type FunctionLogging, jobFunction } from './job-function';
import { acknowledgeFailureQueueKeyFindings } from './nag-acknowledgements';
import { secureQueue } from './secure-queue';

/** What ScheduledJobsProps.stateChangeEvents takes besides `true`. */
export interface StateChangeEventsOptions {
  /**
   * The bus the events go to. A bus of another account or Region: give its ARN (`EventBus.fromEventBusArn`); its
   * resource policy must let this stack's account put events on it.
   *
   * @default - the account's default bus in the stack's Region
   */
  readonly eventBus?: events.IEventBus;
  /**
   * The address `occurrences console` is reached at, for the events' `links.console` (each event carries the page's
   * route in `links.consoleRoute` either way).
   *
   * @default - no `links.console`
   */
  readonly consoleUrl?: string;
}

/** Stream records per invocation of the events function: ten PutEvents calls of ten entries at most. */
export const EVENTS_BATCH_SIZE = 100;
export const EVENTS_TIMEOUT_SECONDS = 30;

const EVENT_BUS_ARN = /^arn:aws[a-z-]*:events:[a-z]{2}(-[a-z]+)+-\d:\d{12}:event-bus\/[A-Za-z0-9._\-/]{1,256}$/;

/**
 * The problems of the options, named `where` (`ScheduledJobs <path>.stateChangeEvents`); none for `true`, `false` or
 * undefined. An ARN that is a token (a bus of this app) is checked by CloudFormation instead.
 */
export function stateChangeEventsProblems(where: string, value: unknown): string[] {
  if (value === undefined || typeof value === 'boolean') return [];
  if (typeof value !== 'object' || value === null)
    return [`${where}: must be true, false or { eventBus, consoleUrl }, got ${quoteValue(String(value))}`];
  const { eventBus, consoleUrl } = value as StateChangeEventsOptions;
  const problems: string[] = [];
  const arn = eventBus?.eventBusArn;
  if (eventBus !== undefined && (typeof arn !== 'string' || (!Token.isUnresolved(arn) && !EVENT_BUS_ARN.test(arn))))
    problems.push(
      `${where}.eventBus: the event bus ARN ${quoteValue(String(arn))} is malformed; expected ` +
        'arn:aws:events:<region>:<12-digit account>:event-bus/<name>',
    );
  if (consoleUrl !== undefined && !isHttpUrl(consoleUrl))
    problems.push(`${where}.consoleUrl: must be an http(s) URL, got ${quoteValue(String(consoleUrl))}`);
  return problems;
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

export interface StateChangeEventsResources {
  readonly table: dynamodb.Table;
  readonly bucketName: string;
  readonly metricsNamespace: string;
  readonly logging?: FunctionLogging;
  /** Lambda tracing, as the stack's other functions have it (ScheduledJobsProps.tracing); default none. */
  readonly tracing?: lambda.Tracing;
}

/** What `ScheduledJobs.stateChangeEvents` holds: the events function, its failure queue and its bus. */
export interface StateChangeEventsPiece {
  /** The function on the table's stream that puts the events. */
  readonly fn: nodejs.NodejsFunction;
  /** Where the stream event source puts descriptions of batches the function failed for good. */
  readonly failureQueue: sqs.Queue;
  /** The bus the events go to. */
  readonly eventBus: events.IEventBus;
}

export function stateChangeEventsFunction(
  scope: Construct,
  resources: StateChangeEventsResources,
  options: StateChangeEventsOptions,
): StateChangeEventsPiece {
  const { table } = resources;
  const eventBus = options.eventBus ?? events.EventBus.fromEventBusName(scope, 'DefaultEventBus', 'default');
  const failureQueue = secureQueue(scope, 'EventsFailureQueue');
  const fn = jobFunction(scope, 'Events', {
    logging: resources.logging,
    tracing: resources.tracing,
    entry: handlerEntry('events'),
    description: 'Puts an EventBridge event for each finished occurrence and each job paused by its failures',
    timeoutSeconds: EVENTS_TIMEOUT_SECONDS,
    environment: {
      [ENV.eventBusName]: eventBus.eventBusArn,
      [ENV.bucketName]: resources.bucketName,
      ...(options.consoleUrl === undefined ? {} : { [ENV.consoleUrl]: options.consoleUrl }),
      [ENV.metricsNamespace]: resources.metricsNamespace,
    },
  });
  // events:PutEvents on this one bus: the function reads nothing but its stream (granted by the event source).
  eventBus.grantPutEventsTo(fn);
  fn.addEventSource(
    new DynamoEventSource(table, {
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: EVENTS_BATCH_SIZE,
      bisectBatchOnError: true,
      reportBatchItemFailures: true,
      // No retryAttempts, as the notifier: retry until the record ages out of the stream (24 h), so an EventBridge
      // outage or a bus policy being fixed delays the events instead of dropping them. Bisecting sets a record that
      // keeps failing apart from the rest; after 24 h its description lands in the failure queue, which is alarmed.
      onFailure: new SqsDlq(failureQueue),
      filters: stateChangeFilters(),
    }),
  );
  if (table.encryptionKey !== undefined) acknowledgeFailureQueueKeyFindings(fn);
  return { fn, failureQueue, eventBus };
}

/**
 * The changes that reach the events function (three of the five filters an event source may have; a record passes
 * if it matches any): an occurrence that became final (from a status that is not), an occurrence recorded final
 * (missed), and the job-state row gaining `pausedAt` with the cause `failures`. Heartbeats, the notifier's
 * `notifiedAt`, slot writes and operator pauses never invoke it. The function checks each record again.
 */
export function stateChangeFilters(): Record<string, unknown>[] {
  const status = OccurrenceAttributes.status;
  const open = Object.values(OccurrenceStatus).filter((s) => !TERMINAL_STATUSES.includes(s));
  return [
    lambda.FilterCriteria.filter({
      eventName: lambda.FilterRule.isEqual('MODIFY'),
      dynamodb: {
        NewImage: { [status]: { S: [...TERMINAL_STATUSES] } },
        OldImage: { [status]: { S: open } },
      },
    }),
    lambda.FilterCriteria.filter({
      eventName: lambda.FilterRule.isEqual('INSERT'),
      dynamodb: { NewImage: { [status]: { S: [...TERMINAL_STATUSES] } } },
    }),
    lambda.FilterCriteria.filter({
      eventName: lambda.FilterRule.isEqual('MODIFY'),
      dynamodb: {
        Keys: { [OccurrenceAttributes.scheduledTime]: { S: lambda.FilterRule.isEqual(JOB_STATE_SORT_KEY) } },
        NewImage: { pauseCause: { S: lambda.FilterRule.isEqual('failures') }, pausedAt: lambda.FilterRule.exists() },
        OldImage: { pausedAt: lambda.FilterRule.notExists() },
      },
    }),
  ];
}
