/**
 * The whole stack in one process against the emulator: the real trigger, worker and notifier handlers with their
 * real SDK clients, and the three things the emulator does not run played here: Scheduler (scheduler.ts), the SQS
 * event source (sqs-event-source.ts) and the stream event source (stream-event-source.ts).
 * Used by `npm run local` and by the integration tests.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { documentClient, s3Client } from '../../functions/aws/clients';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { createNotifierHandler } from '../../functions/notifier';
import type { JobSettings } from '../../functions/protocol/job-settings';
import type { Occurrence, OccurrenceKey } from '../../functions/protocol/occurrence';
import { TERMINAL_STATUSES } from '../../functions/protocol/occurrence';
import type { JobDefinition, Logger, Metrics } from '../../functions/protocol/ports';
import type { TriggerResult } from '../../functions/protocol/record-occurrence';
import type { RegistryReader } from '../../functions/protocol/runtime-schedule-guard';
import { type ScheduleEvent, scheduleEventOf } from '../../functions/protocol/schedule-event';
import { type JsonValue, seriesOf } from '../../functions/protocol/schedule-key';
import {
  NOTIFIER_BATCH_SIZE,
  stuckAfterSeconds,
  WORKER_BATCH_SIZE,
  workerLimits,
} from '../../functions/protocol/worker-limits';
import { createTriggerHandler } from '../../functions/trigger';
import { createWorkerHandler, type WorkerOptions } from '../../functions/worker';
import {
  createResources,
  functionEnv,
  LOCAL_WORKER,
  type LocalClients,
  type LocalResources,
  localClients,
  serializeEmulatorRequests,
  useEmulator,
} from '../../testing/local/local-aws';
import { SqsEventSource } from '../../testing/local/sqs-event-source';
import { StreamEventSource } from '../../testing/local/stream-event-source';
import { type FireOutcome, fire, type ScheduledFire } from './scheduler';

export interface PipelineOptions {
  readonly endpoint: string;
  readonly settings: readonly JobSettings[];
  readonly jobs: Readonly<Record<string, JobDefinition>>;
  /** Concurrent worker pollers. */
  readonly workers: number;
  /** Where the handlers' JSON log lines go. */
  readonly log: (line: string) => void;
  readonly visibilityTimeoutSeconds?: number;
  /** Passed to createWorkerHandler: tests shorten the wait of a poison message or wrap an adapter to inject a fault. */
  readonly worker?: Partial<Pick<WorkerOptions, 'poisonRetrySeconds' | 'reports' | 'store' | 'queue'>>;
  /** For the benchmarks (bench/): time each handler and count the metrics it records. */
  readonly instrument?: PipelineInstrument;
}

export type HandlerName = 'trigger' | 'worker' | 'notifier';

export interface PipelineInstrument {
  /** Given to the handlers instead of no metrics (a local run has no CloudWatch to write EMF to). */
  readonly metrics?: Metrics;
  /** Wraps each handler as it is built; must return a function that calls the one it was given. */
  readonly wrap?: <F extends (...args: never[]) => Promise<unknown>>(name: HandlerName, handler: F) => F;
  /**
   * Build the handlers with the deployed logger and metrics (Powertools, JSON and EMF lines on stdout) instead of
   * the local JSON-lines logger: the bench reads what a deployed function writes and emits.
   */
  readonly deployedRuntime?: boolean;
}

/** The handlers' log lines as JSON, one per line, to `write` (a file for `npm run local`), not to stdout. */
function jsonLinesLogger(fn: string, write: (line: string) => void): Logger {
  const emit = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    write(JSON.stringify({ level, message, fn, ...fields, time: new Date().toISOString() }));
  return { info: emit('INFO'), warn: emit('WARN'), error: emit('ERROR') };
}

