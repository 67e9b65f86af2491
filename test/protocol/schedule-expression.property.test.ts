/**
 * Synth and the evaluator agree on cron expressions: over generated expressions, valid-ish and broken,
 * what scheduleExpressionProblem accepts, scheduleTimes evaluates without throwing, and the times it yields are the
 * ones a brute-force reference of Scheduler's cron rules matches (none missed between them, when they are close);
 * what synth rejects, the evaluator rejects with the same message, naming the field.
 * More runs: CRON_RUNS=15000 npx vitest run test/protocol/schedule-expression.property.test.ts
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scheduleExpressionProblem } from '../../functions/protocol/schedule-expression';
import { ScheduleError, scheduleTimes } from '../../functions/protocol/schedule-times';

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
interface Field {
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}
const FIELDS: readonly Field[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 1, max: 7, names: WEEKDAYS },
  { min: 1970, max: 2199 },
];
const END = Date.parse('2199-12-31T23:59:59Z');
const MINUTE = 60_000;
/** Gaps up to this long between fire times are scanned minute by minute for a missed match. */
const SCAN_MS = 2 * 24 * 60 * MINUTE;
const SAMPLE = 5;

// ---- The reference: Scheduler's cron rules, read from its documentation, matched minute by minute ----

function numberOf(token: string, f: Field): number {
  const named = f.names?.indexOf(token.toUpperCase()) ?? -1;
  return named >= 0 ? named + 1 : Number(token);
}

/** The values one list part (`*`, `n`, `a-b`, `* /s`, `a/s`, `a-b/s`) stands for. */
function valuesOfPart(part: string, f: Field): number[] {
  const [range, step] = part.split('/');
  const [from, to] =
    range === '*'
      ? [f.min, f.max]
      : range.includes('-')
        ? range.split('-').map((t) => numberOf(t, f))
        : [numberOf(range, f), step === undefined ? numberOf(range, f) : f.max];
  const by = step === undefined ? 1 : Number(step);
  const values: number[] = [];
  for (let v = from; v <= to; v += by) values.push(v);
  return values;
}

const lastDayOf = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();
/** 1 = Sunday ... 7 = Saturday, Scheduler's numbering. */
const weekdayOf = (y: number, m: number, d: number) => new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 1;
const isWeekday = (y: number, m: number, d: number) => ![1, 7].includes(weekdayOf(y, m, d));

/** Quartz's nearest weekday to day n, within the month. */
function nearestWeekday(y: number, m: number, n: number): number | undefined {
  const last = lastDayOf(y, m);
  if (n > last) return undefined;
  const wd = weekdayOf(y, m, n);
  if (wd === 7) return n === 1 ? 3 : n - 1;
  if (wd === 1) return n === last ? n - 2 : n + 1;
  return n;
}

type Matcher = (y: number, m: number, d: number) => boolean;

function dayOfMonthMatcher(field: string): Matcher {
  if (field === '?') return () => true;
  if (field === 'L') return (y, m, d) => d === lastDayOf(y, m);
  if (field === 'LW')
    return (y, m, d) => {
      let last = lastDayOf(y, m);
      while (!isWeekday(y, m, last)) last--;
      return d === last;
    };
  const parts = field.split(',').map((part): Matcher => {
    if (part.endsWith('W')) return (y, m, d) => nearestWeekday(y, m, Number(part.slice(0, -1))) === d;
    const values = new Set(valuesOfPart(part, FIELDS[2]));
    return (_y, _m, d) => values.has(d);
  });
  return (y, m, d) => parts.some((p) => p(y, m, d));
}

function dayOfWeekMatcher(field: string): Matcher {
  if (field === '?') return () => true;
  if (field === 'L') return (y, m, d) => weekdayOf(y, m, d) === 7; // the last day of the week: Saturday
  const parts = field.split(',').map((part): Matcher => {
    const f = FIELDS[4];
    if (part.includes('#')) {
      const [day, nth] = part.split('#');
      return (y, m, d) => weekdayOf(y, m, d) === numberOf(day, f) && Math.ceil(d / 7) === Number(nth);
    }
    if (part.length > 1 && part.endsWith('L')) {
      const day = numberOf(part.slice(0, -1), f);
      return (y, m, d) => weekdayOf(y, m, d) === day && d + 7 > lastDayOf(y, m);
    }
    const values = new Set(valuesOfPart(part, f));
    return (y, m, d) => values.has(weekdayOf(y, m, d));
  });
  return (y, m, d) => parts.some((p) => p(y, m, d));
}

