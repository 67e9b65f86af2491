/**
 * Reconciler Lambda: invoked every few minutes by an EventBridge rule. Re-enqueues occurrences that fell through
 * the cracks and announces reports that were never announced (protocol/reconcile.ts); when the stack has jobs that
 * take schedules at run time (REGISTRY_TABLE and REGISTRY_JOBS set), it also keeps their Scheduler schedules the
 * projection of the registry (protocol/reconcile-schedules.ts: the sweep and the rolling audit).
 *
 * The two halves run one after the other, and one failing (throwing, or counting failed reads or writes) does not
 * stop the other. It throws when some of the run's reads or writes failed, after doing everything else it could: the
 * failed invocation shows in the function's Errors metric (alarmed), and the next run retries. Everything it does is
 * conditional, so an overlapping or repeated run is harmless.
 */

import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SnsAnnouncer } from './aws/announcer';
import { DynamoAuditCursorStore } from './aws/audit-cursor-store';
import { DynamoCapacityStore, DynamoWaitingOccurrences } from './aws/capacity-store';
import { documentClient, snsClient, sqsClient } from './aws/clients';
import { withDatedTemplates } from './aws/dated-templates';
import { SchedulerLateCheckSources } from './aws/disabled-schedules';
import { DynamoOccurrenceReader, OperatorOccurrenceReader } from './aws/occurrence-reader';
import { DynamoOccurrenceStore } from './aws/occurrence-store';
import { DynamoScheduleRegistry } from './aws/schedule-registry-store';
import { ScheduleRouteLookup } from './aws/schedule-route-lookup';
import { SchedulerProjection } from './aws/scheduler-projection';
import { queuesByUrl } from './aws/work-queue';
import { parseAuditSlicesPerRun } from './protocol/audit-slices';
import { messageOf, ScheduledJobsError } from './protocol/errors';
import { RECONCILER_COMPONENT, STACK_WIDE_WORKER_METRICS } from './protocol/metric-names';
import type {
  Announcer,
  Clock,
  LateCheckSources,
  Logger,
  Metrics,
  OccurrenceIndex,
  OccurrenceStore,
  RequeueStore,
} from './protocol/ports';
import { noMetrics, systemClock } from './protocol/ports';
import { quoteValue } from './protocol/quote-value';
import {
  parseReconcileThresholds,
  type ReconcileReport,
  type ReconcileThresholds,
  type ReconcileWorker,
  type ReconcileWorkers,
  reconcile,
  routedWorkers,
  workersById,
} from './protocol/reconcile';
import {
  type CapacityReconcileDeps,
  type CapacityReconcileReport,
  type CappedJob,
  parseCappedJobs,
  reconcileCapacity,
} from './protocol/reconcile-capacity';
import {
  parseRegistryJobs,
  reconcileSchedules,
  type ScheduleReconcileDeps,
  type ScheduleReconcileReport,
} from './protocol/reconcile-schedules';
import { cachedRouteLookup, STUCK_AFTER_SECONDS_RANGE } from './protocol/worker-routes';
import { powertoolsLogger } from './runtime/powertools-logger';
import { powertoolsMetrics } from './runtime/powertools-metrics';
import { ENV, requireEnv } from './runtime-env';

export interface ReconcilerOptions {
  /**
   * Where a stuck row is re-sent; default: the route the row records, else its job's schedule's in SCHEDULE_GROUP,
   * with SHORTEST_STUCK_AFTER_SECONDS picking the candidates (protocol/worker-routes.ts). A map: every worker by id.
   */
  readonly workers?: ReconcileWorkers | ReadonlyMap<string, ReconcileWorker>;
  readonly thresholds?: ReconcileThresholds;
  readonly store?: OccurrenceStore & RequeueStore;
  readonly index?: OccurrenceIndex;
  readonly announcer?: Announcer;
  readonly clock?: Clock;
  /** Given a logger and no metrics (tests, local runs), metrics are off rather than written to stdout as EMF. */
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  /** The metrics with one worker's dimensions (OccurrencesLate); default: Powertools EMF with { worker }, or `metrics`. */
  readonly workerMetrics?: (worker: string) => Metrics;
  /**
   * Where the late check finds disabled schedules and newest rows; default: Scheduler, on the group in SCHEDULE_GROUP,
   * when the stack sets it. `false`: only late rows are counted.
   */
  readonly lateSources?: LateCheckSources | false;
  readonly bucketName?: string;
  /**
   * The run-time schedules' half: the registry, Scheduler, the audit cursor, the jobs and the limits; default: built
   * from REGISTRY_TABLE and REGISTRY_JOBS when the stack sets them, otherwise none (the half is off). `false`: off.
   */
  readonly schedules?: Omit<ScheduleReconcileDeps, 'clock' | 'logger' | 'metrics'> | false;
  /** The capped jobs' waiting lists; default: from CAPPED_JOBS when the stack sets it, otherwise none. */
  readonly capacity?: Pick<CapacityReconcileDeps, 'ports' | 'jobs'>;
}

