/**
 * Worker Lambda: SQS batches from the job queue. Thin: wires the adapters and hands each message to
 * protocol/process-delivery.ts through Powertools' batch processor. Messages of a batch run concurrently; each
 * failure is reported per message (ReportBatchItemFailures), never by throwing, so one bad message cannot fail its
 * neighbours.
 *
 * A worker's entry file does not call this directly: it exports `defineWorker({ jobs })` or `defineJob(...)` from
 * the package's runtime (functions/index.ts), which build it on the first invocation.
 */
import { randomUUID } from 'node:crypto';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DynamoCapacityStore, DynamoWaitingOccurrences } from './aws/capacity-store';
import { documentClient, s3Client, sqsClient } from './aws/clients';
import { DynamoJobSlotStore } from './aws/job-slot-store';
import { S3MultipartUploads } from './aws/multipart-report-store';
import { DynamoOccurrenceStore } from './aws/occurrence-store';
import { S3ReportStore } from './aws/report-store';
import { DynamoRunStateStore } from './aws/run-state-store';
import { SqsWorkQueue } from './aws/work-queue';
import type { CapacityPorts } from './protocol/concurrency-ports';
import { DeliveryNotAcknowledgedError, type DeliveryOutcome, type DeliveryResult } from './protocol/delivery';
import { decodeEnvelope } from './protocol/envelope';
import { messageOf } from './protocol/errors';
import { type JobSettings, OUTCOME_RESERVE_SECONDS, parseJobSettingsList } from './protocol/job-settings';
import { DETAILED_WORKER_METRICS, STACK_WIDE_WORKER_METRICS } from './protocol/metric-names';
import type {
  Clock,
  JobDefinition,
  JobSlotStore,
  LogFields,
  Logger,
  Metrics,
  MultipartUploads,
  OccurrenceStore,
  ReportStore,
  RunStateStore,
  ScheduleSwitch,
  WorkerDeps,
  WorkQueue,
} from './protocol/ports';
import { noMetrics, systemClock } from './protocol/ports';
import { processDelivery, registerJobs } from './protocol/process-delivery';
import { CachedWholeJobPauses } from './protocol/whole-job-pause';
import { POISON_MESSAGE_RETRY_SECONDS } from './protocol/worker-limits';
import { powertoolsLogger } from './runtime/powertools-logger';
import { type FlushingMetrics, powertoolsMetrics } from './runtime/powertools-metrics';
import { traceIdOf } from './runtime/trace-context';
import { ENV, requireEnv } from './runtime-env';

export interface WorkerOptions {
  /** Job implementations by job id. A job in the settings without one is logged at start and its messages rejected. */
  readonly jobs: Readonly<Record<string, JobDefinition>>;
  /** Defaults to the JOB_SETTINGS the stack sets: the settings of this worker's jobs. */
  readonly settings?: ReadonlyMap<string, JobSettings>;
  readonly store?: OccurrenceStore;
  /** The job-state rows (overlap policies, pause after failures); default: on the occurrence table. */
  readonly slots?: JobSlotStore;
  /** Default: Scheduler, on the group in SCHEDULE_GROUP, where a job of the worker has pauseAfterFailures. */
  readonly schedules?: ScheduleSwitch;
  readonly reports?: ReportStore;
  /** Long jobs' checkpoints, progress and continuations, and their streamed reports. */
  readonly runs?: RunStateStore;
  readonly uploads?: MultipartUploads;
  readonly queue?: WorkQueue;
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly random?: () => number;
  readonly newLeaseId?: () => string;
  /** How long a message that cannot be processed is hidden before its next receive; tests shorten it. */
  readonly poisonRetrySeconds?: number;
  /** Default: Powertools EMF on Lambda; none when a logger is injected (tests, local runs) and no metrics are. */
  readonly metrics?: Metrics;
  /** Default: on the occurrence table, where a job of the worker has maxConcurrency; else none. */
  readonly capacity?: CapacityPorts;
}