export class LocalPipeline {
  private constructor(
    readonly clients: LocalClients,
    readonly resources: LocalResources,
    readonly trigger: (event: unknown) => Promise<TriggerResult>,
    readonly workerSource: SqsEventSource,
    readonly streamSource: StreamEventSource,
    readonly store: DynamoOccurrenceStore,
    private readonly settings: ReadonlyMap<string, JobSettings>,
    private readonly stuckAfterSeconds: number,
    /** The schedules held (`jobId#key`, with their input): the registry as the trigger reads it. */
    private readonly registered: Map<string, { input?: JsonValue }>,
  ) {}

  /** Creates the resources in the emulator and the handlers over them; nothing runs until start(). */
  static async create(options: PipelineOptions): Promise<LocalPipeline> {
    const clients = localClients(options.endpoint);
    const limits = workerLimits(options.settings);
    const resources = await createResources(clients, {
      limits,
      visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
    });
    // The handlers build their own clients from the SDK's standard settings, as deployed.
    useEmulator(options.endpoint);
    Object.assign(process.env, functionEnv(resources, JSON.stringify(options.settings), stuckAfterSeconds(limits)));
    serializeEmulatorRequests(documentClient());
    serializeEmulatorRequests(s3Client());
    const settings = new Map(options.settings.map((s) => [s.id, s]));
    // Deployed runtime: no logger and no metrics given, so each handler builds the ones it is deployed with.
    const deployed = options.instrument?.deployedRuntime === true;
    const logger = (fn: string): Logger | undefined => (deployed ? undefined : jsonLinesLogger(fn, options.log));
    const metrics = deployed ? undefined : options.instrument?.metrics;
    const wrap = options.instrument?.wrap ?? (<F>(_name: HandlerName, handler: F): F => handler);
    // The pipeline plays the app's upserts too: a schedule key it fires is one the registry holds (the trigger refuses
    // any other, functions/protocol/runtime-schedule-guard.ts).
    const registered = new Map<string, { input?: JsonValue }>();
    const registry: RegistryReader = {
      get: async (jobId, scheduleKey) => registered.get(seriesOf({ jobId, scheduleKey })),
    };
    const trigger = wrap('trigger', createTriggerHandler({ logger: logger('trigger'), metrics, registry }));
    const worker = wrap(
      'worker',
      createWorkerHandler({ jobs: options.jobs, settings, logger: logger('worker'), metrics, ...options.worker }),
    );
    const notifier = wrap('notifier', createNotifierHandler({ logger: logger('notifier') }));
    const workerSource = new SqsEventSource({
      sqs: clients.sqs,
      queueUrl: resources.jobQueueUrl,
      queueArn: resources.jobQueueArn,
      handler: worker,
      functionTimeoutSeconds: limits.functionTimeoutSeconds,
      batchSize: WORKER_BATCH_SIZE,
      pollers: options.workers,
    });
    const streamSource = new StreamEventSource({
      streams: clients.streams,
      streamArn: resources.streamArn,
      handler: notifier,
      batchSize: NOTIFIER_BATCH_SIZE,
      onError: (message) => options.log(JSON.stringify({ level: 'ERROR', fn: 'stream-event-source', message })),
    });
    return new LocalPipeline(
      clients,
      resources,
      trigger,
      workerSource,
      streamSource,
      new DynamoOccurrenceStore(clients.documents, resources.tableName),
      settings,
      stuckAfterSeconds(limits),
      registered,
    );
  }

  start(): void {
    this.workerSource.start();
    this.streamSource.start();
  }

  async stop(): Promise<void> {
    await this.workerSource.stop();
    await this.streamSource.stop();
  }

  /**
   * Scheduler's at-least-once delivery: each occurrence is fired `copies` times at once, with the schedule event its
   * job's schedule would send (the local run's one worker, the job's deadline and retention). An occurrence of a job
   * the pipeline does not know is fired with the key alone, which the trigger rejects.
   */
  async fire(occurrences: readonly ScheduledFire[], copies = 1): Promise<FireOutcome[]> {
    for (const o of occurrences as readonly OccurrenceKey[])
      if (o.scheduleKey !== undefined && !this.registered.has(seriesOf(o))) this.holdSchedule(o.jobId, o.scheduleKey);
    return Promise.all(
      occurrences.flatMap((o) => Array.from({ length: copies }, () => fire(this.trigger, this.scheduleEvent(o)))),
    );
  }

