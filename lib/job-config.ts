/**
 * The user-facing configuration of the scheduled jobs, and its validation at synth.
 *
 * A job's configuration has two halves: its runtime settings (JobSettings, handed to the functions as JSON and
 * validated again there) and its schedule (used only by the stack). Everything is checked here, all problems at once,
 * so a bad value fails `cdk synth` with one message that names every field instead of failing a deployment.
 * Plain TypeScript: no CDK imports, so it can be tested and reused without synthesizing anything.
 */
import {
  type JobSettings,
  type JobSettingsInput,
  LAMBDA_MAX_TIMEOUT_SECONDS,
  jobSettingsProblems,
  settingsInputProblems,
  withDefaults,
} from '../functions/protocol/job-settings';
import { VISIBILITY_TO_TIMEOUT_RATIO, type WorkerLimits, workerLimits } from './resource-definitions';

export interface SchedulerRetryConfig {
  /** Retries of a failed delivery to the trigger function (throttling, service errors). 0..185, default 185. */
  readonly maximumRetryAttempts?: number;
  /** How long Scheduler keeps trying to deliver one occurrence. 60..86400 seconds, default 86400. */
  readonly maximumEventAgeSeconds?: number;
}

export type ScheduledJobConfig = JobSettingsInput & {
  /**
   * An EventBridge Scheduler expression: `cron(min hour day-of-month month day-of-week year)`,
   * `rate(5 minutes)` / `rate(1 hour)`, or the one-time `at(2030-01-31T06:00:00)`.
   */
  readonly schedule: string;
  /** IANA time zone the expression is read in. Default 'UTC'. */
  readonly timeZone?: string;
  /** Let Scheduler start the occurrence up to this many minutes late to spread load; 0 (default) is off. */
  readonly flexibleWindowMinutes?: number;
  readonly description?: string;
  /**
   * false keeps the job's settings deployed (occurrences in flight can finish) but creates no schedule.
   * Default true.
   */
  readonly enabled?: boolean;
  readonly schedulerRetry?: SchedulerRetryConfig;
};

/** One job with every default applied and every value checked. */
export interface ResolvedJobConfig {
  readonly settings: JobSettings;
  readonly schedule: string;
  readonly timeZone: string;
  readonly flexibleWindowMinutes: number;
  readonly description?: string;
  readonly enabled: boolean;
  readonly schedulerRetry: Required<SchedulerRetryConfig>;
}

export interface ResolvedJobs {
  readonly jobs: readonly ResolvedJobConfig[];
  /** The settings of every job, enabled or not: the JOB_SETTINGS the functions read. */
  readonly settings: readonly JobSettings[];
  readonly limits: WorkerLimits;
}

export const DEFAULT_TIME_ZONE = 'UTC';
export const MAX_FLEXIBLE_WINDOW_MINUTES = 1440;
export const SCHEDULER_RETRY_LIMITS = {
  maximumRetryAttempts: { min: 0, max: 185, default: 185 },
  maximumEventAgeSeconds: { min: 60, max: 86_400, default: 86_400 },
} as const;
/**
 * Lambda allows 4 KB of environment variables per function; JOB_SETTINGS shares it with the resource names,
 * so keep it well below.
 */
export const MAX_JOB_SETTINGS_JSON_BYTES = 3_000;

export class JobConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid job configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'JobConfigError';
  }
}

