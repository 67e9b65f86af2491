/**
 * ScheduledJob: the construct `ScheduledJobs.addJob` returns, for what an app does with one job after adding it: its
 * metrics (for alarms and dashboards of its own), read access to its reports, for a job that takes its schedules at
 * run time the grant to manage them, and what a construct gives: `Tags.of(job)`, Aspects and `node.addDependency`
 * reach its schedule and, for a job with a worker of its own (an `entry`), that worker (function, queues, role) and its
 * alarms. A job of a shared worker is a child of that worker; a job with its own worker is that worker's parent.
 */
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Schedule } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import { MetricName } from '../functions/protocol/metric-names';
import { REPORT_KEY_PREFIX } from '../functions/protocol/occurrence';
import { quoteValue } from '../functions/protocol/quote-value';
import { ValidationError } from './errors';
import type { JobWorker } from './job-worker';
import { jobMetric } from './metrics';
import { acknowledgeScheduleManagerFindings } from './nag-acknowledgements';
import { grantManageKeyedSchedules, type KeyedJobGrantParts } from './runtime-schedules';

/** What ScheduledJobs hands a job's handle when it builds it (its worker and schedule follow: ATTACH). */
export interface ScheduledJobParts {
  readonly jobId: string;
  readonly metricsNamespace: string;
  readonly reportBucket: s3.IBucket;
  /** Whether the functions write the job's metrics with `{ service, jobId }` (the job's `jobMetrics`). */
  readonly jobMetrics: boolean;
  /** Whether the job takes its schedules at run time. */
  readonly runtimeSchedules: boolean;
  /**
   * For a job whose addJob was rejected: the stack's problems so far, which using the handle throws (the synth
   * throws them all). The app goes on to its next addJob, so that one synth reports every mistake.
   */
  readonly rejected?: () => ValidationError;
}

/** How ScheduledJobs hands an accepted job its worker and schedule (a symbol: no method of the public type). */
export const ATTACH: unique symbol = Symbol('ScheduledJob.attach');

/**
 * One job of a ScheduledJobs, as `addJob` returns it: a construct, so that `Tags.of(job).add('team', 'billing')`
 * tags its schedule (and its own worker and alarms, for a job with an `entry`), and Aspects and dependencies reach it.
 *
 * @example
 * ```ts
 * const weekly = jobs.addJob('weekly-export', { schedule, worker: exportsWorker, jobMetrics: true });
 * new cloudwatch.Alarm(this, 'WeeklyExportFailed', {
 *   metric: weekly.metricFailed(),
 *   threshold: 1,
 *   evaluationPeriods: 1,
 * });
 * weekly.grantReadReports(reportsReader);
 * ```
 */
export class ScheduledJob extends Construct {
  /** The job id: its schedule's name, the partition of its rows, the prefix of its reports. */
  readonly jobId: string;
  private runner: JobWorker | undefined;
  private jobSchedule: Schedule | undefined;
  /** Whether the job takes its schedules at run time (`runtimeSchedules: true`) instead of one fixed schedule. */
  readonly runtimeSchedules: boolean;
  /**
   * Whether the functions write this job's metrics per job, with `{ service, jobId }` (`jobMetrics: true` on the job
   * or on the ScheduledJobs): what `metric()` and the other `metric*()` methods read, and need.
   */
  readonly jobMetrics: boolean;
  private readonly metricsNamespace: string;
  private readonly reportBucket: s3.IBucket;
  private keyed: KeyedJobGrantParts | undefined;
  private readonly rejected: (() => ValidationError) | undefined;

  /**
   * Built by `ScheduledJobs.addJob` only, so the published declarations leave it out. `scope`: the job's shared
   * worker, or the ScheduledJobs' workers for a job whose own worker it will hold; `id`: derived from the job id.
   *
   * @internal
   */
  static create(scope: Construct, id: string, parts: ScheduledJobParts): ScheduledJob {
    return new ScheduledJob(scope, id, parts);
  }

  private constructor(scope: Construct, id: string, parts: ScheduledJobParts) {
    super(scope, id);
    this.jobId = parts.jobId;
    this.rejected = parts.rejected;
    this.metricsNamespace = parts.metricsNamespace;
    this.reportBucket = parts.reportBucket;
    this.runtimeSchedules = parts.runtimeSchedules;
    this.jobMetrics = parts.jobMetrics;
  }

  /**
   * The worker, schedule and run-time schedules' grant parts of an accepted job, once built (the job's own worker and
   * its schedule are built under it). Called by `ScheduledJobs.addJob`.
   *
   * @internal
   */
  [ATTACH](parts: { worker: JobWorker; schedule: Schedule | undefined; runtimeSchedules?: KeyedJobGrantParts }): void {
    this.runner = parts.worker;
    this.jobSchedule = parts.schedule;
    this.keyed = parts.runtimeSchedules;
  }

