/**
 * Plays EventBridge Scheduler for the local pipeline (the integration tests, the benchmarks): invokes the trigger with the input the deployed schedule sends (the schedule event:
 * `{ jobId, scheduledTime: <aws.scheduler.scheduled-time>, worker, deadlineSeconds, retentionDays }`). Scheduler invokes Lambda asynchronously, and Lambda
 * retries a failed asynchronous invocation (twice, as the stack sets it); so does this, without Lambda's minutes of delay.
 */
import type { TriggerResult } from '../../functions/protocol/record-occurrence';
import type { ScheduleEvent } from '../../functions/protocol/schedule-event';
import { TRIGGER_ASYNC_RETRY_ATTEMPTS } from '../../functions/protocol/worker-limits';

export interface ScheduledFire {
  readonly jobId: string;
  /** Whole seconds, UTC, as Scheduler's `<aws.scheduler.scheduled-time>`. */
  readonly scheduledTime: string;
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
