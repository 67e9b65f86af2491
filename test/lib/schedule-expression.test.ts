import { describe, expect, it } from 'vitest';
import { scheduleExpressionProblem } from '../../lib/schedule-expression';

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
    ['every day', /must be a cron\(\.\.\.\), rate\(\.\.\.\) or at\(\.\.\.\)/],
  ])('rejects %s, saying which field is wrong', (expression, message) => {
    expect(scheduleExpressionProblem(expression)).toMatch(message);
  });
});

describe('a huge bad expression is quoted by its start and length only (issue 14)', () => {
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
