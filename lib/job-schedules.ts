/**
 * One EventBridge Scheduler schedule per enabled job, each invoking the trigger function with its schedule event
 * `{ jobId, scheduledTime, worker, deadlineSeconds, retentionDays, catchupWindowSeconds }`. The scheduled time is
 * Scheduler's nominal `<aws.scheduler.scheduled-time>`, the same on every redelivery, which is what makes it the
 * occurrence key.
 */
import { Duration, TimeZone } from 'aws-cdk-lib';
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
import type { ScheduleEvent } from '../functions/protocol/schedule-event';
import type { ResolvedJobConfig } from './job-config';
import { secureQueue } from './secure-queue';

/** A job's schedule as the worker's pause switch needs it: the schedule, and the role its target is invoked with. */
export interface JobSchedule {
  readonly scheduleArn: string;
  /** UpdateSchedule passes this role to Scheduler again (iam:PassRole). */
  readonly targetRoleArn: string;
}

export interface JobSchedulesProps {
  readonly trigger: lambda.IFunction;
}

export class JobSchedules extends Construct {
  readonly group: ScheduleGroup;
  /** Occurrences Scheduler could not hand to the trigger within their retry policy. Standard queue, as Scheduler requires. */
  readonly deadLetterQueue: sqs.Queue;
  private readonly trigger: lambda.IFunction;
  private readonly byJob = new Map<string, Schedule>();

  constructor(scope: Construct, id: string, props: JobSchedulesProps) {
    super(scope, id);
    this.group = new ScheduleGroup(this, 'Group');
    this.deadLetterQueue = secureQueue(this, 'DeadLetterQueue');
    this.trigger = props.trigger;
  }

  /** Keyed by job id; enabled jobs only. */
  get schedules(): ReadonlyMap<string, Schedule> {
    return this.byJob;
  }

  /**
   * The schedule of one enabled job. Its input is the schedule event (functions/protocol/schedule-event.ts): the
   * key, the worker, and the three settings the trigger needs, so the trigger reads no settings of its own.
   */
  addJob(job: ResolvedJobConfig, worker: string): JobSchedule | undefined {
    if (!job.enabled) return undefined;
    const { settings } = job;
    const input: ScheduleEvent = {
      jobId: settings.id,
      scheduledTime: ContextAttribute.scheduledTime,
      worker,
      deadlineSeconds: settings.retry.deadlineSeconds,
      retentionDays: settings.retentionDays,
      catchupWindowSeconds: catchupWindowSecondsOf(settings),
    };
    const schedule = new Schedule(this, `Schedule-${settings.id}`, {
      // Named by the job, so that `occurrences` finds a job's schedule (and its input) by the job id.
      scheduleName: settings.id,
      scheduleGroup: this.group,
      schedule: ScheduleExpression.expression(job.schedule, TimeZone.of(job.timeZone)),
      timeWindow:
        job.flexibleWindowMinutes > 0
          ? TimeWindow.flexible(Duration.minutes(job.flexibleWindowMinutes))
          : TimeWindow.off(),
      description: job.description ?? `Starts one occurrence of job ${settings.id}`,
      target: new LambdaInvoke(this.trigger, {
        input: ScheduleTargetInput.fromObject(input),
        retryAttempts: job.schedulerRetry.maximumRetryAttempts,
        maxEventAge: Duration.seconds(job.schedulerRetry.maximumEventAgeSeconds),
        deadLetterQueue: this.deadLetterQueue,
      }),
    });
    this.byJob.set(settings.id, schedule);
    // The role aws-scheduler-targets made for the target (one per stack and target): the Schedule does not expose it.
    const target = (schedule.node.defaultChild as CfnSchedule).target as CfnSchedule.TargetProperty;
    return { scheduleArn: schedule.scheduleArn, targetRoleArn: target.roleArn };
  }
}
