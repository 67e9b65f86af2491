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

/** Builds the stack as the README writes it and returns its template. */
export function synthesize(shape: StackShape): Template {
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
  return {
    alarms: ofType(t, 'AWS::CloudWatch::Alarm').length,
    dashboards: ofType(t, 'AWS::CloudWatch::Dashboard').length,
    workers: queueArns.length,
    polledQueues: new Set(queueArns).size,
    pointInTimeRecovery: tables.some((table) => pitrEnabled(table)),
    // Lambda writes START, END and REPORT at INFO: unless every function's system log level is above it.
    platformLogLines: functions.some((f) => !quietSystemLog(f)),
  };
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
