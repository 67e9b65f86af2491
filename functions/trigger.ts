/**
 * Trigger Lambda: invoked by EventBridge Scheduler with the schedule event (protocol/schedule-event.ts). Records the
 * occurrence and enqueues it on its worker's queue (protocol/record-occurrence.ts). An invalid event is logged and rejected with nothing written; the
 * error makes Lambda keep the event in the trigger's dead-letter queue for inspection.
 */
import { documentClient, sqsClient } from './aws/clients';
import { DynamoOccurrenceRecorder } from './aws/occurrence-recorder';
import { DynamoScheduleRegistry } from './aws/schedule-registry-store';
import { queuesByUrl } from './aws/work-queue';
import { messageOf } from './protocol/errors';
import { TRIGGER_COMPONENT } from './protocol/metric-names';
import type { Clock, Logger, Metrics, OccurrenceRecorder, WorkQueue } from './protocol/ports';
import { noMetrics, systemClock } from './protocol/ports';
import { quoteValue } from './protocol/quote-value';
import { recordAdmittedOccurrence, type TriggerResult } from './protocol/record-occurrence';
import { guardRuntimeSchedule, jobOfInvokedArn, type RegistryReader } from './protocol/runtime-schedule-guard';
import { JOB_METRICS_FIELD, type ScheduleEvent } from './protocol/schedule-event';
import { cachedRouteLookup, type RouteLookup } from './protocol/worker-routes';
import { powertoolsLogger } from './runtime/powertools-logger';
import { powertoolsMetrics } from './runtime/powertools-metrics';
import { ENV, requireEnv } from './runtime-env';

export interface TriggerOptions {
  /** Each worker's job queue by worker id, when known (tests); default: none, each event names its queue. */
  readonly queues?: ReadonlyMap<string, WorkQueue>;
  /** The queue at the URL an event names; default: an SQS queue, one per URL. */
  readonly queueAt?: (queueUrl: string) => WorkQueue;
  /** The route of an event that carries none; default: its job's schedule in SCHEDULE_GROUP, when set. */
  readonly routes?: RouteLookup;
  readonly store?: OccurrenceRecorder;
  /**
   * The schedule registry's rows, which a run-time schedule's event is checked against (runtime-schedule-guard.ts);
   * default: the REGISTRY_TABLE the stack sets once a job takes run-time schedules, else none.
   */
  readonly registry?: RegistryReader;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Default: Powertools EMF on Lambda; none when a logger is injected (tests, local runs) and no metrics are. */
  readonly metrics?: Metrics;
}

/** A rejected event is logged by at most this much of its JSON (an event can be up to 256 KB, a log event too). */
const EVENT_LOG_MAX_CHARS = 1_000;

/** What the trigger reads of its invocation: the ARN it was invoked by, whose alias names a run-time schedule's job. */
export interface TriggerContext {
  readonly invokedFunctionArn?: string;
}

export type TriggerHandler = (event: unknown, context?: TriggerContext) => Promise<TriggerResult>;

export function createTriggerHandler(options: TriggerOptions = {}): TriggerHandler {
  const logger = options.logger ?? powertoolsLogger('trigger');
  // The job of the event being handled, when its schedule opted in to per-job metrics: one event per invocation.
  let perJobMetrics: string | undefined;
  const metrics =
    options.metrics ??
    (options.logger
      ? noMetrics
      : powertoolsMetrics({ dimensions: { ...TRIGGER_COMPONENT }, perJob: (jobId) => jobId === perJobMetrics }));
  const clock = options.clock ?? systemClock;
  const deps = {
    queues: options.queues,
    queueAt: options.queueAt ?? queuesByUrl(sqsClient),
    routes: options.routes ?? scheduleRoutes(clock),
    logger,
    metrics,
    clock,
    store: options.store ?? new DynamoOccurrenceRecorder(documentClient(), requireEnv(ENV.tableName)),
  };
  const registry = options.registry ?? registryOfEnv();
  return async (event, context) => {
    perJobMetrics = jobWithMetrics(event);
    try {
      const invokedJob = jobOfInvokedArn(context?.invokedFunctionArn);
      const admit = (decoded: ScheduleEvent) => guardRuntimeSchedule(decoded, invokedJob, registry);
      return await recordAdmittedOccurrence(deps, event, admit);
    } catch (error) {
      logger.error('trigger failed', { event: quoteValue(event, EVENT_LOG_MAX_CHARS), error: messageOf(error) });
      throw error;
    } finally {
      metrics.flush?.();
    }
  };
}

/** The event's job id when its schedule carries JOB_METRICS_FIELD; read before the event is checked, and only here. */
function jobWithMetrics(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const fields = event as Record<string, unknown>;
  return fields[JOB_METRICS_FIELD] === true && typeof fields.jobId === 'string' ? fields.jobId : undefined;
}

/**
 * The route of an event without one (a run-time schedule projected before schedules carried it): its job's schedule
 * or template in SCHEDULE_GROUP, read at most once a minute per job. The Scheduler client is loaded on first use
 * only, so that the trigger's cold start does not pay for it.
 */
function scheduleRoutes(clock: Clock): RouteLookup | undefined {
  const group = process.env[ENV.scheduleGroup];
  if (group === undefined || group === '') return undefined;
  // One Scheduler client and lookup for the function's life, built on the first event that needs them.
  let loaded: Promise<RouteLookup> | undefined;
  const load = async (): Promise<RouteLookup> => {
    const [{ SchedulerClient }, { ScheduleRouteLookup }] = await Promise.all([
      import('@aws-sdk/client-scheduler'),
      import('./aws/schedule-route-lookup.js'),
    ]);
    return new ScheduleRouteLookup(new SchedulerClient({}), group);
  };
  const lookup: RouteLookup = {
    async routeOf(jobId, worker) {
      if (loaded === undefined) {
        loaded = load();
        loaded.catch(() => {
          loaded = undefined; // a failed load is tried again by the next event
        });
      }
      return (await loaded).routeOf(jobId, worker);
    },
  };
  return cachedRouteLookup(lookup, () => clock.now());
}

function registryOfEnv(): RegistryReader | undefined {
  const table = process.env[ENV.registryTable];
  return table === undefined || table === '' ? undefined : new DynamoScheduleRegistry(documentClient(), table);
}

let deployed: TriggerHandler | undefined;
export const handler = (event: unknown, context?: TriggerContext): Promise<TriggerResult> => {
  deployed ??= createTriggerHandler();
  return deployed(event, context);
};
