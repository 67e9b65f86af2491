/**
 * The runtime settings of one job: lease timing, time limit, retry policy and retention.
 *
 * The CDK app validates them at synth (so a bad value never deploys) and passes them to the
 * functions as JSON; the functions validate them again at cold start with the same code.
 */
import * as z from 'zod/mini';
import { isJsonObject } from './field-checks';
import { quoteValue } from './quote-value';
import {
  CATCHUP_WINDOW_SECONDS_RANGE,
  DEADLINE_SECONDS_RANGE,
  JOB_ID_PATTERN,
  JobSettingsError,
  LAMBDA_MAX_TIMEOUT_SECONDS,
  OUTCOME_RESERVE_SECONDS,
  OVERLAP_POLICIES,
  type OverlapPolicy,
  parseJsonVariable,
  RETENTION_DAYS_RANGE,
  SQS_MAX_VISIBILITY_SECONDS,
} from './setting-basics';

export * from './setting-basics';

/**
 * A whole number in [min, max]; one message for every way to miss it (not a number, a fraction, out of range). One
 * refinement rather than z.int() and range checks: z.int() aborts the parse on a fraction, and an aborted parse
 * skips the rules between fields (jobSettingsSchema), which must still report what they find.
 */
export const wholeNumber = (min: number, max: number) => {
  const error = (iss: { input?: unknown }) =>
    `must be a whole number from ${min} to ${max}, got ${quoteValue(iss.input)}`;
  return z.number({ error }).check(z.refine((n) => Number.isInteger(n) && n >= min && n <= max, { error }));
};

/** zod issues as `where.path: message`, in the schema's field order; an unknown field is one problem per field. */
export function issuesAsProblems(issues: readonly z.core.$ZodIssue[], where: string): string[] {
  return issues.flatMap((issue) => {
    const at = [where, ...issue.path.map(String)];
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => `${[...at, key].join('.')}: ${issue.message}`);
    return [`${at.join('.')}: ${issue.message}`];
  });
}

export const DEFAULT_RETRY_POLICY = {
  // Enough attempts that the deadline, not the count, ends a long outage: attempt 20 starts 4.5 to 5.7 h in.
  maxAttempts: 20,
  baseDelaySeconds: 4,
  // 30 minutes: a one-hour outage of a dependency costs 9 to 10 retries, where the original design's 64 s cap costs 60.
  maxDelaySeconds: 30 * 60,
  deadlineSeconds: 6 * 60 * 60,
  jitter: 0.2,
};

export const DEFAULT_JOB_SETTINGS = {
  leaseSeconds: 120,
  heartbeatSeconds: 40,
  leaseSafetyMarginSeconds: 15,
  timeoutSeconds: 300,
  retentionDays: 90,
  // Temporal's default: an occurrence due while the previous one runs is recorded as SKIPPED, not run beside it.
  overlap: 'skip' as OverlapPolicy,
  /** A resumable job's run, all segments together: six hours, as the default retry deadline. */
  maxRunSeconds: 6 * 60 * 60,
  /** Per worker, not per job: a job's { jobId } metrics are paid for each month, so they are the job's choice. */
  jobMetrics: false,
};

const aNumber = (min: number, max: number) => {
  const error = (iss: { input?: unknown }) => `must be a number from ${min} to ${max}, got ${quoteValue(iss.input)}`;
  return z.number({ error }).check(z.refine((n) => n >= min && n <= max, { error }));
};

/**
 * A strict object: an unknown (often misspelt) field is a problem instead of falling back to its default without a
 * word. `notAnObject` words the problem of a value that is not an object at all; `alsoKnown` names fields that the
 * caller takes out of the object before (the schedule half of a job configuration), so the message lists them too.
 */
export function strictFields<Shape extends z.core.$ZodLooseShape>(
  shape: Shape,
  notAnObject: (input: unknown) => string,
  alsoKnown: readonly string[] = [],
) {
  const known = [...Object.keys(shape), ...alsoKnown].join(', ');
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? `unknown field (known: ${known})` : notAnObject(iss.input)),
  });
}

const MAX_TIMEOUT_SECONDS = LAMBDA_MAX_TIMEOUT_SECONDS - OUTCOME_RESERVE_SECONDS;

