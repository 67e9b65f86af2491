/**
 * Validation of EventBridge Scheduler schedule expressions: cron(...) with its six fields, rate(...) and at(...).
 */
import { quoteValue } from './quote-value';

const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const AT = /^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$/;

/**
 * A check of a Scheduler expression at synth, so the usual slips (a five-field Unix cron, `*` in both day fields,
 * minute 60, `rate(1 minutes)`, a date with a zone suffix) fail `cdk synth` instead of the deployment.
 */
export function scheduleExpressionProblem(expression: unknown): string | undefined {
  if (typeof expression !== 'string') return `must be a string, got ${quoteValue(expression)}`;
  if (expression.startsWith('cron(')) {
    if (!expression.endsWith(')')) return `cron expression must end with ')', got ${quoteValue(expression)}`;
    const fields = expression
      .slice('cron('.length, -1)
      .trim()
      .split(/\s+/)
      .filter((f) => f !== '');
    if (fields.length !== 6) {
      return (
        `cron needs exactly 6 fields (minutes hours day-of-month month day-of-week year), ` +
        `got ${fields.length} in ${quoteValue(expression)}`
      );
    }
    return cronFieldsProblem(fields, expression);
  }
  if (expression.startsWith('rate(')) {
    const match = RATE.exec(expression);
    if (!match)
      return `rate must look like 'rate(5 minutes)' with unit minute(s), hour(s) or day(s), got ${quoteValue(expression)}`;
    const value = Number(match[1]);
    const unit = match[2];
    if (value < 1) return `rate value must be a positive whole number, got ${quoteValue(expression)}`;
    const singular = !unit.endsWith('s');
    if ((value === 1) !== singular) {
      return `rate unit must be singular for 1 and plural otherwise, got ${quoteValue(expression)}`;
    }
    return undefined;
  }
  if (expression.startsWith('at(')) {
    const match = AT.exec(expression);
    if (!match)
      return `at must look like 'at(2030-01-31T06:00:00)' (local time, no zone suffix), got ${quoteValue(expression)}`;
    const [year, month, day, hour, minute, second] = match.slice(1).map(Number);
    const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
    const real =
      date.getUTCFullYear() === year &&
      date.getUTCMonth() === month - 1 &&
      date.getUTCDate() === day &&
      hour < 24 &&
      minute < 60 &&
      second < 60;
    if (!real) return `at names a date and time that does not exist: ${quoteValue(expression)}`;
    if (year < CRON_FIELDS[5].min || year > CRON_FIELDS[5].max) {
      return `at() must name a time in 1970-2199, the years a scheduled time can have, got ${quoteValue(expression)}`;
    }
    return undefined;
  }
  return `must be a cron(...), rate(...) or at(...) expression, got ${quoteValue(expression)}`;
}

export interface CronField {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** What the field accepts as a whole, besides lists of values, ranges and steps. */
  readonly whole: readonly string[];
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
/**
 * The six fields, in order, as Scheduler reads them (the schedule evaluator translates with the same table).
 * `L` alone in day-of-week is the last day of the week, Saturday (7), as in Quartz, whose syntax Scheduler's is.
 * The years are Scheduler's, which end at 2199; the scheduled times an occurrence can have end there too.
 */
export const CRON_FIELDS: readonly CronField[] = [
  { name: 'minutes', min: 0, max: 59, whole: ['*'] },
  { name: 'hours', min: 0, max: 23, whole: ['*'] },
  { name: 'day-of-month', min: 1, max: 31, whole: ['*', '?', 'L', 'LW'] },
  { name: 'month', min: 1, max: 12, names: MONTHS, whole: ['*'] },
  { name: 'day-of-week', min: 1, max: 7, names: WEEKDAYS, whole: ['*', '?', 'L'] },
  { name: 'year', min: 1970, max: 2199, whole: ['*'] },
];

function cronFieldsProblem(fields: string[], expression: string): string | undefined {
  for (const [i, spec] of CRON_FIELDS.entries()) {
    const problem = cronFieldProblem(fields[i], spec);
    if (problem) return `cron ${spec.name} field ${quoteValue(fields[i])}: ${problem}, in ${quoteValue(expression)}`;
  }
  // Scheduler reads one of the two day fields; the other must say so with '?'.
  if ((fields[2] === '?') === (fields[4] === '?')) {
    return (
      `cron needs '?' in exactly one of day-of-month and day-of-week, got ${quoteValue(fields[2])} and ` +
      `${quoteValue(fields[4])} in ${quoteValue(expression)}`
    );
  }
  return undefined;
}

function cronFieldProblem(field: string, spec: CronField): string | undefined {
  if (spec.whole.includes(field)) return undefined;
  if (field === '?') return "'?' is allowed only in the day fields";
  const parts = field.split(',');
  if (spec.name === 'day-of-week' && field.includes('#') && parts.length > 1) {
    // Scheduler reads a list with '#' as several expressions, and allows only one.
    return 'a \'#\' expression must be the whole field (Scheduler allows only one: "3#1,6#3" is invalid)';
  }
  for (const part of parts) {
    const problem = cronPartProblem(part, spec);
    if (problem) return problem;
  }
  return undefined;
}

function cronPartProblem(part: string, spec: CronField): string | undefined {
  const number = (token: string): number => {
    const n = spec.names?.indexOf(token.toUpperCase()) ?? -1;
    return n >= 0 ? n + 1 : /^\d+$/.test(token) ? Number(token) : NaN;
  };
  const value = (token: string): string | undefined => {
    const n = number(token);
    if (Number.isNaN(n)) return `${quoteValue(token)} is not a ${spec.name} value`;
    if (n < spec.min || n > spec.max) return `${n} is outside ${spec.min}-${spec.max}`;
    return undefined;
  };
  if (spec.name === 'day-of-month' && /^\d+W$/.test(part)) return value(part.slice(0, -1));
  if (spec.name === 'day-of-week' && /^\w+L$/.test(part)) return value(part.slice(0, -1));
  if (spec.name === 'day-of-week' && /^\w+#\d$/.test(part)) {
    const [day, nth] = part.split('#');
    return value(day) ?? (Number(nth) >= 1 && Number(nth) <= 5 ? undefined : `#${nth} must be 1-5`);
  }
  const [range, step, ...more] = part.split('/');
  if (more.length > 0) return `${quoteValue(part)} has more than one step`;
  if (step !== undefined) {
    if (!/^\d+$/.test(step)) return `step ${quoteValue(step)} is not a whole number`;
    // At least 1, and at most the number of values (a longer step is the start alone; croner refuses it).
    const count = spec.max - spec.min + 1;
    if (Number(step) < 1 || Number(step) > count) return `step ${Number(step)} must be from 1 to ${count}`;
  }
  if (range === '*') return undefined;
  const bounds = range.split('-');
  if (bounds.length > 2 || bounds.some((b) => b === '')) return `${quoteValue(part)} is not a value, range or step`;
  for (const bound of bounds) {
    const problem = value(bound);
    if (problem) return problem;
  }
  if (bounds.length === 2 && number(bounds[0]) > number(bounds[1])) {
    // Quartz and croner read a range upwards only; say how to write the wrap-around.
    const name = (n: number) => spec.names?.[n - 1] ?? String(n);
    return (
      `the range ${range} runs backwards; ranges do not wrap around, so list both parts instead, ` +
      `such as ${bounds[0]}-${name(spec.max)},${name(spec.min)}-${bounds[1]}`
    );
  }
  return undefined;
}
