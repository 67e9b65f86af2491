/**
 * The Metrics port on Powertools Metrics: each value is written at once as its own CloudWatch embedded-metric-format
 * line with the dimensions { service, jobId }. A single metric per call, rather than a shared buffer with
 * dimensions set on it, because a worker batch records for several jobs at once in one process.
 * The namespace comes from POWERTOOLS_METRICS_NAMESPACE, which the stack sets (lib/scheduled-jobs.ts).
 */
import { MetricUnit, Metrics as PowertoolsMetrics } from '@aws-lambda-powertools/metrics';
import { METRIC_UNITS, METRICS_SERVICE, type MetricName } from '../protocol/metric-names';
import type { Metrics } from '../protocol/ports';

const UNIT = { Count: MetricUnit.Count, Milliseconds: MetricUnit.Milliseconds } as const;

export function powertoolsMetrics(namespace?: string): Metrics {
  const root = new PowertoolsMetrics({ namespace, serviceName: METRICS_SERVICE });
  return {
    add(name: MetricName, value: number, jobId: string) {
      const metric = root.singleMetric();
      metric.addDimension('jobId', jobId);
      metric.addMetric(name, UNIT[METRIC_UNITS[name]], value);
    },
  };
}