/** A reconciler run's report: the occurrences' half, and the run-time schedules' half when the stack has any. */
export interface ReconcilerReport extends ReconcileReport {
  readonly schedules?: ScheduleReconcileReport;
  /** The capped jobs' waiting lists (reconcile-capacity.ts), when the stack has any. */
  readonly capacity?: CapacityReconcileReport;
}

/** Some of the run's reads or writes failed: the invocation fails (the Errors alarm), and the next run retries. */
export class ReconcileIncompleteError extends ScheduledJobsError {
  override readonly name = 'ReconcileIncompleteError';

  constructor(readonly report: ReconcilerReport) {
    const schedules = report.schedules;
    super(
      `reconcile run had ${report.errors + (schedules?.errors ?? 0)} failed read(s) or write(s); fixed ` +
        `${report.fixed.length}${schedules ? `, repaired ${schedules.repairs.length} schedule(s)` : ''}, the next run retries the rest`,
    );
  }
}

export type ReconcilerHandler = (event?: unknown) => Promise<ReconcilerReport>;

export function createReconcilerHandler(options: ReconcilerOptions = {}): ReconcilerHandler {
  const thresholds =
    options.thresholds ?? parseReconcileThresholds(process.env[ENV.reconcileThresholds], ENV.reconcileThresholds);
  const logger = options.logger ?? powertoolsLogger('reconciler');
  const metrics =
    options.metrics ?? (options.logger ? noMetrics : powertoolsMetrics({ dimensions: { ...RECONCILER_COMPONENT } }));
  const clock = options.clock ?? systemClock;
  const tableName = () => requireEnv(ENV.tableName);
  const store = options.store ?? new DynamoOccurrenceStore(documentClient(), tableName());
  const injectedMetrics = options.metrics !== undefined || options.logger !== undefined;
  const workerMetrics: ((worker: string) => Metrics) & { flushAll?(): void } =
    options.workerMetrics ?? (injectedMetrics ? () => metrics : perWorkerMetrics());
  const deps = {
    workers: options.workers ?? reconcileWorkers(clock),
    thresholds,
    logger,
    metrics,
    workerMetrics,
    lateSources: options.lateSources === undefined ? lateSourcesFromEnv() : options.lateSources || undefined,
    clock,
    store,
    index: options.index ?? new DynamoOccurrenceReader(documentClient(), tableName()),
    announce: {
      store,
      clock,
      logger,
      announcer: options.announcer ?? new SnsAnnouncer(snsClient(), requireEnv(ENV.topicArn)),
      bucketName: options.bucketName ?? requireEnv(ENV.bucketName),
    },
  };
  const scheduleParts = options.schedules === undefined ? scheduleReconcileFromEnv() : options.schedules || undefined;
  const scheduleDeps = scheduleParts && { ...scheduleParts, clock, logger, metrics };
  const capacityParts = options.capacity ?? capacityFromEnv();
  // A capped job's worker is found as a row of the job is: by the route its schedule names.
  const workers = deps.workers instanceof Map ? workersById(deps.workers) : (deps.workers as ReconcileWorkers);
  const queueOf = async (job: CappedJob) => (await workers.workerOf({ jobId: job.id, worker: job.worker }))?.queue;
  return async () => {
    // Each half's own failure (a throw) is logged and counted, and the other half still runs.
    let thrown: unknown;
    const report = await reconcile(deps).catch((error: unknown): ReconcileReport => {
      thrown = error;
      logger.error('reconcile of occurrences failed', { error: messageOf(error) });
      return { examined: 0, fixed: [], changedMeanwhile: 0, skipped: 0, errors: 1, truncated: false, late: 0 };
    });
    const schedules =
      scheduleDeps &&
      (await reconcileSchedules(scheduleDeps).catch((error: unknown): ScheduleReconcileReport => {
        logger.error('reconcile of run-time schedules failed', { error: messageOf(error) });
        return { swept: 0, audited: [], repairs: [], changedMeanwhile: 0, skipped: 0, errors: 1, truncated: false };
      }));
    const capacity = capacityParts && (await reconcileCapacity({ ...capacityParts, queueOf, clock, logger }));
    metrics.flush?.(); // the run's values, buffered by the adapter: one EMF line
    workerMetrics.flushAll?.();
    const full: ReconcilerReport = { ...report, ...(schedules && { schedules }), ...(capacity && { capacity }) };
    if (thrown !== undefined && schedules === undefined) throw thrown;
    if (report.errors > 0 || (schedules?.errors ?? 0) > 0 || (capacity?.errors ?? 0) > 0)
      throw new ReconcileIncompleteError(full);
    return full;
  };
}

