/**
 * What a worker's options pass through to its function (a VPC, layers, tracing, a log group or retention, an
 * environment key, NODE_OPTIONS kept), what a job's handle offers (metrics on { service, jobId }, read access to its
 * reports), and the first configuration error arriving before anything is bundled.
 */
import { App, type CfnElement, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { describe, expect, it } from 'vitest';
import { SAMPLE_DIGEST_ENTRY } from '../../examples/sample-app/sample-stack';
import { ValidationError } from '../../lib/errors';
import { ScheduledJobs } from '../../lib/scheduled-jobs';
import { throwsRejection, validationProblemsOf, WORKER_ENTRY, withoutCallSite } from './fixtures/test-stack';
import { rendered, type TemplateNode, type TemplateResource } from './template-json';

const DAILY = ScheduleExpression.expression('cron(0 6 * * ? *)');
const unbundledApp = () => new App({ context: { 'aws:cdk:bundling-stacks': [] } });

function resourcesOf(stack: Stack): Record<string, TemplateResource> {
  return Template.fromStack(stack).toJSON().Resources;
}

describe('worker options', () => {
  it('a worker in a VPC: its subnets and security groups, layers, tracing, a key, its NODE_OPTIONS kept', () => {
    const stack = new Stack(unbundledApp(), 'Vpc');
    const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0 });
    const group = new ec2.SecurityGroup(stack, 'Db', { vpc });
    const layerArn = 'arn:aws:lambda:eu-central-1:123456789012:layer:otel:3';
    const layer = lambda.LayerVersion.fromLayerVersionArn(stack, 'Layer', layerArn);
    const key = new kms.Key(stack, 'Key');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    const worker = jobs.addWorker('exports', {
      entry: WORKER_ENTRY,
      vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      securityGroups: [group],
      layers: [layer],
      tracing: lambda.Tracing.ACTIVE,
      environmentEncryption: key,
      environment: { NODE_OPTIONS: '--max-old-space-size=1536' },
      logRetention: logs.RetentionDays.ONE_YEAR,
    });
    jobs.addJob('nightly', { schedule: DAILY, worker });
    const resources = resourcesOf(stack);
    const fn = resources[stack.getLogicalId(worker.function.node.defaultChild as lambda.CfnFunction)].Properties;
    expect(fn.VpcConfig.SecurityGroupIds).toEqual([
      { 'Fn::GetAtt': [stack.getLogicalId(group.node.defaultChild as ec2.CfnSecurityGroup), 'GroupId'] },
    ]);
    expect(fn.VpcConfig.SubnetIds).toHaveLength(2);
    expect(fn.Layers).toEqual([layerArn]);
    expect(fn.TracingConfig).toEqual({ Mode: 'Active' });
    expect(fn.KmsKeyArn).toEqual({ 'Fn::GetAtt': [stack.getLogicalId(key.node.defaultChild as kms.CfnKey), 'Arn'] });
    expect(fn.Environment.Variables.NODE_OPTIONS).toBe('--max-old-space-size=1536 --enable-source-maps');
    // The network interfaces of the VPC, on its own role (not the managed policy with logs:* on every group).
    const statements = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((r) => r.Properties.PolicyDocument.Statement);
    expect(statements).toContainEqual(
      expect.objectContaining({ Action: expect.arrayContaining(['ec2:CreateNetworkInterface']), Resource: '*' }),
    );
    const logGroups = Object.values(resources).filter((r) => r.Type === 'AWS::Logs::LogGroup');
    expect(logGroups.map((g) => g.Properties.RetentionInDays)).toContain(365);
  });

  it("a worker's own log group is used instead of one of its own", () => {
    const stack = new Stack(unbundledApp(), 'Logs');
    const group = new logs.LogGroup(stack, 'Shared', { retention: logs.RetentionDays.ONE_WEEK });
    const jobs = new ScheduledJobs(stack, 'Jobs');
    const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY, logGroup: group });
    jobs.addJob('nightly', { schedule: DAILY, worker });
    const fn = resourcesOf(stack)[stack.getLogicalId(worker.function.node.defaultChild as lambda.CfnFunction)];
    expect(fn.Properties.LoggingConfig.LogGroup).toEqual({
      Ref: stack.getLogicalId(group.node.defaultChild as logs.CfnLogGroup),
    });
    expect(worker.node.tryFindChild('FunctionLogs')).toBeUndefined();
  });

  it('a job with an entry builds its worker from the defaults and its own workerOptions', () => {
    const stack = new Stack(unbundledApp(), 'Own');
    const jobs = new ScheduledJobs(stack, 'Jobs', {
      defaultWorkerOptions: { memorySize: 512, description: 'default' },
    });
    const { worker } = jobs.addJob('digest', {
      schedule: DAILY,
      entry: SAMPLE_DIGEST_ENTRY,
      workerOptions: { memorySize: 1024 },
    });
    const fn = resourcesOf(stack)[stack.getLogicalId(worker.function.node.defaultChild as lambda.CfnFunction)];
    expect(fn.Properties).toMatchObject({ MemorySize: 1024, Description: 'default' });
  });

  it("refuses a worker's bad options before building it, each named", () => {
    const jobs = new ScheduledJobs(new Stack(unbundledApp(), 'Bad'), 'Jobs');
    const group = new logs.LogGroup(jobs, 'Group');
    const problems = validationProblemsOf(() =>
      jobs.addWorker('exports', {
        entry: WORKER_ENTRY,
        memorySize: 64,
        logGroup: group,
        logRetention: logs.RetentionDays.ONE_DAY,
        timeout: Duration.minutes(16),
      }),
    );
    expect(problems.map(withoutCallSite)).toEqual([
      "addWorker(exports).timeout: must be at most 900 s (Lambda's limit), got 960 s",
      'addWorker(exports).memorySize: must be a whole number of MiB from 128 to 10240, got 64',
      'addWorker(exports).logRetention: give logRetention or logGroup, not both (a given log group keeps its own retention)',
    ]);
    expect(jobs.workers.size).toBe(0);
  });
});

