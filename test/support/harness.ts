/**
 * Builds the real handlers over the real adapters, with the SDK clients answered by FakeAws, and helpers to make
 * the events Lambda would pass.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, beforeEach, vi } from 'vitest';
import { SnsAnnouncer } from '../../functions/aws/announcer';
import { DynamoCapacityStore, DynamoWaitingOccurrences } from '../../functions/aws/capacity-store';
import { DynamoJobSlotStore } from '../../functions/aws/job-slot-store';
import { S3MultipartUploads } from '../../functions/aws/multipart-report-store';
import { DynamoOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { S3ReportStore } from '../../functions/aws/report-store';
import { DynamoRunStateStore } from '../../functions/aws/run-state-store';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import { createNotifierHandler } from '../../functions/notifier';
import { type JobSettings, type JobSettingsInput, withDefaults } from '../../functions/protocol/job-settings';
import type { JobDefinition, LateCheckSources, Logger, Metrics, ScheduleSwitch } from '../../functions/protocol/ports';
import type { ReconcileThresholds, ReconcileWorker, ReconcileWorkers } from '../../functions/protocol/reconcile';
import type { RegistryReader } from '../../functions/protocol/runtime-schedule-guard';
import type { JsonValue } from '../../functions/protocol/schedule-key';
import { createReconcilerHandler, type ReconcilerHandler } from '../../functions/reconciler';
import { createTriggerHandler, type TriggerContext } from '../../functions/trigger';
import { createWorkerHandler, type WorkerHandler } from '../../functions/worker';
import type { Row as Item } from '../../sim/fakes/dynamo-expressions';
import { FakeAws } from '../../sim/fakes/fake-aws';
import { streamEvent } from '../../sim/fakes/stream-event';

/** The original design's timing: a two-minute lease, a 45 s heartbeat. */
export const SEED_TIMING = { leaseSeconds: 120, heartbeatSeconds: 45, leaseSafetyMarginSeconds: 15 } as const;
export const T0 = Date.parse('2026-11-30T06:00:00Z');
export const SCHEDULED = '2026-11-30T06:00:00Z';
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
export const clientConfig = { region: 'eu-central-1', credentials };

export interface LogLine {
  level: string;
  message: string;
  fields: Record<string, unknown>;
}

export function captureLogger(lines: LogLine[]): Logger {
  const at =
    (level: string) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, message, fields });
  return { debug: at('DEBUG'), info: at('INFO'), warn: at('WARN'), error: at('ERROR') };
}

export interface Harness {
  aws: FakeAws;
  logs: LogLine[];
  settings: Map<string, JobSettings>;
  /** Invoke the trigger as Scheduler does; `context.invokedFunctionArn` names the alias a run-time schedule invokes. */
  trigger: (event: unknown, context?: TriggerContext) => Promise<string>;
  /**
   * The schedule registry's rows the trigger checks a run-time schedule's event against: `held(jobId, key, input)`
   * registers one (an event with a key not held is refused); empty at the start.
   */
  registry: HeldSchedules;
  worker: WorkerHandler;
  notifier: ReturnType<typeof createNotifierHandler>;
  /** Invoke the worker with one message, with this much Lambda time left. */
  deliver: (body: string, options?: { messageId?: string; remainingMs?: number }) => Promise<string[]>;
  /** Feed the notifier the stream record of a row's change from `before` to its current state. */
  streamChange: (before: Item | undefined, jobId?: string, scheduledTime?: string) => Promise<string[]>;
  /** The reconciler over the same fakes, with RECONCILE_TEST_THRESHOLDS unless given others. */
  reconciler: ReconcilerHandler;
  /** Every metric the handlers recorded. */
  metrics: { name: string; value: number; jobId: string }[];
}

/** Start a delivery without awaiting it, so a test can move the clock while the job runs. */
export function startDelivery(h: Harness, body: string, remainingMs?: number) {
  let settled = false;
  const promise = h.deliver(body, { remainingMs }).finally(() => {
    settled = true;
  });
  return { promise, settled: () => settled };
}

/** The harness's one worker, which runs every job; stuck after a 900 s visibility timeout plus 300 s. */
export const TEST_WORKER = 'test-worker';
export const TEST_STUCK_AFTER_SECONDS = 1_200;

/** The sample stack's reconcile thresholds. */
export const RECONCILE_TEST_THRESHOLDS: ReconcileThresholds = {
  unannouncedAfterSeconds: 90_000,

  maxFixesPerRun: 100,
};

