import { describe, expect, it } from 'vitest';
import { scheduleExpressionProblem } from '../../functions/protocol/schedule-expression';

describe('scheduleExpressionProblem', () => {
  it.each([
    'cron(0 6 * * ? *)',
    'cron(0/15 8-17 ? * MON-FRI *)',
    'cron(0,30 */2 1,15 * ? *)',
    'cron(0 3 ? JAN-MAR * 2027)',
    'cron(0 3 L * ? *)',
    'cron(0 3 15W * ? *)',
    'cron(0 3 ? * 6L *)',
    'cron(0 3 ? * 2#1 *)',
    'cron(0 3 ? * L *)', // the last day of the week: Saturday
    'cron(0/60 3 ? * * *)', // a step as long as the field: once an hour
    'cron(0 3 ? * MON/2 *)',
    'cron(0 3 1 1 ? 1970-2199/10)',
    'rate(1 minute)',
    'rate(10 days)',
    'at(2030-01-31T06:00:00)',
  ])('accepts %s', (expression) => {
    expect(scheduleExpressionProblem(expression)).toBeUndefined();
  });

  it.each([
    ['cron(0 3 * * MON *)', /'\?' in exactly one of day-of-month and day-of-week, got "\*" and "MON"/],
    ['cron(0 3 ? * ? *)', /'\?' in exactly one of day-of-month and day-of-week/],
    ['cron(60 3 ? * * *)', /minutes field "60": 60 is outside 0-59/],
    ['cron(0 27 ? * * *)', /hours field "27": 27 is outside 0-23/],
    ['cron(0 3 ? * FOO *)', /day-of-week field "FOO": "FOO" is not a day-of-week value/],
    ['cron(0 3 ? 13 * *)', /month field "13": 13 is outside 1-12/],
    ['cron(? 3 * * ? *)', /minutes field "\?": '\?' is allowed only in the day fields/],
    ['cron(0 3 ? * 2#6 *)', /#6 must be 1-5/],
    ['cron(0/x 3 * * ? *)', /step "x" is not a whole number/],
    ['cron(0 3 1- * ? *)', /"1-" is not a value, range or step/],
    ['cron(0 3 * * 1)', /exactly 6 fields/],
    ['rate(1 minutes)', /singular for 1/],
    ['at(2030-02-30T06:00:00)', /does not exist/],
    // The trigger rejects a scheduled time outside 1970-2199, so synth rejects such an at() too.
    ['at(2200-01-01T00:00:00)', /^at\(\) must name a time in 1970-2199, the years a scheduled time can have, got /],
    ['at(1969-12-31T23:59:59)', /^at\(\) must name a time in 1970-2199/],
    // What synth once accepted and the evaluator could not evaluate.
    ['cron(*/0 * * * ? *)', /^cron minutes field "\*\/0": step 0 must be from 1 to 60, in /],
    ['cron(0 1-5/0 * * ? *)', /^cron hours field "1-5\/0": step 0 must be from 1 to 24, in /],
    ['cron(*/61 * * * ? *)', /^cron minutes field "\*\/61": step 61 must be from 1 to 60, in /],
    ['cron(0 0 ? * */8 *)', /^cron day-of-week field "\*\/8": step 8 must be from 1 to 7, in /],
    ['cron(*/5/2 * * * ? *)', /^cron minutes field "\*\/5\/2": "\*\/5\/2" has more than one step/],
    ['cron(0 0 5-1 * ? *)', /^cron day-of-month field "5-1": the range 5-1 runs backwards/],
    ['cron(0 0 ? * FRI-MON *)', /^cron day-of-week field "FRI-MON": the range FRI-MON runs backwards/],
    ['cron(0 0 ? NOV-FEB * *)', /^cron month field "NOV-FEB": the range NOV-FEB runs backwards/],
    ['cron(0 0 ? * 3#1,6#3 *)', /^cron day-of-week field "3#1,6#3": a '#' expression must be the whole field/],
    ['cron(0 0 ? * 2#1,4 *)', /^cron day-of-week field "2#1,4": a '#' expression must be the whole field/],
    ['cron(0 0 1 1 ? 2100-2300)', /^cron year field "2100-2300": 2300 is outside 1970-2199/],
    ['cron(0 0 1 1 ? 2200)', /^cron year field "2200": 2200 is outside 1970-2199/],
    ['every day', /must be a cron\(\.\.\.\), rate\(\.\.\.\) or at\(\.\.\.\)/],
  ])('rejects %s, saying which field is wrong', (expression, message) => {
    expect(scheduleExpressionProblem(expression)).toMatch(message);
  });
});

describe('a huge bad expression is quoted by its start and length only', () => {
  it.each([
    ['cron(', ')'],
    ['rate(', ')'],
    ['at(', ')'],
    ['x', ''],
    ['cron(0 0 * * ? ', ')'],
  ])('%s…%s of 1 MB', (start, end) => {
    const problem = scheduleExpressionProblem(`${start}${'9'.repeat(1_000_000)}${end}`)!;
    expect(problem).toMatch(/…" \(\d+ chars\)/);
    expect(problem.length).toBeLessThan(400);
  });
});
