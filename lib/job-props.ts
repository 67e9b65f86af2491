/**
 * A job's properties as an app writes them (`addJob(jobId, props)`): hand-written interfaces with CDK types
 * (`Duration`, `ScheduleExpression`, `TimeWindow`). job-props-config.ts turns them into the configuration the
 * functions read; nothing of that (zod, seconds) shows in these declarations.
 */
import type { Duration } from 'aws-cdk-lib';
import type { ScheduleExpression, TimeWindow } from 'aws-cdk-lib/aws-scheduler';
import type { JobWorker, JobWorkerOptions } from './job-worker';

declare const refused: unique symbol;

/**
 * A property a job does not take, with the reason in its type, so that the compiler's message says it: nothing is
 * assignable to it (`Type 'number' is not assignable to type 'Refused<"renamed in 1.0 to timeout, a Duration">'`).
 * Also checked in a spread (`{ ...shared, entry }`), which the compiler's excess-property check skips.
 */
export interface Refused<Reason extends string> {
  /** The reason, which nothing can give: the property is refused. */
  readonly [refused]: Reason;
}

/**
 * The properties of 0.1.0 that 1.0 renamed (docs/migration.md), each typed with its replacement, so that an app (or
 * a shared-settings object spread into addJob) that still gives one fails to compile with the new name. (The old
 * `id` is left out: apps keep a job's id beside its props, `{ id, ...props }`; the synth names it.)
 */
export interface RenamedJobProps {
  /** A 0.1.0 name, refused. @deprecated renamed to `timeout`, a Duration */
  readonly timeoutSeconds?: Refused<'renamed in 1.0 to timeout, a Duration'>;
  /** A 0.1.0 name, refused. @deprecated renamed to `leaseDuration`, a Duration */
  readonly leaseSeconds?: Refused<'renamed in 1.0 to leaseDuration, a Duration'>;
  /** A 0.1.0 name, refused. @deprecated renamed to `heartbeatInterval`, a Duration */
  readonly heartbeatSeconds?: Refused<'renamed in 1.0 to heartbeatInterval, a Duration'>;
  /** A 0.1.0 name, refused. @deprecated renamed to `leaseSafetyMargin`, a Duration */
  readonly leaseSafetyMarginSeconds?: Refused<'renamed in 1.0 to leaseSafetyMargin, a Duration'>;
  /** A 0.1.0 name, refused. @deprecated renamed to `retention`, a Duration */
  readonly retentionDays?: Refused<'renamed in 1.0 to retention, a Duration'>;
  /** A 0.1.0 name, refused. @deprecated renamed to `catchupWindow`, a Duration */
  readonly catchupWindowSeconds?: Refused<'renamed in 1.0 to catchupWindow, a Duration'>;
  /** A 0.1.0 name, refused. @deprecated renamed to `maxRunTime`, a Duration */
  readonly maxRunSeconds?: Refused<'renamed in 1.0 to maxRunTime, a Duration'>;
  /** A 0.1.0 name, refused. @deprecated renamed to `lateAfter`, a Duration */
  readonly lateAfterSeconds?: Refused<'renamed in 1.0 to lateAfter, a Duration'>;
  /** A 0.1.0 name, refused. @deprecated renamed to `timeWindow`, TimeWindow.flexible(Duration.minutes(n)) */
  readonly flexibleWindowMinutes?: Refused<'renamed in 1.0 to timeWindow, TimeWindow.flexible(Duration.minutes(n))'>;
  /** A 0.1.0 name, refused. @deprecated the time zone is the ScheduleExpression's */
  readonly timeZone?: Refused<"renamed in 1.0: the time zone is the ScheduleExpression's (ScheduleExpression.cron({ ..., timeZone }))">;
}

/**
 * What an occurrence does when an earlier occurrence of the same job is still running (docs/schedule-policies.md).
 */
export enum OverlapPolicy {
  /** The later occurrence is recorded SKIPPED and does not run. */
  SKIP = 'skip',
  /** The later occurrence waits, BUFFERED, and runs when the running one ends; a third one is skipped. */
  BUFFER_ONE = 'bufferOne',
  /** Every later occurrence waits, BUFFERED, and they run one after the other in their scheduled order. */
  BUFFER_ALL = 'bufferAll',
  /** The later occurrence cancels the running one (CANCELLED) and runs once its lease has run out. */
  CANCEL_OTHER = 'cancelOther',
  /** Occurrences run side by side. */
  ALLOW_ALL = 'allowAll',
}