/**
 * A waiting retry is an SQS message hidden by ChangeMessageVisibility, which reaches 12 h after receipt: the Lambda's
 * own run time is kept out of that budget for maxDelaySeconds. The deadline must leave a hidden message its 12 h
 * inside the queue's 14-day retention.
 */
export const retryPolicySchema = strictFields(
  {
    /** Claims of one occurrence before it is FAILED (the first run counts). */
    maxAttempts: z._default(wholeNumber(1, 100), DEFAULT_RETRY_POLICY.maxAttempts),
    /** Nominal delay before the first retry; it doubles per attempt. */
    baseDelaySeconds: z._default(aNumber(1, SQS_MAX_VISIBILITY_SECONDS), DEFAULT_RETRY_POLICY.baseDelaySeconds),
    /** Cap of the delay. */
    maxDelaySeconds: z._default(
      aNumber(1, SQS_MAX_VISIBILITY_SECONDS - LAMBDA_MAX_TIMEOUT_SECONDS),
      DEFAULT_RETRY_POLICY.maxDelaySeconds,
    ),
    /** No attempt starts later than scheduledTime + deadlineSeconds. */
    deadlineSeconds: z._default(
      wholeNumber(DEADLINE_SECONDS_RANGE.min, DEADLINE_SECONDS_RANGE.max),
      DEFAULT_RETRY_POLICY.deadlineSeconds,
    ),
    /** Fraction of each delay that is random: a delay d becomes a value in (d * (1 - jitter), d]. */
    jitter: z._default(aNumber(0, 0.9), DEFAULT_RETRY_POLICY.jitter),
  },
  (input) => `must be an object, got ${quoteValue(input)}`,
);

/**
 * The highest maxConcurrency: the capacity row holds one entry per running occurrence (about 90 bytes each), and stays
 * far below DynamoDB's 400 KB item limit and one write unit per KB that every take and release pays.
 */
export const MAX_CONCURRENCY = 1000;
const FAIRNESS_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const fairnessKeyError = (iss: { input?: unknown }) =>
  `must be the name of a top-level field of the schedule's input (1-64 letters, digits, '_' or '-', not starting with a digit or '-'), got ${quoteValue(iss.input)}`;

const jobIdError = (iss: { input?: unknown }) =>
  `must be 1-64 letters, digits, '-' or '_' starting with a letter or digit, got ${quoteValue(iss.input)}`;

/**
 * Each field of one job's runtime settings, with its default. The order of the fields is the order of the JSON the
 * stack hands to the functions (JOB_SETTINGS), kept as deployed.
 */
