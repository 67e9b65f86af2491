/**
 * How far one stack goes: 100 jobs in one ScheduledJobs, what one more job or worker costs in CloudFormation
 * resources (a stack holds 500), and what the functions' environments take of Lambda's 4 KB. A change that adds a
 * resource per job, or grows an environment with the number of jobs, fails here.
 */
import * as path from 'node:path';
import { App, type CfnElement, Duration, Stack, TimeZone } from 'aws-cdk-lib';
import { ScheduleExpression, TimeWindow } from 'aws-cdk-lib/aws-scheduler';
import { beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_DIGEST_ENTRY } from '../../examples/sample-app/sample-stack';
import { ValidationError } from '../../lib/errors';
import type { JobOptions, JobProps } from '../../lib/job-props';
import type { JobWorker } from '../../lib/job-worker';
import { ScheduledJobs } from '../../lib/scheduled-jobs';

const HOURLY = ScheduleExpression.expression('rate(1 hour)');

import { environmentBytes, type TemplateNode, type TemplateResource } from './template-json';

const WORKER_ENTRY = path.join(__dirname, 'fixtures', 'exports-worker.ts');
/** What a Ref or GetAtt resolves to at most here: a queue URL, about 130 bytes (names and ARNs are shorter). */
const REFERENCE_BYTES = 130;
const LAMBDA_ENVIRONMENT_BYTES = 4096;
const STACK_RESOURCE_LIMIT = 500;

type Template = { Resources: Record<string, TemplateResource> };
const synth = (app: App, stack: Stack): Template => app.synth().getStackByName(stack.stackName).template;
const unbundledApp = () => new App({ context: { 'aws:cdk:bundling-stacks': [] } });

/**
 * Calls `build(i)` for i = from, from + 1, ... until ScheduledJobs rejects a call (it keeps the problems for the
 * synth, which its validation throws), at most up to `max`: the first i rejected, and the rejection.
 */
function fillUntilRejected(
  jobs: ScheduledJobs,
  from: number,
  max: number,
  build: (i: number) => void,
): { rejectedAt: number; refused: ValidationError | undefined } {
  for (let i = from; i < max; i++) {
    build(i);
    try {
      jobs.node.validate();
    } catch (error) {
      if (error instanceof ValidationError) return { rejectedAt: i, refused: error };
      throw error;
    }
  }
  return { rejectedAt: max, refused: undefined };
}

/** How many resources of each type, and in all. */
function census(template: Template): { total: number; byType: Record<string, number> } {
  const byType: Record<string, number> = {};
  for (const r of Object.values(template.Resources)) byType[r.Type] = (byType[r.Type] ?? 0) + 1;
  return { total: Object.keys(template.Resources).length, byType };
}

/** The per-type difference of two censuses, types that did not change left out. */
function added(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const types = new Set([...Object.keys(after), ...Object.keys(before)]);
  return Object.fromEntries(
    [...types].map((t) => [t, (after[t] ?? 0) - (before[t] ?? 0)] as const).filter(([, n]) => n !== 0),
  );
}

/** The most bytes any function's environment takes, and whose. */
function longestEnvironment(template: Template): { bytes: number; function: string } {
  return Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
    .map(([id, r]) => ({
      bytes: environmentBytes(r.Properties.Environment.Variables as TemplateNode, REFERENCE_BYTES),
      function: id,
    }))
    .reduce((a, b) => (b.bytes > a.bytes ? b : a));
}

/**
 * The settings of job `i` of a worker, varied: timeout, lease and heartbeat, attempts and deadline, retention,
 * expression, time zone, flexible window, Scheduler retries; every tenth is paused.
 */
