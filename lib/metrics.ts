// Placeholder until the monitoring branch lands its lib/metrics.ts (taken over at the merge).
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { METRICS_SERVICE, MetricName } from '../functions/protocol/metric-names';

function metric(namespace: string, name: MetricName, dims: Record<string, string>, props?: cloudwatch.MetricOptions) {
  return new cloudwatch.Metric({
    namespace,
    metricName: name,
    dimensionsMap: { service: METRICS_SERVICE, ...dims },
    statistic: name === MetricName.JobDuration ? cloudwatch.Stats.MAXIMUM : cloudwatch.Stats.SUM,
    period: Duration.minutes(5),
    ...props,
  });
}
export const jobMetric = (ns: string, jobId: string, name: MetricName, props?: cloudwatch.MetricOptions) =>
  metric(ns, name, { jobId }, props);
export const workerMetric = (ns: string, worker: string, name: MetricName, props?: cloudwatch.MetricOptions) =>
  metric(ns, name, { worker }, props);
export const reconcilerMetric = (ns: string, name: MetricName, props?: cloudwatch.MetricOptions) =>
  metric(ns, name, { component: 'reconciler' }, props);
export const reconcilerRepairs = (ns: string, props?: cloudwatch.MetricOptions) =>
  new cloudwatch.MathExpression({
    expression: 'FILL(requeued, 0) + FILL(announced, 0)',
    usingMetrics: {
      requeued: reconcilerMetric(ns, MetricName.OccurrencesRequeued, props),
      announced: reconcilerMetric(ns, MetricName.ReportsReannounced, props),
    },
    label: 'reconciler repairs',
    period: props?.period ?? Duration.minutes(5),
  });