/** The harnesses made since the last test ended, newest last: useHarnessTime restores their SDK mocks. */
const madeInThisTest: FakeAws[] = [];

/**
 * For a test file that runs handlers over makeHarness: each test starts at T0 under fake timers, and after it the
 * SDK mocks of every harness it made are restored (newest first) and the real timers are back.
 */
export function useHarnessTime(): void {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    for (const aws of madeInThisTest.splice(0).reverse()) aws.restore();
    vi.useRealTimers();
  });
}

export function makeHarness(options: {
  jobs: Record<string, JobDefinition>;
  settings?: JobSettingsInput[];
  random?: () => number;
  thresholds?: ReconcileThresholds;
  /** The worker's stuck threshold for the reconciler; default TEST_STUCK_AFTER_SECONDS. */
  stuckAfterSeconds?: number;
  /** The workers the reconciler knows, instead of the harness's one (TEST_WORKER on the fake queue). */
  reconcileWorkers?: ReadonlyMap<string, ReconcileWorker> | ReconcileWorkers;
  /** The worker's schedule switch (the pause after failures); default none. */
  schedules?: ScheduleSwitch;
  /** The trigger's and the worker's metrics, beside the recording (`metrics`); default only the recording. */
  alsoMetrics?: Metrics;
  /** The reconciler's disabled schedules and newest rows (the late check); default none. */
  lateSources?: LateCheckSources;
}): Harness {
  const aws = new FakeAws();
  madeInThisTest.push(aws);
  const logs: LogLine[] = [];
  const metrics: Harness['metrics'] = [];
  const also = options.alsoMetrics;
  const recordingMetrics: Metrics = {
    add: (name, value, jobId) => {
      metrics.push({ name, value, jobId });
      also?.add(name, value, jobId);
    },
    flush: () => also?.flush?.(),
  };
  const logger = captureLogger(logs);
  const settingsList = (options.settings ?? Object.keys(options.jobs).map((id) => ({ id, ...SEED_TIMING }))).map(
    withDefaults,
  );
  const settings = new Map(settingsList.map((s) => [s.id, s]));
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient(clientConfig), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const store = new DynamoOccurrenceStore(doc, 'occurrences');
  const queue = new SqsWorkQueue(
    new SQSClient(clientConfig),
    'https://sqs.eu-central-1.amazonaws.com/123456789012/jobs',
  );
  const s3 = new S3Client(clientConfig);
  const reports = new S3ReportStore(s3, 'reports-bucket');
  const registry = new HeldSchedules();
  // The capped jobs' capacity row and waiting list, on the same fake table (functions/aws/capacity-store.ts).
  const capacity = {
    store: new DynamoCapacityStore(doc, 'occurrences'),
    waiting: new DynamoWaitingOccurrences(doc, 'occurrences'),
  };
  const cappedJobs = settingsList.flatMap(({ id, maxConcurrency }) =>
    maxConcurrency === undefined ? [] : [{ id, worker: TEST_WORKER, maxConcurrency }],
  );
  const recordOccurrence = createTriggerHandler({
    queues: new Map([[TEST_WORKER, queue]]),
    store,
    logger,
    metrics: recordingMetrics,
    registry,
  });
  // A key of a known job is fired as its schedule would send it (with its route); anything else goes as it is.
  const trigger = (event: unknown, context?: TriggerContext) =>
    recordOccurrence(asScheduleEvent(event, settings), context);
  let leaseCounter = 0;
  const worker = createWorkerHandler({
    jobs: options.jobs,
    settings,
    store,
    slots: new DynamoJobSlotStore(doc, 'occurrences'),
    schedules: options.schedules,
    reports,
    runs: new DynamoRunStateStore(doc, 'occurrences'),
    uploads: new S3MultipartUploads(s3, 'reports-bucket'),
    queue,
    logger,
    metrics: recordingMetrics,
    random: options.random ?? (() => 0.5),
    newLeaseId: () => `lease-${++leaseCounter}`,
    capacity,
  });
  const notifier = createNotifierHandler({
    store,
    announcer: new SnsAnnouncer(new SNSClient(clientConfig), 'arn:aws:sns:eu-central-1:123456789012:report-ready.fifo'),
    logger,
    bucketName: 'reports-bucket',
  });
  let messages = 0;
  const deliver = async (body: string, o: { messageId?: string; remainingMs?: number } = {}) => {
    const messageId = o.messageId ?? `msg-${++messages}`;
    const event = sqsEvent([{ messageId, body }]);
    const res = await worker(event, lambdaContext(o.remainingMs ?? 150_000));
    return res.batchItemFailures.map((f) => f.itemIdentifier);
  };
  const streamChange = async (before: Item | undefined, jobId = 'report', scheduledTime = SCHEDULED) => {
    const after = aws.row(jobId, scheduledTime)!;
    const res = await notifier(streamEvent(before, after));
    return res.batchItemFailures.map((f) => f.itemIdentifier);
  };
  const reconciler = createReconcilerHandler({
    workers:
      options.reconcileWorkers ??
      new Map([[TEST_WORKER, { queue, stuckAfterSeconds: options.stuckAfterSeconds ?? TEST_STUCK_AFTER_SECONDS }]]),
    thresholds: options.thresholds ?? RECONCILE_TEST_THRESHOLDS,
    store,
    index: new DynamoOccurrenceReader(doc, 'occurrences'),
    announcer: new SnsAnnouncer(new SNSClient(clientConfig), 'arn:aws:sns:eu-central-1:123456789012:report-ready.fifo'),
    logger,
    metrics: recordingMetrics,
    bucketName: 'reports-bucket',
    lateSources: options.lateSources ?? false,
    // Only with a capped job: otherwise the report has no capacity part, as a stack without one.
    ...(cappedJobs.length > 0 && { capacity: { ports: capacity, jobs: cappedJobs } }),
  });
  return { aws, logs, settings, trigger, registry, worker, notifier, deliver, streamChange, reconciler, metrics };
}