  /**
   * The registry holds this schedule from now on, as after the app's upsert: the trigger admits its events, and
   * records `input` (the registry's, not the event's).
   */
  holdSchedule(jobId: string, scheduleKey: string, input?: JsonValue): void {
    this.registered.set(seriesOf({ jobId, scheduleKey }), input === undefined ? {} : { input });
  }

  /** The event the job's deployed schedule would send for `key` (its route included). */
  scheduleEvent(key: OccurrenceKey): ScheduleEvent {
    const job = this.settings.get(key.jobId);
    if (job === undefined) return key as ScheduleEvent;
    return scheduleEventOf(key, {
      worker: LOCAL_WORKER,
      deadlineSeconds: job.retry.deadlineSeconds,
      retentionDays: job.retentionDays,
      // The route the deployed schedule carries: the trigger sends there and records it on the row.
      queueUrl: this.resources.jobQueueUrl,
      stuckAfterSeconds: this.stuckAfterSeconds,
    });
  }

  async rows(keys: readonly OccurrenceKey[]): Promise<Array<Occurrence | undefined>> {
    return Promise.all(keys.map((k) => this.store.get(k)));
  }

  /**
   * Waits until every occurrence is SUCCEEDED or FAILED and every SUCCEEDED one is announced, or the time is up.
   * Returns the rows as last read.
   */
  async waitUntilSettled(
    keys: readonly OccurrenceKey[],
    timeoutMs: number,
    onProgress?: (settled: number, total: number) => void,
  ): Promise<Array<Occurrence | undefined>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await this.rows(keys);
      const settled = rows.filter(
        (r) =>
          r !== undefined &&
          TERMINAL_STATUSES.includes(r.status) &&
          (r.status !== 'SUCCEEDED' || r.notifiedAt !== undefined),
      ).length;
      onProgress?.(settled, keys.length);
      if (settled === keys.length || Date.now() >= deadline) return rows;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Takes every announcement off the report-ready queue (the topic's subscriber), oldest first. */
  async drainAnnouncements(): Promise<string[]> {
    const bodies: string[] = [];
    for (let i = 0; i < 100; i++) {
      const received = await this.clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: this.resources.reportReadyQueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
        }),
      );
      const messages = received.Messages ?? [];
      if (messages.length === 0) break;
      for (const m of messages) {
        bodies.push(m.Body ?? '');
        await this.clients.sqs.send(
          new DeleteMessageCommand({ QueueUrl: this.resources.reportReadyQueueUrl, ReceiptHandle: m.ReceiptHandle }),
        );
      }
    }
    return bodies;
  }

  async reportKeys(): Promise<string[]> {
    const listed = await this.clients.s3.send(new ListObjectsV2Command({ Bucket: this.resources.bucketName }));
    return (listed.Contents ?? []).map((o) => o.Key ?? '').sort();
  }

  async reportBody(key: string): Promise<string> {
    const object = await this.clients.s3.send(new GetObjectCommand({ Bucket: this.resources.bucketName, Key: key }));
    return object.Body?.transformToString() ?? '';
  }

  /** Copies every report to `dir`, keeping its key as the relative path; returns the paths written. */
  async downloadReports(dir: string): Promise<string[]> {
    const written: string[] = [];
    for (const key of await this.reportKeys()) {
      const file = path.join(dir, ...key.split('/'));
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, await this.reportBody(key));
      written.push(file);
    }
    return written;
  }

  /** Messages in the job queue's DLQ, visible or not. */
  async deadLetterCount(): Promise<number> {
    const attributes = await this.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.resources.jobDeadLetterQueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    const a = attributes.Attributes ?? {};
    return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0);
  }
}
