/**
 * The schedule's input to the trigger: the occurrence key, the worker whose queue carries it, and the two settings
 * the trigger needs to record it (the retry deadline and the retention). Each schedule carries its own job's values,
 * so the trigger reads no settings of its own and a stack's number of jobs is not bounded by what fits in its
 * environment. Checked field by field (field-checks.ts), every wrong field reported at once; unknown extra fields are
 * allowed (the format may grow, and a schedule deployed after a trigger may carry more).
 */
import { InvalidInputError } from './errors';
import { checkAll, id, jsonObject, knownOne, optional, wholeNumber } from './field-checks';
import { normaliseScheduledTime, type OccurrenceKey } from './occurrence';
import { type JsonValue, scheduleInput, scheduleKey } from './schedule-key';
import {
  CATCHUP_WINDOW_SECONDS_RANGE,
  DEADLINE_SECONDS_RANGE,
  LATE_AFTER_SECONDS_RANGE,
  RETENTION_DAYS_RANGE,
} from './setting-basics';
import { checkRouteFields } from './worker-routes';

/** What the writers other than the worker (trigger, backfill, retry) need to know of one job. */
export interface JobRoute {
  /** The id of the worker (the group of jobs with one function and one queue) that runs the job. */
  readonly worker: string;
  /** No attempt starts later than this long after the scheduled time (the job's retry.deadlineSeconds). */
  readonly deadlineSeconds: number;
  /** The row is deleted by TTL this long after its scheduled time (the job's retentionDays). */
  readonly retentionDays: number;
  /**
   * An occurrence first recorded later than this after its scheduled time is SKIPPED as missed (the job's
   * catchupWindowSeconds). Absent (schedules deployed before the catch-up window existed): deadlineSeconds.
   */
  readonly catchupWindowSeconds?: number;
  /**
   * An occurrence not started this long after it was due counts as late (the job's lateAfter; the reconciler's
   * OccurrencesLate). Absent (schedules deployed before it existed): its occurrences are never judged late.
   */
  readonly lateAfterSeconds?: number;
  /**
   * The worker's job queue, where the trigger sends the occurrence (and records it on the row, for the reconciler).
   * Absent (schedules deployed before routes were carried): the trigger looks the route up (worker-routes.ts).
   */
  readonly queueUrl?: string;
  /** The worker's stuck threshold (worker-limits.ts), recorded on the row beside queueUrl; present with it. */
  readonly stuckAfterSeconds?: number;
}

/**
 * The event of one schedule: the occurrence's key (with its schedule key for a schedule created at run time), the
 * job's route, and that schedule's input.
 */
export type ScheduleEvent = OccurrenceKey & JobRoute & { readonly input?: JsonValue };

/**
 * The field that marks the *template* of a job that takes schedules at run time: its own schedule, kept DISABLED,
 * whose input each of the job's schedules copies (adding scheduleKey and input). The template never starts an
 * occurrence: an event with this field and no scheduleKey is rejected.
 */
export const TEMPLATE_GROUP_FIELD = 'keyedScheduleGroup';

/**
 * The field of a deployed schedule's input that names its job's overlap policy, for operators to read (describe, the
 * console). Nothing acts on it: the trigger ignores it, and the worker applies the policy of its own settings.
 */
export const OVERLAP_FIELD = 'overlap';

/**
 * The field of a deployed schedule's input, present (true) only for a job that opted in to per-job metrics
 * (`jobMetrics`): the trigger then also writes its metrics with the dimensions { service, jobId }. Read by the trigger
 * handler alone, for its metrics; the protocol ignores it.
 */
export const JOB_METRICS_FIELD = 'jobMetrics';

/** The schedule event of one occurrence of a job: what a schedule's input becomes at its scheduled time. */
export function scheduleEventOf(key: OccurrenceKey, route: JobRoute): ScheduleEvent {
  return {
    jobId: key.jobId,
    ...(key.scheduleKey === undefined ? {} : { scheduleKey: key.scheduleKey }),
    scheduledTime: key.scheduledTime,
    worker: route.worker,
    deadlineSeconds: route.deadlineSeconds,
    retentionDays: route.retentionDays,
    ...(route.catchupWindowSeconds === undefined ? {} : { catchupWindowSeconds: route.catchupWindowSeconds }),
    ...(route.lateAfterSeconds === undefined ? {} : { lateAfterSeconds: route.lateAfterSeconds }),
    ...(route.queueUrl === undefined || route.stuckAfterSeconds === undefined
      ? {}
      : { queueUrl: route.queueUrl, stuckAfterSeconds: route.stuckAfterSeconds }),
  };
}

/**
 * Validate a schedule event; throws InvalidInputError naming each wrong field. `knownWorkers`: the workers the caller
 * can send to, when it knows them (an operator's queues); the trigger does not (the event names the queue).
 */
export function decodeScheduleEvent(event: unknown, knownWorkers?: ReadonlySet<string>): ScheduleEvent {
  const object = jsonObject(event);
  if (!object.ok) throw new InvalidInputError('schedule event', [object.error]);
  const e = object.value;
  const checked = checkAll({
    jobId: id('jobId', e.jobId),
    scheduledTime: normaliseScheduledTime(e.scheduledTime),
    worker:
      knownWorkers === undefined || e.queueUrl !== undefined
        ? id('worker', e.worker)
        : knownOne('worker', id('worker', e.worker), knownWorkers, "the trigger's workers"),
    deadlineSeconds: wholeNumber('deadlineSeconds', e.deadlineSeconds, DEADLINE_SECONDS_RANGE),
    retentionDays: wholeNumber('retentionDays', e.retentionDays, RETENTION_DAYS_RANGE),
    catchupWindowSeconds: optional(e.catchupWindowSeconds, (v) =>
      wholeNumber('catchupWindowSeconds', v, CATCHUP_WINDOW_SECONDS_RANGE),
    ),
    lateAfterSeconds: optional(e.lateAfterSeconds, (v) => wholeNumber('lateAfterSeconds', v, LATE_AFTER_SECONDS_RANGE)),
    scheduleKey: optional(e.scheduleKey, (v) => scheduleKey('scheduleKey', v)),
    input: optional(e.input, (v) => scheduleInput('input', v)),
  });
  const route = checkRouteFields(e);
  const problems = [...(checked.ok ? [] : checked.problems), ...(route.ok ? [] : route.problems)];
  if (!checked.ok || !route.ok) throw new InvalidInputError('schedule event', problems);
  const { catchupWindowSeconds, lateAfterSeconds, scheduleKey: key, input, ...fields } = checked.value;
  if (e[TEMPLATE_GROUP_FIELD] !== undefined && key === undefined) {
    throw new InvalidInputError('schedule event', [
      `the template schedule of job ${fields.jobId} fired: it must stay DISABLED (its job's schedules are created ` +
        'at run time, each with a scheduleKey)',
    ]);
  }
  // Rows must outlive the deadline (the settings' own rule): a row deleted while its retries wait would be recorded
  // again by a late trigger and run twice.
  if (fields.retentionDays * 86_400 <= fields.deadlineSeconds)
    throw new InvalidInputError('schedule event', [
      `retentionDays (${fields.retentionDays}) must outlive deadlineSeconds (${fields.deadlineSeconds})`,
    ]);
  return {
    ...fields,
    ...route.value,
    ...(key === undefined ? {} : { scheduleKey: key }),
    ...(input === undefined ? {} : { input }),
    ...(catchupWindowSeconds === undefined ? {} : { catchupWindowSeconds }),
    ...(lateAfterSeconds === undefined ? {} : { lateAfterSeconds }),
  };
}
