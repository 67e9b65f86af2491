/**
 * A Scheduler expression in words, for the jobs page: `cron(0 6 * * ? *)` is "At 06:00", `rate(15 minutes)` is
 * "Every 15 minutes", `at(2026-12-01T08:00:00)` is "Once, at 2026-12-01 08:00".
 *
 * cron() goes through cronstrue. Scheduler's cron has six fields (minutes hours day-of-month month day-of-week year,
 * with `?` in one of the two day fields) and numbers the days of the week 1-7 from Sunday; cronstrue reads a
 * seven-field expression as seconds first and year last, so a `0` second is put in front, and its
 * `dayOfWeekStartIndexZero: false` makes 1 Sunday. rate() and at() are Scheduler's own and worded here.
 */
import { toString as cronToString } from 'cronstrue';

export function scheduleInWords(expression: string): string {
  const cron = /^cron\((.*)\)$/.exec(expression.trim());
  if (cron) return cronInWords(cron[1], expression);
  const rate = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression.trim());
  if (rate) {
    const n = Number(rate[1]);
    return n === 1 ? `Every ${rate[2]}` : `Every ${n} ${rate[2]}s`;
  }
  const at = /^at\((\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?\)$/.exec(expression.trim());
  if (at) return `Once, at ${at[1]} ${at[2]}${at[3] && at[3] !== ':00' ? at[3] : ''}`;
  return expression;
}

function cronInWords(fields: string, expression: string): string {
  const parts = fields.trim().split(/\s+/);
  if (parts.length !== 6) return expression;
  try {
    return cronToString(`0 ${parts.join(' ')}`, {
      dayOfWeekStartIndexZero: false,
      use24HourTimeFormat: true,
      throwExceptionOnParseError: true,
    });
  } catch {
    // An expression Scheduler accepts but cronstrue cannot read is shown as it is rather than not at all.
    return expression;
  }
}
