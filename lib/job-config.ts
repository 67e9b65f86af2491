/**
 * The user-facing configuration of the scheduled jobs, and its validation at synth.
 *
 * A job's configuration has two halves: its runtime settings (JobSettings, handed to the functions as JSON and
 * validated again there) and its schedule (used only by the stack). Everything is checked here, all problems at once,
 * so a bad value fails `cdk synth` with one message that names every field instead of failing a deployment.
 * Plain TypeScript with zod schemas for the fields: no CDK imports, so it can be tested and reused without
 * synthesizing anything.
 */

import * as z from 'zod/mini';
import {
  catchupWindowSecondsOf,
  issuesAsProblems,
  type JobSettings,
  type JobSettingsInput,
  jobSettingsSchemaKnowing,
  LAMBDA_MAX_TIMEOUT_SECONDS,
  shapeIssues,
  wholeNumber,
} from '../functions/protocol/job-settings';
import { quoteValue } from '../functions/protocol/quote-value';
import { scheduleExpressionProblem } from '../functions/protocol/schedule-expression';
import { LATE_AFTER_SECONDS_RANGE, LATE_MARGIN_SECONDS } from '../functions/protocol/setting-basics';
import { ValidationError } from './errors';

export const DEFAULT_TIME_ZONE = 'UTC';
export const MAX_FLEXIBLE_WINDOW_MINUTES = 1440;
/**
 * What the catch-up window must leave beyond the flexible window. Scheduler may start an occurrence anywhere in its
 * flexible window, and then hands it to the trigger within seconds; a minute more absorbs that hand-over, the
 * trigger's cold start and Scheduler's first few quick retries of a throttled invocation. A delivery later than that
 * is a retry after a real failure, which is what the window is there to catch. A minute is also the settings' own
 * least window (CATCHUP_WINDOW_SECONDS_RANGE), so a job without a flexible window keeps every window it could have.
 */
export const CATCHUP_MARGIN_SECONDS = 60;
export const SCHEDULER_RETRY_LIMITS = {
  maximumRetryAttempts: { min: 0, max: 185, default: 185 },
  maximumEventAgeSeconds: { min: 60, max: 86_400, default: 86_400 },
} as const;

