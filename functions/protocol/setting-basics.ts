/**
 * The light half of the job settings: limits, id pattern, ranges and the error and parsing helpers, with no schema
 * library. The trigger and the worker routes need only these; keeping them apart from job-settings.ts keeps that
 * module's zod schemas (built when the module loads) and zod itself out of the trigger's cold start
 * (docs/benchmarks.md, figure 4). job-settings.ts re-exports all of it.
 */
import { ScheduledJobsError } from './errors';

/** Lambda's hard limit on one invocation. */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
/** Time kept back from the job so the worker can record its outcome before Lambda stops it. */
export const OUTCOME_RESERVE_SECONDS = 30;
/** SQS ChangeMessageVisibility cannot hide a message for more than 12 h after it was received. */
export const SQS_MAX_VISIBILITY_SECONDS = 12 * 60 * 60;
/** The job queue keeps messages for the SQS maximum of 14 days. */
export const QUEUE_RETENTION_SECONDS = 14 * 24 * 60 * 60;

/**
 * A job id: 1-64 letters, digits, '-' or '_', starting with a letter or digit. The one pattern for job ids, in the
 * settings, at synth and in the CLI's arguments.
 */
export const JOB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * Between occurrences of one job (Temporal's schedule overlap policies, same meanings): `skip` (the default) records
 * an occurrence due while another runs as SKIPPED; `bufferOne` keeps at most one waiting; `bufferAll` keeps every one
 * and starts them in scheduled-time order; `cancelOther` cancels the running one and starts; `allowAll` runs them
 * side by side.
 */
export const OVERLAP_POLICIES = [
  'skip',
  'bufferOne',
  'bufferAll',
  'cancelOther',
  'allowAll',
] as const satisfies readonly OverlapPolicy[];
// Spelled out rather than derived from OVERLAP_POLICIES, so that the published declarations (runtime, operations,
// testing) name no constant. The list above must satisfy it (a value outside it does not compile); a policy added
// here goes into the list too.
/**
 * An overlap policy by its value (`'skip'`, `'bufferOne'`, ...): the values of the CDK's `OverlapPolicy` enum, as an
 * occurrence's row and the operator actions carry them.
 */
export type OverlapPolicy = 'skip' | 'bufferOne' | 'bufferAll' | 'cancelOther' | 'allowAll';
/** The bounds of catchupWindowSeconds, which the schedule event carries to the trigger too. */
export const CATCHUP_WINDOW_SECONDS_RANGE = {
  min: 60,
  max: QUEUE_RETENTION_SECONDS - SQS_MAX_VISIBILITY_SECONDS,
} as const;
/** The bounds of retry.deadlineSeconds and retentionDays, which the schedule event carries to the trigger too. */
export const DEADLINE_SECONDS_RANGE = { min: 60, max: QUEUE_RETENTION_SECONDS - SQS_MAX_VISIBILITY_SECONDS } as const;
export const RETENTION_DAYS_RANGE = { min: 1, max: 3650 } as const;
/**
 * A job's `lateAfter`: an occurrence not started this long after it was due counts as late (OccurrencesLate). At least
 * a minute (the reconciler runs every few minutes: a shorter threshold could not be told apart), at most 14 days.
 */
export const LATE_AFTER_SECONDS_RANGE = { min: 60, max: 14 * 86_400 } as const;
/**
 * What a job's default `lateAfter` leaves beyond its flexible window: Scheduler may fire anywhere in the window, then
 * the trigger, the queue and a worker's cold start take seconds, and a throttled worker minutes. Five minutes absorbs
 * those without paging anyone, and is still well inside an hourly job's period.
 */
export const LATE_MARGIN_SECONDS = 300;

/** Job settings (or another variable the stack sets) that do not validate: every problem at once, each naming its field. */
export class JobSettingsError extends ScheduledJobsError {
  override readonly name = 'JobSettingsError';

  constructor(readonly problems: readonly string[]) {
    super(`invalid job settings:\n  - ${problems.join('\n  - ')}`);
  }
}

/** The JSON of an environment variable the stack sets; throws JobSettingsError when it is unset or not JSON. */
export function parseJsonVariable(json: string | undefined, source: string): unknown {
  if (json === undefined || json.trim() === '') throw new JobSettingsError([`${source} is not set`]);
  try {
    return JSON.parse(json);
  } catch (e) {
    throw new JobSettingsError([`${source} is not valid JSON: ${(e as Error).message}`]);
  }
}