  /**
   * Its schedule; undefined when the job is added with `enabled: false`. For a job with `runtimeSchedules`, its
   * template: DISABLED, never due, what each of its keys' schedules copies.
   */
  get schedule(): Schedule | undefined {
    return this.jobSchedule;
  }

  /**
   * The worker that runs it: a shared one, or the job's own.
   *
   * @throws ValidationError for a job whose `addJob` was rejected (its problems, and the stack's others so far)
   */
  get worker(): JobWorker {
    this.assertAccepted();
    // A job is accepted only with its worker (ScheduledJobs.addJob).
    return this.runner as JobWorker;
  }

  /** A rejected job's handle throws the stack's problems at its first use, as the synth would. */
  private assertAccepted(): void {
    if (this.rejected !== undefined) throw this.rejected();
  }

  /**
   * One of the metrics the functions emit for this job (dimensions `{ service, jobId }`), written only for a job with
   * `jobMetrics: true`. For any other job it throws a ValidationError naming the option rather than return a metric
   * that no function writes (an alarm on it would never fire); its worker's metrics (`job.worker.metric(name)`)
   * count it with the worker's other jobs.
   *
   * @param metricName - a name from docs/operating.md's metrics table, such as `OccurrencesFailed`.
   * @default statistic Sum (Maximum for JobDuration), period 5 minutes
   * @throws ValidationError when the job has no per-job metrics (`jobMetrics` is not true)
   */
  metric(metricName: MetricName, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    this.assertAccepted();
    if (!this.jobMetrics) {
      throw new ValidationError([
        `job ${quoteValue(this.jobId)}.metric(${quoteValue(metricName)}): the job has no per-job metrics; set ` +
          "jobMetrics: true on the job (addJob) or on the ScheduledJobs, or use job.worker.metric() for its worker's",
      ]);
    }
    return jobMetric(this.metricsNamespace, this.jobId, metricName, props);
  }

  /** Occurrences that started their first attempt. */
  metricStarted(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.OccurrencesStarted, props);
  }

  /** Occurrences recorded SUCCEEDED (a report committed). */
  metricSucceeded(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.OccurrencesSucceeded, props);
  }

  /** Occurrences recorded FAILED (out of attempts or past the deadline). */
  metricFailed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.OccurrencesFailed, props);
  }

  /** Occurrences SKIPPED as missed: first recorded later than the catch-up window. */
  metricMissed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.OccurrencesMissed, props);
  }

  /** Occurrences SKIPPED because an earlier one was running (overlap). */
  metricSkipped(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.OccurrencesSkipped, props);
  }

  /** Milliseconds from an attempt's claim to its recorded outcome. @default statistic Maximum */
  metricDuration(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.JobDuration, props);
  }

  /** Lets `grantee` read this job's reports (GetObject on `reports/<jobId>/*`). */
  grantReadReports(grantee: iam.IGrantable): iam.Grant {
    this.assertAccepted();
    return this.reportBucket.grantRead(grantee, `${REPORT_KEY_PREFIX}${this.jobId}/*`);
  }

  /**
   * Lets `grantee` (your app's function, say) create, change, pause and delete this job's run-time schedules with
   * `scheduled-jobs-stack/operations` (`upsertSchedule`, `deleteSchedule`, ...), and nothing of any other job:
   *
   * - the schedule registry's rows of this job (Get/Put/Update/DeleteItem, Query, ConditionCheckItem where the
   *   leading key is the job id) and its audit index `byAuditBucket` (Query where the leading key starts with
   *   `<jobId>#`); not the sync index `bySyncDue`, whose partitions every job shares (the reconciler's alone);
   * - Create/Update/Delete/GetSchedule in this job's own schedule group, GetSchedule on its template;
   * - ListSchedules, which takes no resource in IAM (`*`): it shows schedules' names and states, not their inputs;
   * - iam:PassRole of the schedules' target role, to `scheduler.amazonaws.com` only.
   *
   * Only for a job added with `runtimeSchedules: true`; any other job throws a {@link ValidationError}.
   *
   * @example
   * ```ts
   * const weekly = jobs.addJob('weekly-report', { runtimeSchedules: true, entry: 'src/jobs/weekly-report.ts' });
   * weekly.grantManageSchedules(signupFunction);
   * ```
   */
  grantManageSchedules(grantee: iam.IGrantable): iam.Grant {
    this.assertAccepted();
    if (this.keyed === undefined)
      throw new ValidationError([
        `grantManageSchedules(${this.jobId}): job ${this.jobId} has one fixed schedule; only a job added with ` +
          'runtimeSchedules: true takes schedules at run time (docs/runtime-schedules.md)',
      ]);
    acknowledgeScheduleManagerFindings(grantee, this.keyed.schedules.group.scheduleGroupName, this.jobId);
    return grantManageKeyedSchedules(grantee, this.keyed);
  }
}
