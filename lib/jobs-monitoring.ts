/**
 * Alarms and a dashboard for one ScheduledJobs: what someone on call needs at 3 a.m.
 *
 * Every alarm goes to one SNS topic (optionally with an e-mail subscription). An alarm fires on the first
 * occurrence of something that needs a person: a message parked in a dead-letter queue, an occurrence that FAILED,
 * a lease that was lost, a worker invocation that errored or was throttled, a reconciler run that failed, and each
 * repair the reconciler made (it means something upstream dropped an occurrence). Missing data is "not breaching":
 * no traffic is no alarm. docs/operating.md says what each one means and what to do.
 *
 * The alarms are per worker and per stack, not per job: a job adds no alarm, so 100 jobs fit in one stack (an alarm
 * is a CloudFormation resource). The worker's alarms watch the { service, worker } dimension set its function writes
 * beside { service, jobId }; the row names the job, and the dashboard graphs every job by its own dimension.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS_SERVICE, MetricName, RECONCILER_COMPONENT } from '../functions/protocol/metric-names';
import { quoteValue } from '../functions/protocol/quote-value';
import type { JobWorker } from './job-worker';

export interface JobsMonitoringProps {
  readonly metricsNamespace: string;
  readonly reconciler: lambda.IFunction;
  /** The shared queues whose every message needs a person, by the name the alarm carries. */
  readonly deadLetterQueues: Readonly<Record<string, sqs.IQueue>>;
  /** Subscribed to the alarm topic when given (confirm the subscription from the e-mail AWS sends). */
  readonly alarmEmail?: string;
}

