/**
 * One EventBridge Scheduler schedule per enabled job, each invoking the trigger function with the occurrence key
 * `{ jobId, scheduledTime }`. The scheduled time is Scheduler's nominal `<aws.scheduler.scheduled-time>`, the same on
 * every redelivery, which is what makes it the occurrence key.
 */
import { Duration, TimeZone } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import {
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
import type { OccurrenceKey } from '../functions/protocol/occurrence';
import type { ResolvedJobConfig } from './job-config';
import { secureQueue } from './secure-queue';

export interface JobSchedulesProps {
  readonly jobs: readonly ResolvedJobConfig[];
  readonly trigger: lambda.IFunction;
}

export class JobSchedules extends Construct {
  readonly group: ScheduleGroup;
  /** Occurrences Scheduler could not hand to the trigger within their retry policy. Standard queue, as Scheduler requires. */
  readonly deadLetterQueue: sqs.Queue;
  /** Keyed by job id; enabled jobs only. */
  readonly schedules: ReadonlyMap<string, Schedule>;

  constructor(scope: Construct, id: string, props: JobSchedulesProps) {
    super(scope, id);
    this.group = new ScheduleGroup(this, 'Group');
    this.deadLetterQueue = secureQueue(this, 'DeadLetterQueue');

    const schedules = new Map<string, Schedule>();
    for (const job of props.jobs.filter((j) => j.enabled)) {
      const input: OccurrenceKey = { jobId: job.settings.id, scheduledTime: ContextAttribute.scheduledTime };
      const schedule = new Schedule(this, `Schedule-${job.settings.id}`, {
        scheduleGroup: this.group,
        schedule: ScheduleExpression.expression(job.schedule, TimeZone.of(job.timeZone)),
        timeWindow:
          job.flexibleWindowMinutes > 0
            ? TimeWindow.flexible(Duration.minutes(job.flexibleWindowMinutes))
            : TimeWindow.off(),
        description: job.description ?? `Starts one occurrence of job ${job.settings.id}`,
        target: new LambdaInvoke(props.trigger, {
          input: ScheduleTargetInput.fromObject(input),
          retryAttempts: job.schedulerRetry.maximumRetryAttempts,
          maxEventAge: Duration.seconds(job.schedulerRetry.maximumEventAgeSeconds),
          deadLetterQueue: this.deadLetterQueue,
        }),
      });
      schedules.set(job.settings.id, schedule);
    }
    this.schedules = schedules;
  }
}