function variedJob(i: number, longestTimeout: number): JobOptions {
  const leaseSeconds = 60 + (i % 5) * 60;
  return {
    schedule: ScheduleExpression.expression(
      i % 3 === 0 ? `cron(${i % 60} ${i % 24} * * ? *)` : `rate(${2 + (i % 12)} hours)`,
      TimeZone.of(['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'][i % 4]),
    ),
    timeWindow: i % 4 === 1 ? TimeWindow.flexible(Duration.minutes(15)) : TimeWindow.off(),
    schedulerRetry: i % 5 === 2 ? { retryAttempts: 10, maxEventAge: Duration.hours(1) } : undefined,
    enabled: i % 10 !== 9,
    timeout: Duration.seconds(30 + ((i * 37) % (longestTimeout - 30))),
    leaseDuration: Duration.seconds(leaseSeconds),
    heartbeatInterval: Duration.seconds(Math.floor((leaseSeconds - 16) / 3)),
    retry: { maxAttempts: 1 + (i % 10), deadline: Duration.hours(1 + (i % 6)) },
    retention: Duration.days(i % 2 === 0 ? 30 : 90),
  };
}

describe('100 jobs in one stack', () => {
  // Four shared workers of 24 or 25 jobs (one sized by hand), and two jobs with an entry of their own.
  const SHARED = [
    { id: 'reports', jobs: 25, options: { memorySize: 1024 } },
    { id: 'exports', jobs: 25, options: { timeout: Duration.minutes(15), memorySize: 2048 } },
    { id: 'syncs', jobs: 24, options: {} },
    { id: 'cleanups', jobs: 24, options: { memorySize: 512 } },
  ];
  const OWN_ENTRY = ['digest-daily', 'digest-weekly'];
  let jobs: ScheduledJobs;
  let template: Template;

  beforeAll(() => {
    // Bundled, as a deployment would be: the four shared workers have one entry, so it bundles once.
    const app = new App();
    const stack = new Stack(app, 'HundredJobs');
    jobs = new ScheduledJobs(stack, 'Jobs');
    for (const { id, jobs: count, options } of SHARED) {
      const worker = jobs.addWorker(id, { entry: WORKER_ENTRY, ...options });
      const longest = options.timeout === undefined ? 600 : options.timeout.toSeconds() - 30;
      for (let i = 0; i < count; i++) jobs.addJob(`${id}-${i}`, { ...variedJob(i, longest), worker });
    }
    for (const id of OWN_ENTRY) {
      const { worker } = jobs.addJob(id, {
        schedule: ScheduleExpression.expression('cron(0 6 * * ? *)'),
        entry: SAMPLE_DIGEST_ENTRY,
      });
      jobs.grantReadOccurrences(worker);
    }
    template = synth(app, stack);
  });

  it('synthesizes with fewer than 500 resources: one schedule per enabled job, no other resource per job', () => {
    expect(jobs.jobs.size).toBe(100);
    const { total, byType } = census(template);
    const enabled = [...jobs.jobs.values()].filter((j) => j.schedule !== undefined).length;
    console.log(
      `100 jobs (${enabled} enabled) in ${jobs.workers.size} workers: ${total} resources (${byType['AWS::Scheduler::Schedule']} schedules, ${byType['AWS::CloudWatch::Alarm']} alarms)`,
    );
    expect(total).toBeLessThan(STACK_RESOURCE_LIMIT);
    expect(byType['AWS::Scheduler::Schedule']).toBe(enabled);
    expect(byType['AWS::Lambda::Function']).toBe(3 + jobs.workers.size);
    // 8 of the stack's (5 of its shared parts, FAILED, lost leases, late), 3 per worker (its DLQ, errors, throttles).
    expect(byType['AWS::CloudWatch::Alarm']).toBe(8 + 3 * jobs.workers.size);
  });

  it("keeps every function's environment under Lambda's 4 KB, with each reference resolved to 130 bytes", () => {
    const longest = longestEnvironment(template);
    console.log(`100 jobs: the longest environment is ${longest.bytes} bytes (${longest.function})`);
    expect(longest.bytes).toBeLessThan(LAMBDA_ENVIRONMENT_BYTES);
  });
});