/** Whether the UTC minute `t` is one the expression fires at. */
function reference(fields: readonly string[]): (t: number) => boolean {
  const sets = [0, 1, 3, 5].map((i) => new Set(fields[i].split(',').flatMap((p) => valuesOfPart(p, FIELDS[i]))));
  const [minutes, hours, months, years] = sets;
  const dom = dayOfMonthMatcher(fields[2]);
  const dow = dayOfWeekMatcher(fields[4]);
  return (t) => {
    const date = new Date(t);
    const [y, m, d] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
    return (
      date.getUTCSeconds() === 0 &&
      minutes.has(date.getUTCMinutes()) &&
      hours.has(date.getUTCHours()) &&
      months.has(m) &&
      years.has(y) &&
      dom(y, m, d) &&
      dow(y, m, d)
    );
  };
}

// ---- The generator: mostly well-formed fields, with the mistakes synth once let through mixed in ----

const word = (names: readonly string[]) =>
  fc
    .tuple(fc.constantFrom(...names), fc.constantFrom('upper', 'lower'))
    .map(([n, c]) => (c === 'upper' ? n : n.toLowerCase()));

function valueArb(f: Field): fc.Arbitrary<string> {
  const numbers = fc.integer({ min: f.min - 2, max: f.max + 2 }).map(String);
  const inRange = fc.integer({ min: f.min, max: f.max }).map(String);
  return f.names
    ? fc.oneof({ weight: 3, arbitrary: inRange }, numbers, word(f.names))
    : fc.oneof({ weight: 3, arbitrary: inRange }, numbers);
}

function partArb(i: number): fc.Arbitrary<string> {
  const f = FIELDS[i];
  const v = valueArb(f);
  const count = f.max - f.min + 1;
  const step = fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 1, max: Math.min(count, 15) }) },
    fc.constantFrom(0, count, count + 1),
  );
  const common = [
    { weight: 4, arbitrary: v },
    { weight: 3, arbitrary: fc.tuple(v, v).map(([a, b]) => `${a}-${b}`) },
    { weight: 2, arbitrary: step.map((s) => `*/${s}`) },
    { weight: 2, arbitrary: fc.tuple(v, step).map(([a, s]) => `${a}/${s}`) },
    { weight: 2, arbitrary: fc.tuple(v, v, step).map(([a, b, s]) => `${a}-${b}/${s}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', 'x', '-1', '1-', '/5', '5/', '*/', '1--2', '*/5/2', '?', 'L', 'W', '#'),
    },
  ];
  if (i === 2) {
    common.push({ weight: 2, arbitrary: fc.integer({ min: 0, max: 33 }).map((n) => `${n}W`) });
  }
  if (i === 4) {
    common.push(
      { weight: 2, arbitrary: v.map((d) => `${d}L`) },
      { weight: 2, arbitrary: fc.tuple(v, fc.integer({ min: 0, max: 6 })).map(([d, n]) => `${d}#${n}`) },
    );
  }
  return fc.oneof(...common);
}

/** A field Scheduler accepts: values in range, ranges upwards, steps of 1 to the number of values. */
function goodFieldArb(i: number): fc.Arbitrary<string> {
  const f = FIELDS[i];
  const n = fc.integer({ min: f.min, max: f.max });
  const v = f.names
    ? fc.oneof(
        { weight: 2, arbitrary: n.map(String) },
        n.chain((k) => word([f.names![k - 1]])),
      )
    : n.map(String);
  const step = fc.integer({ min: 1, max: f.max - f.min + 1 });
  const range = fc.tuple(n, n).map(([a, b]) => [Math.min(a, b), Math.max(a, b)]);
  const part = fc.oneof(
    { weight: 4, arbitrary: v },
    { weight: 3, arbitrary: range.map(([a, b]) => `${a}-${b}`) },
    { weight: 2, arbitrary: step.map((st) => `*/${st}`) },
    { weight: 2, arbitrary: fc.tuple(v, step).map(([a, st]) => `${a}/${st}`) },
    { weight: 2, arbitrary: fc.tuple(range, step).map(([[a, b], st]) => `${a}-${b}/${st}`) },
    ...(i === 2 ? [{ weight: 2, arbitrary: fc.integer({ min: 1, max: 31 }).map((d) => `${d}W`) }] : []),
    ...(i === 4 ? [{ weight: 2, arbitrary: v.map((d) => `${d}L`) }] : []),
  );
  const list = fc.array(part, { minLength: 1, maxLength: 3 }).map((parts) => parts.join(','));
  const whole =
    i === 2
      ? fc.constantFrom('*', 'L', 'LW')
      : i === 4
        ? fc.oneof(
            fc.constantFrom('*', 'L'),
            fc.tuple(v, fc.integer({ min: 1, max: 5 })).map(([d, k]) => `${d}#${k}`),
          )
        : fc.constant('*');
  return fc.oneof({ weight: 1, arbitrary: whole }, { weight: 3, arbitrary: list });
}