/** Apply defaults and validate; throws one JobConfigError listing every problem, each naming `jobs[i].field`. */
export function resolveJobConfigs(configs: readonly ScheduledJobConfig[]): ResolvedJobs {
  const problems: string[] = [];
  if (!Array.isArray(configs) || configs.length === 0) {
    throw new JobConfigError(['jobs: at least one job is needed']);
  }

  const seen = new Map<string, number>();
  const jobs = configs.map((config, i) => {
    const where = `jobs[${i}]`;
    const shape = settingsInputProblems(settingsPart(config), where);
    if (shape.length > 0) {
      problems.push(...shape);
      return undefined;
    }
    const job = resolveOne(config);
    problems.push(...jobSettingsProblems(job.settings, where));
    problems.push(...scheduleProblems(job, where));
    const first = seen.get(job.settings.id);
    if (first !== undefined) {
      problems.push(`${where}.id: duplicate job id ${JSON.stringify(job.settings.id)} (also jobs[${first}])`);
    } else {
      seen.set(job.settings.id, i);
    }
    return job;
  });
  if (problems.length > 0) throw new JobConfigError(problems);

  const resolvedJobs = jobs as ResolvedJobConfig[];
  const settings = resolvedJobs.map((j) => j.settings);
  const limits = workerLimits(settings);
  problems.push(...workerLimitProblems(resolvedJobs, limits));
  const jsonBytes = Buffer.byteLength(JSON.stringify(settings));
  if (jsonBytes > MAX_JOB_SETTINGS_JSON_BYTES) {
    problems.push(`jobs: their settings take ${jsonBytes} bytes as JSON, more than ${MAX_JOB_SETTINGS_JSON_BYTES} ` +
      `that fit in a Lambda environment beside the other variables; split the jobs over several stacks`);
  }
  if (problems.length > 0) throw new JobConfigError(problems);
  return { jobs: resolvedJobs, settings, limits };
}

/** The runtime settings half of a job's configuration: what goes into JOB_SETTINGS. */
function settingsPart(config: ScheduledJobConfig): Record<string, unknown> {
  const { schedule, timeZone, flexibleWindowMinutes, description, enabled, schedulerRetry, ...settingsInput } = config;
  return settingsInput;
}

function resolveOne(config: ScheduledJobConfig): ResolvedJobConfig {
  const { schedule, timeZone, flexibleWindowMinutes, description, enabled, schedulerRetry } = config;
  const limits = SCHEDULER_RETRY_LIMITS;
  return {
    settings: withDefaults(settingsPart(config) as JobSettingsInput),
    schedule,
    timeZone: timeZone ?? DEFAULT_TIME_ZONE,
    flexibleWindowMinutes: flexibleWindowMinutes ?? 0,
    description,
    enabled: enabled ?? true,
    schedulerRetry: {
      maximumRetryAttempts: schedulerRetry?.maximumRetryAttempts ?? limits.maximumRetryAttempts.default,
      maximumEventAgeSeconds: schedulerRetry?.maximumEventAgeSeconds ?? limits.maximumEventAgeSeconds.default,
    },
  };
}