describe('Class: ScheduledJob', () => {
  const stack = new Stack(unbundledApp(), 'Handle');
  const jobs = new ScheduledJobs(stack, 'Jobs');
  const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
  const nightly = jobs.addJob('nightly', { schedule: DAILY, worker, jobMetrics: true });
  const manual = jobs.addJob('manual', { schedule: DAILY, worker, enabled: false });

  it('has its id, its worker and its schedule (none when disabled)', () => {
    expect(nightly.jobId).toBe('nightly');
    expect(nightly.worker).toBe(worker);
    // Under the job (a construct), at the logical ID it had as the schedules' Schedule-nightly.
    expect(nightly.schedule?.node.scopes).toContain(nightly);
    expect(manual.schedule).toBeUndefined();
    expect(jobs.jobs.get('nightly')).toBe(nightly);
  });

  it('metrics on { service, jobId } in the stack namespace, Sum over 5 minutes, Maximum for the duration', () => {
    for (const [metric, name] of [
      [nightly.metricStarted(), 'OccurrencesStarted'],
      [nightly.metricSucceeded(), 'OccurrencesSucceeded'],
      [nightly.metricFailed(), 'OccurrencesFailed'],
      [nightly.metricMissed(), 'OccurrencesMissed'],
      [nightly.metricSkipped(), 'OccurrencesSkipped'],
    ] as const) {
      expect(metric).toMatchObject({ metricName: name, namespace: 'ScheduledJobs/Handle', statistic: 'Sum' });
      expect(metric.dimensions).toEqual({ service: 'scheduled-jobs', jobId: 'nightly' });
      expect(metric.period.toSeconds()).toBe(300);
    }
    expect(nightly.metricDuration().statistic).toBe('Maximum');
    expect(nightly.metricFailed({ period: Duration.hours(1) }).period.toSeconds()).toBe(3600);
  });

  it("refuses a metric of a job without per-job metrics, naming jobMetrics and the worker's metric instead", () => {
    expect(manual.jobMetrics).toBe(false);
    expect(() => manual.metricFailed()).toThrow(ValidationError);
    expect(() => manual.metric('OccurrencesFailed')).toThrow(
      'job "manual".metric("OccurrencesFailed"): the job has no per-job metrics; set jobMetrics: true on the job (addJob) or on the ScheduledJobs, or use job.worker.metric() for its worker\'s',
    );
    expect(manual.worker.metric('OccurrencesFailed').dimensions).toEqual({
      service: 'scheduled-jobs',
      worker: 'exports',
    });
  });

  it('grants read access to its own reports only', () => {
    const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() });
    nightly.grantReadReports(reader);
    const policy = Object.values(resourcesOf(stack)).find(
      (r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes('Reader'),
    );
    expect(JSON.stringify(policy?.Properties.PolicyDocument)).toContain('/reports/nightly/*');
  });
});

