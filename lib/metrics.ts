/**
 * The CloudWatch metrics of one ScheduledJobs, built in one place: the alarms, the dashboard and the `metric*()`
 * methods of the constructs all call these functions, so an alarm watches exactly the metric a user graphs, and a
 * renamed metric or dimension cannot leave one of them watching nothing.
 *
 * The functions write each value with the dimensions of the function that wrote it
 * (functions/runtime/powertools-metrics.ts): { service, worker } from a worker, { service, component: 'trigger' } from
 * the trigger, { service, component: 'reconciler' } from the reconciler; the workers' failure metrics a second time
 * with { service, component: 'workers' } (functions/protocol/metric-names.ts STACK_WIDE_WORKER_METRICS), which the
 * stack's alarms watch; and a second time with { service, jobId } only for a job with `jobMetrics: true`. A worker
 * writes OccurrencesStarted, OccurrencesSucceeded and JobDuration with { service, worker } only with the stack's
 * `detailedMetrics`. CloudWatch matches a metric by its exact dimension set, so each builder
 * below only accepts the metric names that are written with its set: the types {@link WorkerMetricName},
 * {@link TriggerMetricName} and {@link ReconcilerMetricName} list them.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import {
  METRICS_SERVICE,
  MetricName,
  RECONCILER_COMPONENT,
  TRIGGER_COMPONENT,
  WORKERS_COMPONENT,
} from '../functions/protocol/metric-names';

export { METRICS_SERVICE, MetricName } from '../functions/protocol/metric-names';

/** The period of every metric here unless the caller gives another: the alarms' default period too. */
export const DEFAULT_METRIC_PERIOD = Duration.minutes(5);

/**
 * The metrics a worker writes (functions/protocol/process-delivery.ts and job-slot.ts run in the worker), so the
 * ones that also carry `{ service, worker }`; and OccurrencesLate, which the reconciler writes with the late
 * occurrences' worker, so that each worker's late alarm watches its own. The trigger's (OccurrencesMissed, DuplicateTriggersSuppressed) and the
 * reconciler's (OccurrencesRequeued, ReportsReannounced) are not among them.
 */
export type WorkerMetricName = Exclude<
  MetricName,
  | typeof MetricName.OccurrencesMissed
  | typeof MetricName.DuplicateTriggersSuppressed
  | typeof MetricName.OccurrencesRequeued
  | typeof MetricName.ReportsReannounced
>;

/**
 * The worker metrics also written stack-wide, with { service, component: 'workers' } (STACK_WIDE_WORKER_METRICS):
 * what the stack's alarms on every worker read.
 */
export type StackWideWorkerMetricName =
  | typeof MetricName.OccurrencesFailed
  | typeof MetricName.LeasesLost
  | typeof MetricName.JobsPausedOnFailures
  | typeof MetricName.OccurrencesLate;

/** The metrics the trigger writes (functions/protocol/record-occurrence.ts), with { service, component: 'trigger' }. */
export type TriggerMetricName = typeof MetricName.OccurrencesMissed | typeof MetricName.DuplicateTriggersSuppressed;

/** The metrics the reconciler writes (functions/protocol/reconcile.ts), so the ones that carry { service, component }. */
export type ReconcilerMetricName = typeof MetricName.OccurrencesRequeued | typeof MetricName.ReportsReannounced;

/**
 * One metric of one job: `name` with the dimensions { service: METRICS_SERVICE, jobId }, which the functions write
 * only for a job with `jobMetrics: true` (ScheduledJob.metric() checks that before it calls this).
 *
 * @param namespace - the namespace the functions write to (ScheduledJobs.metricsNamespace)
 * @param jobId - the job's id
 * @param name - the metric
 * @param props - overrides the defaults, as in CDK's own `metric*()` methods
 * @returns a Metric with a period of 5 minutes and the statistic Sum (Maximum for JobDuration) unless `props` says
 *   otherwise
 */
