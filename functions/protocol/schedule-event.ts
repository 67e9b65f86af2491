/**
 * The schedule's input to the trigger: the occurrence key, the worker whose queue carries it, and the two settings
 * the trigger needs to record it (the retry deadline and the retention). Each schedule carries its own job's values,
 * so the trigger reads no settings of its own and a stack's number of jobs is not bounded by what fits in its
 * environment. Checked with a zod schema, every wrong field reported at once; unknown extra fields are allowed (the
 * format may grow, and a schedule deployed after a trigger may carry more).
 */
import * as z from 'zod/mini';
import { scheduledTimeSchema } from './envelope';
import { InvalidInputError } from './errors';
import { describe, type OccurrenceKey } from './occurrence';
import { quoteValue } from './quote-value';
import {
  CATCHUP_WINDOW_SECONDS_RANGE,
  DEADLINE_SECONDS_RANGE,
  JOB_ID_PATTERN,
  RETENTION_DAYS_RANGE,
} from './setting-basics';

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
}

export type ScheduleEvent = OccurrenceKey & JobRoute;

/** The schedule event of one occurrence of a job: what a schedule's input becomes at its scheduled time. */
export function scheduleEventOf(key: OccurrenceKey, route: JobRoute): ScheduleEvent {
  return {
    jobId: key.jobId,
    scheduledTime: key.scheduledTime,
    worker: route.worker,
    deadlineSeconds: route.deadlineSeconds,
    retentionDays: route.retentionDays,
    ...(route.catchupWindowSeconds === undefined ? {} : { catchupWindowSeconds: route.catchupWindowSeconds }),
  };
}

const notAnObject = (iss: { input: unknown }) => `must be a JSON object, got ${describe(iss.input)}`;

const idField = (field: string) =>
  z.string({ error: (iss) => `${field} must be a job or worker id, got ${describe(iss.input)}` }).check(
    z.regex(JOB_ID_PATTERN, {
      error: (iss) =>
        `${field} must be 1-64 letters, digits, '-' or '_' starting with a letter or digit, got ${quoteValue(iss.input)}`,
    }),
  );

const wholeField = (field: string, range: { min: number; max: number }) => {
  const error = (iss: { input?: unknown }) =>
    `${field} must be a whole number from ${range.min} to ${range.max}, got ${describe(iss.input)}`;
  return z.number({ error }).check(z.refine((n) => Number.isInteger(n) && n >= range.min && n <= range.max, { error }));
};

function scheduleEventSchema(knownWorkers: ReadonlySet<string>) {
  return z.object(
    {
      jobId: idField('jobId'),
      scheduledTime: scheduledTimeSchema,
      worker: idField('worker').check(
        z.refine((worker: string) => knownWorkers.has(worker), {
          error: (iss) =>
            `worker ${quoteValue(iss.input)} is not one of the trigger's workers (it has: ${[...knownWorkers].join(', ') || 'none'})`,
        }),
      ),
      deadlineSeconds: wholeField('deadlineSeconds', DEADLINE_SECONDS_RANGE),
      retentionDays: wholeField('retentionDays', RETENTION_DAYS_RANGE),
      catchupWindowSeconds: z.optional(wholeField('catchupWindowSeconds', CATCHUP_WINDOW_SECONDS_RANGE)),
    },
    { error: notAnObject },
  );
}

/** Validate a schedule event; throws InvalidInputError naming each wrong field. */
export function decodeScheduleEvent(event: unknown, knownWorkers: ReadonlySet<string>): ScheduleEvent {
  const result = scheduleEventSchema(knownWorkers).safeParse(event);
  if (!result.success)
    throw new InvalidInputError(
      'schedule event',
      result.error.issues.map((issue) => issue.message),
    );
  const { jobId, scheduledTime, worker, deadlineSeconds, retentionDays, catchupWindowSeconds } = result.data;
  // Rows must outlive the deadline (the settings' own rule): a row deleted while its retries wait would be recorded
  // again by a late trigger and run twice.
  if (retentionDays * 86_400 <= deadlineSeconds)
    throw new InvalidInputError('schedule event', [
      `retentionDays (${retentionDays}) must outlive deadlineSeconds (${deadlineSeconds})`,
    ]);
  return {
    jobId,
    scheduledTime,
    worker,
    deadlineSeconds,
    retentionDays,
    ...(catchupWindowSeconds === undefined ? {} : { catchupWindowSeconds }),
  };
}
