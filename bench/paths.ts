/**
 * The paths of figures 1 and 2, each run against moto with the real handlers: what one occurrence costs in requests
 * and capacity units on the happy path, with heartbeats, with a duplicate trigger, with a failed attempt, and with
 * a re-enqueue by the reconciler.
 */
import { PurgeQueueCommand } from '@aws-sdk/client-sqs';
import { sqsClient } from '../functions/aws/clients';
import { SqsWorkQueue } from '../functions/aws/work-queue';
import { type JobSettings, withDefaults } from '../functions/protocol/job-settings';
import type { JobDefinition } from '../functions/protocol/ports';
import type { ReconcileThresholds, ReconcileWorker } from '../functions/protocol/reconcile';
import type { JsonValue } from '../functions/protocol/schedule-key';
import { createReconcilerHandler } from '../functions/reconciler';
import type { LocalPipeline } from '../scripts/local/pipeline';
import { fire } from '../scripts/local/scheduler';
import { LOCAL_WORKER } from '../testing/local/local-aws';
import type { BenchSession, HandlerTiming } from './bench-session';
import { type CapacityEntry, type CapacityTotals, sumCapacity } from './capacity-ledger';
import type { RecordedRequest, RequestRole } from './request-recorder';

export const BENCH_JOB_ID = 'bench';

/** Short timing, as the integration tests use, so that heartbeats and retries take seconds. */
export function benchSettings(
  overrides: Partial<Pick<JobSettings, 'leaseSeconds' | 'heartbeatSeconds'>> & { retryDeadlineSeconds?: number } = {},
  id = BENCH_JOB_ID,
) {
  const { retryDeadlineSeconds = 600, ...timing } = overrides;
  return withDefaults({
    id,
    leaseSeconds: 10,
    heartbeatSeconds: 2,
    leaseSafetyMarginSeconds: 2,
    timeoutSeconds: 30,
    ...timing,
    retry: {
      maxAttempts: 3,
      baseDelaySeconds: 1,
      maxDelaySeconds: 1,
      deadlineSeconds: retryDeadlineSeconds,
      jitter: 0,
    },
  });
}

export interface BenchJob extends JobDefinition {
  /** Milliseconds spent in the job itself, summed over its runs (not the stack's cost). */
  readonly jobMs: number[];
}

/** A job that sleeps `ms` and fails its first `failures` runs with a short error. */
export function benchJob(ms: number, failures = 0): BenchJob {
  const jobMs: number[] = [];
  let runs = 0;
  return {
    jobMs,
    reportExtension: 'txt',
    async run(occurrence) {
      const started = performance.now();
      try {
        await new Promise((resolve) => setTimeout(resolve, ms));
        runs += 1;
        if (runs <= failures) throw new Error(`bench failure ${runs}: the job threw`);
        return {
          body: `report of ${occurrence.scheduledTime}, attempt ${occurrence.attempt}`,
          contentType: 'text/plain',
        };
      } finally {
        jobMs.push(performance.now() - started);
      }
    },
  };
}

/** Whole-second scheduled times a second apart, back from now, so no retry deadline has passed. */
export function scheduledTimes(count: number, offsetSeconds = 0): string[] {
  const base = Math.floor(Date.now() / 1000) * 1000 - offsetSeconds * 1000;
  return Array.from({ length: count }, (_, i) => new Date(base - i * 1000).toISOString().replace('.000Z', 'Z'));
}

export type OperationCounts = Record<string, number>;

export interface PathResult {
  readonly path: string;
  readonly occurrences: number;
  /** Per role, "Service.Operation" → count, over the whole path (all occurrences). */
  readonly requests: Record<RequestRole, OperationCounts>;
  /** The event source's receives that returned nothing (idle long polls), apart: they depend on time, not work. */
  readonly emptyReceives: number;
  readonly capacity: CapacityTotals;
  readonly writes: readonly CapacityEntry[];
  readonly logBytes: number;
  /** Bytes of the SNS publish requests' bodies (the payload SNS FIFO bills per GB is a little less). */
  readonly snsPayloadBytes: number;
  readonly logLines: number;
  readonly metrics: number;
  readonly timings: readonly HandlerTiming[];
  /** The handlers' requests by the handler that made them (each a round trip on its critical path). */
  readonly requestsByHandler: Readonly<Record<string, OperationCounts>>;
  readonly jobMs: number;
  /** Time spent waiting for moto's answers, summed over all requests (they overlap under concurrency). */
  readonly motoMs: number;
  readonly wallMs: number;
}