const jobSettingsShape = {
  /** How long a claim is valid without a heartbeat. */
  leaseSeconds: z._default(wholeNumber(10, LAMBDA_MAX_TIMEOUT_SECONDS), DEFAULT_JOB_SETTINGS.leaseSeconds),
  /** How often the worker extends its lease while the job runs. */
  heartbeatSeconds: z._default(wholeNumber(1, LAMBDA_MAX_TIMEOUT_SECONDS), DEFAULT_JOB_SETTINGS.heartbeatSeconds),
  /**
   * The worker aborts its job when no extend has been confirmed this long before the lease would expire.
   * It also bounds the clock skew between workers that the protocol tolerates.
   */
  leaseSafetyMarginSeconds: z._default(
    wholeNumber(1, LAMBDA_MAX_TIMEOUT_SECONDS),
    DEFAULT_JOB_SETTINGS.leaseSafetyMarginSeconds,
  ),
  /** Longest a single run of the job may take. */
  timeoutSeconds: z._default(wholeNumber(1, MAX_TIMEOUT_SECONDS), DEFAULT_JOB_SETTINGS.timeoutSeconds),
  /** Occurrence rows are deleted by DynamoDB TTL this long after their scheduled time. */
  retentionDays: z._default(
    wholeNumber(RETENTION_DAYS_RANGE.min, RETENTION_DAYS_RANGE.max),
    DEFAULT_JOB_SETTINGS.retentionDays,
  ),
  id: z.string({ error: jobIdError }).check(z.regex(JOB_ID_PATTERN, { error: jobIdError })),
  retry: z._default(retryPolicySchema, () => ({ ...DEFAULT_RETRY_POLICY })),
  /** What an occurrence does when another occurrence of the same job holds the running slot (docs/schedule-policies.md). */
  overlap: z._default(
    z.enum(OVERLAP_POLICIES, {
      error: (iss) => `must be one of ${OVERLAP_POLICIES.join(', ')}, got ${quoteValue(iss.input)}`,
    }),
    DEFAULT_JOB_SETTINGS.overlap,
  ),
  /**
   * An occurrence first recorded later than this after its scheduled time is SKIPPED as missed instead of run.
   * Absent: the retry deadline (retry.deadlineSeconds), past which it could not run anyway.
   */
  catchupWindowSeconds: z.optional(wholeNumber(CATCHUP_WINDOW_SECONDS_RANGE.min, CATCHUP_WINDOW_SECONDS_RANGE.max)),
  /** After this many FAILED occurrences in a row the job pauses itself. Absent: never. */
  pauseAfterFailures: z.optional(wholeNumber(1, 1000)),
  /**
   * Whether the job's metrics are also written with the dimensions { service, jobId }, beside its worker's: a custom
   * metric per name the job writes, paid for each month (docs/operating.md). Default false.
   */
  jobMetrics: z._default(
    z.boolean({ error: (iss) => `must be true or false, got ${quoteValue(iss.input)}` }),
    DEFAULT_JOB_SETTINGS.jobMetrics,
  ),
  /**
   * A resumable job's whole run, over all its segments (invocations), from its first claim (docs/long-jobs.md).
   * The retry deadline ends a run too: a segment is a claim, and no claim starts past it.
   */
  maxRunSeconds: z._default(wholeNumber(60, DEADLINE_SECONDS_RANGE.max), DEFAULT_JOB_SETTINGS.maxRunSeconds),
  /**
   * At most this many occurrences of the job run at once, across all its keys and its fixed schedule; the others
   * wait (WAITING) and start in an order fair across fairness keys (docs/concurrency.md). Absent: no cap.
   */
  maxConcurrency: z.optional(wholeNumber(1, MAX_CONCURRENCY)),
  /**
   * The top-level field of a run-time schedule's input that names its tenant: occurrences wait in one line per
   * tenant. Absent: one line per schedule key. Only with maxConcurrency.
   */
  fairnessKey: z.optional(
    z.string({ error: fairnessKeyError }).check(z.regex(FAIRNESS_KEY_PATTERN, { error: fairnessKeyError })),
  ),
};

/** Lease, time limit, retry policy and retention of one job, every default applied. */
export type JobSettings = z.output<typeof jobSettingsSchema>;
/** What a job's settings may leave out: everything but the id. */
export type JobSettingsInput = z.input<typeof jobSettingsSchema>;
export type RetryPolicy = z.output<typeof retryPolicySchema>;

/** A rule between fields of the settings, checked only where the fields it reads are valid themselves. */
interface CrossFieldRule {
  readonly reads: readonly string[];
  /** The field the problem is reported on. */
  readonly field: string;
  /** The problem, or undefined when the rule holds. */
  readonly problem: (s: JobSettings) => string | undefined;
}

