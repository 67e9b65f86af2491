import { describe, expect, it } from 'vitest';
import { ScheduledJobsError } from '../../functions/protocol/errors';
import {
  instantOfWallTime,
  ScheduleError,
  scheduleTimes,
  scheduleTimesBetween,
} from '../../functions/protocol/schedule-times';

const iso = (d: Date): string => d.toISOString().replace('.000Z', 'Z');
function first(schedule: string, from: string, count: number, timeZone?: string): string[] {
  const out: string[] = [];
  for (const t of scheduleTimes({ schedule, timeZone }, new Date(from))) {
    out.push(iso(t));
    if (out.length === count) break;
  }
  return out;
}

describe('cron schedules in a time zone', () => {
  it('reads the hour in the zone: 06:00 Berlin is 05:00Z in winter and 04:00Z in summer', () => {
    expect(first('cron(0 6 * * ? *)', '2026-12-01T00:00:00Z', 2, 'Europe/Berlin')).toEqual([
      '2026-12-01T05:00:00Z',
      '2026-12-02T05:00:00Z',
    ]);
    expect(first('cron(0 6 * * ? *)', '2027-07-01T00:00:00Z', 1, 'Europe/Berlin')).toEqual(['2027-07-01T04:00:00Z']);
  });

  it('skips a time that does not exist at spring-forward (02:30 on 28 March 2027 in Berlin)', () => {
    expect(first('cron(30 2 * * ? *)', '2027-03-27T00:00:00Z', 3, 'Europe/Berlin')).toEqual([
      '2027-03-27T01:30:00Z',
      '2027-03-29T00:30:00Z',
      '2027-03-30T00:30:00Z',
    ]);
  });

  it('runs a repeated time once, at its first occurrence, at fall-back (02:30 on 25 October 2026 in Berlin)', () => {
    expect(first('cron(30 2 * * ? *)', '2026-10-24T00:00:00Z', 3, 'Europe/Berlin')).toEqual([
      '2026-10-24T00:30:00Z',
      '2026-10-25T00:30:00Z',
      '2026-10-26T01:30:00Z',
    ]);
  });

  it('runs an every-30-minutes schedule once per wall-clock time through the repeated hour', () => {
    expect(first('cron(0/30 * * * ? *)', '2026-10-24T23:30:00Z', 6, 'Europe/Berlin')).toEqual([
      '2026-10-24T23:30:00Z', // 01:30 CEST
      '2026-10-25T00:00:00Z', // 02:00 CEST
      '2026-10-25T00:30:00Z', // 02:30 CEST; 02:00 and 02:30 CET are not repeated
      '2026-10-25T02:00:00Z', // 03:00 CET
      '2026-10-25T02:30:00Z',
      '2026-10-25T03:00:00Z',
    ]);
  });

  it('reads day-of-week the Scheduler way: 1 is Sunday, 2 is Monday', () => {
    // 2026-11-30 is a Monday.
    expect(first('cron(0 9 ? * 1 *)', '2026-11-30T00:00:00Z', 1)).toEqual(['2026-12-06T09:00:00Z']);
    expect(first('cron(0 9 ? * 2 *)', '2026-11-30T00:00:00Z', 1)).toEqual(['2026-11-30T09:00:00Z']);
    expect(first('cron(0 9 ? * MON-FRI *)', '2026-12-04T10:00:00Z', 1)).toEqual(['2026-12-07T09:00:00Z']);
  });

  it('supports L, W, # and the year field', () => {
    expect(first('cron(0 0 L * ? *)', '2027-02-01T00:00:00Z', 1)).toEqual(['2027-02-28T00:00:00Z']);
    // 15 May 2027 is a Saturday: the nearest weekday is Friday the 14th.
    expect(first('cron(0 0 15W * ? *)', '2027-05-01T00:00:00Z', 1)).toEqual(['2027-05-14T00:00:00Z']);
    // The last Friday (6) of December 2026, and the second Tuesday (3) of January 2027.
    expect(first('cron(0 0 ? * 6L *)', '2026-12-01T00:00:00Z', 1)).toEqual(['2026-12-25T00:00:00Z']);
    expect(first('cron(0 0 ? * 3#2 *)', '2027-01-01T00:00:00Z', 1)).toEqual(['2027-01-12T00:00:00Z']);
    expect(first('cron(0 0 1 1 ? 2028)', '2026-01-01T00:00:00Z', 2)).toEqual(['2028-01-01T00:00:00Z']);
  });

  it('reads L alone in day-of-week as the last day of the week, Saturday (7)', () => {
    // 2026-12-05 and 2026-12-12 are Saturdays.
    expect(first('cron(0 9 ? * L *)', '2026-12-01T00:00:00Z', 2)).toEqual([
      '2026-12-05T09:00:00Z',
      '2026-12-12T09:00:00Z',
    ]);
    expect(first('cron(0 9 ? * L *)', '2026-12-01T00:00:00Z', 2)).toEqual(
      first('cron(0 9 ? * SAT *)', '2026-12-01T00:00:00Z', 2),
    );
  });

  it('evaluates a step from a named start (MON/2: Monday, Wednesday, Friday)', () => {
    expect(first('cron(0 9 ? * MON/2 *)', '2026-11-30T00:00:00Z', 4)).toEqual([
      '2026-11-30T09:00:00Z',
      '2026-12-02T09:00:00Z',
      '2026-12-04T09:00:00Z',
      '2026-12-07T09:00:00Z',
    ]);
    expect(first('cron(0 0 1 JAN/5 ? *)', '2026-01-01T00:00:00Z', 3)).toEqual([
      '2026-01-01T00:00:00Z',
      '2026-06-01T00:00:00Z',
      '2026-11-01T00:00:00Z',
    ]);
  });

  it("counts a year step from 1970, the first of Scheduler's years (*/7: 2019, 2026, 2033)", () => {
    expect(first('cron(0 0 1 1 ? */7)', '2020-01-01T00:00:00Z', 2)).toEqual([
      '2026-01-01T00:00:00Z',
      '2033-01-01T00:00:00Z',
    ]);
  });

  it('reads Scheduler\'s "from n every m" (5/20) as croner\'s range', () => {
    expect(first('cron(5/20 10 * * ? *)', '2026-12-01T00:00:00Z', 3)).toEqual([
      '2026-12-01T10:05:00Z',
      '2026-12-01T10:25:00Z',
      '2026-12-01T10:45:00Z',
    ]);
  });

  it('includes a fire time equal to the start', () => {
    expect(first('cron(0 6 * * ? *)', '2026-12-01T06:00:00Z', 1)).toEqual(['2026-12-01T06:00:00Z']);
  });
});