/** How EventBridge Scheduler retries handing an occurrence to the trigger function (throttling, service errors). */
export interface SchedulerRetryOptions {
  /**
   * Retries of a failed delivery, 0 to 185.
   *
   * @default 185
   */
  readonly retryAttempts?: number;
  /**
   * How long Scheduler keeps trying to deliver one occurrence, 1 minute to 24 hours.
   *
   * @default Duration.hours(24)
   */
  readonly maxEventAge?: Duration;
}

/** How a failed attempt of an occurrence is retried by the worker. */
export interface JobRetryOptions {
  /**
   * Claims of one occurrence before it is FAILED (the first run counts), 1 to 100.
   *
   * @default 20
   */
  readonly maxAttempts?: number;
  /**
   * The delay before the first retry; it doubles with each attempt.
   *
   * @default Duration.seconds(4)
   */
  readonly baseDelay?: Duration;
  /**
   * The longest delay between two attempts.
   *
   * @default Duration.minutes(30)
   */
  readonly maxDelay?: Duration;
  /**
   * No attempt starts later than this after the scheduled time; the occurrence is FAILED then.
   *
   * @default Duration.hours(6)
   */
  readonly deadline?: Duration;
  /**
   * The random fraction of each delay, 0 to 0.9: a delay d becomes a value between d × (1 − jitter) and d.
   *
   * @default 0.2
   */
  readonly jitter?: number;
}

/** What every job has, whichever worker runs it. */
export interface JobOptions extends RenamedJobProps {
  /**
   * When the job runs: `ScheduleExpression.cron({ ... })`, `.rate(Duration.hours(1))`, `.at(date)` or
   * `.expression('cron(0 6 * * ? *)', TimeZone.EUROPE_BERLIN)`. The time zone is the expression's.
   *
   * Give either `schedule` (one fixed schedule, deployed with the stack) or `runtimeSchedules: true`, not both.
   *
   * @default none: then `runtimeSchedules` must be true
   */
  readonly schedule?: ScheduleExpression;
  /**
   * The job takes its schedules at run time instead of one fixed `schedule`: the app creates, changes, pauses and
   * deletes one schedule per *schedule key* of its choosing (a customer id, say), each with its own expression, time
   * zone and JSON input, through `scheduled-jobs-stack/operations` (`upsertSchedule`, ...) or the `occurrences` CLI.
   * Grant the app's functions that do so `ScheduledJob.grantManageSchedules`.
   *
   * The job gets a schedule group of its own (the group of its keys' schedules; an account has at most 500 groups)
   * and a *template* schedule in the stack's group, named by the job id, DISABLED and never firing, whose target and
   * settings each key's schedule copies. The stack gets one schedule registry table (the source of truth of every
   * key's schedule; the reconciler repairs a schedule that drifted from its row). Limits: a key is 1 to 128
   * letters, digits and `._:@+=-`; an input is at most 2 KB of JSON; Scheduler's request rate bounds bulk writes.
   * Such a job cannot be `enabled: false`: pause it, or its keys, at run time. See docs/runtime-schedules.md.
   *
   * @default false: the job has the one fixed `schedule`
   */
  readonly runtimeSchedules?: boolean;
  /**
   * The schedule's description.
   *
   * @default 'Starts one occurrence of job <jobId>'
   */
  readonly description?: string;
  /**
   * Whether the job has a schedule. A disabled job keeps its settings deployed, so occurrences in flight finish and
   * `occurrences run` still starts one. Not false with `runtimeSchedules`: such a job is paused at run time.
   *
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * Lets Scheduler start an occurrence up to this much later, to spread load.
   *
   * @default TimeWindow.off()
   */
  readonly timeWindow?: TimeWindow;
  /**
   * How Scheduler retries handing an occurrence to the trigger.
   *
   * @default 185 retries within 24 hours
   */
  readonly schedulerRetry?: SchedulerRetryOptions;
  /**
   * The longest one run (one invocation of the job) may take; the job's signal aborts it then. At most 14 minutes
   * 30 seconds: the worker needs 30 s of Lambda's 15 minutes to record the outcome.
   *
   * @default Duration.minutes(5)
   */
  readonly timeout?: Duration;
  /**
   * How long a claim holds without a heartbeat. A worker that stops extending loses the occurrence after this.
   *
   * @default Duration.minutes(2)
   */
  readonly leaseDuration?: Duration;
  /**
   * How often the worker extends its lease while the job runs; two heartbeats and the safety margin must fit in
   * the lease.
   *
   * @default Duration.seconds(40)
   */
  readonly heartbeatInterval?: Duration;
  /**
   * The worker aborts the job when no extend has been confirmed this long before its lease would run out. It also
   * bounds the clock skew between workers the protocol tolerates.
   *
   * @default Duration.seconds(15)
   */
  readonly leaseSafetyMargin?: Duration;
  /**
   * How long an occurrence's row is kept after its scheduled time (DynamoDB TTL), in whole days.
   *
   * @default Duration.days(90)
   */
  readonly retention?: Duration;
  /**
   * How failed attempts are retried.
   *
   * @default 20 attempts, 4 s doubling to 30 min, none later than 6 h after the scheduled time
   */
  readonly retry?: JobRetryOptions;
  /**
   * What an occurrence does while an earlier one of this job runs.
   *
   * @default OverlapPolicy.SKIP
   */
  readonly overlap?: OverlapPolicy;
  /**
   * An occurrence first recorded later than this after its scheduled time (after an outage, say) is SKIPPED as
   * missed instead of run. It must cover the time window plus a minute.
   *
   * @default the retry deadline (`retry.deadline`)
   */
  readonly catchupWindow?: Duration;
  /**
   * After this many FAILED occurrences in a row the job pauses itself (its schedule is disabled) until an operator
   * resumes it.
   *
   * @default never
   */
  readonly pauseAfterFailures?: number;
  /**
   * Whether the job's metrics are also written per job, with the dimensions `{ service, jobId }`: what `metric()`,
   * `metricFailed()` and the other `metric*()` methods of its ScheduledJob read. Each metric the job writes is then
   * a custom metric of its own at $0.30 a month (about $0.90 a month for a job that runs at least hourly). Without
   * them the job's values count in its worker's metrics (`{ service, worker }`), which the stack's alarms watch.
   *
   * @default the ScheduledJobs' `jobMetrics` (false)
   */
  readonly jobMetrics?: boolean;
  /**
   * An occurrence due and not started this long after its scheduled time (still waiting, or never recorded because
   * its schedule was disabled behind the stack's back) counts as late: the metric `OccurrencesLate` and its worker's
   * late alarm (docs/operating.md, "Late and missed runs"). At least a minute, at least the time window plus a
   * minute, at most 14 days.
   *
   * @default the time window plus 5 minutes
   */
  readonly lateAfter?: Duration;
  /**
   * A resumable job's whole run, over all its invocations (docs/long-jobs.md).
   *
   * @default Duration.hours(6)
   */
  readonly maxRunTime?: Duration;
  /**
   * At most this many occurrences of the job run at once, across all its run-time schedules' keys and its fixed
   * schedule (docs/concurrency.md). An occurrence over the cap is recorded WAITING (it neither fails nor skips) and
   * starts when a running one ends, in an order fair across `fairnessKey`s. A whole number from 1 to 1000.
   *
   * @default no cap: as many as the worker's concurrency allows
   */
  readonly maxConcurrency?: number;
  /**
   * With `maxConcurrency`: the top-level field of a run-time schedule's input that names its tenant, so that
   * occurrences wait in one line per tenant and tenants take turns, however many keys each has. An input without
   * the field waits in its schedule key's line.
   *
   * @default one line per schedule key (the fixed schedule has a line of its own)
   */
  readonly fairnessKey?: string;
}