/** Any field: well-formed mostly, else with the mistakes synth once let through mixed in. */
function fieldArb(i: number): fc.Arbitrary<string> {
  const list = fc.array(partArb(i), { minLength: 1, maxLength: 3 }).map((parts) => parts.join(','));
  const whole = i === 2 ? ['*', 'L', 'LW'] : i === 4 ? ['*', 'L'] : ['*'];
  return fc.oneof(
    { weight: 8, arbitrary: goodFieldArb(i) },
    { weight: 1, arbitrary: fc.constantFrom(...whole) },
    { weight: 2, arbitrary: list },
  );
}

const expressionArb = fc
  .record({
    minutes: fieldArb(0),
    hours: fieldArb(1),
    days: fc.oneof(
      { weight: 4, arbitrary: fc.tuple(fieldArb(2), fc.constant('?')) },
      { weight: 4, arbitrary: fc.tuple(fc.constant('?'), fieldArb(4)) },
      { weight: 1, arbitrary: fc.tuple(fieldArb(2), fieldArb(4)) },
    ),
    month: fieldArb(3),
    year: fc.oneof({ weight: 3, arbitrary: fc.constant('*') }, fieldArb(5)),
  })
  .map(({ minutes, hours, days: [dom, dow], month, year }) => [minutes, hours, dom, month, dow, year]);

const startArb = fc.oneof(
  { weight: 4, arbitrary: fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2040-01-01T00:00:00Z') }) },
  { weight: 1, arbitrary: fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2199-12-31T23:59:59Z') }) },
  // The end of Scheduler's years: the evaluator must stop there.
  { weight: 1, arbitrary: fc.date({ min: new Date('2199-12-29T00:00:00Z'), max: new Date('2199-12-31T23:59:59Z') }) },
);

const FIELD_PROBLEM =
  /^schedule ".*"( \(\d+ chars\))? in UTC: (cron (minutes|hours|day-of-month|month|day-of-week|year) field |cron needs '\?' in exactly one of day-of-month and day-of-week|cron needs exactly 6 fields)/;

describe('synth and the evaluator agree on cron expressions', () => {
  it('evaluates every expression synth accepts, to the times it names; rejects the others naming the field', () => {
    const seen = { accepted: 0, rejected: 0, times: 0 };
    fc.assert(
      fc.property(
        expressionArb,
        startArb.filter((d) => !Number.isNaN(d.getTime())),
        (fields, start) => {
          const schedule = `cron(${fields.join(' ')})`;
          const problem = scheduleExpressionProblem(schedule);
          const from = Math.ceil(start.getTime() / MINUTE) * MINUTE;
          const times: number[] = [];
          let error: unknown;
          try {
            for (const t of scheduleTimes({ schedule }, new Date(from))) {
              times.push(t.getTime());
              if (times.length === SAMPLE) break;
            }
          } catch (e) {
            error = e;
          }
          if (problem !== undefined) {
            seen.rejected++;
            expect(error).toBeInstanceOf(ScheduleError);
            expect((error as Error).message).toMatch(FIELD_PROBLEM);
            expect((error as Error).message).toContain(problem);
            return;
          }
          seen.accepted++;
          seen.times += times.length;
          expect(error).toBeUndefined();
          const fires = reference(fields);
          let previous = from - MINUTE;
          for (const t of times) {
            expect(t, `${new Date(t).toISOString()} after ${new Date(previous).toISOString()}`).toBeGreaterThan(
              previous,
            );
            expect(t).toBeLessThanOrEqual(END);
            expect(fires(t), `${schedule} fired at ${new Date(t).toISOString()}`).toBe(true);
            if (t - previous <= SCAN_MS) expectNoFireBetween(fires, previous, t, schedule);
            previous = t;
          }
          // Fewer than asked for: the schedule ended (or never fires); nothing close after the last time either.
          if (times.length < SAMPLE)
            expectNoFireBetween(fires, previous, Math.min(previous + SCAN_MS, END + 1), schedule);
        },
      ),
      { numRuns: Number(process.env.CRON_RUNS ?? 1500) },
    );
    // The generator must exercise both sides.
    expect(seen.accepted).toBeGreaterThan(150);
    expect(seen.rejected).toBeGreaterThan(150);
    expect(seen.times).toBeGreaterThan(300);
  });
});

/** No minute strictly between `after` and `before` fires. */
function expectNoFireBetween(fires: (t: number) => boolean, after: number, before: number, schedule: string): void {
  for (let t = after + MINUTE; t < before; t += MINUTE) {
    if (fires(t)) expect.fail(`${schedule} skipped ${new Date(t).toISOString()}`);
  }
}
