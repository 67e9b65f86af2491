/**
 * Alarms and a dashboard for one ScheduledJobs: what someone on call needs at 3 a.m.
 *
 * Every alarm goes to one SNS topic (optionally with an e-mail subscription). An alarm fires on the first
 * occurrence of something that needs a person: a message parked in a dead-letter queue, an occurrence that FAILED,
 * a lease that was lost, a worker invocation that errored or was throttled, a reconciler run that failed, and each
 * repair the reconciler made (it means something upstream dropped an occurrence). Missing data is "not breaching":
 * no traffic is no alarm. docs/operating.md says what each one means and what to do.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS_SERVICE, MetricName } from '../functions/protocol/metric-names';
import { quoteValue } from '../functions/protocol/quote-value';

export interface JobsMonitoringProps {
  readonly jobIds: readonly string[];
  readonly metricsNamespace: string;
  readonly worker: lambda.IFunction;
  readonly reconciler: lambda.IFunction;
  /** Queues whose every message needs a person, by the name the alarm carries. */
  readonly deadLetterQueues: Readonly<Record<string, sqs.IQueue>>;
  /** Subscribed to the alarm topic when given (confirm the subscription from the e-mail AWS sends). */
  readonly alarmEmail?: string;
}

const PERIOD = Duration.minutes(5);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class JobsMonitoring extends Construct {
  readonly alarmTopic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;
  /** Keyed by a stable name, e.g. `dlq-JobDeadLetterQueue`, `failed-occurrence-digest`. */
  readonly alarms: ReadonlyMap<string, cloudwatch.Alarm>;
  private readonly alarmsByKey = new Map<string, cloudwatch.Alarm>();
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

    this.addQueueAndFunctionAlarms(props);
    for (const jobId of props.jobIds) this.addJobAlarms(jobId);
    this.alarms = this.alarmsByKey;

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { defaultInterval: Duration.days(1) });
    this.dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: [...this.alarms.values()], width: 24, height: 4 }),
    );
    for (const jobId of props.jobIds) this.dashboard.addWidgets(...this.jobWidgets(jobId));
    this.dashboard.addWidgets(...functionAndQueueWidgets(props));
  }

  /** A parked message in any dead-letter queue, and a worker or reconciler invocation that failed. */
  private addQueueAndFunctionAlarms(props: JobsMonitoringProps): void {
    for (const [name, queue] of Object.entries(props.deadLetterQueues)) {
      this.alarm(
        `dlq-${name}`,
        queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: cloudwatch.Stats.MAXIMUM }),
        `${name} holds a message: something could not be processed and is parked there. See docs/operating.md, Alarms.`,
      );
    }
    this.alarm(
      'worker-errors',
      props.worker.metricErrors({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
      'The worker Lambda failed an invocation (crash, timeout or out of memory); its messages return after the visibility timeout.',
    );
    this.alarm(
      'worker-throttles',
      props.worker.metricThrottles({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
      'The worker Lambda was throttled: occurrences wait in the queue. Check the account concurrency.',
    );
    this.alarm(
      'reconciler-errors',
      props.reconciler.metricErrors({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
      'A reconciler run could not finish some reads or writes; the next run retries. Persistent: check its logs.',
    );
  }

  /** Per job: an occurrence that FAILED, a lease that was lost, and each repair the reconciler made. */
  private addJobAlarms(jobId: string): void {
    this.alarm(
      `failed-${jobId}`,
      this.jobMetric(MetricName.OccurrencesFailed, jobId),
      `An occurrence of ${jobId} is FAILED: out of attempts or past its deadline. lastError and history in the row say why.`,
    );
    this.alarm(
      `leases-lost-${jobId}`,
      this.jobMetric(MetricName.LeasesLost, jobId),
      `A worker of ${jobId} lost its lease to another worker: pauses, clock skew or heartbeats failing. No duplicate report was written.`,
    );
    this.alarm(
      `reconciler-fixes-${jobId}`,
      new cloudwatch.MathExpression({
        expression: 'FILL(requeued, 0) + FILL(announced, 0)',
        usingMetrics: {
          requeued: this.jobMetric(MetricName.OccurrencesRequeued, jobId),
          announced: this.jobMetric(MetricName.ReportsReannounced, jobId),
        },
        label: 'reconciler fixes',
        period: PERIOD,
      }),
      `The reconciler repaired an occurrence of ${jobId} that had fallen through the cracks. Find out which path dropped it.`,
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
    return a;
  }

  /** One of the functions' own metrics (metric-names.ts) of one job. */
  private jobMetric(name: MetricName, jobId: string, statistic: string = cloudwatch.Stats.SUM): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.metricsNamespace,
      metricName: name,
      dimensionsMap: { service: METRICS_SERVICE, jobId },
      statistic,
      period: PERIOD,
    });
  }

  /** A heading and three graphs per job: occurrences, retries and leases, duration and reconciler fixes. */
  private jobWidgets(jobId: string): cloudwatch.IWidget[] {
    const metric = (name: MetricName, statistic?: string) => this.jobMetric(name, jobId, statistic);
    return [
      new cloudwatch.TextWidget({ markdown: `## ${jobId}`, width: 24, height: 1 }),
      new cloudwatch.GraphWidget({
        title: `${jobId}: occurrences`,
        left: [MetricName.OccurrencesStarted, MetricName.OccurrencesSucceeded, MetricName.OccurrencesFailed].map((m) =>
          metric(m),
        ),
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: `${jobId}: retries and leases`,
        left: [
          MetricName.RetriesScheduled,
          MetricName.ExtendFailures,
          MetricName.LeasesLost,
          MetricName.DuplicateTriggersSuppressed,
        ].map((m) => metric(m)),
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: `${jobId}: job duration (ms) and reconciler fixes`,
        left: [
          metric(MetricName.JobDuration, cloudwatch.Stats.AVERAGE),
          metric(MetricName.JobDuration, cloudwatch.Stats.MAXIMUM),
        ],
        right: [metric(MetricName.OccurrencesRequeued), metric(MetricName.ReportsReannounced)],
        width: 8,
      }),
    ];
  }
}

/** The last row of the dashboard: the worker, the dead-letter queues and the reconciler. */
function functionAndQueueWidgets(props: JobsMonitoringProps): cloudwatch.IWidget[] {
  return [
    new cloudwatch.TextWidget({ markdown: '## Functions and queues', width: 24, height: 1 }),
    new cloudwatch.GraphWidget({
      title: 'worker invocations, errors, throttles',
      left: [props.worker.metricInvocations(), props.worker.metricErrors(), props.worker.metricThrottles()],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'dead-letter queues (messages)',
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
