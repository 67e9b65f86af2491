import { describe, expect, it } from 'vitest';
import { sampleJobs } from '../../examples/sample-app/sample-jobs';
import { ValidationError } from '../../lib/errors';
import { DEFAULT_TIME_ZONE, resolveJobConfigs, type ScheduledJobConfig } from '../../lib/job-config';
import { configOf } from './fixtures/test-stack';

const valid: ScheduledJobConfig = { id: 'daily', schedule: 'cron(0 6 * * ? *)', timeZone: 'Europe/Berlin' };

/** The problems resolveJobConfigs reports for these configs; fails the test if it accepts them. */
function problemsOf(configs: ScheduledJobConfig[]): readonly string[] {
  try {
    resolveJobConfigs(configs);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as ValidationError).problems;
  }
  throw new Error('expected the configuration to be rejected');
}

describe('resolveJobConfigs', () => {
  it('accepts the sample jobs and the original timing of lease 120 s / heartbeat 45 s', () => {
    expect(() => resolveJobConfigs(sampleJobs.map((job) => configOf({ id: job.id, ...job.props })))).not.toThrow();
    const [{ settings }] = resolveJobConfigs([{ ...valid, leaseSeconds: 120, heartbeatSeconds: 45 }]);
    expect(settings).toMatchObject({ leaseSeconds: 120, heartbeatSeconds: 45 });
  });

  it('applies the schedule defaults: UTC, no flexible window, enabled, Scheduler retry 185 / 24 h', () => {
    const jobs = resolveJobConfigs([{ id: 'a', schedule: 'rate(1 hour)' }]);
    expect(jobs[0]).toMatchObject({
      timeZone: DEFAULT_TIME_ZONE,
      flexibleWindowMinutes: 0,
      enabled: true,
      schedulerRetry: { maximumRetryAttempts: 185, maximumEventAgeSeconds: 86_400 },
    });
  });

  it('keeps the schedule fields out of the settings handed to the functions', () => {
    const [{ settings }] = resolveJobConfigs([{ ...valid, description: 'x', enabled: false, schedulerRetry: {} }]);
    expect(Object.keys(settings).sort()).toEqual([
      'heartbeatSeconds',
      'id',
      'jobMetrics',
      'leaseSafetyMarginSeconds',
      'leaseSeconds',
      'maxRunSeconds',
      'overlap',
      'retentionDays',
      'retry',
      'timeoutSeconds',
    ]);
  });

  it('rejects a heartbeat too close to the lease, naming jobs[i].heartbeatSeconds', () => {
    const problems = problemsOf([valid, { ...valid, id: 'b', leaseSeconds: 120, heartbeatSeconds: 55 }]);
    expect(problems).toEqual([expect.stringMatching(/^jobs\[1\]\.heartbeatSeconds: /)]);
  });

  it('rejects an unknown or miscapitalised time zone, naming jobs[i].timeZone', () => {
    expect(problemsOf([{ ...valid, timeZone: 'Mars/Olympus_Mons' }])).toEqual([
      expect.stringMatching(/^jobs\[0\]\.timeZone: unknown/),
    ]);
    expect(problemsOf([{ ...valid, timeZone: 'europe/berlin' }])).toEqual([
      expect.stringMatching(/^jobs\[0\]\.timeZone: .*"Europe\/Berlin"/),
    ]);
  });

  it.each([
    ['cron(0 6 * * ?)', /6 fields/],
    ['cron(0 6 * * ? * *)', /6 fields/],
    ['rate(1 minutes)', /singular/],
    ['rate(5 hour)', /singular/],
    ['rate(0 minutes)', /positive/],
    ['rate(5 weeks)', /rate must look like/],
    ['at(2030-01-31T06:00:00Z)', /at must look like/],
    ['at(2030-02-30T06:00:00)', /does not exist/],
    ['0 6 * * *', /cron\(\.\.\.\), rate\(\.\.\.\) or at\(\.\.\.\)/],
  ])('rejects the schedule %s, naming jobs[i].schedule', (schedule, message) => {
    const problems = problemsOf([{ ...valid, schedule }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^jobs\[0\]\.schedule: /);
    expect(problems[0]).toMatch(message);
  });

  it.each([
    'cron(0 6 * * ? *)',
    'cron(0/15 8-17 ? * MON-FRI *)',
    'rate(1 minute)',
    'rate(10 days)',
    'at(2030-01-31T06:00:00)',
  ])('accepts the schedule %s', (schedule) => {
    expect(() => resolveJobConfigs([{ ...valid, schedule }])).not.toThrow();
  });

  it('rejects a misspelt setting instead of deploying its default, naming it', () => {
    const typo = { ...valid, heartbeatSecond: 55 } as unknown as ScheduledJobConfig;
    expect(problemsOf([typo])).toEqual([expect.stringMatching(/^jobs\[0\]\.heartbeatSecond: unknown field/)]);
  });

  it('lists the schedule fields too when it rejects an unknown field', () => {
    const typo = { ...valid, timezone: 'UTC' } as unknown as ScheduledJobConfig;
    expect(problemsOf([typo])).toEqual([
      expect.stringMatching(/^jobs\[0\]\.timezone: unknown field \(known: .*timeZone/),
    ]);
  });

  it('rejects duplicate job ids, naming the second one', () => {
    expect(problemsOf([valid, { ...valid }])).toEqual([
      expect.stringMatching(/^jobs\[1\]\.id: duplicate job id "daily"/),
    ]);
  });

  it('rejects a timeout above 870 s (900 s Lambda limit minus the outcome reserve), naming jobs[i].timeoutSeconds', () => {
    expect(problemsOf([{ ...valid, timeoutSeconds: 871 }])).toEqual([
      expect.stringMatching(/^jobs\[0\]\.timeoutSeconds: /),
    ]);
    expect(() => resolveJobConfigs([{ ...valid, timeoutSeconds: 870 }])).not.toThrow();
  });

  it('validates maxRunSeconds at synth: at least timeoutSeconds, at least 60, at most 13.5 days; default 6 hours', () => {
    expect(problemsOf([{ ...valid, timeoutSeconds: 300, maxRunSeconds: 120 }])).toEqual([
      'jobs[0].maxRunSeconds: must be at least timeoutSeconds (300), got 120',
    ]);
    expect(problemsOf([{ ...valid, maxRunSeconds: 13.5 * 86_400 + 1 }])).toEqual([
      expect.stringMatching(/^jobs\[0\]\.maxRunSeconds: /),
    ]);
    expect(resolveJobConfigs([valid])[0].settings.maxRunSeconds).toBe(21_600);
    expect(() => resolveJobConfigs([{ ...valid, maxRunSeconds: 7_200 }])).not.toThrow();
  });

  it('rejects flexible windows and Scheduler retry values outside their AWS bounds', () => {
    const problems = problemsOf([
      {
        ...valid,
        flexibleWindowMinutes: 1441,
        schedulerRetry: { maximumRetryAttempts: 186, maximumEventAgeSeconds: 59 },
      },
    ]);
    expect(problems).toEqual([
      expect.stringMatching(/^jobs\[0\]\.flexibleWindowMinutes: /),
      expect.stringMatching(/^jobs\[0\]\.schedulerRetry\.maximumRetryAttempts: /),
      expect.stringMatching(/^jobs\[0\]\.schedulerRetry\.maximumEventAgeSeconds: /),
    ]);
  });

  it('rejects a lease as long as a whole Lambda invocation', () => {
    const problems = problemsOf([{ ...valid, leaseSeconds: 900, heartbeatSeconds: 200 }]);
    expect(problems).toEqual([expect.stringMatching(/^jobs\[0\]\.leaseSeconds: must be less than 900/)]);
  });

  it('reports every problem of every job in one error', () => {
    const error = (() => {
      try {
        resolveJobConfigs([
          { ...valid, timeZone: 'Nowhere/City' },
          { ...valid, id: 'b', schedule: 'cron(0 6 * * *)', heartbeatSeconds: 60 },
        ]);
      } catch (e) {
        return e as ValidationError;
      }
      throw new Error('expected the configuration to be rejected');
    })();
    expect(error.problems.map((p) => p.split(':')[0])).toEqual([
      'jobs[0].timeZone',
      'jobs[1].heartbeatSeconds',
      'jobs[1].schedule',
    ]);
    expect(error.message).toContain('jobs[1].schedule');
  });

  it.each([
    ['sometimes', /must be one of skip, bufferOne, bufferAll, cancelOther, allowAll, got "sometimes"/],
    ['Skip', /must be one of .*got "Skip"/],
    [1, /must be one of .*got 1/],
  ])('rejects the overlap %j, naming jobs[i].overlap', (overlap, message) => {
    const problems = problemsOf([{ ...valid, overlap: overlap as never }]);
    expect(problems).toEqual([expect.stringMatching(/^jobs\[0\]\.overlap: /)]);
    expect(problems[0]).toMatch(message);
  });

  it.each([0, 1001, 2.5, -1, '3'])('rejects pauseAfterFailures %j, naming jobs[i].pauseAfterFailures', (n) => {
    expect(problemsOf([{ ...valid, pauseAfterFailures: n as number }])).toEqual([
      expect.stringMatching(/^jobs\[0\]\.pauseAfterFailures: must be a whole number from 1 to 1000/),
    ]);
  });

  it.each([59, 90.5, '600'])('rejects catchupWindowSeconds %j outside its range, naming the field', (n) => {
    expect(problemsOf([{ ...valid, catchupWindowSeconds: n as number }])).toEqual([
      expect.stringMatching(/^jobs\[0\]\.catchupWindowSeconds: must be a whole number from 60 to /),
    ]);
  });

  it('rejects a catch-up window longer than the retry deadline, naming catchupWindowSeconds', () => {
    expect(problemsOf([{ ...valid, catchupWindowSeconds: 3601, retry: { deadlineSeconds: 3600 } }])).toEqual([
      'jobs[0].catchupWindowSeconds: must be at most retry.deadlineSeconds (3600), got 3601',
    ]);
  });

  it('rejects a catch-up window that the flexible window plus the 60 s margin does not fit in', () => {
    expect(problemsOf([{ ...valid, flexibleWindowMinutes: 15, catchupWindowSeconds: 959 }])).toEqual([
      expect.stringMatching(
        /^jobs\[0\]\.catchupWindowSeconds: must be at least flexibleWindowMinutes x 60 \(900\) \+ 60 = 960, .*got 959$/,
      ),
    ]);
    const [job] = resolveJobConfigs([{ ...valid, flexibleWindowMinutes: 15, catchupWindowSeconds: 960 }]);
    expect(job.settings.catchupWindowSeconds).toBe(960);
  });

  it('checks the default window (the retry deadline) against the flexible window too', () => {
    const problems = problemsOf([{ ...valid, flexibleWindowMinutes: 60, retry: { deadlineSeconds: 3600 } }]);
    expect(problems).toEqual([
      expect.stringMatching(
        /^jobs\[0\]\.catchupWindowSeconds: .*3660.*not set, so it is retry\.deadlineSeconds \(3600\)$/,
      ),
    ]);
  });

  it('accepts the policy settings and keeps them in the settings handed to the functions', () => {
    const [{ settings }] = resolveJobConfigs([
      { ...valid, overlap: 'bufferAll', catchupWindowSeconds: 600, pauseAfterFailures: 3 },
    ]);
    expect(settings).toMatchObject({ overlap: 'bufferAll', catchupWindowSeconds: 600, pauseAfterFailures: 3 });
  });

  it('takes runtimeSchedules: true instead of a schedule, kept out of the settings handed to the functions', () => {
    const [job] = resolveJobConfigs([{ id: 'weekly-report', runtimeSchedules: true }]);
    expect(job).toMatchObject({ runtimeSchedules: true, enabled: true });
    expect(job.schedule).toBeUndefined();
    expect(Object.keys(job.settings)).not.toContain('runtimeSchedules');
    expect(resolveJobConfigs([valid])[0].runtimeSchedules).toBe(false);
  });

  it('rejects both or neither of schedule and runtimeSchedules, and runtimeSchedules with enabled false', () => {
    expect(problemsOf([{ ...valid, runtimeSchedules: true }])).toEqual([
      expect.stringMatching(/^jobs\[0\]\.runtimeSchedules: give either schedule .* not both/),
    ]);
    expect(problemsOf([{ id: 'a' }, { id: 'b', runtimeSchedules: false }])).toEqual([
      expect.stringMatching(/^jobs\[0\]\.schedule: give schedule .* or runtimeSchedules: true/),
      expect.stringMatching(/^jobs\[1\]\.schedule: give schedule/),
    ]);
    expect(problemsOf([{ id: 'a', runtimeSchedules: true, enabled: false }])).toEqual([
      expect.stringMatching(/^jobs\[0\]\.enabled: a job with runtimeSchedules cannot be disabled/),
    ]);
  });

  it('rejects an empty job list', () => {
    expect(problemsOf([])).toEqual(['jobs: at least one job is needed']);
  });
});

describe('a huge bad value is quoted by its start and length only', () => {
  it('a 1 MB schedule, time zone or enabled flag', () => {
    const huge = 'c'.repeat(1_000_000);
    const problems = problemsOf([
      { ...valid, schedule: huge },
      { ...valid, id: 'b', timeZone: huge },
      { ...valid, id: 'c', enabled: huge as unknown as boolean },
    ]);
    expect(problems).toHaveLength(3);
    for (const problem of problems) {
      expect(problem).toContain('…" (1000000 chars)');
      expect(problem.length).toBeLessThan(300);
    }
  });
});
