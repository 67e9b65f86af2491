/**
 * JobProps as an app writes them, translated for the validation (seconds, strings), and the validation's problems
 * named by the props' own names: a user reads `timeout`, never `timeoutSeconds`.
 */
import { Duration, Lazy, TimeZone } from 'aws-cdk-lib';
import { ScheduleExpression, TimeWindow } from 'aws-cdk-lib/aws-scheduler';
import { describe, expect, it } from 'vitest';
import { lateAfterSecondsOf, resolveJobConfig } from '../../lib/job-config';
import { type JobOptions, OverlapPolicy } from '../../lib/job-props';
import { jobConfigOf, publicProblems } from '../../lib/job-props-config';

const WHERE = 'addJob(nightly)';
const schedule = ScheduleExpression.cron({ minute: '0', hour: '2', timeZone: TimeZone.EUROPE_BERLIN });

function problemsOf(props: JobOptions): readonly string[] {
  const translated = jobConfigOf('nightly', props, WHERE);
  if (translated.problems !== undefined) return translated.problems;
  try {
    resolveJobConfig(translated.config, WHERE);
  } catch (error) {
    return publicProblems((error as { problems: string[] }).problems, WHERE);
  }
  return [];
}

describe('Function: jobConfigOf', () => {
  it('turns every Duration into the seconds, minutes or days of its setting, and the schedule into its parts', () => {
    const translated = jobConfigOf(
      'nightly',
      {
        schedule,
        timeout: Duration.minutes(10),
        leaseDuration: Duration.minutes(3),
        heartbeatInterval: Duration.seconds(50),
        leaseSafetyMargin: Duration.seconds(20),
        retention: Duration.days(30),
        catchupWindow: Duration.hours(1),
        maxRunTime: Duration.hours(3),
        timeWindow: TimeWindow.flexible(Duration.minutes(15)),
        retry: {
          maxAttempts: 5,
          baseDelay: Duration.seconds(8),
          maxDelay: Duration.minutes(10),
          deadline: Duration.hours(2),
        },
        schedulerRetry: { retryAttempts: 10, maxEventAge: Duration.hours(1) },
        overlap: OverlapPolicy.BUFFER_ONE,
        pauseAfterFailures: 3,
      },
      WHERE,
    );
    expect(translated.config).toEqual({
      id: 'nightly',
      schedule: 'cron(0 2 * * ? *)',
      timeZone: 'Europe/Berlin',
      flexibleWindowMinutes: 15,
      schedulerRetry: { maximumRetryAttempts: 10, maximumEventAgeSeconds: 3600 },
      timeoutSeconds: 600,
      leaseSeconds: 180,
      heartbeatSeconds: 50,
      leaseSafetyMarginSeconds: 20,
      retentionDays: 30,
      retry: { maxAttempts: 5, baseDelaySeconds: 8, maxDelaySeconds: 600, deadlineSeconds: 7200 },
      overlap: 'bufferOne',
      catchupWindowSeconds: 3600,
      pauseAfterFailures: 3,
      maxRunSeconds: 10_800,
    });
  });

  it('leaves out what is not given, so that the validation applies its defaults', () => {
    expect(jobConfigOf('nightly', { schedule, timeWindow: TimeWindow.off() }, WHERE).config).toEqual({
      id: 'nightly',
      schedule: 'cron(0 2 * * ? *)',
      timeZone: 'Europe/Berlin',
      flexibleWindowMinutes: 0,
    });
  });

  it('refuses a bare number where a Duration belongs, a schedule string, and a token, naming each property', () => {
    const props = {
      schedule: 'cron(0 2 * * ? *)',
      timeout: 300,
      retry: { deadline: 3600 },
      retention: Duration.days(Lazy.number({ produce: () => 30 })),
    } as unknown as JobOptions;
    expect(jobConfigOf('nightly', props, WHERE).problems).toEqual([
      `${WHERE}.schedule: must be a ScheduleExpression such as ScheduleExpression.cron({ hour: '6', minute: '0' }), got "cron(0 2 * * ? *)"`,
      `${WHERE}.timeout: must be a Duration such as Duration.minutes(5), got 300`,
      `${WHERE}.retention: must be a Duration known at synth, not a token: the worker and the schedule are built from it`,
      `${WHERE}.retry.deadline: must be a Duration such as Duration.minutes(5), got 3600`,
    ]);
  });

  it('names the 1.0 name of a 0.1.0 property, and lists the known ones for any other unknown property', () => {
    const props = {
      schedule,
      timeoutSeconds: 300,
      id: 'nightly',
      timout: Duration.minutes(1),
    } as unknown as JobOptions;
    const problems = jobConfigOf('nightly', props, WHERE).problems ?? [];
    expect(problems).toContain(
      `${WHERE}.timeoutSeconds: unknown property; renamed to timeout (a Duration) (docs/migration.md)`,
    );
    expect(problems).toContain(
      `${WHERE}.id: unknown property; the job id is addJob's first argument (docs/migration.md)`,
    );
    expect(problems.find((p) => p.startsWith(`${WHERE}.timout:`))).toMatch(/unknown property \(known: schedule, /);
  });
});

describe('Function: publicProblems', () => {
  it("reports the validation's problems under the props' names, with units", () => {
    expect(problemsOf({ schedule, timeout: Duration.minutes(20) })).toEqual([
      `${WHERE}.timeout: must be a whole number of seconds from 1 to 870, got 1200`,
    ]);
    expect(problemsOf({ schedule, retention: Duration.hours(12) })).toEqual([
      `${WHERE}.retention: must be a whole number of days from 1 to 3650, got 0.5`,
    ]);
    expect(problemsOf({ schedule, heartbeatInterval: Duration.minutes(1) })).toEqual([
      `${WHERE}.heartbeatInterval: 2 x heartbeatInterval (60 s) + leaseSafetyMargin (15 s) must be less than leaseDuration (120 s), or a single failed extend would lose the lease`,
    ]);
  });

  it('names the time zone as part of the schedule, and a flexible window longer than the catch-up window', () => {
    expect(
      problemsOf({ schedule: ScheduleExpression.expression('rate(1 hour)', TimeZone.of('Mars/Olympus')) }),
    ).toEqual([
      `${WHERE}.schedule.timeZone: unknown time zone "Mars/Olympus"; use an IANA name such as 'Europe/Berlin' or 'UTC'`,
    ]);
    const problems = problemsOf({
      schedule,
      timeWindow: TimeWindow.flexible(Duration.minutes(30)),
      catchupWindow: Duration.minutes(10),
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${WHERE.replace(/[()]/g, '\\$&')}\\.catchupWindow: must be at least`));
  });
});

describe('lateAfter', () => {
  const resolved = (props: JobOptions) => {
    const translated = jobConfigOf('nightly', props, WHERE);
    return resolveJobConfig(translated.config!, WHERE);
  };

  it('defaults to the time window plus 5 minutes, and takes the Duration given in seconds', () => {
    expect(lateAfterSecondsOf(resolved({ schedule }))).toBe(300);
    expect(lateAfterSecondsOf(resolved({ schedule, timeWindow: TimeWindow.flexible(Duration.minutes(15)) }))).toBe(
      15 * 60 + 300,
    );
    expect(lateAfterSecondsOf(resolved({ schedule, lateAfter: Duration.minutes(45) }))).toBe(2700);
  });

  it('refuses a lateAfter under a minute or over 14 days, by its own name', () => {
    expect(problemsOf({ schedule, lateAfter: Duration.seconds(30) })).toEqual([
      expect.stringMatching(
        /^addJob\(nightly\)\.lateAfter: must be a whole number of seconds from 60 to 1209600, got 30/,
      ),
    ]);
    expect(problemsOf({ schedule, lateAfter: Duration.days(15) })).toHaveLength(1);
  });

  it('refuses a lateAfter shorter than the time window plus a minute: the alarm would fire on a healthy job', () => {
    expect(
      problemsOf({ schedule, timeWindow: TimeWindow.flexible(Duration.minutes(30)), lateAfter: Duration.minutes(20) }),
    ).toEqual([expect.stringMatching(/^addJob\(nightly\)\.lateAfter: must be at least .* = 1860, .*got 1200$/)]);
  });

  it('refuses a bare number where the Duration belongs', () => {
    expect(problemsOf({ schedule, lateAfter: 600 as unknown as Duration })).toEqual([
      expect.stringMatching(/^addJob\(nightly\)\.lateAfter: /),
    ]);
  });
});
