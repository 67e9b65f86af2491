/**
 * JobsMonitoring on its own, in a small stack with stand-in workers (an inline function and a queue each, shaped as
 * MonitoredWorker), so nothing is bundled: the alarms as configured (defaults, off, rethresholded, a kind off, the
 * user's topic, e-mail addresses, extra actions), the problems a bad configuration names, the dashboard's alarm
 * widget, and that every alarm watches exactly the metric lib/metrics.ts builds, which the constructs' `metric*()`
 * methods return too.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { MetricName, STACK_WIDE_WORKER_METRICS } from '../../functions/protocol/metric-names';
import {
  type JobsAlarmsOptions,
  JobsMonitoring,
  jobsAlarmsProblems,
  type MonitoredWorker,
} from '../../lib/jobs-monitoring';
import {
  deadLetterMessages,
  functionErrors,
  functionThrottles,
  jobMetric,
  reconcilerMetric,
  reconcilerRepairs,
  triggerMetric,
  workerMetric,
  workersMetric,
} from '../../lib/metrics';
import { validationProblemsOf } from './fixtures/test-stack';
import { rendered, type TemplateNode } from './template-json';

const NAMESPACE = 'ScheduledJobs/Test';
const SHARED_QUEUES = ['TriggerDeadLetterQueue', 'SchedulerDeadLetterQueue', 'NotifierFailureQueue'];
const WORKER_IDS = ['exports', 'digest'];
/**
 * Per stack: a dead-letter alarm per shared queue, the reconciler's errors and repairs; and, once there is a worker,
 * FAILED occurrences, lost leases and late occurrences over every worker (the pause alarm only on request).
 */
const SHARED_ALARMS = SHARED_QUEUES.length + 2;
const WORKERS_ALARMS = 3;
/** Per worker: dead letters, errors, throttles. */
const WORKER_ALARMS = 3;

interface Built {
  readonly stack: Stack;
  readonly monitoring: JobsMonitoring;
  readonly workers: Record<string, MonitoredWorker>;
  readonly reconciler: lambda.IFunction;
  readonly sharedQueues: Record<string, sqs.IQueue>;
  readonly template: Template;
}

function inlineFunction(stack: Stack, id: string): lambda.Function {
  return new lambda.Function(stack, id, {
    runtime: lambda.Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline('exports.handler = async () => {};'),
  });
}

/**
 * A stack with JobsMonitoring over two stand-in workers; `exports` also gets the pause alarm. The alarms' options
 * may be built in the stack (a topic of the user's).
 */
function build(alarmsIn?: JobsAlarmsOptions | ((stack: Stack) => JobsAlarmsOptions), dashboard = true): Built {
  const stack = new Stack(undefined, 'Monitored');
  const alarms = typeof alarmsIn === 'function' ? alarmsIn(stack) : alarmsIn;
  const reconciler = inlineFunction(stack, 'Reconciler');
  const sharedQueues = Object.fromEntries(SHARED_QUEUES.map((name) => [name, new sqs.Queue(stack, name)]));
  const monitoring = JobsMonitoring.create(stack, 'Monitoring', {
    metricsNamespace: NAMESPACE,
    reconciler,
    deadLetterQueues: sharedQueues,
    alarms,
    dashboard,
  });
  const workers: Record<string, MonitoredWorker> = {};
  for (const workerId of WORKER_IDS) {
    workers[workerId] = {
      workerId,
      function: inlineFunction(stack, `Worker-${workerId}`),
      deadLetterQueue: new sqs.Queue(stack, `DeadLetters-${workerId}`),
    };
    monitoring.addWorker(workers[workerId]);
  }
  monitoring.addPauseAlarm();
  monitoring.addPauseAlarm(); // a second job that pauses adds nothing
  return { stack, monitoring, workers, reconciler, sharedQueues, template: Template.fromStack(stack) };
}

function resourcesOf(template: Template, type: string): Record<string, { Properties: TemplateNode }> {
  return template.findResources(type) as Record<string, { Properties: TemplateNode }>;
}

function alarmProps(template: Template): TemplateNode[] {
  return Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).map((r) => r.Properties);
}

