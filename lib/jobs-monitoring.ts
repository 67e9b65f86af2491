/**
 * Alarms and a dashboard for one ScheduledJobs: what someone on call needs at 3 a.m.
 *
 * Every alarm goes to one SNS topic (a new one, or the user's), with any further alarm actions the user gives. By
 * default an alarm fires on the first occurrence of something that needs a person: a message parked in a dead-letter
 * queue, an occurrence that FAILED, a lease that was lost, an occurrence late to start, a worker invocation that
 * errored or was throttled, a job that paused itself after its failures, a reconciler run that failed, and each repair the reconciler made (it means
 * something upstream dropped an occurrence). Each kind can be given another threshold or turned off, and all of them
 * at once (`alarms.enabled: false`). Missing data is "not breaching": no traffic is no alarm. docs/operating.md says
 * what each one means and what to do.
 *
 * The alarms are per worker only where the signal is the worker's own (its dead-letter queue, its function's errors
 * and throttles: what to redrive, whose logs to read); the rest are per stack, not per job: a job adds no alarm and no
 * custom metric, so 100 jobs fit in one stack (an alarm is a CloudFormation resource) and cost the same to watch as
 * one. The stack's alarms on FAILED occurrences, lost leases, late occurrences and pauses watch the stack-wide set
 * `{ service, component: 'workers' }` every worker also writes those with (one alarm metric per stack, where a sum
 * over the workers would bill one per worker); the row, the log line and `occurrences list` name the job. The dashboard ($3 a month) is made
 * only when asked for (`dashboard: true`). Every metric comes from metrics.ts, the same functions the constructs'
 * `metric*()` methods call.
 */