/** A check from a function that says what is wrong with a value, or undefined when nothing is. */
const problemCheck = (problemOf: (value: unknown) => string | undefined) =>
  z.superRefine<unknown>((value, ctx) => {
    const problem = problemOf(value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

/** The default for a field left out or null: the schedule half has always read `null` as "not given". */
const orDefault = <T extends z.ZodMiniType>(schema: T, value: NonNullable<z.output<T>>) =>
  z.pipe(
    z.nullish(schema),
    z.transform((v) => v ?? value),
  );

const { maximumRetryAttempts, maximumEventAgeSeconds } = SCHEDULER_RETRY_LIMITS;
const schedulerRetrySchema = z.object(
  {
    /** Retries of a failed delivery to the trigger function (throttling, service errors). 0..185, default 185. */
    maximumRetryAttempts: orDefault(
      wholeNumber(maximumRetryAttempts.min, maximumRetryAttempts.max),
      maximumRetryAttempts.default,
    ),
    /** How long Scheduler keeps trying to deliver one occurrence. 60..86400 seconds, default 86400. */
    maximumEventAgeSeconds: orDefault(
      wholeNumber(maximumEventAgeSeconds.min, maximumEventAgeSeconds.max),
      maximumEventAgeSeconds.default,
    ),
  },
  { error: (iss) => `must be an object, got ${quoteValue(iss.input)}` },
);

/**
 * The schedule half of a job's configuration, used only by the stack, with its defaults. Not strict: it reads its
 * own fields of the whole configuration, and the settings half rejects any field neither half knows. The fields are
 * checked in this order.
 */
const scheduleSchema = z.object({
  /**
   * An EventBridge Scheduler expression: `cron(min hour day-of-month month day-of-week year)`,
   * `rate(5 minutes)` / `rate(1 hour)`, or the one-time `at(2030-01-31T06:00:00)`.
   */
  schedule: z.optional(z.custom<string>().check(problemCheck(scheduleExpressionProblem))),
  /**
   * The job takes its schedules at run time (one per schedule key, docs/runtime-schedules.md) instead of the one
   * fixed `schedule`: exactly one of the two is given (runtimeScheduleProblems). Default false.
   */
  runtimeSchedules: orDefault(
    z.boolean({ error: (iss) => `must be true or false, got ${quoteValue(iss.input)}` }),
    false,
  ),
  /** IANA time zone the expression is read in. Default 'UTC'. */
  timeZone: orDefault(z.custom<string>().check(problemCheck(timeZoneProblem)), DEFAULT_TIME_ZONE),
  /** Let Scheduler start the occurrence up to this many minutes late to spread load; 0 (default) is off. */
  flexibleWindowMinutes: orDefault(wholeNumber(0, MAX_FLEXIBLE_WINDOW_MINUTES), 0),
  schedulerRetry: orDefault(schedulerRetrySchema, {
    maximumRetryAttempts: maximumRetryAttempts.default,
    maximumEventAgeSeconds: maximumEventAgeSeconds.default,
  }),
  /**
   * false keeps the job's settings deployed (occurrences in flight can finish) but creates no schedule.
   * Default true.
   */
  enabled: orDefault(z.boolean({ error: (iss) => `must be true or false, got ${quoteValue(iss.input)}` }), true),
  description: z.optional(z.custom<string>()),
  /**
   * An occurrence due and not started this long after its time counts as late (OccurrencesLate, the worker's late
   * alarm). Default: the flexible window plus LATE_MARGIN_SECONDS (lateAfterSecondsOf).
   */
  lateAfterSeconds: z.optional(wholeNumber(LATE_AFTER_SECONDS_RANGE.min, LATE_AFTER_SECONDS_RANGE.max)),
});

const SCHEDULE_FIELDS: readonly string[] = Object.keys(scheduleSchema.shape);
/** The runtime settings half: strict, and its unknown-field message lists the schedule fields too. */
const settingsSchema = jobSettingsSchemaKnowing(SCHEDULE_FIELDS);

/** One job as an app writes it: its runtime settings (JobSettingsInput) and its schedule. */
export type ScheduledJobConfig = JobSettingsInput & z.input<typeof scheduleSchema>;

/** One job with every default applied and every value checked. */
export type ResolvedJobConfig = { readonly settings: JobSettings } & Readonly<z.output<typeof scheduleSchema>>;

/**
 * Apply defaults and validate one job; throws one ValidationError listing every problem, each naming `where.field`
 * (for example `addJob(weekly-export).timeoutSeconds`).
 */
export function resolveJobConfig(config: ScheduledJobConfig, where: string): ResolvedJobConfig {
  const problems = resolveProblems(config, where);
  if (problems.problems.length > 0 || problems.job === undefined) throw new ValidationError(problems.problems);
  return problems.job;
}

/**
 * Apply defaults and validate a list of jobs (the CLI's and the local run's view of bin/jobs.ts); throws one
 * ValidationError listing every problem, each naming `jobs[i].field`, duplicate ids included.
 */
export function resolveJobConfigs(configs: readonly ScheduledJobConfig[]): ResolvedJobConfig[] {
  if (!Array.isArray(configs) || configs.length === 0) {
    throw new ValidationError(['jobs: at least one job is needed']);
  }
  const problems: string[] = [];
  const seen = new Map<string, number>();
  const jobs = configs.map((config, i) => {
    const resolved = resolveProblems(config, `jobs[${i}]`);
    problems.push(...resolved.problems);
    const first = seen.get(config.id);
    if (first !== undefined)
      problems.push(`jobs[${i}].id: duplicate job id ${quoteValue(config.id)} (also jobs[${first}])`);
    else seen.set(config.id, i);
    return resolved.job;
  });
  if (problems.length > 0) throw new ValidationError(problems);
  return jobs as ResolvedJobConfig[];
}

function resolveProblems(config: ScheduledJobConfig, where: string): { problems: string[]; job?: ResolvedJobConfig } {
  const settings = settingsSchema.safeParse(settingsPart(config));
  const settingsIssues = settings.success ? [] : settings.error.issues;
  const shape = shapeIssues(settingsIssues);
  if (shape.length > 0) return { problems: issuesAsProblems(shape, where) };
  const problems = issuesAsProblems(settingsIssues, where);
  const schedule = scheduleSchema.safeParse(config);
  if (!schedule.success) problems.push(...issuesAsProblems(schedule.error.issues, where));
  // A lease as long as a whole invocation could outlive the worker that holds it by a full run.
  if (settings.success && settings.data.leaseSeconds >= LAMBDA_MAX_TIMEOUT_SECONDS) {
    problems.push(
      `${where}.leaseSeconds: must be less than ${LAMBDA_MAX_TIMEOUT_SECONDS}, got ${settings.data.leaseSeconds}`,
    );
  }
  problems.push(...runtimeScheduleProblems(config, where));
  if (settings.success && schedule.success) {
    const problem = catchupWindowProblem(settings.data, schedule.data.flexibleWindowMinutes);
    if (problem !== undefined) problems.push(`${where}.catchupWindowSeconds: ${problem}`);
    const late = lateAfterProblem(schedule.data);
    if (late !== undefined) problems.push(`${where}.lateAfterSeconds: ${late}`);
  }
  if (!settings.success || !schedule.success || problems.length > 0) return { problems };
  return { problems, job: { settings: settings.data, ...schedule.data } };
}

/**
 * A job has exactly one of `schedule` (one fixed schedule) and `runtimeSchedules: true` (schedules created at run
 * time), and a job with run-time schedules is not disabled in the app: its template schedule is what the operations
 * and the reconciler find the job by, so it always exists, and pausing is done at run time (the whole job, or a key).
 */
function runtimeScheduleProblems(config: ScheduledJobConfig, where: string): string[] {
  if (typeof config !== 'object' || config === null) return [];
  const fixed = config.schedule !== undefined && config.schedule !== null;
  const keyed = config.runtimeSchedules === true;
  if (fixed && keyed)
    return [
      `${where}.runtimeSchedules: give either schedule (one fixed schedule) or runtimeSchedules: true (schedules ` +
        'created at run time, docs/runtime-schedules.md), not both',
    ];
  if (!fixed && !keyed)
    return [
      `${where}.schedule: give schedule (one fixed schedule, a ScheduleExpression) or runtimeSchedules: true ` +
        '(schedules created at run time, docs/runtime-schedules.md)',
    ];
  if (keyed && config.enabled === false)
    return [
      `${where}.enabled: a job with runtimeSchedules cannot be disabled in the app (its template schedule must exist ` +
        'for its schedules to be managed); pause the job or its schedules at run time (docs/runtime-schedules.md)',
    ];
  return [];
}

/**
 * The rule between the catch-up window (settings half) and the flexible window (schedule half): an occurrence that
 * Scheduler delivers late on purpose must not be recorded as missed. Checked on the window in effect, so a default
 * window (the retry deadline) shorter than the flexible window is reported too.
 */
function catchupWindowProblem(settings: JobSettings, flexibleWindowMinutes: number): string | undefined {
  const window = catchupWindowSecondsOf(settings);
  const least = flexibleWindowMinutes * 60 + CATCHUP_MARGIN_SECONDS;
  if (window >= least) return undefined;
  const given =
    settings.catchupWindowSeconds === undefined
      ? `it is not set, so it is retry.deadlineSeconds (${window})`
      : `got ${window}`;
  return (
    `must be at least flexibleWindowMinutes x 60 (${flexibleWindowMinutes * 60}) + ${CATCHUP_MARGIN_SECONDS} = ${least}, ` +
    `or occurrences Scheduler starts late within the flexible window would be recorded as missed; ${given}`
  );
}

/** A job's lateAfter in seconds: the one it sets, or its flexible window plus LATE_MARGIN_SECONDS. */
export function lateAfterSecondsOf(job: Pick<ResolvedJobConfig, 'lateAfterSeconds' | 'flexibleWindowMinutes'>): number {
  return job.lateAfterSeconds ?? job.flexibleWindowMinutes * 60 + LATE_MARGIN_SECONDS;
}

/**
 * A lateAfter shorter than the flexible window plus a minute would count as late the occurrences Scheduler starts
 * late on purpose, within the window: the alarm would fire on a healthy job.
 */
function lateAfterProblem(schedule: { lateAfterSeconds?: number; flexibleWindowMinutes: number }): string | undefined {
  const least = schedule.flexibleWindowMinutes * 60 + CATCHUP_MARGIN_SECONDS;
  if (schedule.lateAfterSeconds === undefined || schedule.lateAfterSeconds >= least) return undefined;
  return (
    `must be at least flexibleWindowMinutes x 60 (${schedule.flexibleWindowMinutes * 60}) + ${CATCHUP_MARGIN_SECONDS} = ` +
    `${least}, or occurrences Scheduler starts late within the flexible window would count as late; got ${schedule.lateAfterSeconds}`
  );
}

/** The runtime settings half of a job's configuration: what its worker reads (JOB_SETTINGS). */
function settingsPart(config: ScheduledJobConfig): Record<string, unknown> {
  if (typeof config !== 'object' || config === null) return config;
  return Object.fromEntries(Object.entries(config).filter(([key]) => !SCHEDULE_FIELDS.includes(key)));
}

/** Whether the IANA time zone exists, as this Node's ICU data knows it. */
export function timeZoneProblem(timeZone: unknown): string | undefined {
  if (typeof timeZone !== 'string' || timeZone === '')
    return `must be an IANA time zone name, got ${quoteValue(timeZone)}`;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
  } catch {
    return `unknown time zone ${quoteValue(timeZone)}; use an IANA name such as 'Europe/Berlin' or 'UTC'`;
  }
  // Intl ignores case; Scheduler may not, so ask for the canonical spelling.
  if (resolved !== timeZone && resolved.toLowerCase() === timeZone.toLowerCase()) {
    return `spell the time zone as ${quoteValue(resolved)}, got ${quoteValue(timeZone)}`;
  }
  return undefined;
}
