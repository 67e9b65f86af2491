/**
 * One EventBridge Scheduler schedule per enabled job, each invoking the trigger function with its schedule event
 * `{ jobId, scheduledTime, worker, deadlineSeconds, retentionDays, catchupWindowSeconds }`. The scheduled time is
 * Scheduler's nominal `<aws.scheduler.scheduled-time>`, the same on every redelivery, which is what makes it the
 * occurrence key.
 *
 * A job that takes its schedules at run time (`runtimeSchedules`) has, in the same place and by the same name, a
 * *template*: the same target, role, dead-letter queue, retry policy and time window, but DISABLED and never due,
 * its input the schedule event plus `keyedScheduleGroup`, the name of the job's own schedule group, where the
 * registry's projection creates one schedule per key by copying the template (docs/runtime-schedules.md).
 */
import { Duration, type RemovalPolicy, TimeZone } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import {
  type CfnSchedule,
  ContextAttribute,
  Schedule,
  ScheduleExpression,
  ScheduleGroup,
  ScheduleTargetInput,
  TimeWindow,
} from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { catchupWindowSecondsOf } from '../functions/protocol/job-settings';
import {
  JOB_METRICS_FIELD,
  OVERLAP_FIELD,
  type ScheduleEvent,
  TEMPLATE_GROUP_FIELD,
} from '../functions/protocol/schedule-event';
import type { OverlapPolicy } from '../functions/protocol/setting-basics';
import { lateAfterSecondsOf, type ResolvedJobConfig } from './job-config';
import { KeyedTriggerTarget } from './keyed-trigger-target';
import { keepLogicalId } from './logical-ids';
import { secureQueue } from './secure-queue';

/** The worker a schedule's events go to: its id, and its route (the queue and stuck threshold, tokens at synth). */
export interface ScheduleWorker {
  readonly workerId: string;
  readonly queueUrl: string;
  /** A Lazy number: a shared worker's threshold grows with the jobs added to it later. */
  readonly stuckAfterSeconds: number;
}

/** A job's schedule as the worker's pause switch needs it: the schedule, and the role its target is invoked with. */
export interface JobSchedule {
  readonly scheduleArn: string;
  /** UpdateSchedule passes this role to Scheduler again (iam:PassRole). */
  readonly targetRoleArn: string;
}

/** The schedules of a job that takes them at run time: its template (JobSchedule) and the group of its keys. */
export interface KeyedJobSchedule extends JobSchedule {
  /** The job's own group, where each of its keys has a schedule; the template's input names it. */
  readonly group: ScheduleGroup;
}

/**
 * The template's expression: 1 January 2199 at 00:00 UTC, the last year a Scheduler cron expression takes. DISABLED
 * as well, so it never fires; the expression only keeps it from firing if someone enables it by hand.
 */
export const KEYED_TEMPLATE_EXPRESSION = 'cron(0 0 1 1 ? 2199)';

/** The template's input: the schedule event of the job, and the group its keys' schedules are in. */
export type KeyedTemplateEvent = DeployedScheduleInput & { readonly [TEMPLATE_GROUP_FIELD]: string };

/** A deployed schedule's input: the schedule event, and the job's overlap policy for operators to read. */
export type DeployedScheduleInput = ScheduleEvent & {
  readonly [OVERLAP_FIELD]: OverlapPolicy;
  /** Present only for a job with per-job metrics: the trigger writes its metrics with { jobId } too. */
  readonly [JOB_METRICS_FIELD]?: true;
};

export interface JobSchedulesProps {
  readonly trigger: lambda.IFunction;
}

export class JobSchedules extends Construct {
  readonly group: ScheduleGroup;
  /** Occurrences Scheduler could not hand to the trigger within their retry policy. Standard queue, as Scheduler requires. */
  readonly deadLetterQueue: sqs.Queue;
  private readonly trigger: lambda.IFunction;
  private readonly byJob = new Map<string, Schedule>();
  private readonly keyedByJob = new Map<string, KeyedJobSchedule>();

  constructor(scope: Construct, id: string, props: JobSchedulesProps) {
    super(scope, id);
    this.group = new ScheduleGroup(this, 'Group');
    this.deadLetterQueue = secureQueue(this, 'DeadLetterQueue');
    this.trigger = props.trigger;
  }

  /** Keyed by job id; enabled jobs only, a run-time schedules job's template included. */
  get schedules(): ReadonlyMap<string, Schedule> {
    return this.byJob;
  }

  /** The jobs that take their schedules at run time, by job id. */
  get keyedJobs(): ReadonlyMap<string, KeyedJobSchedule> {
    return this.keyedByJob;
  }

  /**
   * The schedule of one enabled job. Its input is the schedule event (functions/protocol/schedule-event.ts): the
   * key, the worker, and the three settings the trigger needs, so the trigger reads no settings of its own.
   */
  addJob(job: ResolvedJobConfig, worker: ScheduleWorker, scope?: Construct): JobSchedule | undefined {
    if (!job.enabled || job.schedule === undefined) return undefined;
    const schedule = this.jobSchedule(job, scope, {
      expression: ScheduleExpression.expression(job.schedule, TimeZone.of(job.timeZone)),
      enabled: true,
      input: this.scheduleEvent(job, worker),
    });
    return { scheduleArn: schedule.scheduleArn, targetRoleArn: targetRoleArnOf(schedule) };
  }