const CROSS_FIELD_RULES: readonly CrossFieldRule[] = [
  {
    // Two heartbeats per lease at the least (the DynamoDB lock client's rule), plus the margin, so that one
    // failed extend is absorbed: the next one still lands before the worker would give the lease up.
    reads: ['leaseSeconds', 'heartbeatSeconds', 'leaseSafetyMarginSeconds'],
    field: 'heartbeatSeconds',
    problem: (s) =>
      s.heartbeatSeconds * 2 + s.leaseSafetyMarginSeconds < s.leaseSeconds
        ? undefined
        : `2 x heartbeatSeconds (${s.heartbeatSeconds}) + leaseSafetyMarginSeconds (${s.leaseSafetyMarginSeconds}) ` +
          `must be less than leaseSeconds (${s.leaseSeconds}), or a single failed extend would lose the lease`,
  },
  {
    reads: ['retry', 'retry.baseDelaySeconds', 'retry.maxDelaySeconds'],
    field: 'retry.maxDelaySeconds',
    problem: ({ retry: r }) =>
      r.maxDelaySeconds >= r.baseDelaySeconds
        ? undefined
        : `must be at least retry.baseDelaySeconds (${r.baseDelaySeconds}), got ${r.maxDelaySeconds}`,
  },
  {
    // A retry's message is hidden for the delay plus the margin (the clock skew workers may have); SQS refuses to
    // hide a message for more than 12 h after it was received, and the run before the hide counts too.
    reads: ['retry', 'retry.maxDelaySeconds', 'leaseSafetyMarginSeconds'],
    field: 'retry.maxDelaySeconds',
    problem: (s) => {
      const limit = SQS_MAX_VISIBILITY_SECONDS - LAMBDA_MAX_TIMEOUT_SECONDS;
      return s.retry.maxDelaySeconds + s.leaseSafetyMarginSeconds <= limit
        ? undefined
        : `plus leaseSafetyMarginSeconds (${s.leaseSafetyMarginSeconds}) must be at most ${limit} (SQS hides a message for at most 12 h), ` +
            `got ${s.retry.maxDelaySeconds}`;
    },
  },
  {
    reads: ['retry', 'retry.deadlineSeconds', 'timeoutSeconds'],
    field: 'retry.deadlineSeconds',
    problem: (s) =>
      s.retry.deadlineSeconds >= s.timeoutSeconds
        ? undefined
        : `must be at least timeoutSeconds (${s.timeoutSeconds}), got ${s.retry.deadlineSeconds}`,
  },
  {
    reads: ['retry', 'retry.deadlineSeconds', 'retentionDays'],
    field: 'retentionDays',
    problem: (s) =>
      s.retentionDays * 86_400 > s.retry.deadlineSeconds
        ? undefined
        : `rows must outlive the retry deadline (${s.retry.deadlineSeconds} s), got ${s.retentionDays} days`,
  },
  {
    // One segment is at most timeoutSeconds long; a run shorter than one segment would end every run early.
    reads: ['timeoutSeconds', 'maxRunSeconds'],
    field: 'maxRunSeconds',
    problem: (s) =>
      s.maxRunSeconds >= s.timeoutSeconds
        ? undefined
        : `must be at least timeoutSeconds (${s.timeoutSeconds}), got ${s.maxRunSeconds}`,
  },
  {
    // Past the deadline no attempt may start: a longer window would record occurrences that then fail unrun.
    reads: ['retry', 'retry.deadlineSeconds', 'catchupWindowSeconds'],
    field: 'catchupWindowSeconds',
    problem: (s) =>
      s.catchupWindowSeconds === undefined || s.catchupWindowSeconds <= s.retry.deadlineSeconds
        ? undefined
        : `must be at most retry.deadlineSeconds (${s.retry.deadlineSeconds}), got ${s.catchupWindowSeconds}`,
  },
  {
    // A fairness key orders the line of a cap: alone it would say something the job does not do.
    reads: ['fairnessKey', 'maxConcurrency'],
    field: 'fairnessKey',
    problem: (s) =>
      s.fairnessKey === undefined || s.maxConcurrency !== undefined
        ? undefined
        : `orders the occurrences waiting for maxConcurrency: give maxConcurrency too, got fairnessKey ${quoteValue(s.fairnessKey)} alone`,
  },
];

/** The catch-up window in effect: the configured one, else the retry deadline. */
export const catchupWindowSecondsOf = (s: JobSettings): number => s.catchupWindowSeconds ?? s.retry.deadlineSeconds;

/**
 * The rules between fields, reported after the fields' own problems. `when` makes zod run it even when some fields
 * have problems (it skips a check after any problem otherwise); each rule skips itself if a field it reads is bad.
 */
const crossFieldRules = z.superRefine<object>(
  (value, ctx) => {
    const bad = new Set(ctx.issues.map((i) => (i.path ?? []).join('.')));
    for (const rule of CROSS_FIELD_RULES) {
      if (rule.reads.some((f) => bad.has(f))) continue;
      const problem = rule.problem(value as JobSettings);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', path: rule.field.split('.'), message: problem });
    }
  },
  { when: (payload) => isJsonObject(payload.value) },
);

const notJobSettings = (input: unknown) =>
  `must be an object of job settings, got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input}`;

/**
 * One job's runtime settings: strict, with their defaults, each field and the rules between them checked.
 * `alsoKnown`: see strictFields.
 */
export function jobSettingsSchemaKnowing(alsoKnown: readonly string[]) {
  return strictFields(jobSettingsShape, notJobSettings, alsoKnown).check(crossFieldRules);
}