describe('what one more job or worker costs', () => {
  /** A stack of `workers` workers with `jobsPerWorker` jobs each (the first has one more with `extraJob`). */
  function stackWith(shape: {
    workers: number;
    jobsPerWorker: number;
    extraJob?: Partial<JobOptions> & { entry?: string };
  }) {
    const app = unbundledApp();
    const stack = new Stack(app, 'Growth');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    const workers: JobWorker[] = [];
    for (let w = 0; w < shape.workers; w++) {
      const worker = jobs.addWorker(`worker-${w}`, { entry: WORKER_ENTRY });
      workers.push(worker);
      for (let j = 0; j < shape.jobsPerWorker; j++) jobs.addJob(`job-${w}-${j}`, { schedule: HOURLY, worker });
    }
    if (shape.extraJob !== undefined) {
      const { entry, ...extra } = shape.extraJob;
      const where: Pick<JobProps, 'worker' | 'entry'> = entry === undefined ? { worker: workers[0] } : { entry };
      jobs.addJob('one-more', { schedule: HOURLY, ...extra, ...where } as JobProps);
    }
    return census(synth(app, stack));
  }

  const N = { workers: 3, jobsPerWorker: 4 };
  let base: ReturnType<typeof census>;
  beforeAll(() => {
    base = stackWith(N);
  });

  it('a job adds one resource, its schedule; a paused job adds none', () => {
    const oneMore = stackWith({ ...N, extraJob: {} });
    const pausedMore = stackWith({ ...N, extraJob: { enabled: false } });
    console.log(
      `one more job: +${oneMore.total - base.total} resource; one more paused job: +${pausedMore.total - base.total}`,
    );
    expect(added(oneMore.byType, base.byType)).toEqual({ 'AWS::Scheduler::Schedule': 1 });
    expect(pausedMore.total).toBe(base.total);
  });

  it('a worker adds 12 resources: its function, log group, role and policy, event source, two queues with their policies, three alarms', () => {
    const oneMore = stackWith({ ...N, workers: N.workers + 1, jobsPerWorker: N.jobsPerWorker });
    const perWorker = oneMore.total - base.total - N.jobsPerWorker;
    console.log(`one more worker: +${perWorker} resources (+${N.jobsPerWorker} for its ${N.jobsPerWorker} schedules)`);
    expect(added(oneMore.byType, base.byType)).toEqual({
      'AWS::Lambda::Function': 1,
      'AWS::Logs::LogGroup': 1,
      'AWS::IAM::Role': 1,
      'AWS::IAM::Policy': 1,
      'AWS::Lambda::EventSourceMapping': 1,
      'AWS::SQS::Queue': 2,
      'AWS::SQS::QueuePolicy': 2,
      'AWS::CloudWatch::Alarm': 3,
      'AWS::Scheduler::Schedule': N.jobsPerWorker,
    });
    expect(perWorker).toBe(12);
  });

  it('a job with an entry of its own adds its worker and its schedule: 13', () => {
    const oneMore = stackWith({ ...N, extraJob: { entry: SAMPLE_DIGEST_ENTRY } });
    expect(oneMore.total - base.total).toBe(13);
    const shared = base.total - N.workers * (12 + N.jobsPerWorker);
    console.log(`the shared part of a stack: ${shared} resources`);
  });
});