/** The alarm resource of an alarm construct, by its logical id. */
function alarmResource(built: Built, alarm: cloudwatch.Alarm | undefined): TemplateNode {
  expect(alarm).toBeDefined();
  const id = built.stack.getLogicalId((alarm as cloudwatch.Alarm).node.defaultChild as cloudwatch.CfnAlarm);
  return built.template.toJSON().Resources[id].Properties;
}

/**
 * What CloudWatch reads of a single metric: namespace, name, dimensions (sorted by name), statistic and period, from
 * the metric object as the template will render it.
 */
function watched(stack: Stack, metric: cloudwatch.IMetric) {
  const stat = metric.toMetricConfig().metricStat;
  if (stat === undefined) throw new Error('not a single metric');
  return {
    Namespace: stat.namespace,
    MetricName: stat.metricName,
    Dimensions: stack.resolve(
      [...(stat.dimensions ?? [])]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((d) => ({ Name: d.name, Value: d.value })),
    ),
    Statistic: stat.statistic,
    Period: stat.period.toSeconds(),
  };
}

/** The same read from an alarm resource on a single metric. */
function watchedBy(alarm: TemplateNode) {
  const a = alarm as unknown as {
    Namespace: string;
    MetricName: string;
    Dimensions: { Name: string; Value: unknown }[];
    Statistic: string;
    Period: number;
  };
  return {
    Namespace: a.Namespace,
    MetricName: a.MetricName,
    Dimensions: [...a.Dimensions].sort((x, y) => x.Name.localeCompare(y.Name)),
    Statistic: a.Statistic,
    Period: a.Period,
  };
}

/** The dashboard's widgets, each reference written as `${Id}` or `${Id.Attr}`. */
function widgets(template: Template): { type: string; properties: { alarms?: string[]; title?: string } }[] {
  const [dashboard] = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
  return JSON.parse(rendered(dashboard.Properties.DashboardBody)).widgets;
}