export function countRequests(requests: readonly RecordedRequest[]): Pick<PathResult, 'requests' | 'emptyReceives'> {
  const byRole: Record<RequestRole, OperationCounts> = { handler: {}, 'event-source': {}, driver: {} };
  let emptyReceives = 0;
  for (const r of requests) {
    if (r.role === 'event-source' && r.operation === 'ReceiveMessage' && r.messages === 0) {
      emptyReceives += 1;
      continue;
    }
    // The stream's polling is Lambda's (free to the user, and time-driven); kept apart from the SQS event source.
    const key = `${r.service}.${r.operation}`;
    byRole[r.role][key] = (byRole[r.role][key] ?? 0) + 1;
  }
  return { requests: byRole, emptyReceives };
}

export function total(counts: OperationCounts, filter: (key: string) => boolean = () => true): number {
  return Object.entries(counts)
    .filter(([key]) => filter(key))
    .reduce((sum, [, n]) => sum + n, 0);
}

/** Runs the pipeline for the given occurrences until every one is settled and announced, then stops it. */
async function settle(
  pipeline: LocalPipeline,
  times: readonly string[],
  timeoutMs: number,
  scheduleKey?: string,
): Promise<void> {
  const keys = times.map((scheduledTime) => ({
    jobId: BENCH_JOB_ID,
    scheduledTime,
    ...(scheduleKey ? { scheduleKey } : {}),
  }));
  // Not paused: the handlers run meanwhile. The waiting reads go through the driver's client, recorded as 'driver'.
  const rows = await pipeline.waitUntilSettled(keys, timeoutMs);
  const unsettled = rows.filter((r) => r?.notifiedAt === undefined).length;
  await pipeline.stop();
  if (unsettled > 0) throw new BenchPathError(`${unsettled} of ${keys.length} occurrences did not settle`);
}

export class BenchPathError extends Error {
  override readonly name = 'BenchPathError';
}

function result(session: BenchSession, path: string, occurrences: number, job: BenchJob, started: number): PathResult {
  const requests = session.recorder.take();
  const writes = session.ledger.take();
  return {
    path,
    occurrences,
    ...countRequests(requests),
    capacity: sumCapacity(writes),
    writes,
    logBytes: session.logLines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0),
    logLines: session.logLines.length,
    snsPayloadBytes: requests
      .filter((r) => r.role === 'handler' && r.operation === 'Publish')
      .reduce((sum, r) => sum + r.requestBytes, 0),
    metrics: session.metricsRecorded.length,
    timings: [...session.timings],
    requestsByHandler: byHandler(requests),
    jobMs: job.jobMs.reduce((a, b) => a + b, 0),
    motoMs: requests.filter((r) => r.role !== 'driver').reduce((sum, r) => sum + r.durationMs, 0),
    wallMs: performance.now() - started,
  };
}

/** "Service.Operation" counts of the handlers' requests, by the handler that made them. */
function byHandler(requests: readonly RecordedRequest[]): Record<string, OperationCounts> {
  const out: Record<string, OperationCounts> = {};
  for (const r of requests) {
    if (r.role !== 'handler') continue;
    const who = r.handler ?? 'unknown';
    const key = `${r.service}.${r.operation}`;
    out[who] = { ...out[who], [key]: (out[who]?.[key] ?? 0) + 1 };
  }
  return out;
}

export interface RunOptions {
  readonly settings?: JobSettings;
  readonly jobMs?: number;
  readonly failures?: number;
  readonly copies?: number;
  /** Fire each occurrence once more after it finished (Scheduler's late duplicate). */
  readonly lateDuplicate?: boolean;
  readonly count?: number;
  readonly workers?: number;
  readonly timeoutMs?: number;
  /**
   * Fire the occurrences as one schedule created at run time would (issue 22): with its key and input in the event,
   * as Scheduler's per-key schedule sends them.
   */
  readonly keyed?: { readonly scheduleKey: string; readonly input?: JsonValue };
}

/** Fires `count` occurrences (each `copies` times) and runs them to the end. */
export async function runOccurrences(session: BenchSession, path: string, options: RunOptions): Promise<PathResult> {
  const job = benchJob(options.jobMs ?? 0, options.failures ?? 0);
  const pipeline = await session.pipeline(
    options.settings ?? benchSettings(),
    { [BENCH_JOB_ID]: job },
    options.workers ?? 1,
  );
  const times = scheduledTimes(options.count ?? 1);
  const started = performance.now();
  pipeline.start();
  const fires = times.map((scheduledTime) => ({ jobId: BENCH_JOB_ID, scheduledTime }));
  const keyed = options.keyed;
  if (keyed === undefined) await pipeline.fire(fires, options.copies ?? 1);
  else await fireKeyed(pipeline, fires, keyed, options.copies ?? 1);
  await settle(pipeline, times, options.timeoutMs ?? 60_000, keyed?.scheduleKey);
  if (options.lateDuplicate) await pipeline.fire(fires);
  return result(session, path, times.length, job, started);
}

