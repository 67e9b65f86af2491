/**
 * Every metric the functions emit, in one place: the handlers record them through the Metrics port, and the CDK
 * alarms and dashboard read the same names, so a renamed metric cannot leave an alarm watching nothing.
 * Each is emitted with the dimensions of the function that wrote it ({ service, worker }, { service, component }), and
 * also with { service, jobId } for a job that opted in to per-job metrics (functions/runtime/powertools-metrics.ts).
 */
export const METRICS_SERVICE = 'scheduled-jobs';
/** The reconciler's own dimension set, { service, component }; see powertools-metrics.ts. */
export const RECONCILER_COMPONENT = { component: 'reconciler' } as const;
/** The trigger's own dimension set, { service, component }; see powertools-metrics.ts. */
export const TRIGGER_COMPONENT = { component: 'trigger' } as const;

/**
 * The name of every metric the functions write, for `ScheduledJob.metric(name)` and `JobWorker.metric(name)`, for
 * example `job.metric(MetricName.OccurrencesFailed)`; docs/operating.md lists what each counts.
 */
export const MetricName = {
  /** The first claim of an occurrence (attempt 1). */
  OccurrencesStarted: 'OccurrencesStarted',
  /** Occurrences recorded SUCCEEDED (a committed report, adopted or written). */
  OccurrencesSucceeded: 'OccurrencesSucceeded',
  /** Occurrences recorded FAILED: attempts or deadline used up. */
  OccurrencesFailed: 'OccurrencesFailed',
  /** Schedule events for an occurrence that was already claimed: the scheduler's at-least-once delivery at work. */
  DuplicateTriggersSuppressed: 'DuplicateTriggersSuppressed',
  /** Heartbeat extends that failed, for any reason (transient ones are retried). */
  ExtendFailures: 'ExtendFailures',
  /** A worker found its lease taken or gone and stopped without writing. */
  LeasesLost: 'LeasesLost',
  /** Failed attempts released with a later retry. */
  RetriesScheduled: 'RetriesScheduled',
  /** Milliseconds from the claim to the recorded outcome of one attempt. */
  JobDuration: 'JobDuration',
  /** Stuck occurrences the reconciler re-enqueued. */
  OccurrencesRequeued: 'OccurrencesRequeued',
  /** SUCCEEDED occurrences the stream notifier never recorded as announced, announced by the reconciler. */
  ReportsReannounced: 'ReportsReannounced',
  /** Occurrences recorded SKIPPED because they were first recorded after the job's catch-up window. */
  OccurrencesMissed: 'OccurrencesMissed',
  /**
   * Occurrences a worker recorded SKIPPED: another occurrence of the job held its running slot (overlap), or the job
   * was paused; the row's skipReason and the log line say which. Those missed are OccurrencesMissed (the trigger's).
   */
  OccurrencesSkipped: 'OccurrencesSkipped',
  /**
   * Occurrences due and not started within their job's lateAfter, counted by each reconciler run (a gauge: read its
   * Maximum), with the worker's dimensions: rows still waiting, and fire times of a disabled schedule with no row.
   */
  OccurrencesLate: 'OccurrencesLate',
  /** Occurrences recorded BUFFERED to wait for the job's running slot. */
  OccurrencesBuffered: 'OccurrencesBuffered',
  /** Running occurrences cancelled by a later one (overlap cancelOther). */
  OccurrencesCancelled: 'OccurrencesCancelled',
  /** The job paused itself after pauseAfterFailures FAILED occurrences in a row. */
  JobsPausedOnFailures: 'JobsPausedOnFailures',
  /** Run-time schedules whose projection lagged past its grace (a writer crashed), re-projected by the reconciler. */
  SchedulesSyncRepaired: 'SchedulesSyncRepaired',
  /** Run-time schedules missing in Scheduler for a live registry row (deleted behind its back), recreated. */
  SchedulesRecreated: 'SchedulesRecreated',
  /** Run-time schedules whose state, hand edit, template or unfinished delete differed from the row, put right. */
  SchedulesDriftCorrected: 'SchedulesDriftCorrected',
  /** Schedules in a job's group without a registry row (nobody registered them), removed. */
  OrphanSchedulesRemoved: 'OrphanSchedulesRemoved',
} as const;
/** One of the metric names of the `MetricName` object. */
export type MetricName = (typeof MetricName)[keyof typeof MetricName];

export type MetricUnit = 'Count' | 'Milliseconds';

export const METRIC_UNITS: Readonly<Record<MetricName, MetricUnit>> = {
  OccurrencesStarted: 'Count',
  OccurrencesSucceeded: 'Count',
  OccurrencesFailed: 'Count',
  DuplicateTriggersSuppressed: 'Count',
  ExtendFailures: 'Count',
  LeasesLost: 'Count',
  RetriesScheduled: 'Count',
  JobDuration: 'Milliseconds',
  OccurrencesRequeued: 'Count',
  ReportsReannounced: 'Count',
  OccurrencesMissed: 'Count',
  OccurrencesSkipped: 'Count',
  OccurrencesLate: 'Count',
  OccurrencesBuffered: 'Count',
  OccurrencesCancelled: 'Count',
  JobsPausedOnFailures: 'Count',
  SchedulesSyncRepaired: 'Count',
  SchedulesRecreated: 'Count',
  SchedulesDriftCorrected: 'Count',
  OrphanSchedulesRemoved: 'Count',
};

/**
 * The stack-wide dimension set of the workers' failure metrics, { service, component: 'workers' }: the values of
 * {@link STACK_WIDE_WORKER_METRICS} are written with it as well as with { service, worker }, so that one alarm per
 * stack watches every worker (an alarm reading W workers' metrics would bill W alarm metrics). Written only when
 * something fails, so it costs nothing while all is well.
 */
export const WORKERS_COMPONENT = { component: 'workers' } as const;

/** The worker metrics the stack's alarms read, written with {@link WORKERS_COMPONENT} too. */
export const STACK_WIDE_WORKER_METRICS: ReadonlySet<MetricName> = new Set([
  MetricName.OccurrencesFailed,
  MetricName.LeasesLost,
  MetricName.JobsPausedOnFailures,
  MetricName.OccurrencesLate,
]);

/**
 * The worker metrics no alarm reads and every healthy occurrence writes ($0.30 a month each per worker that runs
 * hourly): written with { service, worker } only with the stack's `detailedMetrics` (and per job with `jobMetrics`).
 */
export const DETAILED_WORKER_METRICS: ReadonlySet<MetricName> = new Set([
  MetricName.OccurrencesStarted,
  MetricName.OccurrencesSucceeded,
  MetricName.JobDuration,
]);
