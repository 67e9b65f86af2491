/**
 * The times an EventBridge Scheduler expression fires, computed the way Scheduler documents them, for the places
 * where nothing fires schedules for us: the local run (`npm run local`) and backfills.
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
import { LibError } from './errors';
import { scheduleExpressionProblem } from './schedule-expression';

const MINUTE_MS = 60_000;
const RATE_UNIT_MS: Record<string, number> = { minute: MINUTE_MS, hour: 60 * MINUTE_MS, day: 24 * 60 * MINUTE_MS };
/** Daylight-saving shifts are at most two hours (Lord Howe's is 30 minutes, Troll's two hours). */
const MAX_DST_SHIFT_MS = 2 * 60 * MINUTE_MS;
const DAY_MS = 24 * 60 * MINUTE_MS;
/** The highest value of each cron field, to turn Scheduler's `5/15` into croner's `5-59/15`. */
const FIELD_MAX = [59, 23, 31, 12, 7, 2199];

export class ScheduleError extends LibError {
  override readonly name = 'ScheduleError';
}

export interface ScheduleSpec {
  readonly schedule: string;
  /** IANA time zone; default 'UTC'. */
  readonly timeZone?: string;
}

/**
 * The fire times at or after `from`, in order, lazily: take as many as you need. `rate(...)` is anchored at `from`.
 * Throws ScheduleError for an invalid expression or time zone.
 */
export function* scheduleTimes(spec: ScheduleSpec, from: Date): Generator<Date> {
  const timeZone = spec.timeZone ?? 'UTC';
  const problem = scheduleExpressionProblem(spec.schedule) ?? timeZoneProblem(timeZone);
  if (problem !== undefined)
    throw new ScheduleError(`schedule ${JSON.stringify(spec.schedule)} in ${timeZone}: ${problem}`);
  const start = from.getTime();
  const expression = spec.schedule;
  if (expression.startsWith('rate(')) {
    const [, value, unit] = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression) ?? [];
    const step = Number(value) * RATE_UNIT_MS[unit];
    for (let t = ceilToSecond(start); ; t += step) yield new Date(t);
  }
  if (expression.startsWith('at(')) {
    const wall = Date.parse(`${expression.slice('at('.length, -1)}Z`);
    const at = instantOfWallTime(wall, timeZone);
    if (at !== undefined && at >= start) yield new Date(at);
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
        `schedule ${JSON.stringify(spec.schedule)} fires more than ${limit} times between ` +
          `${from.toISOString()} and ${to.toISOString()}; narrow the range`,
      );
    }
    times.push(t);
  }
  return times;
}

/** The last `count` fire times before `until` (exclusive), oldest first; fewer if the schedule has fewer. */
export function previousScheduleTimes(spec: ScheduleSpec, until: Date, count: number, lookBackDays = 400): Date[] {
  const from = new Date(until.getTime() - lookBackDays * DAY_MS);
  const times: Date[] = [];
  for (const t of scheduleTimes(spec, from)) {
    if (t.getTime() >= until.getTime()) break;
    times.push(t);
    if (times.length > count) times.shift();
  }
  return times;
}

function* cronTimes(expression: string, timeZone: string, start: number): Generator<Date> {
  const fields = expression.slice('cron('.length, -1).trim().split(/\s+/);
  // croner's 7-part form has seconds first; Scheduler's day-of-week is 1 = Sunday (Quartz); `?` means "the other
  // day field decides", which is AND with `*`.
  const pattern = [
    '0',
    ...fields.map((f, i) =>
      f
        .split(',')
        .map((part) => withRangeStart(part, FIELD_MAX[i]))
        .join(','),
    ),
  ].join(' ');
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
    throw new ScheduleError(`schedule ${JSON.stringify(expression)}: ${(error as Error).message}`);
  }
  // Start early enough that a wall time whose instant is at or after `start` is not missed across a DST shift.
  let wall: Date | null = new Date(wallTimeOf(start, timeZone) - MAX_DST_SHIFT_MS - 1000);
  for (;;) {
    wall = wallPattern.nextRun(wall);
    if (wall === null) return;
    const at = instantOfWallTime(wall.getTime(), timeZone);
    if (at !== undefined && at >= start) yield new Date(at);
  }
}

/** Scheduler writes `5/15` for "from 5, every 15"; croner wants the range spelt out. */
function withRangeStart(part: string, max: number): string {
  return /^\d+\/\d+$/.test(part) ? part.replace('/', `-${max}/`) : part;
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
    return `unknown time zone ${JSON.stringify(timeZone)} (use an IANA name such as 'Europe/Berlin')`;
  }
}

function ceilToSecond(ms: number): number {
  return Math.ceil(ms / 1000) * 1000;
}
