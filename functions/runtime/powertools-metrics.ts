/**
 * The Metrics port on Powertools Metrics. Each value is buffered and written at the handler's `flush()`, once per
 * invocation, as CloudWatch embedded-metric-format (EMF) lines:
 *
 * - one line with the function's own dimension set, { service, ...own }: a worker's { worker }, the trigger's
 *   { component: 'trigger' } or the reconciler's { component: 'reconciler' }. The per-worker alarms watch these; a stack pays
 *   for each (name, dimension set) pair it writes, so these cost the same however many jobs the stack has;
 * - one more line per job of the invocation that opted in to per-job metrics (`jobMetrics`), with { service, jobId };
 * - for the names in `stackWide` (the workers' failure metrics), one more line with { service, component: 'workers' },
 *   which one alarm per stack watches.
 *
 * The names in `ownOmitted` (a worker's DETAILED_WORKER_METRICS without `detailedMetrics`) skip the own set: no alarm
 * reads them, and each would be a custom metric paid every hour the worker runs.
 *
 * Powertools keeps several values of one name as an array in one line (up to 100, then it writes the line and starts
 * another), so a worker batch of ten occurrences writes one line, not thirty. One Powertools instance per dimension
 * set, because a Powertools line has one set of values: a batch records for several jobs at once in one process.
 * The namespace comes from POWERTOOLS_METRICS_NAMESPACE, which the stack sets (lib/scheduled-jobs.ts).
 */
import { MetricUnit, Metrics as PowertoolsMetrics } from '@aws-lambda-powertools/metrics';
import { METRIC_UNITS, METRICS_SERVICE, type MetricName, WORKERS_COMPONENT } from '../protocol/metric-names';
import type { Metrics } from '../protocol/ports';

const UNIT = { Count: MetricUnit.Count, Milliseconds: MetricUnit.Milliseconds } as const;

export interface PowertoolsMetricsOptions {
  /** Default: POWERTOOLS_METRICS_NAMESPACE. */
  readonly namespace?: string;
  /** The function's own dimensions beside `service`: `{ worker }` or `{ component }`. */
  readonly dimensions?: Readonly<Record<string, string>>;
  /** Whether a job's values are also written with { service, jobId }; default: no job's are. */
  readonly perJob?: (jobId: string) => boolean;
  /** Names not written with the own dimension set (still per job where `perJob` says so); default: none. */
  readonly ownOmitted?: ReadonlySet<MetricName>;
  /** Names also written with the workers' stack-wide set, { service, component: 'workers' }; default: none. */
  readonly stackWide?: ReadonlySet<MetricName>;
}

/** The Metrics port with its `flush` present: the handlers call it once at the end of each invocation. */
export type FlushingMetrics = Metrics & { flush(): void };

export function powertoolsMetrics(options: PowertoolsMetricsOptions = {}): FlushingMetrics {
  const own = newInstance(options.namespace, options.dimensions ?? {});
  const stack = newInstance(options.namespace, { ...WORKERS_COMPONENT });
  const byJob = new Map<string, PowertoolsMetrics>();
  const perJob = options.perJob ?? (() => false);
  return {
    add(name: MetricName, value: number, jobId: string) {
      if (options.ownOmitted?.has(name) !== true) own.addMetric(name, UNIT[METRIC_UNITS[name]], value);
      if (options.stackWide?.has(name) === true) stack.addMetric(name, UNIT[METRIC_UNITS[name]], value);
      if (!perJob(jobId)) return;
      let job = byJob.get(jobId);
      if (job === undefined) {
        job = newInstance(options.namespace, { jobId });
        byJob.set(jobId, job);
      }
      job.addMetric(name, UNIT[METRIC_UNITS[name]], value);
    },
    flush() {
      // Only instances holding values: Powertools warns on an empty publish.
      for (const instance of [own, stack, ...byJob.values()]) {
        if (instance.hasStoredMetrics()) instance.publishStoredMetrics();
      }
    },
  };
}

function newInstance(namespace: string | undefined, dimensions: Readonly<Record<string, string>>): PowertoolsMetrics {
  return new PowertoolsMetrics({ namespace, serviceName: METRICS_SERVICE, defaultDimensions: { ...dimensions } });
}
