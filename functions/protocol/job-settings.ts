/**
 * The runtime settings of one job: lease timing, time limit, retry policy and retention.
 *
 * The CDK app validates them at synth (so a bad value never deploys) and passes them to the
 * functions as JSON; the functions validate them again at cold start with the same code.
 */
import * as z from 'zod/mini';
import { quoteValue } from './quote-value';

export interface RetryPolicy {
  /** Claims of one occurrence before it is FAILED (the first run counts). */
  readonly maxAttempts: number;
  /** Nominal delay before the first retry; it doubles per attempt. */
  readonly baseDelaySeconds: number;
  /** Cap of the delay. */
  readonly maxDelaySeconds: number;
  /** No attempt starts later than scheduledTime + deadlineSeconds. */
  readonly deadlineSeconds: number;
  /** Fraction of each delay that is random: a delay d becomes a value in (d * (1 - jitter), d]. */
  readonly jitter: number;
}

export interface JobSettings {
  readonly id: string;
  /** How long a claim is valid without a heartbeat. */
  readonly leaseSeconds: number;
  /** How often the worker extends its lease while the job runs. */
  readonly heartbeatSeconds: number;
  /**
   * The worker aborts its job when no extend has been confirmed this long before the lease would expire.
   * It also bounds the clock skew between workers that the protocol tolerates.
   */
  readonly leaseSafetyMarginSeconds: number;
  /** Longest a single run of the job may take. */
  readonly timeoutSeconds: number;
  readonly retry: RetryPolicy;
  /** Occurrence rows are deleted by DynamoDB TTL this long after their scheduled time. */
  readonly retentionDays: number;
}

export type JobSettingsInput = Pick<JobSettings, 'id'> &
  Partial<Omit<JobSettings, 'id' | 'retry'>> & { readonly retry?: Partial<RetryPolicy> };

/** Lambda's hard limit on one invocation. */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
/** Time kept back from the job so the worker can record its outcome before Lambda stops it. */
export const OUTCOME_RESERVE_SECONDS = 30;
/** SQS ChangeMessageVisibility cannot hide a message for more than 12 h after it was received. */
export const SQS_MAX_VISIBILITY_SECONDS = 12 * 60 * 60;
/** The job queue keeps messages for the SQS maximum of 14 days. */
export const QUEUE_RETENTION_SECONDS = 14 * 24 * 60 * 60;

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  // Enough attempts that the deadline, not the count, ends a long outage: attempt 20 starts 4.5 to 5.7 h in.
  maxAttempts: 20,
  baseDelaySeconds: 4,
  // 30 minutes: a one-hour outage of a dependency costs 9 to 10 retries, where the seed's 64 s cap costs 60.
  maxDelaySeconds: 30 * 60,
  deadlineSeconds: 6 * 60 * 60,
  jitter: 0.2,
};

export const DEFAULT_JOB_SETTINGS: Omit<JobSettings, 'id' | 'retry'> = {
  leaseSeconds: 120,
  heartbeatSeconds: 40,
  leaseSafetyMarginSeconds: 15,
  timeoutSeconds: 300,
  retentionDays: 90,
};