function scheduleProblems(job: ResolvedJobConfig, where: string): string[] {
  const problems: string[] = [];
  const scheduleProblem = scheduleExpressionProblem(job.schedule);
  if (scheduleProblem) problems.push(`${where}.schedule: ${scheduleProblem}`);
  const zoneProblem = timeZoneProblem(job.timeZone);
  if (zoneProblem) problems.push(`${where}.timeZone: ${zoneProblem}`);
  const int = (value: unknown, field: string, min: number, max: number) => {
    if (!(typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max)) {
      problems.push(`${where}.${field}: must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
    }
  };
  int(job.flexibleWindowMinutes, 'flexibleWindowMinutes', 0, MAX_FLEXIBLE_WINDOW_MINUTES);
  const retry = SCHEDULER_RETRY_LIMITS;
  int(job.schedulerRetry.maximumRetryAttempts, 'schedulerRetry.maximumRetryAttempts',
    retry.maximumRetryAttempts.min, retry.maximumRetryAttempts.max);
  int(job.schedulerRetry.maximumEventAgeSeconds, 'schedulerRetry.maximumEventAgeSeconds',
    retry.maximumEventAgeSeconds.min, retry.maximumEventAgeSeconds.max);
  if (job.enabled !== true && job.enabled !== false) {
    problems.push(`${where}.enabled: must be true or false, got ${JSON.stringify(job.enabled)}`);
  }
  return problems;
}

const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const AT = /^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$/;

/**
 * A structural check of a Scheduler expression: it catches the usual slips (five-field Unix cron, `rate(1 minutes)`,
 * a date with a zone suffix) at synth. Scheduler itself still validates the field values at deploy.
 */
export function scheduleExpressionProblem(expression: unknown): string | undefined {
  if (typeof expression !== 'string') return `must be a string, got ${JSON.stringify(expression)}`;
  if (expression.startsWith('cron(')) {
    if (!expression.endsWith(')')) return `cron expression must end with ')', got ${JSON.stringify(expression)}`;
    const fields = expression.slice('cron('.length, -1).trim().split(/\s+/).filter((f) => f !== '');
    if (fields.length !== 6) {
      return `cron needs exactly 6 fields (minutes hours day-of-month month day-of-week year), ` +
        `got ${fields.length} in ${JSON.stringify(expression)}`;
    }
    return undefined;
  }
  if (expression.startsWith('rate(')) {
    const match = RATE.exec(expression);
    if (!match) return `rate must look like 'rate(5 minutes)' with unit minute(s), hour(s) or day(s), got ${JSON.stringify(expression)}`;
    const value = Number(match[1]);
    const unit = match[2];
    if (value < 1) return `rate value must be a positive whole number, got ${JSON.stringify(expression)}`;
    const singular = !unit.endsWith('s');
    if ((value === 1) !== singular) {
      return `rate unit must be singular for 1 and plural otherwise, got ${JSON.stringify(expression)}`;
    }
    return undefined;
  }
  if (expression.startsWith('at(')) {
    const match = AT.exec(expression);
    if (!match) return `at must look like 'at(2030-01-31T06:00:00)' (local time, no zone suffix), got ${JSON.stringify(expression)}`;
    const [year, month, day, hour, minute, second] = match.slice(1).map(Number);
    const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
    const real = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day &&
      hour < 24 && minute < 60 && second < 60;
    if (!real) return `at names a date and time that does not exist: ${JSON.stringify(expression)}`;
    return undefined;
  }
  return `must be a cron(...), rate(...) or at(...) expression, got ${JSON.stringify(expression)}`;
}

/** Whether the IANA time zone exists, as this Node's ICU data knows it. */
export function timeZoneProblem(timeZone: unknown): string | undefined {
  if (typeof timeZone !== 'string' || timeZone === '') return `must be an IANA time zone name, got ${JSON.stringify(timeZone)}`;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
  } catch {
    return `unknown time zone ${JSON.stringify(timeZone)}; use an IANA name such as 'Europe/Berlin' or 'UTC'`;
  }
  // Intl ignores case; Scheduler may not, so ask for the canonical spelling.
  if (resolved !== timeZone && resolved.toLowerCase() === timeZone.toLowerCase()) {
    return `spell the time zone as ${JSON.stringify(resolved)}, got ${JSON.stringify(timeZone)}`;
  }
  return undefined;
}

/** The derived worker limits must hold the SQS-with-Lambda rules, whatever the settings combine to. */
function workerLimitProblems(jobs: readonly ResolvedJobConfig[], limits: WorkerLimits): string[] {
  const problems: string[] = [];
  if (limits.functionTimeoutSeconds > LAMBDA_MAX_TIMEOUT_SECONDS) {
    problems.push(`jobs: the worker timeout ${limits.functionTimeoutSeconds} s exceeds Lambda's ${LAMBDA_MAX_TIMEOUT_SECONDS} s`);
  }
  if (limits.queueVisibilityTimeoutSeconds < VISIBILITY_TO_TIMEOUT_RATIO * limits.functionTimeoutSeconds) {
    problems.push(`jobs: the job queue's visibility timeout ${limits.queueVisibilityTimeoutSeconds} s is less than ` +
      `${VISIBILITY_TO_TIMEOUT_RATIO} x the worker timeout ${limits.functionTimeoutSeconds} s`);
  }
  jobs.forEach((job, i) => {
    // A lease as long as a whole invocation could outlive the worker that holds it by a full run.
    if (job.settings.leaseSeconds >= LAMBDA_MAX_TIMEOUT_SECONDS) {
      problems.push(`jobs[${i}].leaseSeconds: must be less than ${LAMBDA_MAX_TIMEOUT_SECONDS}, got ${job.settings.leaseSeconds}`);
    }
  });
  return problems;
}