describe('at the limits of the environment', () => {
  /** The bytes of the trigger's and the reconciler's environments, each reference at 130 bytes. */
  const sharedEnvironments = (jobs: ScheduledJobs, template: Template) =>
    [jobs.triggerFunction, jobs.reconcilerFunction].map((fn) => {
      const id = Stack.of(jobs).getLogicalId(fn.node.defaultChild as CfnElement);
      return environmentBytes(template.Resources[id].Properties.Environment.Variables as TemplateNode, REFERENCE_BYTES);
    });

  it("grows no function's environment with the workers: 20 workers (the environment stopped at 18) take what 2 take", () => {
    const build = (workers: number) => {
      const app = unbundledApp();
      const stack = new Stack(app, 'Workers'); // one name: the metrics namespace carries it
      const jobs = new ScheduledJobs(stack, 'Jobs');
      for (let w = 0; w < workers; w++)
        jobs.addJob(`job-${w}`, { schedule: HOURLY, worker: jobs.addWorker(`worker-${w}`, { entry: WORKER_ENTRY }) });
      const template = synth(app, stack);
      return { env: sharedEnvironments(jobs, template), longest: longestEnvironment(template) };
    };
    const few = build(2);
    const many = build(20);
    console.log(
      `trigger and reconciler environments: ${few.env.join(' and ')} bytes with 2 workers, ${many.env.join(' and ')} with 20`,
    );
    expect(many.env).toEqual(few.env);
    expect(many.longest.bytes).toBeLessThan(LAMBDA_ENVIRONMENT_BYTES);
  }, 180_000); // two synths of a few hundred resources: a minute on a loaded machine

  it("refuses the run-time schedules job whose id would overflow the reconciler's REGISTRY_JOBS, and the rest deploy", () => {
    const keyed = (jobs: ScheduledJobs, worker: JobWorker) => (i: number) =>
      jobs.addJob(`keyed-job-with-a-long-id-${String(i).padStart(3, '0')}`, { runtimeSchedules: true, worker });
    const probe = new ScheduledJobs(new Stack(unbundledApp(), 'Probe'), 'Jobs');
    const { rejectedAt: n, refused } = fillUntilRejected(
      probe,
      0,
      200,
      keyed(probe, probe.addWorker('w', { entry: WORKER_ENTRY })),
    );
    expect(refused?.message).toMatch(
      /runtimeSchedules: the schedule registry's REGISTRY_TABLE, SCHEDULE_GROUP and REGISTRY_JOBS \(\d+ job ids\) would take up to \d+ bytes of the reconciler's environment/,
    );
    const app = unbundledApp();
    const stack = new Stack(app, 'ManyKeyed');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    const add = keyed(jobs, jobs.addWorker('w', { entry: WORKER_ENTRY }));
    for (let i = 0; i < n; i++) add(i);
    const longest = longestEnvironment(synth(app, stack));
    console.log(`${n} run-time schedules jobs fit one stack: the longest environment is ${longest.bytes} bytes`);
    expect(n).toBeGreaterThanOrEqual(40);
    expect(longest.bytes).toBeLessThan(LAMBDA_ENVIRONMENT_BYTES);
  });

  it("refuses the job whose settings would overflow its worker's JOB_SETTINGS, and the fullest worker deploys", () => {
    const workerOf = (jobs: ScheduledJobs) =>
      jobs.addWorker('a-worker-with-a-long-descriptive-id', {
        entry: WORKER_ENTRY,
        environment: { EXPORT_TARGET: 's3://a-bucket-of-the-app/exports/' },
      });
    const addTo = (jobs: ScheduledJobs, worker: JobWorker) => (i: number) =>
      jobs.addJob(`a-job-with-a-long-descriptive-id-${i}`, { ...variedJob(i, 600), worker });
    const probe = new ScheduledJobs(new Stack(unbundledApp(), 'Probe'), 'Jobs');
    const { rejectedAt: count, refused } = fillUntilRejected(probe, 0, 100, addTo(probe, workerOf(probe)));
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused?.message).toContain(`addJob(a-job-with-a-long-descriptive-id-${count}).worker`);
    const app = unbundledApp();
    const stack = new Stack(app, 'FullWorker');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    const worker = workerOf(jobs);
    for (let i = 0; i < count; i++) addTo(jobs, worker)(i);
    const longest = longestEnvironment(synth(app, stack));
    console.log(`${worker.jobs.length} jobs fill one worker: its environment is ${longest.bytes} bytes`);
    expect(longest.bytes).toBeLessThan(LAMBDA_ENVIRONMENT_BYTES);
  });
});