export function jobMetric(
  namespace: string,
  jobId: string,
  name: MetricName,
  props?: cloudwatch.MetricOptions,
): cloudwatch.Metric {
  return ownMetric(namespace, name, { jobId }, props);
}

/**
 * One metric over every job of one worker: `name` with the dimensions { service: METRICS_SERVICE, worker }, which a
 * worker writes for every value (the per-worker alarms watch these, so that 100 jobs need neither 100 alarms nor 300
 * custom metrics).
 *
 * @param namespace - the namespace the functions write to (ScheduledJobs.metricsNamespace)
 * @param workerId - the worker's id
 * @param name - a metric the worker writes
 * @param props - overrides the defaults, as in CDK's own `metric*()` methods
 * @returns a Metric with a period of 5 minutes and the statistic Sum (Maximum for JobDuration) unless `props` says
 *   otherwise
 */
export function workerMetric(
  namespace: string,
  workerId: string,
  name: WorkerMetricName,
  props?: cloudwatch.MetricOptions,
): cloudwatch.Metric {
  return ownMetric(namespace, name, { worker: workerId }, props);
}

/**
 * One failure metric over every worker of the stack: `name` with the dimensions { service: METRICS_SERVICE,
 * component: 'workers' }, which each worker (and the reconciler, for OccurrencesLate) writes beside its own, so that
 * one alarm watches them all.
 *
 * @param namespace - the namespace the functions write to (ScheduledJobs.metricsNamespace)
 * @param name - a metric the workers also write stack-wide
 * @param props - overrides the defaults, as in CDK's own `metric*()` methods
 * @returns a Metric with a period of 5 minutes and the statistic Sum (Maximum for OccurrencesLate) unless `props`
 *   says otherwise
 */
export function workersMetric(
  namespace: string,
  name: StackWideWorkerMetricName,
  props?: cloudwatch.MetricOptions,
): cloudwatch.Metric {
  return ownMetric(namespace, name, { ...WORKERS_COMPONENT }, props);
}

/**
 * One metric of the trigger over every job: `name` with the dimensions { service: METRICS_SERVICE, component:
 * 'trigger' }, which the trigger writes for every value.
 *
 * @param namespace - the namespace the functions write to (ScheduledJobs.metricsNamespace)
 * @param name - a metric the trigger writes
 * @param props - overrides the defaults, as in CDK's own `metric*()` methods
 * @returns a Metric with a period of 5 minutes and the statistic Sum unless `props` says otherwise
 */
export function triggerMetric(
  namespace: string,
  name: TriggerMetricName,
  props?: cloudwatch.MetricOptions,
): cloudwatch.Metric {
  return ownMetric(namespace, name, { ...TRIGGER_COMPONENT }, props);
}

/**
 * One metric of the reconciler over every job: `name` with the dimensions
 * { service: METRICS_SERVICE, component: 'reconciler' }, which the reconciler writes for every value.
 *
 * @param namespace - the namespace the functions write to (ScheduledJobs.metricsNamespace)
 * @param name - a metric the reconciler writes
 * @param props - overrides the defaults, as in CDK's own `metric*()` methods
 * @returns a Metric with a period of 5 minutes and the statistic Sum unless `props` says otherwise
 */
export function reconcilerMetric(
  namespace: string,
  name: ReconcilerMetricName,
  props?: cloudwatch.MetricOptions,
): cloudwatch.Metric {
  return ownMetric(namespace, name, { ...RECONCILER_COMPONENT }, props);
}

/**
 * The repairs the reconciler made, over every job: occurrences it re-enqueued plus reports it announced late, each
 * missing data point counted as 0. Each one means that something upstream dropped an occurrence.
 *
 * @param namespace - the namespace the functions write to (ScheduledJobs.metricsNamespace)
 * @param props - overrides the label and the period (5 minutes), which applies to both metrics
 */