/** A worker's Lambda handler: takes a batch of SQS messages (occurrences) and reports the ones to redeliver. */
export type WorkerHandler = (
  event: SQSEvent,
  context: Pick<Context, 'getRemainingTimeInMillis' | 'logStreamName' | 'awsRequestId'>,
) => Promise<SQSBatchResponse>;

export function createWorkerHandler(options: WorkerOptions): WorkerHandler {
  const settings = options.settings ?? parseJobSettingsList(process.env[ENV.jobSettings], ENV.jobSettings);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? powertoolsLogger('worker');
  const slots = options.slots ?? new DynamoJobSlotStore(documentClient(), requireEnv(ENV.tableName));
  const shared = {
    clock,
    logger,
    metrics: options.metrics ?? (options.logger ? noMetrics : workerMetrics(settings)),
    jobs: registerJobs(settings, options.jobs, logger),
    store: options.store ?? new DynamoOccurrenceStore(documentClient(), requireEnv(ENV.tableName)),
    slots,
    // One per container: the whole-job pause of a job with schedules created at run time, read at most every 15 s.
    wholeJobPauses: new CachedWholeJobPauses(slots, clock),
    schedules: options.schedules ?? scheduleSwitchFor(settings),
    reports: options.reports ?? new S3ReportStore(s3Client(), requireEnv(ENV.bucketName)),
    // With an injected store (a test, the simulation) the run's stores are what was injected too, if anything.
    runs:
      options.runs ??
      (options.store ? undefined : new DynamoRunStateStore(documentClient(), requireEnv(ENV.tableName))),
    uploads:
      options.uploads ?? (options.reports ? undefined : new S3MultipartUploads(s3Client(), requireEnv(ENV.bucketName))),
    queue: options.queue ?? new SqsWorkQueue(sqsClient(), requireEnv(ENV.queueUrl)),
    newLeaseId: options.newLeaseId ?? randomUUID,
    random: options.random ?? Math.random,
    poisonRetrySeconds: options.poisonRetrySeconds ?? POISON_MESSAGE_RETRY_SECONDS,
    capacity: options.capacity ?? capacityFor(settings),
  };

  return async (event, context) => {
    // Leave the reserve to record outcomes before Lambda stops the invocation.
    const mustFinishBy = clock.now() + context.getRemainingTimeInMillis() - OUTCOME_RESERVE_SECONDS * 1000;
    const deps: WorkerDeps = { ...shared, owner: `${context.logStreamName}/${context.awsRequestId}` };
    const results: DeliveryResult[] = [];
    // Powertools runs the records concurrently and turns each record whose handler throws into a batch item
    // failure. Never a thrown batch: with every record failed it still answers with the list (throwOnFullBatchFailure
    // false), so the messages we hid until their retry stay hidden rather than all coming back together.
    const { batchItemFailures } = await processPartialResponse(
      event,
      async (record: SQSRecord) => {
        const delivery = { messageId: record.messageId, body: record.body, receiptHandle: record.receiptHandle };
        // Every line of this record names its occurrence and the trigger's trace: a batch runs several at once.
        const recordDeps = { ...deps, logger: withFields(logger, recordFields(record, shared.jobs)) };
        const delivered = await processDelivery(recordDeps, delivery, mustFinishBy).catch((error): DeliveryOutcome => {
          // A store or queue call failed before an outcome could be recorded; SQS delivers the message again.
          recordDeps.logger.error('delivery failed; it will be redelivered', {
            messageId: record.messageId,
            error: messageOf(error),
          });
          return { ack: false, result: 'outcome-not-recorded' };
        });
        results.push(delivered.result);
        if (!delivered.ack) throw new DeliveryNotAcknowledgedError(record.messageId, delivered.result);
        return delivered.result;
      },
      new BatchProcessor(EventType.SQS),
      { throwOnFullBatchFailure: false },
    ).finally(() => shared.metrics.flush?.());
    logger.debug?.('batch done', { records: event.Records.length, results, failures: batchItemFailures.length });
    return { batchItemFailures };
  };
}

