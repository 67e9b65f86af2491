/**
 * The Metrics port on Powertools Metrics: each value is written at once as its own CloudWatch embedded-metric-format
 * line with the dimensions { service, jobId } and, when the function has any, a second set { service, ...its own }:
 * a worker's `{ worker }` or the reconciler's `{ component }`, which the per-worker and stack alarms watch (one alarm
 * per worker rather than per job keeps a 100-job stack inside CloudFormation's resource limit). A single metric per call, rather than a shared buffer with
 * dimensions set on it, because a worker batch records for several jobs at once in one process.
 * The namespace comes from POWERTOOLS_METRICS_NAMESPACE, which the stack sets (lib/scheduled-jobs.ts).
 */
import { MetricUnit, Metrics as PowertoolsMetrics } from '@aws-lambda-powertools/metrics';
import { METRIC_UNITS, METRICS_SERVICE, type MetricName } from '../protocol/metric-names';
import type { Metrics } from '../protocol/ports';

const UNIT = { Count: MetricUnit.Count, Milliseconds: MetricUnit.Milliseconds } as const;

export function powertoolsMetrics(options: { namespace?: string; dimensions?: Record<string, string> } = {}): Metrics {
  const root = new PowertoolsMetrics({ namespace: options.namespace, serviceName: METRICS_SERVICE });
  const own =
    options.dimensions !== undefined && Object.keys(options.dimensions).length > 0 ? options.dimensions : undefined;
  return {
    add(name: MetricName, value: number, jobId: string) {
      const metric = root.singleMetric();
      metric.addDimension('jobId', jobId);
      if (own !== undefined) metric.addDimensions(own);
      metric.addMetric(name, UNIT[METRIC_UNITS[name]], value);
    },
  };
}
