/**
 * The CLI's arguments, validated with zod after commander has split them. Each problem names the argument it is
 * about (`--from`, `<scheduledTime>`), so the message can say what was wrong without a stack trace.
 */
import { z } from 'zod';
import { MAX_BY_CHARS, MAX_NOTE_CHARS } from '../../functions/protocol/job-control';
import { JOB_ID_PATTERN, OVERLAP_POLICIES } from '../../functions/protocol/job-settings';
import { normaliseScheduledTime, OccurrenceStatus, SCHEDULED_TIME_RANGE } from '../../functions/protocol/occurrence';
import { quoteValue } from '../../functions/protocol/quote-value';
import { scheduleKey } from '../../functions/protocol/schedule-key';
import { UsageError } from './errors';

const STATUSES = Object.values(OccurrenceStatus);
const DURATION = /^(\d+)(s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** An ISO-8601 date (UTC midnight) or date-time with a zone; sub-seconds are allowed in a range bound. */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2})))?$/;
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const EARLIEST_KEY_MS = Date.parse(SCHEDULED_TIME_RANGE.earliest);
const LATEST_KEY_MS = Date.parse(SCHEDULED_TIME_RANGE.latest);

export const jobIdArgument = z.string().regex(JOB_ID_PATTERN, {
  error: (issue) => `must be a job id (letters, digits, - and _), got ${quoteValue(issue.input)}`,
});

/** `--key`: a schedule key of a job that takes schedules at run time (schedule-key.ts). */
export const scheduleKeyArgument = z.string().transform((value, ctx) => {
  const checked = scheduleKey('--key', value);
  if (checked.ok) return checked.value;
  ctx.addIssue({ code: 'custom', message: checked.error.replace(/^--key /, '') });
  return z.NEVER;
});

/** `<scheduledTime>` of one occurrence, normalised to the key format (UTC, whole seconds). */
export const scheduledTimeArgument = z.string().transform((value, ctx) => {
  const time = normaliseScheduledTime(value);
  if (time.ok) return time.value;
  ctx.addIssue({ code: 'custom', message: time.error.replace(/^scheduledTime /, '') });
  return z.NEVER;
});

/**
 * A range bound, as epoch ms: an ISO date or date-time with a zone, `now`, or a duration before now (`90m`, `6h`,
 * `7d`). The clock is passed in, so tests decide what "now" is. A bound outside the years a scheduled time can have
 * (1970-2199) is moved to that end of them: it selects the same occurrences, and its ISO form stays one that sorts
 * with the keys (year 10000 in UTC would be `+010000-…`, which sorts before every key).
 */
export function timeArgument(now: number) {
  return z.string().transform((value, ctx) => {
    if (value === 'now') return now;
    const duration = DURATION.exec(value);
    if (duration) return now - Number(duration[1]) * UNIT_MS[duration[2]];
    const match = ISO_TIME.exec(value);
    const impossible = match ? calendarProblem(match) : undefined;
    if (impossible !== undefined) {
      ctx.addIssue({ code: 'custom', message: `${quoteValue(value)} is not a real date or time: ${impossible}` });
      return z.NEVER;
    }
    const ms = match ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(ms)) {
      ctx.addIssue({
        code: 'custom',
        message:
          "must be an ISO date or date-time with a zone (2026-11-30, 2026-11-30T06:00:00Z), 'now', or a time ago " +
          `such as 6h or 7d; got ${quoteValue(value)}`,
      });
      return z.NEVER;
    }
    return Math.min(Math.max(ms, EARLIEST_KEY_MS), LATEST_KEY_MS);
  });
}

/**
 * What is impossible in a date or date-time that has the ISO form, or undefined. `Date.parse` rolls an impossible
 * day over (2026-02-31 becomes 3 March) and reads 24:00 as the next midnight: a bound the operator did not mean.
 */
function calendarProblem(match: RegExpExecArray): string | undefined {
  const part = (i: number): number | undefined => (match[i] === undefined ? undefined : Number(match[i]));
  const [year, month, day] = [1, 2, 3].map((i) => Number(match[i]));
  const [hour, minute, second, offsetHours, offsetMinutes] = [4, 5, 6, 7, 8].map(part);
  if (month < 1 || month > 12) return `there is no month ${month}`;
  const days = daysIn(year, month);
  if (day < 1 || day > days) return `${MONTHS[month - 1]} ${year} has ${days} days`;
  if (hour !== undefined && hour > 23) return `the hours go from 00 to 23 (midnight is 00:00 of the next day)`;
  if (minute !== undefined && minute > 59) return 'the minutes go from 00 to 59';
  if (second !== undefined && second > 59) return 'the seconds go from 00 to 59';
  if (offsetHours !== undefined && (offsetHours > 23 || (offsetMinutes ?? 0) > 59))
    return 'a zone offset goes from -23:59 to +23:59';
  return undefined;
}