const PERIOD = Duration.minutes(5);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class JobsMonitoring extends Construct {
  readonly alarmTopic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;
  /** Keyed by a stable name, e.g. `dlq-TriggerDeadLetterQueue`, `failed-exports` (worker exports). */
  readonly alarms: ReadonlyMap<string, cloudwatch.Alarm>;
  private readonly alarmsByKey = new Map<string, cloudwatch.Alarm>();
  /** The alarm status widget renders at synth, so it shows the alarms of workers added after it, too. */
  private readonly alarmList: cloudwatch.IAlarm[] = [];
  private readonly notify: actions.SnsAction;
  private readonly metricsNamespace: string;

  constructor(scope: Construct, id: string, props: JobsMonitoringProps) {
    super(scope, id);
    if (props.alarmEmail !== undefined && !EMAIL.test(props.alarmEmail)) {
      throw new Error(`alarmEmail (-c alarmEmail=...): not an e-mail address: ${quoteValue(props.alarmEmail)}`);
    }
    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', { displayName: 'Scheduled jobs alarms', enforceSSL: true });
    if (props.alarmEmail !== undefined) this.alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
    this.notify = new actions.SnsAction(this.alarmTopic);
    this.metricsNamespace = props.metricsNamespace;
    this.alarms = this.alarmsByKey;

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { defaultInterval: Duration.days(1) });
    this.dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarmList, width: 24, height: 4 }),
    );
    this.addSharedAlarms(props);
    this.dashboard.addWidgets(...sharedWidgets(props, this.byJob.bind(this)));
  }

  /** A worker's alarms (its DLQ, errors, throttles, FAILED occurrences, lost leases) and its dashboard row. */
  addWorker(worker: JobWorker): void {
    const id = worker.workerId;
    this.alarm(
      `dlq-${id}`,
      worker.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: PERIOD,
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      `The dead-letter queue of worker ${id} holds a message: one of its jobs' messages could not be processed. See docs/operating.md, Alarms.`,
    );
    this.alarm(
      `worker-errors-${id}`,
      worker.function.metricErrors({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
      `Worker ${id} failed an invocation (crash, timeout or out of memory); its messages return after the visibility timeout.`,
    );
    this.alarm(
      `worker-throttles-${id}`,
      worker.function.metricThrottles({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
      `Worker ${id} was throttled: occurrences wait in its queue. Check the account concurrency.`,
    );
    this.alarm(
      `failed-${id}`,
      this.workerMetric(MetricName.OccurrencesFailed, id),
      `An occurrence of a job of worker ${id} is FAILED: out of attempts or past its deadline. occurrences list --status FAILED names it; lastError and history say why.`,
    );
    this.alarm(
      `leases-lost-${id}`,
      this.workerMetric(MetricName.LeasesLost, id),
      `A job of worker ${id} lost its lease to another worker: pauses, clock skew or heartbeats failing. No duplicate report was written.`,
    );
    this.dashboard.addWidgets(...this.workerWidgets(worker));
  }

  /**
   * The alarm of a worker with a job that pauses itself after its failures (pauseAfterFailures): the first pause
   * needs a person, who finds the job and the last error with `occurrences describe`, and resumes it.
   */
  addPauseAlarm(worker: JobWorker): void {
    const id = worker.workerId;
    this.alarm(
      `paused-on-failures-${id}`,
      this.workerMetric(MetricName.JobsPausedOnFailures, id),
      `A job of worker ${id} paused itself after pauseAfterFailures FAILED occurrences in a row; its schedule is disabled. ` +
        'occurrences describe <job> shows the note with the last error; fix the cause, then occurrences resume <job>.',
    );
  }

  /** The reconciler's failed runs and repairs, and a message in any shared dead-letter queue. */
  private addSharedAlarms(props: JobsMonitoringProps): void {
    for (const [name, queue] of Object.entries(props.deadLetterQueues)) {
      this.alarm(
        `dlq-${name}`,
        queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: cloudwatch.Stats.MAXIMUM }),
        `${name} holds a message: something could not be processed and is parked there. See docs/operating.md, Alarms.`,
      );
    }
    this.alarm(
      'reconciler-errors',
      props.reconciler.metricErrors({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
      'A reconciler run could not finish some reads or writes; the next run retries. Persistent: check its logs.',
    );
    this.alarm(
      'reconciler-fixes',
      new cloudwatch.MathExpression({
        expression: 'FILL(requeued, 0) + FILL(announced, 0)',
        usingMetrics: {
          requeued: this.reconcilerMetric(MetricName.OccurrencesRequeued),
          announced: this.reconcilerMetric(MetricName.ReportsReannounced),
        },
        label: 'reconciler fixes',
        period: PERIOD,
      }),
      'The reconciler repaired an occurrence that had fallen through the cracks (its log line names it). Find out which path dropped it.',
    );
  }

  /** Fires on the first data point at or above 1, to the alarm topic; no data is no alarm. */
  private alarm(key: string, metric: cloudwatch.IMetric, description: string): cloudwatch.Alarm {
    const a = new cloudwatch.Alarm(this, `Alarm-${key}`, {
      metric,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    });
    a.addAlarmAction(this.notify);
    this.alarmsByKey.set(key, a);
    this.alarmList.push(a);
    return a;
  }

  private metric(name: MetricName, dimensions: Record<string, string>, statistic: string): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.metricsNamespace,
      metricName: name,
      dimensionsMap: { service: METRICS_SERVICE, ...dimensions },
      statistic,
      period: PERIOD,
    });
  }

  /** One of the functions' own metrics (metric-names.ts), over every job of one worker. */
  private workerMetric(name: MetricName, worker: string, statistic: string = cloudwatch.Stats.SUM) {
    return this.metric(name, { worker }, statistic);
  }

  private reconcilerMetric(name: MetricName): cloudwatch.Metric {
    return this.metric(name, { ...RECONCILER_COMPONENT }, cloudwatch.Stats.SUM);
  }

  /** A metric of every job, one line per job id: a search, so a job added later needs no new widget. */
  private byJob(name: MetricName, label: string): cloudwatch.MathExpression {
    return new cloudwatch.MathExpression({
      expression: `SEARCH('{${this.metricsNamespace},service,jobId} MetricName="${name}"', 'Sum', 300)`,
      label,
      period: PERIOD,
    });
  }

  /**
   * A heading and four graphs per worker: its occurrences, its retries and leases, its function, and what its
   * schedule policies did (skipped, buffered, cancelled, paused after failures; missed is the trigger's, by job).
   */
  private workerWidgets(worker: JobWorker): cloudwatch.IWidget[] {
    const id = worker.workerId;
    const metric = (name: MetricName, statistic?: string) => this.workerMetric(name, id, statistic);
    return [
      new cloudwatch.TextWidget({ markdown: `## Worker ${id}`, width: 24, height: 1 }),
      new cloudwatch.GraphWidget({
        title: `${id}: occurrences`,
        left: [MetricName.OccurrencesStarted, MetricName.OccurrencesSucceeded, MetricName.OccurrencesFailed].map((m) =>
          metric(m),
        ),
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: `${id}: retries, leases, job duration (ms)`,
        left: [MetricName.RetriesScheduled, MetricName.ExtendFailures, MetricName.LeasesLost].map((m) => metric(m)),
        right: [metric(MetricName.JobDuration, cloudwatch.Stats.MAXIMUM)],
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: `${id}: invocations, errors, throttles, dead letters`,
        left: [worker.function.metricInvocations(), worker.function.metricErrors(), worker.function.metricThrottles()],
        right: [
          worker.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: cloudwatch.Stats.MAXIMUM }),
        ],
        width: 6,
      }),
      new cloudwatch.GraphWidget({
        title: `${id}: skipped, buffered, cancelled, paused`,
        left: [MetricName.OccurrencesSkipped, MetricName.OccurrencesBuffered, MetricName.OccurrencesCancelled].map(
          (m) => metric(m),
        ),
        right: [metric(MetricName.JobsPausedOnFailures)],
        width: 6,
      }),
    ];
  }
}

/** The row of what every worker shares: occurrences by job, the shared dead-letter queues, the reconciler. */
function sharedWidgets(
  props: JobsMonitoringProps,
  byJob: (name: MetricName, label: string) => cloudwatch.MathExpression,
): cloudwatch.IWidget[] {
  return [
    new cloudwatch.TextWidget({ markdown: '## Every job, and the shared functions and queues', width: 24, height: 1 }),
    new cloudwatch.GraphWidget({
      title: 'occurrences succeeded, failed and missed (catch-up window), by job',
      left: [byJob(MetricName.OccurrencesSucceeded, 'succeeded')],
      right: [byJob(MetricName.OccurrencesFailed, 'failed'), byJob(MetricName.OccurrencesMissed, 'missed')],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'shared dead-letter queues (messages)',
      left: Object.values(props.deadLetterQueues).map((q) =>
        q.metricApproximateNumberOfMessagesVisible({ statistic: cloudwatch.Stats.MAXIMUM }),
      ),
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'reconciler invocations and errors',
      left: [props.reconciler.metricInvocations(), props.reconciler.metricErrors()],
      width: 8,
    }),
  ];
}