describe('per-job metrics (jobMetrics)', () => {
  const stack = new Stack(unbundledApp(), 'PerJob');
  const jobs = new ScheduledJobs(stack, 'Jobs', { jobMetrics: true });
  const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
  const detailed = jobs.addJob('detailed', { schedule: DAILY, worker });
  const plain = jobs.addJob('plain', { schedule: DAILY, worker, jobMetrics: false });
  const resources = resourcesOf(stack);
  const scheduleInput = (jobId: string) => {
    const schedule = Object.values(resources).find(
      (r) => r.Type === 'AWS::Scheduler::Schedule' && r.Properties.Name === jobId,
    );
    return JSON.parse(rendered(schedule?.Properties.Target.Input as TemplateNode));
  };

  it("take the stack's default, and a job's own value over it", () => {
    expect(detailed.jobMetrics).toBe(true);
    expect(plain.jobMetrics).toBe(false);
  });

  it("reach the worker in its jobs' settings and the trigger in the schedule's input, only where on", () => {
    const fn = Object.values(resources).find(
      (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.WORKER_ID === 'exports',
    );
    const settings = JSON.parse(fn?.Properties.Environment.Variables.JOB_SETTINGS as unknown as string);
    expect(settings).toEqual([{ id: 'detailed', jobMetrics: true }, { id: 'plain' }]);
    expect(scheduleInput('detailed').jobMetrics).toBe(true);
    expect(scheduleInput('plain')).not.toHaveProperty('jobMetrics');
  });
});

describe('log levels (logging)', () => {
  const loggingOf = (stack: Stack) =>
    Object.values(resourcesOf(stack))
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((r) => ({
        fn: String(r.Properties.Description),
        config: r.Properties.LoggingConfig as unknown as Record<string, string>,
      }));

  it("are JSON, Lambda's own lines at WARN and the functions' at INFO by default, on every function", () => {
    const stack = new Stack(unbundledApp(), 'DefaultLogs');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    jobs.addJob('nightly', { schedule: DAILY, worker: jobs.addWorker('exports', { entry: WORKER_ENTRY }) });
    const all = loggingOf(stack);
    expect(all.length).toBeGreaterThanOrEqual(4); // trigger, notifier, reconciler, the worker
    for (const { fn, config } of all) {
      expect(config, fn).toMatchObject({ LogFormat: 'JSON', SystemLogLevel: 'WARN', ApplicationLogLevel: 'INFO' });
    }
  });

  it("take the stack's levels, and a worker's own over them", () => {
    const stack = new Stack(unbundledApp(), 'OwnLogs');
    const jobs = new ScheduledJobs(stack, 'Jobs', {
      logging: { systemLogLevel: lambda.SystemLogLevel.INFO, applicationLogLevel: lambda.ApplicationLogLevel.DEBUG },
    });
    const worker = jobs.addWorker('exports', {
      entry: WORKER_ENTRY,
      logging: { applicationLogLevel: lambda.ApplicationLogLevel.WARN },
    });
    jobs.addJob('nightly', { schedule: DAILY, worker });
    for (const { fn, config } of loggingOf(stack)) {
      const expected = fn.includes('worker exports')
        ? { SystemLogLevel: 'INFO', ApplicationLogLevel: 'WARN' }
        : { SystemLogLevel: 'INFO', ApplicationLogLevel: 'DEBUG' };
      expect(config, fn).toMatchObject({ LogFormat: 'JSON', ...expected });
    }
  });
});

describe('ScheduledJobs: detailed metrics (Started, Succeeded, JobDuration per worker) on demand', () => {
  /** DETAILED_METRICS of each worker's function, by worker id, as synthesized. */
  function detailedByWorker(props: ConstructorParameters<typeof ScheduledJobs>[2], ask?: 'succeeded'): object {
    const stack = new Stack(unbundledApp(), 'Detailed');
    const jobs = new ScheduledJobs(stack, 'Jobs', props);
    const plain = jobs.addWorker('plain', { entry: WORKER_ENTRY });
    const asked = jobs.addWorker('asked', { entry: WORKER_ENTRY });
    jobs.addJob('nightly', { schedule: DAILY, worker: plain });
    jobs.addJob('weekly', { schedule: DAILY, worker: asked });
    if (ask === 'succeeded') asked.metricSucceededOccurrences();
    asked.metricFailedOccurrences(); // a failure metric is always written: asking for it changes nothing
    const resources = Object.values(resourcesOf(stack)).filter((r) => r.Type === 'AWS::Lambda::Function');
    return Object.fromEntries(
      resources
        .map(
          (r) =>
            (r.Properties as unknown as { Environment: { Variables: Record<string, unknown> } }).Environment.Variables,
        )
        .filter((v) => v.WORKER_ID !== undefined)
        .map((v) => [v.WORKER_ID, v.DETAILED_METRICS]),
    );
  }

  it('are off by default: no worker writes them, as no alarm reads them', () => {
    expect(detailedByWorker(undefined)).toEqual({ plain: undefined, asked: undefined });
  });

  it('are on for every worker with detailedMetrics, and with the dashboard, which graphs them, unless turned off', () => {
    expect(detailedByWorker({ detailedMetrics: true })).toEqual({ plain: 'true', asked: 'true' });
    expect(detailedByWorker({ dashboard: true })).toEqual({ plain: 'true', asked: 'true' });
    expect(detailedByWorker({ dashboard: true, detailedMetrics: false })).toEqual({
      plain: undefined,
      asked: undefined,
    });
  });

  it('are on for a worker whose metric() was asked for one of them, so the metric it returns has data', () => {
    expect(detailedByWorker(undefined, 'succeeded')).toEqual({ plain: undefined, asked: 'true' });
  });
});

describe('ScheduledJobs: alarms and report reads as the app configures them', () => {
  it('with alarms off: no alarm and no alarm topic (nor its output); rethresholded: the threshold in the template', () => {
    const quiet = new Stack(unbundledApp(), 'Quiet');
    const off = new ScheduledJobs(quiet, 'Jobs', { alarms: { enabled: false } });
    off.addJob('nightly', { schedule: DAILY, entry: SAMPLE_DIGEST_ENTRY });
    const quietTemplate = Template.fromStack(quiet).toJSON();
    expect(Object.values(quietTemplate.Resources as Record<string, TemplateResource>).map((r) => r.Type)).not.toContain(
      'AWS::CloudWatch::Alarm',
    );
    expect(off.monitoring.alarmTopic).toBeUndefined();
    expect(Object.keys(quietTemplate.Outputs)).not.toContain('AlarmTopicArn');

    const loud = new Stack(unbundledApp(), 'Loud');
    const tuned = new ScheduledJobs(loud, 'Jobs', {
      alarms: { thresholds: { failedOccurrences: { threshold: 3, evaluationPeriods: 2 }, workerThrottles: false } },
    });
    const { worker } = tuned.addJob('nightly', { schedule: DAILY, entry: SAMPLE_DIGEST_ENTRY });
    expect(worker.alarms.workerThrottles).toBeUndefined();
    const failed =
      resourcesOf(loud)[
        loud.getLogicalId(tuned.monitoring.sharedAlarms.failedOccurrences?.node.defaultChild as CfnElement)
      ];
    expect(failed.Properties).toMatchObject({ Threshold: 3, EvaluationPeriods: 2 });
  });

  it("grantReadReports lets a grantee read every job's reports, and nothing else of the bucket", () => {
    const stack = new Stack(unbundledApp(), 'Reports');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    jobs.addJob('nightly', { schedule: DAILY, entry: SAMPLE_DIGEST_ENTRY });
    const mailer = new iam.Role(stack, 'Mailer', { assumedBy: new iam.AccountRootPrincipal() });
    jobs.grantReadReports(mailer);
    const policy = Object.values(resourcesOf(stack)).find(
      (r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes('Mailer'),
    );
    // Object ARNs are the bucket's ARN joined with a key pattern: every one the grant names is under reports/.
    const keyPatterns = [...JSON.stringify(policy?.Properties.PolicyDocument).matchAll(/"(\/[^"]*)"/g)].map(
      (m) => m[1],
    );
    expect(keyPatterns.length).toBeGreaterThan(0);
    expect(keyPatterns.every((pattern) => pattern === '/reports/*')).toBe(true);
  });
});

describe('the first configuration error', () => {
  it('arrives before anything is bundled: the shared functions are built with the first worker', () => {
    // Bundling on: a bundled function would make this test take seconds, and leave an asset behind.
    const stack = new Stack(new App(), 'Early');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    expect(
      throwsRejection(() =>
        jobs.addJob('nightly', { schedule: DAILY, entry: SAMPLE_DIGEST_ENTRY, timeout: Duration.hours(1) }),
      ),
    ).toThrow(ValidationError);
    expect(stack.node.findAll().filter((c) => c instanceof lambda.Function)).toEqual([]);
  });
});

describe('tracing', () => {
  /** Each function's tracing mode, and whether its role may write to X-Ray, by the function's construct path. */
  function tracingOf(stack: Stack, jobs: ScheduledJobs) {
    const resources = resourcesOf(stack);
    const idOf = (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as CfnElement);
    const xrayRoles = new Set(
      Object.values(resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy')
        .filter((r) => JSON.stringify(r.Properties.PolicyDocument.Statement).includes('xray:PutTraceSegments'))
        .flatMap((r) => (r.Properties.Roles as unknown as { Ref: string }[]).map((role) => role.Ref)),
    );
    const fns = {
      trigger: jobs.triggerFunction,
      notifier: jobs.notifierFunction,
      reconciler: jobs.reconcilerFunction,
      ...Object.fromEntries([...jobs.workers].map(([id, w]) => [`worker ${id}`, w.function])),
    };
    return Object.fromEntries(
      Object.entries(fns).map(([name, fn]) => [
        name,
        {
          mode: resources[idOf(fn)].Properties.TracingConfig?.Mode ?? 'none',
          xray: xrayRoles.has(idOf(fn.role as unknown as { node: { defaultChild?: unknown } })),
        },
      ]),
    );
  }

  it('is off by default: no tracing mode, and no X-Ray permission on any role', () => {
    const stack = new Stack(unbundledApp(), 'Untraced');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    jobs.addJob('nightly', { schedule: DAILY, entry: SAMPLE_DIGEST_ENTRY });
    for (const [name, t] of Object.entries(tracingOf(stack, jobs)))
      expect(t, name).toEqual({ mode: 'none', xray: false });
  });

  it("ACTIVE on the stack traces every function with X-Ray, and a worker's own tracing wins", () => {
    const stack = new Stack(unbundledApp(), 'Traced');
    const jobs = new ScheduledJobs(stack, 'Jobs', { tracing: lambda.Tracing.ACTIVE });
    jobs.addJob('nightly', { schedule: DAILY, entry: SAMPLE_DIGEST_ENTRY });
    const quiet = jobs.addWorker('quiet', { entry: WORKER_ENTRY, tracing: lambda.Tracing.DISABLED });
    jobs.addJob('hourly', { schedule: DAILY, worker: quiet });
    expect(tracingOf(stack, jobs)).toEqual({
      trigger: { mode: 'Active', xray: true },
      notifier: { mode: 'Active', xray: true },
      reconciler: { mode: 'Active', xray: true },
      'worker nightly': { mode: 'Active', xray: true },
      'worker quiet': { mode: 'none', xray: false },
    });
  });

  it('refuses a tracing that is not a lambda.Tracing, naming the prop', () => {
    const stack = new Stack(unbundledApp(), 'Bad');
    expect(() => new ScheduledJobs(stack, 'Jobs', { tracing: 'on' as unknown as lambda.Tracing })).toThrow(
      /Jobs\.tracing: must be a lambda\.Tracing \(ACTIVE, PASS_THROUGH or DISABLED\), got "on"/,
    );
  });
});