describe('rate and at schedules', () => {
  it('fires a rate every interval from its anchor', () => {
    expect(first('rate(15 minutes)', '2026-12-01T10:00:00Z', 3)).toEqual([
      '2026-12-01T10:00:00Z',
      '2026-12-01T10:15:00Z',
      '2026-12-01T10:30:00Z',
    ]);
    expect(first('rate(1 day)', '2026-12-01T10:00:00.400Z', 2)).toEqual([
      '2026-12-01T10:00:01Z',
      '2026-12-02T10:00:01Z',
    ]);
  });

  it('fires at() once, at its wall-clock time in the zone, and not before the start', () => {
    expect(first('at(2027-01-31T06:00:00)', '2026-12-01T00:00:00Z', 5, 'Europe/Berlin')).toEqual([
      '2027-01-31T05:00:00Z',
    ]);
    expect(first('at(2027-01-31T06:00:00)', '2027-02-01T00:00:00Z', 5, 'Europe/Berlin')).toEqual([]);
  });

  it('never fires at() for a wall-clock time skipped by daylight saving', () => {
    expect(first('at(2027-03-28T02:30:00)', '2027-01-01T00:00:00Z', 5, 'Europe/Berlin')).toEqual([]);
  });
});

describe('ranges and look-back', () => {
  it('lists the fire times in [from, to)', () => {
    const times = scheduleTimesBetween(
      { schedule: 'cron(0 6 * * ? *)' },
      new Date('2026-12-01T06:00:00Z'),
      new Date('2026-12-04T06:00:00Z'),
      100,
    );
    expect(times.map(iso)).toEqual(['2026-12-01T06:00:00Z', '2026-12-02T06:00:00Z', '2026-12-03T06:00:00Z']);
  });

  it('refuses a range with more fire times than the limit, naming the limit', () => {
    expect(() =>
      scheduleTimesBetween(
        { schedule: 'rate(1 minute)' },
        new Date('2026-12-01T00:00:00Z'),
        new Date('2026-12-02T00:00:00Z'),
        100,
      ),
    ).toThrow(/fires more than 100 times between 2026-12-01T00:00:00.000Z and 2026-12-02T00:00:00.000Z/);
  });
});

