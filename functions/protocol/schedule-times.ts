/**
 * The times an EventBridge Scheduler expression fires, computed the way Scheduler documents them, for the places
 * where nothing fires schedules for us: the local run (`npm run local`), backfills, and the operator actions (a
 * resume's missed times, describe's next ones: job-control.ts). Pure, so it lives with the protocol; lib/ reads it.
 *
 * - `cron(min hour dom month dow year)` is read in the schedule's time zone. croner matches the pattern (ranges,
 *   steps, names, `?`, `L`, `W`, `#`, years); this module maps each matching wall-clock time to an instant with
 *   Scheduler's daylight-saving rule: a time that does not exist (spring forward) is skipped, a time that occurs
 *   twice (fall back) runs once, at its first occurrence.
 * - `rate(n unit)` fires every n units from its anchor (Scheduler anchors it at the schedule's creation or start
 *   date; here the caller says where, usually the start of the range).
 * - `at(yyyy-mm-ddThh:mm:ss)` fires once, at that wall-clock time in the time zone.
 *
 * Times are whole seconds in UTC, as `<aws.scheduler.scheduled-time>` gives them.
 */
import { Cron } from 'croner';
import { ScheduledJobsError } from './errors';
import { SCHEDULED_TIME_RANGE } from './occurrence';
import { quoteValue } from './quote-value';
import { CRON_FIELDS, scheduleExpressionProblem } from './schedule-expression';

const MINUTE_MS = 60_000;
const RATE_UNIT_MS: Record<string, number> = { minute: MINUTE_MS, hour: 60 * MINUTE_MS, day: 24 * 60 * MINUTE_MS };
/** Daylight-saving shifts are at most two hours (Lord Howe's is 30 minutes, Troll's two hours). */
const MAX_DST_SHIFT_MS = 2 * 60 * MINUTE_MS;
const DAY_MS = 24 * 60 * MINUTE_MS;
/**
 * No fire time is yielded outside Scheduler's years, 1970-2199 in UTC: the scheduled times an occurrence may have
 * (functions/protocol/occurrence.ts). A wall time late on 31 December 2199 west of UTC is already in 2200 in UTC.
 */
const EARLIEST_MS = Date.parse(SCHEDULED_TIME_RANGE.earliest);
const LATEST_MS = Date.parse(SCHEDULED_TIME_RANGE.latest);
const DAY_OF_WEEK = 4;
const YEAR = 5;

/** An expression or time zone the evaluator cannot read, or a range with more fire times than asked for. */
export class ScheduleError extends ScheduledJobsError {
  override readonly name = 'ScheduleError';
}

export interface ScheduleSpec {
  readonly schedule: string;
  /** IANA time zone; default 'UTC'. */
  readonly timeZone?: string;
}

/**
 * The fire times at or after `from`, in order, lazily: take as many as you need. `rate(...)` is anchored at `from`.
 * Only times from 1970-01-01T00:00:00Z to 2199-12-31T23:59:59Z: every schedule ends there.
 * Throws ScheduleError for an invalid expression or time zone.
 */
export function* scheduleTimes(spec: ScheduleSpec, from: Date): Generator<Date> {
  const timeZone = spec.timeZone ?? 'UTC';
  const problem = scheduleExpressionProblem(spec.schedule) ?? timeZoneProblem(timeZone);
  if (problem !== undefined)
    throw new ScheduleError(`schedule ${quoteValue(spec.schedule)} in ${timeZone}: ${problem}`);
  const start = from.getTime();
  const expression = spec.schedule;
  if (expression.startsWith('rate(')) {
    const [, value, unit] = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression) ?? [];
    const step = Number(value) * RATE_UNIT_MS[unit];
    let t = ceilToSecond(start);
    if (t < EARLIEST_MS) t += Math.ceil((EARLIEST_MS - t) / step) * step;
    for (; t <= LATEST_MS; t += step) yield new Date(t);
    return;
  }
  if (expression.startsWith('at(')) {
    const wall = Date.parse(`${expression.slice('at('.length, -1)}Z`);
    const at = instantOfWallTime(wall, timeZone);
    if (at !== undefined && at >= start && inRange(at)) yield new Date(at);
    return;
  }
  yield* cronTimes(expression, timeZone, start);
}