function daysIn(year: number, month: number): number {
  if (month !== 2) return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return leap ? 29 : 28;
}

/** Every status an occurrence may have, as `--status` takes them: the help lists them from here. */
export const STATUS_NAMES: readonly OccurrenceStatus[] = STATUSES;

export const statusListArgument = z.string().transform((value, ctx) => {
  const parts = value
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  const unknown = parts.filter((p) => !STATUSES.includes(p as OccurrenceStatus));
  if (parts.length === 0 || unknown.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `must be one or more of ${STATUSES.join(', ')} separated by commas; got ${quoteValue(value)}`,
    });
    return z.NEVER;
  }
  return [...new Set(parts)] as OccurrenceStatus[];
});

export function wholeNumberArgument(min: number, max: number) {
  return z.string().transform((value, ctx) => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a whole number from ${min} to ${max}, got ${quoteValue(value)}`,
      });
      return z.NEVER;
    }
    return n;
  });
}

const URL_PATTERN = /^https?:\/\/[^\s/]+/;

export const urlArgument = z.string().refine((value) => URL_PATTERN.test(value), {
  error: (issue) => `must be an http(s) URL such as http://127.0.0.1:5000, got ${quoteValue(issue.input)}`,
});

/**
 * `--worker-queue <workerId>=<url>`, repeatable: the queue of one worker, by its id (the Description of the stack
 * output WorkerQueue<n>). Parsed into a map from worker id to queue URL; a worker given twice is a mistake.
 */
export const workerQueuesArgument = z
  .array(z.string())
  .optional()
  .transform((values, ctx) => {
    const queues = new Map<string, string>();
    for (const value of values ?? []) {
      const at = value.indexOf('=');
      const worker = at < 0 ? '' : value.slice(0, at);
      const url = at < 0 ? '' : value.slice(at + 1);
      if (!JOB_ID_PATTERN.test(worker) || !URL_PATTERN.test(url)) {
        ctx.addIssue({
          code: 'custom',
          message:
            'must be <workerId>=<queue URL>, such as digest=https://sqs.eu-west-1.amazonaws.com/123456789012/jobs, ' +
            `got ${quoteValue(value)}`,
        });
      } else if (queues.has(worker)) {
        ctx.addIssue({ code: 'custom', message: `worker ${quoteValue(worker)} is given twice` });
      } else queues.set(worker, url);
    }
    return queues as ReadonlyMap<string, string>;
  });

/** `--overlap`: one of the overlap policies, as the job settings spell them. */
export const overlapArgument = z.enum(OVERLAP_POLICIES, {
  error: (issue) => `must be one of ${OVERLAP_POLICIES.join(', ')}, got ${quoteValue(issue.input)}`,
});

const text = (max: number) =>
  z.string().refine((value) => value.trim() !== '' && value.length <= max, {
    error: (issue) => `must be a non-empty text of at most ${max} characters, got ${quoteValue(issue.input)}`,
  });

/** `--note` of a pause: why, for the next person. */
export const noteArgument = text(MAX_NOTE_CHARS);

/** `--by`: who asks, recorded in the job-state row or the occurrence's row. */
export const byArgument = text(MAX_BY_CHARS);

/** Non-empty names: table, bucket, stack, region. */
export const nameArgument = z.string().regex(/^[A-Za-z0-9._:/-]+$/, {
  error: (issue) => `must be a non-empty name without spaces, got ${quoteValue(issue.input)}`,
});

/**
 * `--output-prefix`: the `outputPrefix` of a ScheduledJobs, which starts each of its stack output keys: CloudFormation
 * allows only letters and digits in a key, and ScheduledJobs at most 64 in a prefix. Empty: the unprefixed outputs.
 */
export const outputPrefixArgument = z.string().regex(/^[A-Za-z0-9]{0,64}$/, {
  error: (issue) =>
    `must be up to 64 letters or digits (the start of a stack output key), got ${quoteValue(issue.input)}`,
});

/**
 * Parse commander's values with a schema whose keys are the option names; a failure becomes one UsageError that
 * names every wrong argument (`--limit: must be ...`). `positional` maps keys to their `<name>` in the usage line.
 */
export function parseArguments<S extends z.ZodType>(
  schema: S,
  values: unknown,
  positional: readonly string[] = [],
): z.output<S> {
  const parsed = schema.safeParse(values);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? '');
    const name = positional.includes(key) ? `<${key}>` : `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    return `${name}: ${issue.message}`;
  });
  throw new UsageError(problems.join('\n       '));
}