/**
 * The run-time schedules' half as the stack configures it: REGISTRY_TABLE (the registry table), REGISTRY_JOBS (the
 * jobs that take schedules at run time) and SCHEDULE_GROUP (the shared group, where each job's template is); none
 * when REGISTRY_TABLE is unset (no such job in the stack).
 */
function scheduleReconcileFromEnv(): Omit<ScheduleReconcileDeps, 'clock' | 'logger' | 'metrics'> | undefined {
  const table = process.env[ENV.registryTable];
  if (table === undefined || table === '') return undefined;
  const jobs = parseRegistryJobs(process.env[ENV.registryJobs], ENV.registryJobs);
  const k = parseAuditSlicesPerRun(process.env[ENV.scheduleAuditSlicesPerRun], ENV.scheduleAuditSlicesPerRun);
  const documents = documentClient();
  // The templates live in the stack's shared group (SCHEDULE_GROUP), one per job, named by the job id; read with
  // their last change, so that the audit finds the schedules projected from an older template.
  const scheduler = new SchedulerClient({});
  const sharedGroup = requireEnv(ENV.scheduleGroup);
  return {
    registry: new DynamoScheduleRegistry(documents, table),
    projection: withDatedTemplates(new SchedulerProjection(scheduler, sharedGroup), scheduler, sharedGroup),
    cursor: new DynamoAuditCursorStore(documents, table),
    jobs,
    limits: k === undefined ? {} : { auditSlicesPerRun: k },
  };
}

/** One Powertools instance per worker with late occurrences, { service, worker }: the dimensions its alarm watches. */
export function perWorkerMetrics(): ((worker: string) => Metrics) & { flushAll(): void } {
  const byWorker = new Map<string, Metrics>();
  const of = (worker: string) => {
    let m = byWorker.get(worker);
    if (m === undefined) {
      m = powertoolsMetrics({ dimensions: { worker }, stackWide: STACK_WIDE_WORKER_METRICS });
      byWorker.set(worker, m);
    }
    return m;
  };
  const flushAll = () => {
    for (const m of byWorker.values()) m.flush?.();
  };
  return Object.assign(of, { flushAll });
}

/** The late check's sources on the stack's schedule group (SCHEDULE_GROUP); none when the stack does not set it. */
function lateSourcesFromEnv(): LateCheckSources | undefined {
  const group = process.env[ENV.scheduleGroup];
  if (group === undefined || group === '') return undefined;
  const reader = new OperatorOccurrenceReader(documentClient(), requireEnv(ENV.tableName));
  return new SchedulerLateCheckSources(new SchedulerClient({}), group, reader);
}

/** The capped jobs' part as the stack configures it (CAPPED_JOBS); none when unset (no capped job in the stack). */
function capacityFromEnv(): Pick<CapacityReconcileDeps, 'ports' | 'jobs'> | undefined {
  const json = process.env[ENV.cappedJobs];
  if (json === undefined || json === '' || json === '[]') return undefined;
  const table = requireEnv(ENV.tableName);
  return {
    jobs: parseCappedJobs(json, ENV.cappedJobs),
    ports: {
      store: new DynamoCapacityStore(documentClient(), table),
      waiting: new DynamoWaitingOccurrences(documentClient(), table),
    },
  };
}

/**
 * The routes as the stack gives them: each row's own, else its job's schedule's in SCHEDULE_GROUP (read once a minute
 * per job at most), with SHORTEST_STUCK_AFTER_SECONDS: no variable grows with the number of workers.
 */
function reconcileWorkers(clock: Clock): ReconcileWorkers {
  const shortest = Number(requireEnv(ENV.shortestStuckAfterSeconds));
  if (
    !Number.isInteger(shortest) ||
    shortest < STUCK_AFTER_SECONDS_RANGE.min ||
    shortest > STUCK_AFTER_SECONDS_RANGE.max
  )
    throw new Error(
      `${ENV.shortestStuckAfterSeconds} must be a whole number from ${STUCK_AFTER_SECONDS_RANGE.min} to ${STUCK_AFTER_SECONDS_RANGE.max}, got ${quoteValue(process.env[ENV.shortestStuckAfterSeconds])}`,
    );
  const group = process.env[ENV.scheduleGroup];
  const lookup =
    group === undefined || group === ''
      ? undefined
      : cachedRouteLookup(new ScheduleRouteLookup(new SchedulerClient({}), group), () => clock.now());
  return routedWorkers({ shortestStuckAfterSeconds: shortest, queueAt: queuesByUrl(sqsClient), lookup });
}

let deployed: ReconcilerHandler | undefined;
export const handler: ReconcilerHandler = (event) => {
  deployed ??= createReconcilerHandler();
  return deployed(event);
};