  /**
   * A job that takes its schedules at run time: its own schedule group, and its template in the shared group.
   * `removalPolicy`: the group's, the registry table's (ScheduledJobs' removalPolicy), so that the schedules and the
   * rows they are projected from are kept or deleted together (deleting a group deletes its schedules).
   */
  addKeyedJob(
    job: ResolvedJobConfig,
    worker: ScheduleWorker,
    removalPolicy: RemovalPolicy,
    scope?: Construct,
  ): KeyedJobSchedule {
    const jobId = job.settings.id;
    // A generated name: up to 64 characters from the construct path, unique in the stack; the template's input and
    // the grants name it, nobody has to type it.
    const group = new ScheduleGroup(this, `Keyed-${jobId}`, { removalPolicy });
    const input: KeyedTemplateEvent = {
      ...this.scheduleEvent(job, worker),
      [TEMPLATE_GROUP_FIELD]: group.scheduleGroupName,
    };
    // The template's target, which every key's schedule copies: the job's trigger alias and role, nobody else's.
    const target = new KeyedTriggerTarget(this, `KeyedTarget-${jobId}`, {
      trigger: this.trigger,
      jobId,
      groupName: group.scheduleGroupName,
    });
    const template = this.jobSchedule(
      job,
      scope,
      {
        expression: ScheduleExpression.expression(KEYED_TEMPLATE_EXPRESSION, TimeZone.ETC_UTC),
        enabled: false,
        input,
      },
      target,
    );
    const keyed = { scheduleArn: template.scheduleArn, targetRoleArn: targetRoleArnOf(template), group };
    this.keyedByJob.set(jobId, keyed);
    return keyed;
  }

  /** The schedule event, and the job's overlap policy for the operators who read the schedule (OVERLAP_FIELD). */
  private scheduleEvent(job: ResolvedJobConfig, worker: ScheduleWorker): DeployedScheduleInput {
    const { settings } = job;
    return {
      jobId: settings.id,
      scheduledTime: ContextAttribute.scheduledTime,
      worker: worker.workerId,
      // The worker's route: the trigger sends there and records it on the row, for the reconciler; no function is
      // told every worker's (protocol/worker-routes.ts).
      queueUrl: worker.queueUrl,
      stuckAfterSeconds: worker.stuckAfterSeconds,
      deadlineSeconds: settings.retry.deadlineSeconds,
      retentionDays: settings.retentionDays,
      catchupWindowSeconds: catchupWindowSecondsOf(settings),
      lateAfterSeconds: lateAfterSecondsOf(job),
      [OVERLAP_FIELD]: settings.overlap,
      ...(settings.jobMetrics ? { [JOB_METRICS_FIELD]: true as const } : {}),
    };
  }

  /**
   * The job's schedule, under `scope` (the job's ScheduledJob, so that Tags.of(job) reaches it) at the logical ID it
   * had under this construct: a schedule has a fixed name, and a new ID would replace it, which the name forbids.
   * `keyed`: the target of a run-time-schedule job's template; else the trigger itself, with the stack's role.
   */
  private jobSchedule(
    job: ResolvedJobConfig,
    scope: Construct | undefined,
    what: { expression: ScheduleExpression; enabled: boolean; input: DeployedScheduleInput },
    keyed?: KeyedTriggerTarget,
  ): Schedule {
    const { settings } = job;
    const formerId = `Schedule-${settings.id}`;
    const schedule = new Schedule(scope ?? this, scope === undefined ? formerId : 'Schedule', {
      // Named by the job, so that `occurrences` finds a job's schedule (and its input) by the job id.
      scheduleName: settings.id,
      scheduleGroup: this.group,
      schedule: what.expression,
      enabled: what.enabled,
      timeWindow:
        job.flexibleWindowMinutes > 0
          ? TimeWindow.flexible(Duration.minutes(job.flexibleWindowMinutes))
          : TimeWindow.off(),
      description:
        job.description ??
        (job.runtimeSchedules
          ? `Template of the run-time schedules of job ${settings.id} (never fires)`
          : `Starts one occurrence of job ${settings.id}`),
      target: new LambdaInvoke(keyed?.alias ?? this.trigger, {
        ...(keyed === undefined ? {} : { role: keyed.role }),
        input: ScheduleTargetInput.fromObject(what.input),
        retryAttempts: job.schedulerRetry.maximumRetryAttempts,
        maxEventAge: Duration.seconds(job.schedulerRetry.maximumEventAgeSeconds),
        deadLetterQueue: this.deadLetterQueue,
      }),
    });
    if (scope !== undefined) keepLogicalId(schedule.node.defaultChild as CfnSchedule, this, formerId, 'Resource');
    this.byJob.set(settings.id, schedule);
    return schedule;
  }
}

/** The role aws-scheduler-targets made for the target (one per stack and target): the Schedule does not expose it. */
function targetRoleArnOf(schedule: Schedule): string {
  const target = (schedule.node.defaultChild as CfnSchedule).target as CfnSchedule.TargetProperty;
  return target.roleArn;
}