/**
 * What each log line of one record carries: the occurrence key (when the body names one), and the trace id of the
 * trigger that enqueued it (AWSTraceHeader, runtime/trace-context.ts), which links the attempt to the trigger's trace.
 */
export function recordFields(
  record: Pick<SQSRecord, 'body' | 'attributes'>,
  jobs: ReadonlyMap<string, unknown>,
): LogFields {
  const triggerTraceId = traceIdOf((record.attributes as { AWSTraceHeader?: string } | undefined)?.AWSTraceHeader);
  let key: LogFields = {};
  try {
    const { jobId, scheduleKey, scheduledTime } = decodeEnvelope(record.body, new Set(jobs.keys()));
    key = { jobId, ...(scheduleKey === undefined ? {} : { scheduleKey }), scheduledTime };
  } catch {
    // A body that names no occurrence is logged, and rejected, by processDelivery.
  }
  return { ...key, ...(triggerTraceId === undefined ? {} : { triggerTraceId }) };
}

/** The logger with `fields` on every line; a line's own fields win. */
function withFields(logger: Logger, fields: LogFields): Logger {
  if (Object.keys(fields).length === 0) return logger;
  return {
    debug: logger.debug && ((message, own) => logger.debug?.(message, { ...fields, ...own })),
    info: (message, own) => logger.info(message, { ...fields, ...own }),
    warn: (message, own) => logger.warn(message, { ...fields, ...own }),
    error: (message, own) => logger.error(message, { ...fields, ...own }),
  };
}

/**
 * EMF with the worker's own dimension set, { worker } (none where the stack set no WORKER_ID), without the detailed
 * metrics unless DETAILED_METRICS is `true`; the failure metrics also stack-wide, which the stack's alarms watch; and
 * { jobId } for the jobs whose settings opt in to per-job metrics.
 */
export function workerMetrics(
  settings: ReadonlyMap<string, JobSettings>,
  env: NodeJS.ProcessEnv = process.env,
): FlushingMetrics {
  const worker = env[ENV.workerId];
  return powertoolsMetrics({
    dimensions: worker === undefined || worker === '' ? undefined : { worker },
    perJob: (jobId) => settings.get(jobId)?.jobMetrics === true,
    ownOmitted: env[ENV.detailedMetrics] === 'true' ? undefined : DETAILED_WORKER_METRICS,
    stackWide: STACK_WIDE_WORKER_METRICS,
  });
}

/** The capacity row and waiting list on the occurrence table, for a worker with a job that has maxConcurrency. */
function capacityFor(settings: ReadonlyMap<string, JobSettings>): CapacityPorts | undefined {
  if (![...settings.values()].some((s) => s.maxConcurrency !== undefined)) return undefined;
  const table = requireEnv(ENV.tableName);
  return {
    store: new DynamoCapacityStore(documentClient(), table),
    waiting: new DynamoWaitingOccurrences(documentClient(), table),
  };
}

/**
 * The switch that disables a job's schedule when it pauses after failures: only for a worker that has such a job,
 * and the Scheduler client is loaded (dynamic import) the first time a job pauses, not with every cold start.
 */
function scheduleSwitchFor(settings: ReadonlyMap<string, JobSettings>): ScheduleSwitch | undefined {
  if (![...settings.values()].some((s) => s.pauseAfterFailures !== undefined)) return undefined;
  const group = process.env[ENV.scheduleGroup];
  // Without it the pause still holds (deliveries are SKIPPED as paused); the worker logs that the schedule fires on.
  if (group === undefined || group === '') return undefined;
  let loaded: Promise<ScheduleSwitch> | undefined;
  const load = async (): Promise<ScheduleSwitch> => {
    const [{ SchedulerClient }, { SchedulerScheduleSwitch }] = await Promise.all([
      import('@aws-sdk/client-scheduler'),
      import('./aws/schedule-switch.js'),
    ]);
    return new SchedulerScheduleSwitch(new SchedulerClient({}), group);
  };
  return {
    setState: async (jobId, state) => {
      loaded ??= load();
      return (await loaded).setState(jobId, state);
    },
  };
}