describe('JobsMonitoring with the default alarms', () => {
  const built = build();

  it('has 8 alarms per stack, 3 per worker and one pause alarm, each firing on the first event in 5 minutes', () => {
    const alarms = alarmProps(built.template);
    expect(alarms).toHaveLength(SHARED_ALARMS + WORKERS_ALARMS + WORKER_ALARMS * WORKER_IDS.length + 1);
    expect(built.monitoring.alarms).toHaveLength(alarms.length);
    for (const alarm of alarms) {
      expect(alarm).toMatchObject({
        Threshold: 1,
        EvaluationPeriods: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
      expect(alarm.DatapointsToAlarm).toBeUndefined();
      expect(rendered(alarm.AlarmDescription)).toContain('docs/operating.md');
    }
  });

  it('sends every alarm to one new topic', () => {
    const topics = Object.keys(resourcesOf(built.template, 'AWS::SNS::Topic'));
    expect(topics).toHaveLength(1);
    expect(built.monitoring.alarmTopic).toBeInstanceOf(sns.Topic);
    for (const alarm of alarmProps(built.template)) expect(alarm.AlarmActions).toEqual([{ Ref: topics[0] }]);
    expect(resourcesOf(built.template, 'AWS::SNS::Subscription')).toEqual({});
  });

  it("reaches each alarm by its kind: the worker's own signals per worker, the rest once per stack", () => {
    for (const id of WORKER_IDS) {
      const alarms = built.monitoring.workerAlarms(id);
      for (const kind of ['deadLetters', 'workerErrors', 'workerThrottles'] as const)
        expect(alarms[kind], `${id} ${kind}`).toBeInstanceOf(cloudwatch.Alarm);
    }
    const shared = built.monitoring.sharedAlarms;
    for (const kind of [
      'failedOccurrences',
      'lostLeases',
      'lateOccurrences',
      'pausedOnFailures',
      'reconcilerErrors',
      'reconcilerRepairs',
    ] as const)
      expect(shared[kind], kind).toBeInstanceOf(cloudwatch.Alarm);
    expect(Object.keys(shared.deadLetters).sort()).toEqual([...SHARED_QUEUES].sort());
  });

  it("alarms late occurrences once, on the reconciler's gauge OccurrencesLate over every worker, with its Maximum", () => {
    const late = alarmProps(built.template).filter((a) => a.MetricName === 'OccurrencesLate');
    expect(late).toEqual([
      expect.objectContaining({
        Namespace: NAMESPACE,
        Statistic: 'Maximum',
        Period: 300,
        Threshold: 1,
        Dimensions: [
          { Name: 'component', Value: 'workers' },
          { Name: 'service', Value: 'scheduled-jobs' },
        ],
      }),
    ]);
  });

  it('alarms every failure mode: each reads a metric the functions or AWS write for it', () => {
    const alarms = alarmProps(built.template);
    const reading = (name: string, dimension?: { Name: string; Value: unknown }) =>
      alarms.filter(
        (a) =>
          a.MetricName === name &&
          (dimension === undefined || JSON.stringify(a.Dimensions).includes(JSON.stringify(dimension))),
      );
    const lambdaOf = (fn: lambda.IFunction) => ({ Name: 'FunctionName', Value: built.stack.resolve(fn.functionName) });
    const queueOf = (q: sqs.IQueue) => ({ Name: 'QueueName', Value: built.stack.resolve(q.queueName) });
    for (const worker of Object.values(built.workers)) {
      expect(reading('ApproximateNumberOfMessagesVisible', queueOf(worker.deadLetterQueue))).toHaveLength(1);
      expect(reading('Errors', lambdaOf(worker.function))).toHaveLength(1);
      expect(reading('Throttles', lambdaOf(worker.function))).toHaveLength(1);
    }
    for (const queue of Object.values(built.sharedQueues))
      expect(reading('ApproximateNumberOfMessagesVisible', queueOf(queue))).toHaveLength(1);
    expect(reading('Errors', lambdaOf(built.reconciler))).toHaveLength(1);
    // The workers' failures: each name the workers also write stack-wide has its alarm on that set.
    for (const name of STACK_WIDE_WORKER_METRICS)
      expect(reading(name, { Name: 'component', Value: 'workers' }), name).toHaveLength(1);
    // The reconciler's repairs: a metric-math alarm over both repair metrics.
    const repairs = alarms.filter((a) => JSON.stringify(a.Metrics ?? []).includes('OccurrencesRequeued'));
    expect(JSON.stringify(repairs)).toContain('ReportsReannounced');
    expect(repairs).toHaveLength(1);
  });

  it('refuses the alarms of a worker it was not given, naming the ones it has', () => {
    expect(validationProblemsOf(() => built.monitoring.workerAlarms('exprts'))).toEqual([
      'monitoring.workerAlarms("exprts"): no such worker (workers: "exports", "digest")',
    ]);
  });

  it('lists every alarm in the alarm status widget, the workers added after it included', () => {
    const alarmWidgets = widgets(built.template).filter((w) => w.type === 'alarm');
    expect(alarmWidgets).toHaveLength(1);
    const listed = alarmWidgets[0].properties.alarms ?? [];
    const alarmIds = Object.keys(resourcesOf(built.template, 'AWS::CloudWatch::Alarm'));
    expect(listed.sort()).toEqual(alarmIds.map((id) => `\${${id}.Arn}`).sort());
  });
});

describe('every alarm watches the metric lib/metrics.ts builds (what the metric*() methods return)', () => {
  const built = build({ thresholds: { lostLeases: { period: Duration.minutes(15) } } });
  const { stack, monitoring, workers } = built;

  it.each(WORKER_IDS)('worker %s: dead letters, errors, throttles', (id) => {
    const alarms = monitoring.workerAlarms(id);
    const expected: [cloudwatch.Alarm | undefined, cloudwatch.IMetric][] = [
      [alarms.deadLetters, deadLetterMessages(workers[id].deadLetterQueue)],
      [alarms.workerErrors, functionErrors(workers[id].function)],
      [alarms.workerThrottles, functionThrottles(workers[id].function)],
    ];
    for (const [alarm, metric] of expected) {
      expect(watchedBy(alarmResource(built, alarm))).toEqual(watched(stack, metric));
    }
  });

  it('every worker: FAILED occurrences, lost leases, late occurrences and pauses on { service, component: workers }', () => {
    const shared = monitoring.sharedAlarms;
    const expected: [cloudwatch.Alarm | undefined, cloudwatch.IMetric][] = [
      [shared.failedOccurrences, workersMetric(NAMESPACE, MetricName.OccurrencesFailed)],
      [shared.lostLeases, workersMetric(NAMESPACE, MetricName.LeasesLost, { period: Duration.minutes(15) })],
      [shared.lateOccurrences, workersMetric(NAMESPACE, MetricName.OccurrencesLate)],
      [shared.pausedOnFailures, workersMetric(NAMESPACE, MetricName.JobsPausedOnFailures)],
    ];
    for (const [alarm, metric] of expected) {
      expect(watchedBy(alarmResource(built, alarm))).toEqual(watched(stack, metric));
      expect(watched(stack, metric).Dimensions).toEqual([
        { Name: 'component', Value: 'workers' },
        { Name: 'service', Value: 'scheduled-jobs' },
      ]);
    }
  });

  it('the shared dead-letter queues and the reconciler errors', () => {
    for (const name of SHARED_QUEUES) {
      expect(watchedBy(alarmResource(built, monitoring.sharedAlarms.deadLetters[name]))).toEqual(
        watched(stack, deadLetterMessages(built.sharedQueues[name])),
      );
    }
    expect(watchedBy(alarmResource(built, monitoring.sharedAlarms.reconcilerErrors))).toEqual(
      watched(stack, functionErrors(built.reconciler)),
    );
  });

  it('the reconciler repairs: the expression and both metrics on { service, component: reconciler }', () => {
    const alarm = alarmResource(built, monitoring.sharedAlarms.reconcilerRepairs) as unknown as {
      Metrics: {
        Id: string;
        Expression?: string;
        MetricStat?: { Metric: TemplateNode; Period: number; Stat: string };
      }[];
    };
    const expression = reconcilerRepairs(NAMESPACE);
    expect(alarm.Metrics.find((m) => m.Expression !== undefined)?.Expression).toBe(expression.expression);
    for (const [id, metric] of Object.entries(expression.usingMetrics)) {
      const found = alarm.Metrics.find((m) => m.Id === id)?.MetricStat;
      expect(found, id).toBeDefined();
      const stat = found as NonNullable<typeof found>;
      expect(
        watchedBy({ ...(stat.Metric as object), Statistic: stat.Stat, Period: stat.Period } as unknown as TemplateNode),
      ).toEqual(watched(stack, metric));
    }
    expect(Object.values(expression.usingMetrics).map((m) => watched(stack, m).MetricName)).toEqual([
      'OccurrencesRequeued',
      'ReportsReannounced',
    ]);
  });
});

describe('the metrics factory', () => {
  const stack = new Stack();

  it('a job metric: { service, jobId }, 5 minutes, Sum; JobDuration by its Maximum', () => {
    expect(watched(stack, jobMetric(NAMESPACE, 'weekly-export', MetricName.OccurrencesFailed))).toEqual({
      Namespace: NAMESPACE,
      MetricName: 'OccurrencesFailed',
      Dimensions: [
        { Name: 'jobId', Value: 'weekly-export' },
        { Name: 'service', Value: 'scheduled-jobs' },
      ],
      Statistic: 'Sum',
      Period: 300,
    });
    expect(watched(stack, jobMetric(NAMESPACE, 'weekly-export', MetricName.JobDuration)).Statistic).toBe('Maximum');
    expect(watched(stack, workerMetric(NAMESPACE, 'exports', MetricName.JobDuration)).Statistic).toBe('Maximum');
  });

  it('the options given override the defaults; one given as undefined keeps its default', () => {
    const metric = jobMetric(NAMESPACE, 'weekly-export', MetricName.OccurrencesStarted, {
      period: Duration.hours(1),
      statistic: 'Average',
    });
    expect(watched(stack, metric)).toMatchObject({ Statistic: 'Average', Period: 3600 });
    const undefinedGiven = jobMetric(NAMESPACE, 'weekly-export', MetricName.OccurrencesStarted, {
      period: undefined,
      statistic: undefined,
    });
    expect(watched(stack, undefinedGiven)).toMatchObject({ Statistic: 'Sum', Period: 300 });
    expect(watched(stack, functionErrors(inlineFunction(new Stack(), 'Fn'), { statistic: undefined })).Statistic).toBe(
      'Sum',
    );
  });

  it('a reconciler metric: { service, component: reconciler }', () => {
    expect(watched(stack, reconcilerMetric(NAMESPACE, MetricName.OccurrencesRequeued)).Dimensions).toEqual([
      { Name: 'component', Value: 'reconciler' },
      { Name: 'service', Value: 'scheduled-jobs' },
    ]);
  });

  it('a trigger metric: { service, component: trigger }', () => {
    expect(watched(stack, triggerMetric(NAMESPACE, MetricName.OccurrencesMissed)).Dimensions).toEqual([
      { Name: 'component', Value: 'trigger' },
      { Name: 'service', Value: 'scheduled-jobs' },
    ]);
  });

  it('offers no dimension set the functions do not write', () => {
    // The trigger writes OccurrencesMissed with its own { component }, the reconciler its repairs: no worker set.
    // @ts-expect-error the trigger does not write OccurrencesFailed
    triggerMetric(NAMESPACE, MetricName.OccurrencesFailed);
    // @ts-expect-error OccurrencesMissed is not a WorkerMetricName
    workerMetric(NAMESPACE, 'exports', MetricName.OccurrencesMissed);
    // @ts-expect-error OccurrencesRequeued is not a WorkerMetricName
    workerMetric(NAMESPACE, 'exports', MetricName.OccurrencesRequeued);
    // @ts-expect-error the reconciler does not write OccurrencesFailed
    reconcilerMetric(NAMESPACE, MetricName.OccurrencesFailed);
    expect(watched(stack, jobMetric(NAMESPACE, 'digest', MetricName.OccurrencesMissed)).MetricName).toBe(
      'OccurrencesMissed',
    );
  });
});

describe('JobsMonitoring without dashboard: true', () => {
  const built = build(undefined, false);

  it('makes no dashboard, and keeps every alarm', () => {
    expect(resourcesOf(built.template, 'AWS::CloudWatch::Dashboard')).toEqual({});
    expect(built.monitoring.dashboard).toBeUndefined();
    expect(alarmProps(built.template).length).toBe(alarmProps(build().template).length);
  });
});

describe('JobsMonitoring with alarms off', () => {
  const built = build({ enabled: false, emailAddresses: ['ops@example.com'] });

  it('creates no alarm and no topic, and has no alarm to give', () => {
    expect(resourcesOf(built.template, 'AWS::CloudWatch::Alarm')).toEqual({});
    expect(resourcesOf(built.template, 'AWS::SNS::Topic')).toEqual({});
    expect(resourcesOf(built.template, 'AWS::SNS::Subscription')).toEqual({});
    expect(built.monitoring.alarmTopic).toBeUndefined();
    expect(built.monitoring.alarms).toEqual([]);
    expect(built.monitoring.workerAlarms('exports')).toEqual({});
    expect(built.monitoring.sharedAlarms).toEqual({ deadLetters: {} });
  });

  it('keeps the dashboard, without an alarm widget', () => {
    const all = widgets(built.template);
    expect(all.filter((w) => w.type === 'alarm')).toEqual([]);
    expect(all.map((w) => w.properties.title)).toContain('exports: occurrences');
  });
});

describe('JobsMonitoring with thresholds', () => {
  const built = build({
    thresholds: {
      failedOccurrences: { threshold: 3, evaluationPeriods: 4, datapointsToAlarm: 2, period: Duration.minutes(10) },
      workerThrottles: false,
      reconcilerRepairs: { threshold: 5 },
    },
  });

  it('gives the rethresholded kind its threshold, evaluation periods, datapoints and period', () => {
    expect(alarmResource(built, built.monitoring.sharedAlarms.failedOccurrences)).toMatchObject({
      MetricName: 'OccurrencesFailed',
      Threshold: 3,
      EvaluationPeriods: 4,
      DatapointsToAlarm: 2,
      Period: 600,
    });
    // The other kinds keep the defaults.
    expect(alarmResource(built, built.monitoring.sharedAlarms.lostLeases)).toMatchObject({
      Threshold: 1,
      EvaluationPeriods: 1,
      Period: 300,
    });
    expect(alarmResource(built, built.monitoring.sharedAlarms.reconcilerRepairs)).toMatchObject({ Threshold: 5 });
  });

  it('creates no alarm of a kind turned off, and the status widget lists only the alarms that exist', () => {
    const alarms = alarmProps(built.template);
    expect(alarms.filter((a) => a.MetricName === 'Throttles')).toEqual([]);
    expect(alarms).toHaveLength(SHARED_ALARMS + WORKERS_ALARMS + (WORKER_ALARMS - 1) * WORKER_IDS.length + 1);
    for (const id of WORKER_IDS) expect(built.monitoring.workerAlarms(id).workerThrottles).toBeUndefined();
    const [alarmWidget] = widgets(built.template).filter((w) => w.type === 'alarm');
    expect(alarmWidget.properties.alarms).toHaveLength(alarms.length);
  });

  it('with every kind off: no alarm, no alarm widget', () => {
    const off = build({
      thresholds: {
        deadLetters: false,
        workerErrors: false,
        workerThrottles: false,
        failedOccurrences: false,
        lostLeases: false,
        pausedOnFailures: false,
        lateOccurrences: false,
        reconcilerErrors: false,
        reconcilerRepairs: false,
      },
    });
    expect(resourcesOf(off.template, 'AWS::CloudWatch::Alarm')).toEqual({});
    expect(widgets(off.template).filter((w) => w.type === 'alarm')).toEqual([]);
  });
  it('with only worker kinds on and no worker added: no alarm, and the alarm widget renders nothing', () => {
    const stack = new Stack(undefined, 'NoWorkers');
    JobsMonitoring.create(stack, 'Monitoring', {
      metricsNamespace: NAMESPACE,
      reconciler: inlineFunction(stack, 'Reconciler'),
      deadLetterQueues: {},
      alarms: { thresholds: { reconcilerErrors: false, reconcilerRepairs: false } },
      dashboard: true,
    });
    const template = Template.fromStack(stack);
    expect(resourcesOf(template, 'AWS::CloudWatch::Alarm')).toEqual({});
    expect(widgets(template).filter((w) => w.type === 'alarm')).toEqual([]);
  });
});

describe('where the alarms go', () => {
  it('to the topic given instead of a new one, with the e-mail address subscribed to it', () => {
    let given: sns.Topic | undefined;
    const built = build((stack) => {
      given = new sns.Topic(stack, 'OpsTopic');
      return { topic: given, emailAddresses: ['ops@example.com'] };
    });
    const givenId = built.stack.getLogicalId(given?.node.defaultChild as sns.CfnTopic);
    expect(Object.keys(resourcesOf(built.template, 'AWS::SNS::Topic'))).toEqual([givenId]);
    expect(built.monitoring.alarmTopic).toBe(given);
    for (const alarm of alarmProps(built.template)) expect(alarm.AlarmActions).toEqual([{ Ref: givenId }]);
    built.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: givenId },
    });
  });

  it('each e-mail address subscribed to the new topic', () => {
    const built = build({ emailAddresses: ['ops@example.com', 'oncall@example.org'] });
    const [topicId] = Object.keys(resourcesOf(built.template, 'AWS::SNS::Topic'));
    const subscribed = Object.values(resourcesOf(built.template, 'AWS::SNS::Subscription')).map((s) => s.Properties);
    expect(subscribed.map((s) => [s.Protocol, s.Endpoint, s.TopicArn])).toEqual([
      ['email', 'ops@example.com', { Ref: topicId }],
      ['email', 'oncall@example.org', { Ref: topicId }],
    ]);
  });

  it('to every action given as well, beside the topic', () => {
    const pager: cloudwatch.IAlarmAction = {
      bind: () => ({ alarmActionArn: 'arn:aws:ssm-incidents::111122223333:response-plan/pager' }),
    };
    const built = build({ actions: [pager] });
    const [topicId] = Object.keys(resourcesOf(built.template, 'AWS::SNS::Topic'));
    const alarms = alarmProps(built.template);
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms)
      expect(alarm.AlarmActions).toEqual([{ Ref: topicId }, 'arn:aws:ssm-incidents::111122223333:response-plan/pager']);
  });
});