export function sqsEvent(records: { messageId: string; body: string }[]): SQSEvent {
  return {
    Records: records.map((r) => ({
      messageId: r.messageId,
      receiptHandle: `rh-${r.messageId}`,
      body: r.body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'AIDA',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-central-1:123456789012:jobs',
      awsRegion: 'eu-central-1',
    })),
  };
}

/** A Lambda context whose remaining time runs down with the (fake) clock. */
export function lambdaContext(remainingMs: number) {
  const deadline = Date.now() + remainingMs;
  return {
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    logStreamName: '2026/11/30/[$LATEST]abc',
    awsRequestId: `req-${Date.now()}`,
  };
}

/** A job that works for `ms` (on the fake clock) unless aborted, and records what happened to it. */
export function timedJob(
  ms: number,
  log: { runs: number; abortedAt?: number; abortReason?: unknown } = { runs: 0 },
): JobDefinition & { log: typeof log } {
  return {
    log,
    reportExtension: 'txt',
    async run(occurrence, { signal }) {
      log.runs++;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          log.abortedAt = Date.now();
          log.abortReason = signal.reason;
          reject(signal.reason);
        });
      });
      return {
        body: `report of ${occurrence.jobId} at ${occurrence.scheduledTime}, attempt ${occurrence.attempt}`,
        contentType: 'text/plain',
      };
    },
  };
}

/** The schedule event of a `{ jobId, scheduledTime }` whose job the harness knows, as its schedule sends it. */
function asScheduleEvent(event: unknown, settings: ReadonlyMap<string, JobSettings>): unknown {
  if (typeof event !== 'object' || event === null || 'worker' in event) return event;
  const job = settings.get(String((event as { jobId?: unknown }).jobId));
  if (job === undefined) return event;
  return {
    ...event,
    worker: TEST_WORKER,
    deadlineSeconds: job.retry.deadlineSeconds,
    retentionDays: job.retentionDays,
  };
}

/** The registry rows a test holds, as the trigger reads them (RegistryReader): the keys and their inputs. */
export class HeldSchedules implements RegistryReader {
  private readonly rows = new Map<string, { input?: JsonValue; deletedAt?: string }>();
  readonly reads: string[] = [];

  held(jobId: string, scheduleKey: string, input?: JsonValue): void {
    this.rows.set(`${jobId}/${scheduleKey}`, input === undefined ? {} : { input });
  }

  deleted(jobId: string, scheduleKey: string): void {
    this.rows.set(`${jobId}/${scheduleKey}`, { deletedAt: '2026-12-01T00:00:00.000Z' });
  }

  async get(jobId: string, scheduleKey: string) {
    this.reads.push(`${jobId}/${scheduleKey}`);
    return this.rows.get(`${jobId}/${scheduleKey}`);
  }
}