describe("the end of Scheduler's years", () => {
  it('stops a yearly cron with year * after 2199', () => {
    expect(first('cron(0 0 1 1 ? *)', '2198-06-01T00:00:00Z', 5)).toEqual(['2199-01-01T00:00:00Z']);
  });

  it('stops at 2199-12-31T23:59:59Z in UTC, even where the wall clock is still in 2199', () => {
    // 18:00 in New York on 31 December 2199 is 23:00Z; 20:00 there is 01:00Z on 1 January 2200.
    expect(first('cron(0 18,20 * * ? *)', '2199-12-31T12:00:00Z', 5, 'America/New_York')).toEqual([
      '2199-12-31T23:00:00Z',
    ]);
  });

  it('stops a rate schedule at the same end, and never starts before 1970', () => {
    expect(first('rate(6 hours)', '2199-12-31T12:00:00Z', 5)).toEqual(['2199-12-31T12:00:00Z', '2199-12-31T18:00:00Z']);
    expect(first('rate(1 day)', '1969-12-30T12:00:00Z', 2)).toEqual(['1970-01-01T12:00:00Z', '1970-01-02T12:00:00Z']);
    expect(first('cron(0 0 1 1 ? 1970)', '1969-01-01T00:00:00Z', 2, 'Asia/Tokyo')).toEqual([]); // 1969-12-31T15:00Z
  });

  it('ends the list of times in a range that runs past 2199', () => {
    const times = scheduleTimesBetween(
      { schedule: 'cron(0 0 1 * ? *)' },
      new Date('2199-10-15T00:00:00Z'),
      new Date('2300-01-01T00:00:00Z'),
      100,
    );
    expect(times.map(iso)).toEqual(['2199-11-01T00:00:00Z', '2199-12-01T00:00:00Z']);
  });
});

describe('bad schedules', () => {
  it.each([
    ['cron(*/0 * * * ? *)', 'minutes'],
    ['cron(0 1-5/0 * * ? *)', 'hours'],
    ['cron(0 0 5-1 * ? *)', 'day-of-month'],
    ['cron(0 0 ? * FRI-MON *)', 'day-of-week'],
    ['cron(0 0 ? * 3#1,6#3 *)', 'day-of-week'],
  ])('rejects %s with a ScheduleError naming the %s field, as synth does', (schedule, field) => {
    expect(() => first(schedule, '2026-12-01T00:00:00Z', 1)).toThrow(ScheduleError);
    expect(() => first(schedule, '2026-12-01T00:00:00Z', 1)).toThrow(`cron ${field} field`);
  });

  it('rejects an invalid expression with the problem named', () => {
    expect(() => first('cron(0 6 * * *)', '2026-12-01T00:00:00Z', 1)).toThrow(ScheduleError);
    expect(() => first('cron(0 6 * * *)', '2026-12-01T00:00:00Z', 1)).toThrow(ScheduledJobsError);
    expect(() => first('cron(0 6 * * *)', '2026-12-01T00:00:00Z', 1)).toThrow(/cron needs exactly 6 fields/);
  });

  it('rejects an unknown time zone', () => {
    expect(() => first('cron(0 6 * * ? *)', '2026-12-01T00:00:00Z', 1, 'Mars/Olympus')).toThrow(
      /unknown time zone "Mars\/Olympus"/,
    );
  });
});

describe('wall-clock to instant', () => {
  it('maps a repeated wall time to its first instant and a skipped one to none', () => {
    expect(instantOfWallTime(Date.parse('2026-10-25T02:30:00Z'), 'Europe/Berlin')).toBe(
      Date.parse('2026-10-25T00:30:00Z'),
    );
    expect(instantOfWallTime(Date.parse('2027-03-28T02:30:00Z'), 'Europe/Berlin')).toBeUndefined();
    expect(instantOfWallTime(Date.parse('2027-03-28T02:30:00Z'), 'UTC')).toBe(Date.parse('2027-03-28T02:30:00Z'));
  });
});