describe('a bad alarms configuration', () => {
  const monitoringWith = (alarms: unknown) => () => build(alarms as JobsAlarmsOptions);

  it('names the e-mail address that is not one by its place in the list, not a -c flag', () => {
    const problems = validationProblemsOf(monitoringWith({ emailAddresses: ['ops@example.com', 'oncall'] }));
    expect(problems).toEqual(['alarms.emailAddresses[1]: not an e-mail address: "oncall"']);
    expect(problems.join('\n')).not.toContain('-c');
  });

  it('names every threshold CloudWatch would refuse, each by its path', () => {
    const problems = validationProblemsOf(
      monitoringWith({
        thresholds: {
          failedOccurrences: { evaluationPeriods: 0 },
          lostLeases: { threshold: 0, datapointsToAlarm: 3, evaluationPeriods: 2 },
          workerErrors: { period: Duration.seconds(90) },
          deadLetters: { period: Duration.minutes(5), evaluationPeriods: 289 },
          reconcilerErrors: { period: Duration.hours(2), evaluationPeriods: 85 },
          workerThrottles: { datapointsToAlarm: 1.5 },
          failedOcurrences: false,
        },
      }),
    );
    expect(problems).toEqual([
      'alarms.thresholds.failedOccurrences.evaluationPeriods: must be a whole number of at least 1, got 0',
      'alarms.thresholds.lostLeases.threshold: must be a number greater than 0, got 0',
      'alarms.thresholds.lostLeases.datapointsToAlarm: must be at most evaluationPeriods (2), got 3',
      'alarms.thresholds.workerErrors.period: must be a whole number of minutes, at least 1 (the metrics have a one-minute resolution), got 1 minute 30 seconds',
      "alarms.thresholds.deadLetters: period times evaluationPeriods must be at most one day (for a period under an hour), CloudWatch's limit; got 86700 s",
      "alarms.thresholds.reconcilerErrors: period times evaluationPeriods must be at most seven days, CloudWatch's limit; got 612000 s",
      'alarms.thresholds.workerThrottles.datapointsToAlarm: must be a whole number of at least 1, got 1.5',
      'alarms.thresholds.failedOcurrences: not a kind of alarm; the kinds are deadLetters, workerErrors, workerThrottles, failedOccurrences, lostLeases, pausedOnFailures, lateOccurrences, reconcilerErrors, reconcilerRepairs',
    ]);
  });

  it('are found without building anything, so that ScheduledJobs can report them before it bundles', () => {
    expect(jobsAlarmsProblems({ emailAddresses: ['oncall'], thresholds: { lostLeases: { threshold: -1 } } })).toEqual([
      'alarms.emailAddresses[0]: not an e-mail address: "oncall"',
      'alarms.thresholds.lostLeases.threshold: must be a number greater than 0, got -1',
    ]);
    expect(jobsAlarmsProblems(undefined)).toEqual([]);
    expect(jobsAlarmsProblems({ enabled: 'no' as unknown as boolean })).toEqual([
      'alarms.enabled: must be true or false, got "no"',
    ]);
  });

  it('accepts the limits themselves: a day of 5-minute periods, M of N with M = N', () => {
    const built = build({
      thresholds: {
        deadLetters: { evaluationPeriods: 288, datapointsToAlarm: 288 },
        reconcilerErrors: { period: Duration.hours(1), evaluationPeriods: 168 },
      },
    });
    expect(alarmResource(built, built.monitoring.sharedAlarms.reconcilerErrors)).toMatchObject({
      Period: 3600,
      EvaluationPeriods: 168,
    });
  });
});