import { type CfnElement, Duration, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { MetricName } from '../functions/protocol/metric-names';
import { quoteValue } from '../functions/protocol/quote-value';
import { encryptionKeyOf } from './encryption';
import { ValidationError } from './errors';
import { keepLogicalId } from './logical-ids';
import {
  DEFAULT_METRIC_PERIOD,
  deadLetterMessages,
  everyWorkerMetric,
  functionErrors,
  functionThrottles,
  reconcilerRepairs,
  type StackWideWorkerMetricName,
  triggerMetric,
  type WorkerMetricName,
  workerMetric,
  workersMetric,
} from './metrics';

/**
 * The threshold of each kind of alarm, or `false` for no alarm of that kind. Every kind fires, by default, on the
 * first event in a 5-minute period (the defaults of {@link AlarmThreshold}).
 */
export interface JobsAlarmThresholds {
  /**
   * A message in a dead-letter queue: each worker's, and each shared one (the trigger's, the Scheduler's, the
   * notifier's failure queue). The metric is the queue's ApproximateNumberOfMessagesVisible, by its Maximum.
   *
   * @default - the defaults of AlarmThreshold
   */
  readonly deadLetters?: AlarmThreshold | false;
  /**
   * A worker's failed invocations (crash, timeout, out of memory), per worker.
   *
   * @default - the defaults of AlarmThreshold
   */
  readonly workerErrors?: AlarmThreshold | false;
  /**
   * A worker's throttled invocations, per worker.
   *
   * @default - the defaults of AlarmThreshold
   */
  readonly workerThrottles?: AlarmThreshold | false;
  /**
   * Occurrences recorded FAILED (attempts or deadline used up), one alarm per stack over every worker.
   *
   * @default - the defaults of AlarmThreshold
   */
  readonly failedOccurrences?: AlarmThreshold | false;
  /**
   * Leases lost to another worker, one alarm per stack over every worker.
   *
   * @default - the defaults of AlarmThreshold
   */
  readonly lostLeases?: AlarmThreshold | false;
  /**
   * Jobs that paused themselves after `pauseAfterFailures` FAILED occurrences in a row: one alarm per stack, once a
   * job has `pauseAfterFailures`.
   *
   * @default - the defaults of AlarmThreshold
   */
  readonly pausedOnFailures?: AlarmThreshold | false;
  /**
   * An occurrence is late: due and not started within its job's `lateAfter` (still waiting, or never recorded because
   * its schedule was disabled behind the stack's back). One alarm per stack, on the gauge OccurrencesLate the
   * reconciler writes at each run for each worker with late occurrences (statistic Maximum: the most late in any one
   * worker).
   *
   * @default - the defaults of AlarmThreshold
   */
  readonly lateOccurrences?: AlarmThreshold | false;
  /**
   * Failed reconciler runs.
   *
   * @default - the defaults of AlarmThreshold
   */
  readonly reconcilerErrors?: AlarmThreshold | false;
  /**
   * The reconciler's repairs: occurrences it re-enqueued plus reports it announced late. Each means something
   * upstream dropped an occurrence.
   *
   * @default - the defaults of AlarmThreshold
   */
  readonly reconcilerRepairs?: AlarmThreshold | false;
}

/** A kind of alarm: a key of {@link JobsAlarmThresholds}. */
export type JobsAlarmKind = keyof JobsAlarmThresholds;

/** Every kind, in the order the problems name them; a Record, so that a kind added to the interface must be here. */
const ALARM_KINDS = Object.keys({
  deadLetters: true,
  workerErrors: true,
  workerThrottles: true,
  failedOccurrences: true,
  lostLeases: true,
  pausedOnFailures: true,
  lateOccurrences: true,
  reconcilerErrors: true,
  reconcilerRepairs: true,
} satisfies Record<JobsAlarmKind, true>) as readonly JobsAlarmKind[];

/**
 * When an alarm of one kind fires: when `datapointsToAlarm` of the last `evaluationPeriods` periods of `period` each
 * reach `threshold` (the comparison is "greater than or equal to").
 */
export interface AlarmThreshold {
  /**
   * The value a period's data point must reach: a count of events (messages for `deadLetters`), greater than 0.
   *
   * @default 1
   */
  readonly threshold?: number;
  /**
   * The number of most recent periods the alarm looks at; `period` times this is at most one day (seven days for a
   * period of an hour or more), as CloudWatch requires.
   *
   * @default 1
   */
  readonly evaluationPeriods?: number;
  /**
   * How many of the `evaluationPeriods` must reach the threshold (an "M out of N" alarm); at most `evaluationPeriods`.
   *
   * @default - `evaluationPeriods`: every one of them
   */
  readonly datapointsToAlarm?: number;
  /**
   * The length of one period: a whole number of minutes (the functions' metrics have a resolution of one minute).
   *
   * @default Duration.minutes(5)
   */
  readonly period?: Duration;
}

/** The alarms of a ScheduledJobs: on or off, where they go, and when each kind fires. */
export interface JobsAlarmsOptions {
  /**
   * Whether to create the alarms. With `false` there is no alarm and no alarm topic; the dashboard stays (without
   * its alarm widget), and the other options here are still checked but have no effect.
   *
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * The SNS topic every alarm notifies, instead of a new one; the e-mail addresses are subscribed to it.
   *
   * @default - a new topic, `monitoring.alarmTopic`
   */
  readonly topic?: sns.ITopic;
  /**
   * E-mail addresses to subscribe to the alarm topic; each must confirm the subscription from the e-mail AWS sends.
   *
   * @default - none: subscribe to `monitoring.alarmTopic` yourself
   */
  readonly emailAddresses?: readonly string[];
  /**
   * Further actions of every alarm, beside notifying the alarm topic (an Incident Manager response plan, a second
   * topic, ...).
   *
   * @default - none
   */
  readonly actions?: readonly cloudwatch.IAlarmAction[];
  /**
   * Another threshold for a kind of alarm, or `false` to create no alarm of that kind. A kind not named keeps the
   * default: it fires on the first event in a 5-minute period.
   *
   * @default - every kind on, with the defaults of {@link AlarmThreshold}
   */
  readonly thresholds?: JobsAlarmThresholds;
}

/**
 * The alarms of one worker, each kind present unless turned off (`alarms.thresholds`) or all alarms are off: the
 * signals that are the worker's own. FAILED occurrences, lost leases, late occurrences and pauses are the stack's
 * ({@link SharedAlarms}).
 */
export interface WorkerAlarms {
  /** A message in the worker's dead-letter queue. */
  readonly deadLetters?: cloudwatch.Alarm;
  /** The worker's function failed invocations. */
  readonly workerErrors?: cloudwatch.Alarm;
  /** The worker's function was throttled. */
  readonly workerThrottles?: cloudwatch.Alarm;
}

/** The alarms of the whole stack, each kind present unless turned off or all alarms are off. */
export interface SharedAlarms {
  /** A message in a shared dead-letter queue, by the queue's name (`TriggerDeadLetterQueue`, ...). */
  readonly deadLetters: Readonly<Record<string, cloudwatch.Alarm>>;
  /** The reconciler failed runs. */
  readonly reconcilerErrors?: cloudwatch.Alarm;
  /** The reconciler repaired occurrences (re-enqueued or announced late). */
  readonly reconcilerRepairs?: cloudwatch.Alarm;
  /** Occurrences of any worker's jobs were recorded FAILED. */
  readonly failedOccurrences?: cloudwatch.Alarm;
  /** A worker lost a lease. */
  readonly lostLeases?: cloudwatch.Alarm;
  /** An occurrence is late (OccurrencesLate). */
  readonly lateOccurrences?: cloudwatch.Alarm;
  /** A job paused itself after its failures: present once a job has pauseAfterFailures. */
  readonly pausedOnFailures?: cloudwatch.Alarm;
}

/**
 * What the monitoring needs of a worker: its id (the `worker` dimension of its metrics), its function and its
 * dead-letter queue. A JobWorker is one.
 */
export interface MonitoredWorker {
  /** The worker's id: the value of the `worker` dimension its function writes. */
  readonly workerId: string;
  /** The worker's function, whose errors and throttles are alarmed. */
  readonly function: lambda.IFunction;
  /** The worker's dead-letter queue, whose every message is alarmed. */
  readonly deadLetterQueue: sqs.IQueue;
}

/** What JobsMonitoring watches, and its alarms' options. */
export interface JobsMonitoringProps {
  /** The CloudWatch namespace the functions write their metrics to (POWERTOOLS_METRICS_NAMESPACE). */
  readonly metricsNamespace: string;
  /** Whether to make the dashboard. @default false */
  readonly dashboard?: boolean;
  /** The reconciler function, whose errors are alarmed and graphed. */
  readonly reconciler: lambda.IFunction;
  /** The shared queues whose every message needs a person, by the name their alarm carries (`dlq-<name>`). */
  readonly deadLetterQueues: Readonly<Record<string, sqs.IQueue>>;
  /**
   * The alarms: on or off, where they go, and when each kind fires.
   *
   * @default - every alarm on, each firing on the first event in 5 minutes, to a new topic with no subscription
   */
  readonly alarms?: JobsAlarmsOptions;
}

/** An AlarmThreshold with its defaults; `datapointsToAlarm` undefined means every evaluation period. */
interface ResolvedThreshold {
  readonly threshold: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm?: number;
  readonly period: Duration;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const ONE_DAY_SECONDS = 86_400;
const SEVEN_DAYS_SECONDS = 7 * ONE_DAY_SECONDS;
const ONE_HOUR_SECONDS = 3_600;

/**
 * Alarms (to one SNS topic) and a dashboard for one ScheduledJobs. ScheduledJobs creates it as `monitoring` and adds
 * each worker to it; use it to reach the alarms (`workerAlarms(id)`, `sharedAlarms`), the topic and the dashboard.
 */
export class JobsMonitoring extends Construct {
  /** The topic every alarm notifies: the one given as `alarms.topic`, or a new one; undefined with alarms off. */
  readonly alarmTopic: sns.ITopic | undefined;
  /**
   * The dashboard, with ScheduledJobs' `dashboard: true`: the alarms' status, then a row of the occurrences by
   * worker and the shared functions, then a row per worker. Undefined without it.
   */
  readonly dashboard: cloudwatch.Dashboard | undefined;
  /**
   * The stack's alarms: the shared dead-letter queues', the reconciler's, and those over every worker (FAILED, lost
   * leases, late, paused); the same object throughout, which gains `pausedOnFailures` with the first job that
   * pauses after its failures.
   */
  readonly sharedAlarms: SharedAlarms;
  private readonly enabled: boolean;
  private readonly thresholds: Readonly<Record<JobsAlarmKind, ResolvedThreshold | false>>;
  private readonly alarmActions: cloudwatch.IAlarmAction[];
  private readonly metricsNamespace: string;
  private readonly alarmsByWorker = new Map<string, Mutable<WorkerAlarms>>();
  /** Every alarm, in the order created; the status widget reads it at synth, so it lists later workers' too. */
  private readonly alarmList: cloudwatch.Alarm[] = [];
  private pauseAlarmAdded = false;
  private workersAlarmsAdded = false;

  /**
   * Built by ScheduledJobs only (its `monitoring`), so the published declarations leave it out.
   *
   * @internal
   */
  static create(scope: Construct, id: string, props: JobsMonitoringProps): JobsMonitoring {
    return new JobsMonitoring(scope, id, props);
  }

  private constructor(scope: Construct, id: string, props: JobsMonitoringProps) {
    super(scope, id);
    const options = props.alarms ?? {};
    const problems = jobsAlarmsProblems(options);
    if (problems.length > 0) throw new ValidationError(problems);

    this.metricsNamespace = props.metricsNamespace;
    this.enabled = options.enabled ?? true;
    this.thresholds = resolveThresholds(options.thresholds);
    this.alarmTopic = this.enabled ? this.topicOf(options) : undefined;
    this.alarmActions = [
      ...(this.alarmTopic !== undefined ? [new cloudwatchActions.SnsAction(this.alarmTopic)] : []),
      ...(options.actions ?? []),
    ];

    this.dashboard =
      props.dashboard === true
        ? new cloudwatch.Dashboard(this, 'Dashboard', { defaultInterval: Duration.days(1) })
        : undefined;
    if (this.enabled && ALARM_KINDS.some((kind) => this.thresholds[kind] !== false)) {
      this.dashboard?.addWidgets(new ExistingAlarmsWidget(this.alarmList));
    }
    this.sharedAlarms = this.addSharedAlarms(props);
    this.dashboard?.addWidgets(...sharedWidgets(props));
  }

  /** Every alarm, in the order created (shared ones first, then each worker's). */
  get alarms(): readonly cloudwatch.Alarm[] {
    return this.alarmList;
  }

  /**
   * The alarms of a worker added with addWorker.
   *
   * @param workerId - the worker's id
   */
  workerAlarms(workerId: string): WorkerAlarms {
    const found = this.alarmsByWorker.get(workerId);
    if (found === undefined) {
      const known = [...this.alarmsByWorker.keys()].map((w) => quoteValue(w)).join(', ') || 'none';
      throw new ValidationError([
        `monitoring.workerAlarms(${quoteValue(workerId)}): no such worker (workers: ${known})`,
      ]);
    }
    return found;
  }

  /**
   * A worker's alarms (its DLQ, its function's errors and throttles) and its dashboard row. Called by
   * `ScheduledJobs.addWorker`.
   *
   * @internal
   */
  addWorker(worker: MonitoredWorker): void {
    const id = worker.workerId;
    const alarms: Mutable<WorkerAlarms> = {};
    this.alarmsByWorker.set(id, alarms);
    this.addWorkersAlarms();
    // Under the worker when it is a construct (a JobWorker): Tags.of(worker), and Tags.of(job) for a job with a
    // worker of its own, reach its alarms.
    const under = Construct.isConstruct(worker) ? worker : this;
    this.keptAlarm(
      alarms,
      'deadLetters',
      `dlq-${id}`,
      (period) => deadLetterMessages(worker.deadLetterQueue, { period }),
      `The dead-letter queue of worker ${id} holds a message: one of its jobs' messages could not be processed. See docs/operating.md, Alarms.`,
      under,
    );
    this.keptAlarm(
      alarms,
      'workerErrors',
      `worker-errors-${id}`,
      (period) => functionErrors(worker.function, { period }),
      `Worker ${id} failed an invocation (crash, timeout or out of memory); its messages return after the visibility timeout. See docs/operating.md, Alarms.`,
      under,
    );
    this.keptAlarm(
      alarms,
      'workerThrottles',
      `worker-throttles-${id}`,
      (period) => functionThrottles(worker.function, { period }),
      `Worker ${id} was throttled: occurrences wait in its queue. Check the account concurrency. See docs/operating.md, Alarms.`,
      under,
    );
    this.dashboard?.addWidgets(...this.workerWidgets(worker));
  }

  /**
   * The stack's alarms over every worker (FAILED occurrences, lost leases, late occurrences), made with the first
   * worker: a stack without workers has nothing for them to watch.
   */
  private addWorkersAlarms(): void {
    if (this.workersAlarmsAdded) return;
    this.workersAlarmsAdded = true;
    const shared = this.sharedAlarms as Mutable<SharedAlarms>;
    const workers = (name: StackWideWorkerMetricName) => (period: Duration) =>
      workersMetric(this.metricsNamespace, name, { period });
    this.keptAlarm(
      shared,
      'failedOccurrences',
      'failed',
      workers(MetricName.OccurrencesFailed),
      'An occurrence is FAILED: out of attempts or past its deadline. occurrences list --status FAILED names it; lastError and history say why. See docs/operating.md, Alarms.',
    );
    this.keptAlarm(
      shared,
      'lostLeases',
      'leases-lost',
      workers(MetricName.LeasesLost),
      'A job lost its lease to another worker: pauses, clock skew or heartbeats failing (the log line "lease lost; stopping without writing" names it). No duplicate report was written. See docs/operating.md, Alarms.',
    );
    this.keptAlarm(
      shared,
      'lateOccurrences',
      'late',
      workers(MetricName.OccurrencesLate),
      'An occurrence is late: due and not started within its lateAfter (waiting in its queue or buffer, or never recorded: a schedule ' +
        'disabled by hand). The reconciler log line "occurrence is late" names it. See docs/operating.md, Late and missed runs.',
    );
  }

  /**
   * The stack's alarm on jobs that pause themselves after their failures (pauseAfterFailures), made with the first
   * such job: the first pause needs a person, who finds the job and the last error with `occurrences describe`, and
   * resumes it. Called by `ScheduledJobs.addJob`; a second call does nothing.
   *
   * @internal
   */
  addPauseAlarm(): void {
    if (this.pauseAlarmAdded) return;
    this.pauseAlarmAdded = true;
    this.keptAlarm(
      this.sharedAlarms as Mutable<SharedAlarms>,
      'pausedOnFailures',
      'paused-on-failures',
      (period) => workersMetric(this.metricsNamespace, MetricName.JobsPausedOnFailures, { period }),
      'A job paused itself after pauseAfterFailures FAILED occurrences in a row; its schedule is disabled. The error log line of the worker ' +
        'names it; occurrences describe <job> shows the note with the last error; fix the cause, then occurrences resume <job>. See docs/operating.md, Alarms.',
    );
  }

  /** An alarm of `kind`, kept in `alarms` (a worker's or the stack's) under the kind's name when it is created. */
  private keptAlarm<A extends object>(
    alarms: A,
    kind: keyof A & JobsAlarmKind,
    key: string,
    metricFor: (period: Duration) => cloudwatch.IMetric,
    description: string,
    scope: Construct = this,
  ): void {
    const alarm = this.alarm(kind, key, metricFor, description, scope);
    if (alarm !== undefined) (alarms as Record<string, cloudwatch.Alarm>)[kind] = alarm;
  }

  /** The new topic, or the user's, with each e-mail address subscribed. */
  private topicOf(options: JobsAlarmsOptions): sns.ITopic {
    const topic =
      options.topic ??
      new sns.Topic(this, 'AlarmTopic', {
        displayName: 'Scheduled jobs alarms',
        enforceSSL: true,
        masterKey: encryptionKeyOf(this),
      });
    for (const address of options.emailAddresses ?? []) topic.addSubscription(new EmailSubscription(address));
    return topic;
  }

  /** The reconciler's failed runs and repairs, and a message in any shared dead-letter queue. */
  private addSharedAlarms(props: JobsMonitoringProps): SharedAlarms {
    const deadLetters: Record<string, cloudwatch.Alarm> = {};
    for (const [name, queue] of Object.entries(props.deadLetterQueues)) {
      const alarm = this.alarm(
        'deadLetters',
        `dlq-${name}`,
        (period) => deadLetterMessages(queue, { period }),
        `${name} holds a message: something could not be processed and is parked there. See docs/operating.md, Alarms.`,
      );
      if (alarm !== undefined) deadLetters[name] = alarm;
    }
    const errors = this.alarm(
      'reconcilerErrors',
      'reconciler-errors',
      (period) => functionErrors(props.reconciler, { period }),
      'A reconciler run could not finish some reads or writes; the next run retries. Persistent: check its logs. See docs/operating.md, Alarms.',
    );
    const repairs = this.alarm(
      'reconcilerRepairs',
      'reconciler-fixes',
      (period) => reconcilerRepairs(this.metricsNamespace, { period }),
      'The reconciler repaired an occurrence that had fallen through the cracks (its log line names it). Find out which path dropped it. See docs/operating.md, Alarms.',
    );
    const shared: Mutable<SharedAlarms> = {
      deadLetters,
      ...(errors !== undefined ? { reconcilerErrors: errors } : {}),
      ...(repairs !== undefined ? { reconcilerRepairs: repairs } : {}),
    };
    return shared;
  }

  /**
   * An alarm of `kind` on the metric `metricFor` builds for the kind's period, unless alarms or the kind are off; no
   * data is no alarm. `key` names the construct (`Alarm-<key>`, the id it has always had, so that an upgrade keeps
   * the alarm rather than replacing it).
   */
  private alarm(
    kind: JobsAlarmKind,
    key: string,
    metricFor: (period: Duration) => cloudwatch.IMetric,
    description: string,
    scope: Construct = this,
  ): cloudwatch.Alarm | undefined {
    const threshold = this.thresholds[kind];
    if (!this.enabled || threshold === false) return undefined;
    const alarm = new cloudwatch.Alarm(scope, `Alarm-${key}`, {
      metric: metricFor(threshold.period),
      threshold: threshold.threshold,
      evaluationPeriods: threshold.evaluationPeriods,
      datapointsToAlarm: threshold.datapointsToAlarm,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    });
    if (scope !== this) keepLogicalId(alarm.node.defaultChild as CfnElement, this, `Alarm-${key}`, 'Resource');
    alarm.addAlarmAction(...this.alarmActions);
    this.alarmList.push(alarm);
    return alarm;
  }

  /**
   * A heading and four graphs per worker: its occurrences, its retries and leases, its function, and what its
   * schedule policies did (skipped, buffered, cancelled, paused after failures; missed is the trigger's, by job).
   */
  private workerWidgets(worker: MonitoredWorker): cloudwatch.IWidget[] {
    const id = worker.workerId;
    const metric = (name: WorkerMetricName) => workerMetric(this.metricsNamespace, id, name);
    return [
      new cloudwatch.TextWidget({ markdown: `## Worker ${id}`, width: 24, height: 1 }),
      new cloudwatch.GraphWidget({
        title: `${id}: occurrences`,
        left: [MetricName.OccurrencesStarted, MetricName.OccurrencesSucceeded, MetricName.OccurrencesFailed].map(
          metric,
        ),
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: `${id}: retries, leases, job duration (ms)`,
        left: [MetricName.RetriesScheduled, MetricName.ExtendFailures, MetricName.LeasesLost].map(metric),
        right: [metric(MetricName.JobDuration)],
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: `${id}: invocations, errors, throttles, dead letters`,
        left: [
          worker.function.metricInvocations({ period: DEFAULT_METRIC_PERIOD }),
          functionErrors(worker.function),
          functionThrottles(worker.function),
        ],
        right: [deadLetterMessages(worker.deadLetterQueue)],
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: `${id}: skipped, buffered, cancelled, paused`,
        left: [MetricName.OccurrencesSkipped, MetricName.OccurrencesBuffered, MetricName.OccurrencesCancelled].map(
          metric,
        ),
        right: [metric(MetricName.JobsPausedOnFailures)],
        width: 6,
      }),
    ];
  }
}

/**
 * The row of what every worker shares: occurrences by worker (the per-job detail is in the rows, and in the job's own
 * metrics where it has `jobMetrics`), the shared dead-letter queues, the reconciler.
 */
function sharedWidgets(props: JobsMonitoringProps): cloudwatch.IWidget[] {
  const byWorker = (name: WorkerMetricName, label: string) => everyWorkerMetric(props.metricsNamespace, name, label);
  return [
    new cloudwatch.TextWidget({
      markdown: '## Every worker, and the shared functions and queues',
      width: 24,
      height: 1,
    }),
    new cloudwatch.GraphWidget({
      title: 'occurrences succeeded and failed, by worker; missed (catch-up window), by the trigger',
      left: [byWorker(MetricName.OccurrencesSucceeded, 'succeeded')],
      right: [
        byWorker(MetricName.OccurrencesFailed, 'failed'),
        triggerMetric(props.metricsNamespace, MetricName.OccurrencesMissed, { label: 'missed' }),
      ],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'shared dead-letter queues (messages)',
      left: Object.values(props.deadLetterQueues).map((q) => deadLetterMessages(q)),
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'reconciler invocations, errors and repairs',
      left: [props.reconciler.metricInvocations({ period: DEFAULT_METRIC_PERIOD }), functionErrors(props.reconciler)],
      right: [reconcilerRepairs(props.metricsNamespace)],
      width: 8,
    }),
  ];
}

/**
 * The alarm status widget over the alarms that exist when the dashboard is rendered (at synth, after every worker
 * was added): nothing at all when there is none, as CloudWatch has no use for an alarm widget without alarms.
 */
class ExistingAlarmsWidget implements cloudwatch.IWidget {
  readonly width = 24;
  readonly height = 4;
  private readonly widget: cloudwatch.AlarmStatusWidget;

  constructor(private readonly alarms: readonly cloudwatch.IAlarm[]) {
    // AlarmStatusWidget keeps the list it is given and reads it when rendered.
    this.widget = new cloudwatch.AlarmStatusWidget({
      title: 'Alarms',
      alarms: alarms as cloudwatch.IAlarm[],
      width: this.width,
      height: this.height,
    });
  }

  position(x: number, y: number): void {
    this.widget.position(x, y);
  }

  toJson(): unknown[] {
    return this.alarms.length === 0 ? [] : this.widget.toJson();
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * What is wrong with the alarms' options, each problem naming its field (`alarms.thresholds.lostLeases.period`):
 * what JobsMonitoring throws. ScheduledJobs can call it first, so that a mistake is reported before anything is
 * bundled.
 *
 * @param options - the alarms' options as given
 * @returns the problems, none when the options are good
 */
export function jobsAlarmsProblems(options: JobsAlarmsOptions | undefined): string[] {
  if (options === undefined) return [];
  if (typeof options !== 'object' || options === null)
    return [`alarms: must be an object (JobsAlarmsOptions), got ${quoteValue(options)}`];
  const problems = [...emailProblems(options.emailAddresses), ...thresholdsProblems(options.thresholds)];
  if (options.enabled !== undefined && typeof options.enabled !== 'boolean')
    problems.push(`alarms.enabled: must be true or false, got ${quoteValue(options.enabled)}`);
  if (options.actions !== undefined && !Array.isArray(options.actions))
    problems.push(`alarms.actions: must be a list of alarm actions, got ${quoteValue(options.actions)}`);
  return problems;
}

function emailProblems(addresses: readonly string[] | undefined): string[] {
  if (addresses === undefined) return [];
  if (!Array.isArray(addresses))
    return [`alarms.emailAddresses: must be a list of e-mail addresses, got ${quoteValue(addresses)}`];
  return addresses.flatMap((address, i) =>
    typeof address === 'string' && (Token.isUnresolved(address) || EMAIL.test(address))
      ? []
      : [`alarms.emailAddresses[${i}]: not an e-mail address: ${quoteValue(address)}`],
  );
}

/** Every threshold CloudWatch would refuse at deploy, or that could never fire, named `alarms.thresholds.<kind>.<field>`. */
function thresholdsProblems(thresholds: JobsAlarmsOptions['thresholds']): string[] {
  if (thresholds === undefined) return [];
  if (typeof thresholds !== 'object' || thresholds === null || Array.isArray(thresholds))
    return [`alarms.thresholds: must be an object of alarm kinds, got ${quoteValue(thresholds)}`];
  return Object.entries(thresholds).flatMap(([kind, given]) => {
    const where = `alarms.thresholds.${kind}`;
    if (!(ALARM_KINDS as readonly string[]).includes(kind))
      return [`${where}: not a kind of alarm; the kinds are ${ALARM_KINDS.join(', ')}`];
    if (given === undefined || given === false) return [];
    if (typeof given !== 'object' || given === null)
      return [`${where}: must be false (no such alarm) or an AlarmThreshold, got ${quoteValue(given)}`];
    return thresholdProblems(given, where);
  });
}

function thresholdProblems(given: AlarmThreshold, where: string): string[] {
  const problems: string[] = [];
  const { threshold, evaluationPeriods, datapointsToAlarm, period } = given;
  if (threshold !== undefined && !isUnresolved(threshold) && !(Number.isFinite(threshold) && threshold > 0))
    problems.push(`${where}.threshold: must be a number greater than 0, got ${quoteValue(threshold)}`);
  const periods = countOrProblem(evaluationPeriods ?? 1, `${where}.evaluationPeriods`, problems);
  const datapoints = countOrProblem(datapointsToAlarm ?? 1, `${where}.datapointsToAlarm`, problems);
  if (periods !== undefined && datapoints !== undefined && datapoints > periods)
    problems.push(`${where}.datapointsToAlarm: must be at most evaluationPeriods (${periods}), got ${datapoints}`);
  const seconds = periodSecondsOrProblem(period ?? DEFAULT_METRIC_PERIOD, `${where}.period`, problems);
  if (seconds !== undefined && periods !== undefined) {
    // CloudWatch's limit on an alarm's evaluation range: a day for periods under an hour, seven days otherwise.
    const [limit, limitName] =
      seconds < ONE_HOUR_SECONDS
        ? [ONE_DAY_SECONDS, 'one day (for a period under an hour)']
        : [SEVEN_DAYS_SECONDS, 'seven days'];
    if (seconds * periods > limit)
      problems.push(
        `${where}: period times evaluationPeriods must be at most ${limitName}, CloudWatch's limit; got ${seconds * periods} s`,
      );
  }
  return problems;
}

/** The whole number of at least 1 `value` is, or undefined, with a problem if it is not one or is a token. */
function countOrProblem(value: number, where: string, problems: string[]): number | undefined {
  if (isUnresolved(value)) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1) return value;
  problems.push(`${where}: must be a whole number of at least 1, got ${quoteValue(value)}`);
  return undefined;
}

/** The seconds of a period CloudWatch accepts for our metrics, or undefined, with a problem if it is not one. */
function periodSecondsOrProblem(period: Duration, where: string, problems: string[]): number | undefined {
  if (typeof (period as Partial<Duration> | undefined)?.toSeconds !== 'function') {
    problems.push(`${where}: must be a Duration (Duration.minutes(5)), got ${quoteValue(period)}`);
    return undefined;
  }
  const seconds = period.toSeconds({ integral: false });
  if (isUnresolved(seconds)) return undefined;
  // Periods of 10, 20 or 30 s are for high-resolution metrics only; the functions write standard resolution.
  if (seconds >= 60 && seconds % 60 === 0) return seconds;
  problems.push(
    `${where}: must be a whole number of minutes, at least 1 (the metrics have a one-minute resolution), got ${period.toHumanString()}`,
  );
  return undefined;
}

function isUnresolved(value: unknown): boolean {
  return typeof value === 'number' && Token.isUnresolved(value);
}

/** Each named kind with its defaults filled in; a kind not named gets every default. */
function resolveThresholds(
  thresholds: JobsAlarmsOptions['thresholds'],
): Readonly<Record<JobsAlarmKind, ResolvedThreshold | false>> {
  return Object.fromEntries(
    ALARM_KINDS.map((kind) => {
      const given = thresholds?.[kind];
      if (given === false) return [kind, false];
      return [
        kind,
        {
          threshold: given?.threshold ?? 1,
          evaluationPeriods: given?.evaluationPeriods ?? 1,
          datapointsToAlarm: given?.datapointsToAlarm,
          period: given?.period ?? DEFAULT_METRIC_PERIOD,
        },
      ];
    }),
  ) as Record<JobsAlarmKind, ResolvedThreshold | false>;
}