/** The per-key schedule's event: the job's schedule event with the key and the input (the projection's Input). */
async function fireKeyed(
  pipeline: LocalPipeline,
  fires: readonly { jobId: string; scheduledTime: string }[],
  keyed: NonNullable<RunOptions['keyed']>,
  copies: number,
): Promise<void> {
  for (const f of fires) pipeline.holdSchedule(f.jobId, keyed.scheduleKey, keyed.input);
  await Promise.all(
    fires.flatMap((f) =>
      Array.from({ length: copies }, () =>
        fire(pipeline.trigger, {
          ...pipeline.scheduleEvent({ ...f, scheduleKey: keyed.scheduleKey }),
          ...(keyed.input === undefined ? {} : { input: keyed.input }),
        }),
      ),
    ),
  );
}

/** Thresholds that make a row stuck after a second; the announcement threshold is out of the way. */
/** The local worker's rows count as stuck after this long. */
const BENCH_STUCK_AFTER_SECONDS = 1;
const BENCH_RECONCILE: ReconcileThresholds = {
  unannouncedAfterSeconds: 86_400,
  maxFixesPerRun: 100,
};

export interface ReconcilerResult {
  /** A run with nothing to fix (the fixed cost of each run, every few minutes). */
  readonly idleRun: PathResult;
  /** A run that re-enqueues one PENDING occurrence whose message was lost. */
  readonly requeueRun: PathResult;
  /** The re-enqueued occurrence's own way to the end afterwards (claim, run, complete, announce). */
  readonly afterwards: PathResult;
}

/**
 * The bench pipeline's one worker as the reconciler sees it. The handlers' own SQS client, so that the reconciler's
 * SendMessage is counted as its own (the driver's client to the job queue is the event source's, counted apart).
 */
export function localReconcileWorkers(jobQueueUrl: string, stuckAfter: number): ReadonlyMap<string, ReconcileWorker> {
  return new Map([
    [LOCAL_WORKER, { queue: new SqsWorkQueue(sqsClient(), jobQueueUrl), stuckAfterSeconds: stuckAfter }],
  ]);
}

/**
 * The trigger records an occurrence and its message is lost (the queue is purged before any worker polls): the
 * reconciler finds the PENDING row and re-enqueues it, and the worker then runs it.
 */
export async function runReconcilerRequeue(session: BenchSession): Promise<ReconcilerResult> {
  const settings = benchSettings();
  const job = benchJob(0);
  const pipeline = await session.pipeline(settings, { [BENCH_JOB_ID]: job }, 1);
  const reconciler = session.timed(
    'reconciler',
    createReconcilerHandler({
      workers: localReconcileWorkers(pipeline.resources.jobQueueUrl, BENCH_STUCK_AFTER_SECONDS),
      thresholds: BENCH_RECONCILE,
      logger: { info: () => {}, warn: () => {}, error: () => {} },
    }),
  );
  let started = performance.now();
  await reconciler();
  const idleRun = result(session, 'reconciler run, nothing stuck', 0, job, started);

  const [scheduledTime] = scheduledTimes(1, 5);
  await session.recorder.whilePaused(async () => {
    await pipeline.fire([{ jobId: BENCH_JOB_ID, scheduledTime }]);
    await pipeline.clients.sqs.send(new PurgeQueueCommand({ QueueUrl: pipeline.resources.jobQueueUrl }));
    await new Promise((resolve) => setTimeout(resolve, (BENCH_STUCK_AFTER_SECONDS + 1) * 1000));
  });
  session.clear();
  started = performance.now();
  const report = await reconciler();
  if (report.fixed.length !== 1) throw new BenchPathError(`the reconciler fixed ${report.fixed.length}, not 1`);
  const requeueRun = result(session, 'reconciler run, one re-enqueue', 1, job, started);

  started = performance.now();
  pipeline.start();
  await settle(pipeline, [scheduledTime], 60_000);
  const afterwards = result(session, 're-enqueued occurrence, to the end', 1, job, started);
  return { idleRun, requeueRun, afterwards };
}