/** The fire times in [from, to), at most `limit` of them (a guard against a typo such as every minute for a year). */
export function scheduleTimesBetween(spec: ScheduleSpec, from: Date, to: Date, limit: number): Date[] {
  const times: Date[] = [];
  for (const t of scheduleTimes(spec, from)) {
    if (t.getTime() >= to.getTime()) break;
    if (times.length === limit) {
      throw new ScheduleError(
        `schedule ${quoteValue(spec.schedule)} fires more than ${limit} times between ` +
          `${from.toISOString()} and ${to.toISOString()}; narrow the range`,
      );
    }
    times.push(t);
  }
  return times;
}

function* cronTimes(expression: string, timeZone: string, start: number): Generator<Date> {
  const fields = expression.slice('cron('.length, -1).trim().split(/\s+/);
  // croner's 7-part form has seconds first; Scheduler's day-of-week is 1 = Sunday (Quartz); `?` means "the other
  // day field decides", which is AND with `*`.
  const pattern = ['0', ...fields.map(cronerField)].join(' ');
  let wallPattern: Cron;
  try {
    // The pattern is matched on wall-clock times, written as if they were UTC, so no DST logic of croner's applies.
    wallPattern = new Cron(pattern, {
      timezone: 'UTC',
      mode: '7-part',
      alternativeWeekdays: true,
      domAndDow: true,
      paused: true,
    });
  } catch (error) {
    throw new ScheduleError(`schedule ${quoteValue(expression)}: ${(error as Error).message}`);
  }
  // Start early enough that a wall time whose instant is at or after `start` is not missed across a DST shift.
  let wall: Date | null = new Date(wallTimeOf(start, timeZone) - MAX_DST_SHIFT_MS - 1000);
  for (;;) {
    wall = wallPattern.nextRun(wall);
    if (wall === null) return;
    const at = instantOfWallTime(wall.getTime(), timeZone);
    if (at !== undefined && at > LATEST_MS) return;
    if (at !== undefined && at >= start && inRange(at)) yield new Date(at);
  }
}

/**
 * One field of a Scheduler cron expression (already checked by scheduleExpressionProblem) as croner reads it:
 * - names as numbers (croner reads `MON/2` as a step with a numeric start, which it refuses);
 * - every step with its range spelt out: `5/15` is "from 5, every 15", `*` with a step starts at the field's first value
 *   (croner's starts at 0, which moves a year step off Scheduler's, which counts from 1970);
 * - `L` alone in day-of-week as 7: the last day of the week, Saturday;
 * - year `*` as Scheduler's years, 1970-2199 (croner's run to 9999).
 */
function cronerField(field: string, index: number): string {
  const { min, max, names } = CRON_FIELDS[index];
  if (index === DAY_OF_WEEK && field === 'L') return String(max);
  if (index === YEAR && field === '*') return `${min}-${max}`;
  return field
    .split(',')
    .map((part) => {
      const numbered = names
        ? part.replace(/[A-Z]{3}/gi, (name) => String(names.indexOf(name.toUpperCase()) + 1))
        : part;
      const [range, step] = numbered.split('/');
      if (step === undefined) return numbered;
      const from = range === '*' ? `${min}-${max}` : range.includes('-') ? range : `${range}-${max}`;
      return `${from}/${step}`;
    })
    .join(',');
}

function inRange(instant: number): boolean {
  return instant >= EARLIEST_MS && instant <= LATEST_MS;
}

/** The wall-clock time in `timeZone` at `instant`, as milliseconds of the same fields read as UTC. */
export function wallTimeOf(instant: number, timeZone: string): number {
  const parts = wallTimeFormat(timeZone).formatToParts(new Date(instant));
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
}

/**
 * The first instant at which the clock in `timeZone` shows `wall`, or undefined if it never does (the hour skipped
 * at spring-forward). At most one offset change happens within a day of any instant in real zones, so the offsets a
 * day before and a day after are the only candidates.
 */
export function instantOfWallTime(wall: number, timeZone: string): number | undefined {
  const offsets = [wall - DAY_MS, wall + DAY_MS].map((probe) => wallTimeOf(probe, timeZone) - probe);
  const candidates = offsets.map((offset) => wall - offset).filter((instant) => wallTimeOf(instant, timeZone) === wall);
  return candidates.length === 0 ? undefined : Math.min(...candidates);
}

const formats = new Map<string, Intl.DateTimeFormat>();
function wallTimeFormat(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(timeZone, format);
  }
  return format;
}

function timeZoneProblem(timeZone: string): string | undefined {
  try {
    wallTimeFormat(timeZone);
    return undefined;
  } catch {
    return `unknown time zone ${quoteValue(timeZone)} (use an IANA name such as 'Europe/Berlin')`;
  }
}

function ceilToSecond(ms: number): number {
  return Math.ceil(ms / 1000) * 1000;
}