export function reconcilerRepairs(
  namespace: string,
  props?: cloudwatch.MathExpressionOptions,
): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    expression: 'FILL(requeued, 0) + FILL(reannounced, 0)',
    usingMetrics: {
      requeued: reconcilerMetric(namespace, MetricName.OccurrencesRequeued),
      reannounced: reconcilerMetric(namespace, MetricName.ReportsReannounced),
    },
    ...withDefaults({ label: 'reconciler repairs', period: DEFAULT_METRIC_PERIOD }, props),
  });
}

/**
 * One metric of every worker, one line per worker: a SEARCH over { service, worker }, so a worker added later needs no
 * new graph. For dashboards only; an alarm cannot watch a search.
 *
 * @param namespace - the namespace the functions write to (ScheduledJobs.metricsNamespace)
 * @param name - a metric the workers write
 * @param label - the graph's label
 */
export function everyWorkerMetric(namespace: string, name: WorkerMetricName, label: string): cloudwatch.MathExpression {
  const period = DEFAULT_METRIC_PERIOD.toSeconds();
  return new cloudwatch.MathExpression({
    expression: `SEARCH('{${namespace},service,worker} MetricName="${name}"', '${defaultStatistic(name)}', ${period})`,
    label,
    period: DEFAULT_METRIC_PERIOD,
  });
}

/**
 * The failed invocations of a function (a worker's or the reconciler's): crashes, timeouts, out of memory.
 *
 * @param fn - the function
 * @param props - overrides the defaults: a period of 5 minutes, the statistic Sum
 */
export function functionErrors(fn: lambda.IFunction, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
  return fn.metricErrors(withDefaults(SUM_OVER_PERIOD, props));
}

/**
 * The throttled invocations of a function.
 *
 * @param fn - the function
 * @param props - overrides the defaults: a period of 5 minutes, the statistic Sum
 */
export function functionThrottles(fn: lambda.IFunction, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
  return fn.metricThrottles(withDefaults(SUM_OVER_PERIOD, props));
}

/**
 * The messages waiting in a dead-letter queue: ApproximateNumberOfMessagesVisible, whose every message needs a person.
 *
 * @param queue - the dead-letter queue
 * @param props - overrides the defaults: a period of 5 minutes, the statistic Maximum
 */
export function deadLetterMessages(queue: sqs.IQueue, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
  return queue.metricApproximateNumberOfMessagesVisible(
    withDefaults({ period: DEFAULT_METRIC_PERIOD, statistic: cloudwatch.Stats.MAXIMUM }, props),
  );
}

const SUM_OVER_PERIOD: cloudwatch.MetricOptions = { period: DEFAULT_METRIC_PERIOD, statistic: cloudwatch.Stats.SUM };

/** Sum for the counts; Maximum for JobDuration, where the longest attempt is the one that nears the timeout. */
/** Sum for counts; Maximum for a duration, and for the gauge OccurrencesLate (each reconciler run counts anew). */
function defaultStatistic(name: MetricName): string {
  return name === MetricName.JobDuration || name === MetricName.OccurrencesLate
    ? cloudwatch.Stats.MAXIMUM
    : cloudwatch.Stats.SUM;
}

function ownMetric(
  namespace: string,
  name: MetricName,
  dimensions: Record<string, string>,
  props: cloudwatch.MetricOptions | undefined,
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace,
    metricName: name,
    ...withDefaults(
      {
        dimensionsMap: { service: METRICS_SERVICE, ...dimensions },
        period: DEFAULT_METRIC_PERIOD,
        statistic: defaultStatistic(name),
      },
      props,
    ),
  });
}

/**
 * The defaults with every option the caller gave: an option given as `undefined` keeps its default (a plain spread
 * would turn `{ statistic: undefined }` into CloudWatch's Average).
 */
function withDefaults<T extends object>(defaults: T, props: T | undefined): T {
  const given = Object.entries(props ?? {}).filter(([, value]) => value !== undefined);
  return { ...defaults, ...Object.fromEntries(given) };
}