/** A job that runs in a worker of its own, built from the job's file. */
export interface JobWithOwnWorkerProps extends JobOptions {
  /** The job's file; it exports `handler = defineJob({ ... })` from `scheduled-jobs-stack/runtime`. */
  readonly entry: string;
  /**
   * How the job's own worker is built, over the ScheduledJobs' `defaultWorkerOptions`.
   *
   * @default the ScheduledJobs' defaultWorkerOptions
   */
  readonly workerOptions?: JobWorkerOptions;
  /** Not with `entry`: a job has either a worker of its own or a shared one. */
  readonly worker?: Refused<'give either worker (from addWorker) or entry (a file exporting defineJob), not both'>;
}

/** A job that runs in a worker shared with other jobs (`addWorker`). */
export interface JobInSharedWorkerProps extends JobOptions {
  /** The worker that runs the job; its entry file exports `defineWorker({ jobs: { [jobId]: ... } })`. */
  readonly worker: JobWorker;
  /** Not with `worker`. */
  readonly entry?: Refused<'give either worker (from addWorker) or entry (a file exporting defineJob), not both'>;
  /** Not with `worker`: a shared worker is configured by `addWorker`. */
  readonly workerOptions?: Refused<"not with worker: a shared worker's options are addWorker's">;
}

/** One job: its schedule and settings, and either its own worker (`entry`) or a shared one (`worker`). */
export type JobProps = JobWithOwnWorkerProps | JobInSharedWorkerProps;
