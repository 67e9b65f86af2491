/**
 * Plays EventBridge Scheduler for the local run: works out each job's fire times from its expression and time zone
 * (functions/protocol/schedule-times.ts) and invokes the trigger with the input the deployed schedule sends (the schedule event:
 * `{ jobId, scheduledTime: <aws.scheduler.scheduled-time>, worker, deadlineSeconds, retentionDays }`). Scheduler invokes Lambda asynchronously, and Lambda
 * retries a failed asynchronous invocation (twice, as the stack sets it); so does this, without Lambda's minutes of delay.
 */
import type { TriggerResult } from '../../functions/protocol/record-occurrence';
import type { ScheduleEvent } from '../../functions/protocol/schedule-event';
import { previousScheduleTimes, scheduleTimes } from '../../functions/protocol/schedule-times';
import { TRIGGER_ASYNC_RETRY_ATTEMPTS } from '../../functions/protocol/worker-limits';
import type { ResolvedJobConfig } from '../../lib/job-config';

export interface ScheduledFire {
  readonly jobId: string;
  /** Whole seconds, UTC, as Scheduler's `<aws.scheduler.scheduled-time>`. */
  readonly scheduledTime: string;
}

export interface FirePlan {
  /** Fire the occurrences at or after this time; without it, the `count` most recent ones before `now`. */
  readonly from?: Date;
  readonly count: number;
  readonly now: Date;
}

/** The occurrences to fire for each job, oldest first. */
export function planFires(jobs: readonly ResolvedJobConfig[], plan: FirePlan): ScheduledFire[] {
  const fires: ScheduledFire[] = [];
  for (const job of jobs) {
    const spec = { schedule: job.schedule, timeZone: job.timeZone };
    const times =
      plan.from === undefined
        ? previousScheduleTimes(spec, plan.now, plan.count)
        : take(scheduleTimes(spec, plan.from), plan.count);
    for (const t of times) fires.push({ jobId: job.settings.id, scheduledTime: t.toISOString().replace('.000Z', 'Z') });
  }
  return fires.sort((a, b) => a.scheduledTime.localeCompare(b.scheduledTime) || a.jobId.localeCompare(b.jobId));
}

/** Lambda's asynchronous invocation: the first try and its retries. */
export const ASYNC_INVOKE_ATTEMPTS = 1 + TRIGGER_ASYNC_RETRY_ATTEMPTS;

export type FireOutcome =
  | { readonly ok: true; readonly result: TriggerResult; readonly attempts: number }
  | { readonly ok: false; readonly error: string; readonly attempts: number };

/** Invokes the trigger with one schedule event as Lambda's asynchronous invocation would. */
export async function fire(
  trigger: (event: unknown) => Promise<TriggerResult>,
  event: ScheduleEvent,
): Promise<FireOutcome> {
  let error = '';
  for (let attempt = 1; attempt <= ASYNC_INVOKE_ATTEMPTS; attempt++) {
    try {
      // The same object the stack's ScheduleTargetInput produces.
      return {
        ok: true,
        result: await trigger(event),
        attempts: attempt,
      };
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
  }
  // Deployed, the event would now wait in the trigger's DLQ.
  return { ok: false, error, attempts: ASYNC_INVOKE_ATTEMPTS };
}

function take<T>(items: Iterable<T>, count: number): T[] {
  const out: T[] = [];
  if (count <= 0) return out;
  for (const item of items) {
    out.push(item);
    if (out.length === count) break;
  }
  return out;
}