const JOB_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export class JobSettingsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid job settings:\n  - ${problems.join('\n  - ')}`);
    this.name = 'JobSettingsError';
  }
}

const SETTINGS_KEYS: readonly string[] = ['id', 'retry', ...Object.keys(DEFAULT_JOB_SETTINGS)];
const RETRY_KEYS: readonly string[] = Object.keys(DEFAULT_RETRY_POLICY);

/**
 * Problems with the shape of raw settings, before defaults: not an object, an unknown (often misspelt) field, a
 * retry policy that is not an object. A misspelt field would otherwise fall back to its default without a word.
 */
export function settingsInputProblems(raw: unknown, where: string, alsoKnown: readonly string[] = []): string[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return [
      `${where}: must be an object of job settings, got ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}`,
    ];
  }
  const problems = unknownKeys(raw, [...SETTINGS_KEYS, ...alsoKnown], where);
  const retry = (raw as { retry?: unknown }).retry;
  if (retry !== undefined) {
    if (typeof retry !== 'object' || retry === null || Array.isArray(retry)) {
      problems.push(`${where}.retry: must be an object, got ${quoteValue(retry)}`);
    } else {
      problems.push(...unknownKeys(retry, RETRY_KEYS, `${where}.retry`));
    }
  }
  return problems;
}

function unknownKeys(o: object, known: readonly string[], where: string): string[] {
  return Object.keys(o)
    .filter((k) => !known.includes(k))
    .map((k) => `${where}.${k}: unknown field (known: ${known.join(', ')})`);
}

export function withDefaults(input: JobSettingsInput): JobSettings {
  return {
    ...DEFAULT_JOB_SETTINGS,
    ...dropUndefined(input),
    retry: { ...DEFAULT_RETRY_POLICY, ...dropUndefined(input.retry ?? {}) },
  } as JobSettings;
}

/** A whole number in [min, max]; one message for every way to miss it (not a number, a fraction, out of range). */
export const wholeNumber = (min: number, max: number) => {
  const error = (iss: { input?: unknown }) =>
    `must be a whole number from ${min} to ${max}, got ${quoteValue(iss.input)}`;
  return z.int({ error }).check(z.gte(min, { error, abort: true }), z.lte(max, { error, abort: true }));
};

const aNumber = (min: number, max: number) => {
  const error = (iss: { input?: unknown }) => `must be a number from ${min} to ${max}, got ${quoteValue(iss.input)}`;
  return z.number({ error }).check(z.gte(min, { error, abort: true }), z.lte(max, { error, abort: true }));
};

const MAX_TIMEOUT_SECONDS = LAMBDA_MAX_TIMEOUT_SECONDS - OUTCOME_RESERVE_SECONDS;

/**
 * Each field of resolved settings on its own. A waiting retry is an SQS message hidden by ChangeMessageVisibility,
 * which reaches 12 h after receipt: the Lambda's own run time is kept out of that budget for maxDelaySeconds. The
 * deadline must leave a hidden message its 12 h inside the queue's 14-day retention.
 */
const jobSettingsFields = z.object({
  id: z
    .string({
      error: (iss) =>
        `must be 1-64 letters, digits, '-' or '_' starting with a letter or digit, got ${quoteValue(iss.input)}`,
    })
    .check(
      z.regex(JOB_ID, {
        error: (iss) =>
          `must be 1-64 letters, digits, '-' or '_' starting with a letter or digit, got ${quoteValue(iss.input)}`,
      }),
    ),
  leaseSeconds: wholeNumber(10, LAMBDA_MAX_TIMEOUT_SECONDS),
  heartbeatSeconds: wholeNumber(1, LAMBDA_MAX_TIMEOUT_SECONDS),
  leaseSafetyMarginSeconds: wholeNumber(1, LAMBDA_MAX_TIMEOUT_SECONDS),
  timeoutSeconds: wholeNumber(1, MAX_TIMEOUT_SECONDS),
  retentionDays: wholeNumber(1, 3650),
  retry: z.object(
    {
      maxAttempts: wholeNumber(1, 100),
      baseDelaySeconds: aNumber(1, SQS_MAX_VISIBILITY_SECONDS),
      maxDelaySeconds: aNumber(1, SQS_MAX_VISIBILITY_SECONDS - LAMBDA_MAX_TIMEOUT_SECONDS),
      deadlineSeconds: wholeNumber(60, QUEUE_RETENTION_SECONDS - SQS_MAX_VISIBILITY_SECONDS),
      jitter: aNumber(0, 0.9),
    },
    { error: (iss) => `must be an object, got ${quoteValue(iss.input)}` },
  ),
});

/** zod issues as `where.path: message`, in the schema's field order. */
export function issuesAsProblems(issues: readonly z.core.$ZodIssue[], where: string): string[] {
  return issues.map((issue) => `${[where, ...issue.path.map(String)].join('.')}: ${issue.message}`);
}

/** Problems with one job's settings, each naming the field as `where.field`. Empty when valid. */
export function jobSettingsProblems(s: JobSettings, where: string): string[] {
  const parsed = jobSettingsFields.safeParse(s);
  const fieldProblems = parsed.success ? [] : issuesAsProblems(parsed.error.issues, where);
  const bad = new Set(parsed.success ? [] : parsed.error.issues.map((i) => i.path.join('.')));
  const ok = (...fields: string[]) => fields.every((f) => !bad.has(f));
  const problems: string[] = [];
  const check = (holds: boolean, field: string, message: string) => {
    if (!holds) problems.push(`${where}.${field}: ${message}`);
  };
  // The rules between fields, checked only where the fields themselves are valid.
  const r = s.retry ?? ({} as RetryPolicy);
  if (ok('leaseSeconds', 'heartbeatSeconds', 'leaseSafetyMarginSeconds')) {
    // Two heartbeats per lease at the least (the DynamoDB lock client's rule), plus the margin, so that one
    // failed extend is absorbed: the next one still lands before the worker would give the lease up.
    check(
      s.heartbeatSeconds * 2 + s.leaseSafetyMarginSeconds < s.leaseSeconds,
      'heartbeatSeconds',
      `2 x heartbeatSeconds (${s.heartbeatSeconds}) + leaseSafetyMarginSeconds (${s.leaseSafetyMarginSeconds}) ` +
        `must be less than leaseSeconds (${s.leaseSeconds}), or a single failed extend would lose the lease`,
    );
  }
  if (ok('retry', 'retry.baseDelaySeconds', 'retry.maxDelaySeconds')) {
    check(
      r.maxDelaySeconds >= r.baseDelaySeconds,
      'retry.maxDelaySeconds',
      `must be at least retry.baseDelaySeconds (${r.baseDelaySeconds}), got ${r.maxDelaySeconds}`,
    );
  }
  if (ok('retry', 'retry.maxDelaySeconds', 'leaseSafetyMarginSeconds')) {
    // A retry's message is hidden for the delay plus the margin (the clock skew workers may have); SQS refuses to
    // hide a message for more than 12 h after it was received, and the run before the hide counts too.
    const limit = SQS_MAX_VISIBILITY_SECONDS - LAMBDA_MAX_TIMEOUT_SECONDS;
    check(
      r.maxDelaySeconds + s.leaseSafetyMarginSeconds <= limit,
      'retry.maxDelaySeconds',
      `plus leaseSafetyMarginSeconds (${s.leaseSafetyMarginSeconds}) must be at most ${limit} (SQS hides a message for at most 12 h), ` +
        `got ${r.maxDelaySeconds}`,
    );
  }
  if (ok('retry', 'retry.deadlineSeconds', 'timeoutSeconds')) {
    check(
      r.deadlineSeconds >= s.timeoutSeconds,
      'retry.deadlineSeconds',
      `must be at least timeoutSeconds (${s.timeoutSeconds}), got ${r.deadlineSeconds}`,
    );
  }
  if (ok('retry', 'retry.deadlineSeconds', 'retentionDays')) {
    check(
      s.retentionDays * 86_400 > r.deadlineSeconds,
      'retentionDays',
      `rows must outlive the retry deadline (${r.deadlineSeconds} s), got ${s.retentionDays} days`,
    );
  }
  return [...fieldProblems, ...problems];
}

/** Parse and validate the JSON list of job settings the stack hands to the functions. */
export function parseJobSettingsList(json: string | undefined, source: string): ReadonlyMap<string, JobSettings> {
  if (json === undefined || json.trim() === '') throw new JobSettingsError([`${source} is not set`]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (e) {
    throw new JobSettingsError([`${source} is not valid JSON: ${(e as Error).message}`]);
  }
  if (!Array.isArray(parsed)) throw new JobSettingsError([`${source} must be a JSON array of job settings`]);
  const shapeProblems = parsed.flatMap((item, i) => settingsInputProblems(item, `${source}[${i}]`));
  if (shapeProblems.length > 0) throw new JobSettingsError(shapeProblems);
  return validateJobSettingsList(
    parsed.map((item) => withDefaults(item as JobSettingsInput)),
    source,
  );
}

export function validateJobSettingsList(
  list: readonly JobSettings[],
  source: string,
): ReadonlyMap<string, JobSettings> {
  const problems: string[] = [];
  const byId = new Map<string, JobSettings>();
  list.forEach((settings, i) => {
    problems.push(...jobSettingsProblems(settings, `${source}[${i}]`));
    if (byId.has(settings.id)) problems.push(`${source}[${i}].id: duplicate job id ${quoteValue(settings.id)}`);
    byId.set(settings.id, settings);
  });
  if (problems.length > 0) throw new JobSettingsError(problems);
  return byId;
}

function dropUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