export const jobSettingsSchema = jobSettingsSchemaKnowing([]);

/**
 * The issues that say the settings have the wrong shape: not an object, a retry policy that is not an object, an
 * unknown field. Settings with any get only those problems: the other fields of a misspelt object are most likely
 * not what was meant either.
 */
export function shapeIssues(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const shape = issues.filter(
    (i) => i.code === 'unrecognized_keys' || (i.code === 'invalid_type' && i.expected === 'object'),
  );
  // The object's own problems before its retry policy's (zod reports unknown fields after the fields).
  return [...shape.filter((i) => i.path.length === 0), ...shape.filter((i) => i.path.length > 0)];
}

/** The problems of a parse of job settings, each naming the field as `where.field`: the shape's, else all. */
export function settingsProblems(issues: readonly z.core.$ZodIssue[], where: string): string[] {
  const shape = shapeIssues(issues);
  return issuesAsProblems(shape.length > 0 ? shape : issues, where);
}

/** The settings with every default applied and every value checked; throws JobSettingsError naming each problem. */
export function withDefaults(input: JobSettingsInput): JobSettings {
  const parsed = jobSettingsSchema.safeParse(input);
  if (!parsed.success) throw new JobSettingsError(settingsProblems(parsed.error.issues, 'settings'));
  return parsed.data;
}

/** Problems with one job's settings (with or without their defaults), each naming the field as `where.field`. */
export function jobSettingsProblems(input: unknown, where: string): string[] {
  const parsed = jobSettingsSchema.safeParse(input);
  return parsed.success ? [] : settingsProblems(parsed.error.issues, where);
}

/** Parse and validate the JSON list of job settings the stack hands to the functions, applying the defaults. */
export function parseJobSettingsList(json: string | undefined, source: string): ReadonlyMap<string, JobSettings> {
  const parsed = parseJsonVariable(json, source);
  if (!Array.isArray(parsed)) throw new JobSettingsError([`${source} must be a JSON array of job settings`]);
  return validateJobSettingsList(parsed, source);
}

/**
 * Validate a list of job settings, applying the defaults: every problem of every item in one JobSettingsError. When
 * any item has the wrong shape (see shapeIssues), the error lists only the shape problems, of every item.
 */
export function validateJobSettingsList(list: readonly unknown[], source: string): ReadonlyMap<string, JobSettings> {
  const parsed = list.map((item) => jobSettingsSchema.safeParse(item));
  const issuesOf = (i: number) => parsed[i].error?.issues ?? [];
  const shape = parsed.flatMap((_, i) => issuesAsProblems(shapeIssues(issuesOf(i)), `${source}[${i}]`));
  if (shape.length > 0) throw new JobSettingsError(shape);
  const problems: string[] = [];
  const seen = new Set<unknown>();
  const byId = new Map<string, JobSettings>();
  parsed.forEach((result, i) => {
    problems.push(...issuesAsProblems(issuesOf(i), `${source}[${i}]`));
    // The id as given: a duplicate is reported whether or not the rest of the item is valid.
    const id = (list[i] as { id?: unknown }).id;
    if (seen.has(id)) problems.push(`${source}[${i}].id: duplicate job id ${quoteValue(id)}`);
    seen.add(id);
    if (result.success) byId.set(result.data.id, result.data);
  });
  if (problems.length > 0) throw new JobSettingsError(problems);
  return byId;
}

/**
 * The settings as the smallest input that resolves to them: every field equal to its default left out (the id is
 * always kept). What the stack hands a worker (JOB_SETTINGS), so that a worker's many jobs with default settings
 * take a few bytes each of its environment.
 */
export function withoutDefaults(settings: JobSettings): JobSettingsInput {
  const defaults = withDefaults({ id: settings.id });
  const compact: Record<string, unknown> = { id: settings.id };
  for (const [field, value] of Object.entries(settings) as [keyof JobSettings, unknown][]) {
    if (field === 'id' || field === 'retry') continue;
    if (value !== defaults[field]) compact[field] = value;
  }
  const retry = Object.fromEntries(
    Object.entries(settings.retry).filter(([field, value]) => value !== defaults.retry[field as keyof RetryPolicy]),
  );
  if (Object.keys(retry).length > 0) compact.retry = retry;
  return compact as JobSettingsInput;
}
