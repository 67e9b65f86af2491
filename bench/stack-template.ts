/**
 * The bill's fixed items, read from a synthesized template of each stack built through the public API
 * (lib/index.ts: ScheduledJobs, addWorker, addJob) with its defaults, as a user of the README would write it:
 * alarms, dashboards, workers and the queues Lambda polls, point-in-time recovery, Lambda's own log level.
 * Synthesized without bundling (as the tests do): the counts do not depend on the bundles.
 */
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { SAMPLE_DIGEST_ENTRY } from '../examples/sample-app/sample-stack';
import { ScheduledJobs } from '../lib/index';
import type { TemplateCounts } from './monthly-bill';

/** A worker file exporting defineWorker (the README's `src/workers/exports.ts`). */
export const SHARED_WORKER_ENTRY = path.join(
  __dirname,
  '..',
  'examples',
  'two-workers',
  'src',
  'workers',
  'exports.ts',
);

export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}
export interface Template {
  readonly Resources: Record<string, TemplateResource>;
}

/** The shape of a stack: jobs with an `entry` of their own, and shared workers with their jobs. */
export interface StackShape {
  readonly ownEntryJobs: number;
  readonly sharedWorkers: readonly number[];
  /** Jobs whose schedules are created at run time (one job, any number of keys). */
  readonly runtimeScheduleJobs: number;
  readonly schedule: string;
}

const synthesized = new Map<string, Template>();

/** Builds the stack as the README writes it and returns its template: one synth per shape, kept for the run. */
export function synthesize(shape: StackShape): Template {
  const key = JSON.stringify(shape);
  const known = synthesized.get(key);
  if (known !== undefined) return known;
  const template = synthesizeOnce(shape);
  synthesized.set(key, template);
  return template;
}

/**
 * Without bundling (`aws:cdk:bundling-stacks: []`, as the fast tests synthesize): the constructs run as a user's app
 * runs them, only esbuild is not; the counts do not depend on the bundles.
 */
function synthesizeOnce(shape: StackShape): Template {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Bill');
  const jobs = new ScheduledJobs(stack, 'Jobs');
  const schedule = ScheduleExpression.expression(shape.schedule);
  for (let i = 0; i < shape.ownEntryJobs; i++) jobs.addJob(`job-${i}`, { schedule, entry: SAMPLE_DIGEST_ENTRY });
  shape.sharedWorkers.forEach((count, w) => {
    const worker = jobs.addWorker(`worker-${w}`, { entry: SHARED_WORKER_ENTRY });
    for (let i = 0; i < count; i++) jobs.addJob(`worker-${w}-job-${i}`, { schedule, worker });
  });
  for (let i = 0; i < shape.runtimeScheduleJobs; i++)
    jobs.addJob(`per-customer-${i}`, { entry: SAMPLE_DIGEST_ENTRY, runtimeSchedules: true });
  return app.synth().getStackByName(stack.stackName).template as Template;
}

const ofType = (t: Template, type: string) => Object.values(t.Resources).filter((r) => r.Type === type);

/** What the bill counts in a template. */
export function templateCounts(t: Template): TemplateCounts {
  const queueArns = ofType(t, 'AWS::Lambda::EventSourceMapping')
    .map((m) => JSON.stringify(m.Properties?.EventSourceArn ?? ''))
    .filter((arn) => arn.includes('Queue'));
  const functions = ofType(t, 'AWS::Lambda::Function');
  const tables = ofType(t, 'AWS::DynamoDB::Table');
  const alarms = ofType(t, 'AWS::CloudWatch::Alarm');
  const logGroups = ofType(t, 'AWS::Logs::LogGroup');
  const retention = logGroups.map((g) => Number(g.Properties?.RetentionInDays ?? 0));
  return {
    alarms: alarms.length,
    alarmMetrics: alarms.reduce((sum, a) => sum + alarmMetricsOf(a).length, 0),
    customMetricsAlarmed: new Set(
      alarms
        .flatMap(alarmMetricsOf)
        .filter((m) => !m.namespace.startsWith('AWS/'))
        .map((m) => m.key),
    ).size,
    functions: functions.length,
    queues: ofType(t, 'AWS::SQS::Queue').length,
    schedules: ofType(t, 'AWS::Scheduler::Schedule').length,
    tables: tables.length,
    indexes: tables.reduce(
      (sum, table) => sum + ((table.Properties?.GlobalSecondaryIndexes as unknown[]) ?? []).length,
      0,
    ),
    logGroups: logGroups.length,
    logRetentionDays: retention.includes(0) ? 0 : Math.max(0, ...retention),
    dashboards: ofType(t, 'AWS::CloudWatch::Dashboard').length,
    workers: queueArns.length,
    polledQueues: new Set(queueArns).size,
    pointInTimeRecovery: tables.some((table) => pitrEnabled(table)),
    // Lambda writes START, END and REPORT at INFO: unless every function's system log level is above it.
    platformLogLines: functions.some((f) => !quietSystemLog(f)),
  };
}

interface AlarmMetric {
  readonly namespace: string;
  /** Namespace, name and dimensions, as one string: the metric's identity. */
  readonly key: string;
}

interface MetricStatQuery {
  readonly MetricStat?: { readonly Metric?: { Namespace?: string; MetricName?: string; Dimensions?: unknown } };
}

/** The metrics an alarm reads: its one metric, or each metric (not expression) of a metric-math alarm. */
export function alarmMetricsOf(alarm: TemplateResource): AlarmMetric[] {
  const p = alarm.Properties ?? {};
  const metricOf = (namespace: unknown, name: unknown, dimensions: unknown): AlarmMetric => ({
    namespace: String(namespace ?? ''),
    key: JSON.stringify([namespace, name, dimensions ?? []]),
  });
  if (p.MetricName !== undefined) return [metricOf(p.Namespace, p.MetricName, p.Dimensions)];
  return ((p.Metrics as MetricStatQuery[] | undefined) ?? [])
    .map((q) => q.MetricStat?.Metric)
    .filter((m) => m !== undefined)
    .map((m) => metricOf(m.Namespace, m.MetricName, m.Dimensions));
}

function pitrEnabled(table: TemplateResource): boolean {
  const spec = table.Properties?.PointInTimeRecoverySpecification as
    | { PointInTimeRecoveryEnabled?: boolean }
    | undefined;
  return spec?.PointInTimeRecoveryEnabled === true;
}

function quietSystemLog(fn: TemplateResource): boolean {
  const config = fn.Properties?.LoggingConfig as { LogFormat?: string; SystemLogLevel?: string } | undefined;
  return config?.LogFormat === 'JSON' && (config.SystemLogLevel === 'WARN' || config.SystemLogLevel === 'ERROR');
}
