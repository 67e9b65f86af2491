import { describe, expect, it } from 'vitest';
import {
  DEFAULT_JOB_SETTINGS,
  DEFAULT_RETRY_POLICY,
  JobSettingsError,
  type JobSettingsInput,
  jobSettingsProblems,
  parseJobSettingsList,
  validateJobSettingsList,
  withDefaults,
} from '../../functions/protocol/job-settings';

const SOURCE = 'JOB_SETTINGS';

/** The original design's timing: a two-minute lease, a 45 s heartbeat, a 15 s safety margin. */
const original = (overrides: Partial<JobSettingsInput> = {}): JobSettingsInput => ({
  id: 'daily-report',
  leaseSeconds: 120,
  heartbeatSeconds: 45,
  leaseSafetyMarginSeconds: 15,
  ...overrides,
});

/** jobSettingsProblems applies the defaults itself (withDefaults would throw on these inputs). */
const problemsOf = (input: JobSettingsInput): string[] => jobSettingsProblems(input, 'jobs[0]');

/** The problems parseJobSettingsList reports; fails the test if it accepts the input. */
function parseProblems(json: string | undefined): readonly string[] {
  try {
    parseJobSettingsList(json, SOURCE);
  } catch (e) {
    expect(e).toBeInstanceOf(JobSettingsError);
    return (e as JobSettingsError).problems;
  }
  throw new Error('expected the settings to be rejected');
}

describe('withDefaults', () => {
  it('fills every missing field with the defaults, including the whole retry policy', () => {
    const s = withDefaults({ id: 'a' });
    expect(s).toEqual({ id: 'a', ...DEFAULT_JOB_SETTINGS, retry: DEFAULT_RETRY_POLICY });
    expect(s).toMatchObject({
      leaseSeconds: 120,
      heartbeatSeconds: 40,
      leaseSafetyMarginSeconds: 15,
      timeoutSeconds: 300,
      retentionDays: 90,
    });
  });

  it('keeps given values, merges a partial retry policy field by field, and ignores explicit undefined', () => {
    const s = withDefaults({
      id: 'a',
      leaseSeconds: 300,
      heartbeatSeconds: undefined,
      retry: { maxAttempts: 3, jitter: undefined },
    });
    expect(s.leaseSeconds).toBe(300);
    expect(s.heartbeatSeconds).toBe(DEFAULT_JOB_SETTINGS.heartbeatSeconds);
    expect(s.retry).toEqual({ ...DEFAULT_RETRY_POLICY, maxAttempts: 3 });
  });

  it('rejects settings it cannot complete with a JobSettingsError naming every problem', () => {
    expect(() => withDefaults({ id: 'a', leaseSeconds: 5, retry: { jitter: 1 } })).toThrow(JobSettingsError);
    expect(() => withDefaults({ id: 'a', leaseSeconds: 5 })).toThrow(/settings\.leaseSeconds: must be a whole number/);
  });

  it('the defaults themselves are valid', () => {
    expect(jobSettingsProblems(withDefaults({ id: 'a' }), 'x')).toEqual([]);
  });
});

describe('jobSettingsProblems', () => {
  it('accepts the original timing 120 / 45 / 15 (one failed extend is absorbed)', () => {
    expect(problemsOf(original())).toEqual([]);
  });

  it('rejects 120 / 55 / 15 with a message naming heartbeatSeconds (2 x 55 + 15 >= 120)', () => {
    const problems = problemsOf(original({ heartbeatSeconds: 55 }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^jobs\[0\]\.heartbeatSeconds: /);
    expect(problems[0]).toContain('leaseSeconds (120)');
  });

  it('rejects the boundary where 2 x heartbeat + margin equals the lease', () => {
    // 2 x 52 + 16 = 120: the retry after one failed beat would land exactly at the give-up point.
    expect(problemsOf(original({ heartbeatSeconds: 52, leaseSafetyMarginSeconds: 16 }))).toEqual([
      expect.stringMatching(/^jobs\[0\]\.heartbeatSeconds: /),
    ]);
  });

  it('rejects a timeout of 871 s (Lambda max 900 - outcome reserve 30), naming timeoutSeconds; accepts 870', () => {
    expect(problemsOf(original({ timeoutSeconds: 871 }))).toEqual([
      expect.stringMatching(/^jobs\[0\]\.timeoutSeconds: .*870/),
    ]);
    expect(problemsOf(original({ timeoutSeconds: 870 }))).toEqual([]);
  });

  it("rejects a maximum delay that, with the skew margin added to the hide, would pass SQS's 12 h visibility limit", () => {
    // 42,300 s is 12 h less Lambda's 900 s; the hide adds leaseSafetyMarginSeconds (15) on top of the delay.
    expect(problemsOf(original({ retry: { maxDelaySeconds: 42_300, deadlineSeconds: 86_400 } }))).toEqual([
      expect.stringMatching(
        /^jobs\[0\]\.retry\.maxDelaySeconds: plus leaseSafetyMarginSeconds \(15\) must be at most 42300/,
      ),
    ]);
    expect(problemsOf(original({ retry: { maxDelaySeconds: 42_285, deadlineSeconds: 86_400 } }))).toEqual([]);
  });

  it('rejects a maximum delay below the base delay, naming retry.maxDelaySeconds', () => {
    expect(problemsOf(original({ retry: { baseDelaySeconds: 60, maxDelaySeconds: 30 } }))).toEqual([
      expect.stringMatching(/^jobs\[0\]\.retry\.maxDelaySeconds: must be at least retry\.baseDelaySeconds/),
    ]);
  });

  it('rejects a retention that does not outlive the retry deadline, naming retentionDays', () => {
    expect(problemsOf(original({ retentionDays: 1, retry: { deadlineSeconds: 2 * 86_400 } }))).toEqual([
      expect.stringMatching(/^jobs\[0\]\.retentionDays: /),
    ]);
    // Equal is not enough: the row must outlive the deadline.
    expect(problemsOf(original({ retentionDays: 1, retry: { deadlineSeconds: 86_400 } }))).toEqual([
      expect.stringMatching(/^jobs\[0\]\.retentionDays: /),
    ]);
    expect(problemsOf(original({ retentionDays: 2, retry: { deadlineSeconds: 86_400 } }))).toEqual([]);
  });

  it('rejects a retry deadline shorter than the job timeout, naming retry.deadlineSeconds', () => {
    expect(problemsOf(original({ timeoutSeconds: 600, retry: { deadlineSeconds: 300 } }))).toEqual([
      expect.stringMatching(/^jobs\[0\]\.retry\.deadlineSeconds: must be at least timeoutSeconds/),
    ]);
  });

  it.each<[string, Partial<JobSettingsInput>, RegExp]>([
    ['a bad id', { id: '-starts-with-dash' }, /^jobs\[0\]\.id: /],
    ['a fractional lease', { leaseSeconds: 120.5 }, /^jobs\[0\]\.leaseSeconds: must be a whole number/],
    ['a string heartbeat', { heartbeatSeconds: '45' as unknown as number }, /^jobs\[0\]\.heartbeatSeconds: .*"45"/],
    ['zero attempts', { retry: { maxAttempts: 0 } }, /^jobs\[0\]\.retry\.maxAttempts: /],
    ['jitter of 1', { retry: { jitter: 1 } }, /^jobs\[0\]\.retry\.jitter: /],
  ])('rejects %s, naming the field', (_, overrides, pattern) => {
    expect(problemsOf(original(overrides))).toEqual([expect.stringMatching(pattern)]);
  });

  it('reports every problem at once, not only the first', () => {
    const problems = problemsOf(
      original({ heartbeatSeconds: 55, timeoutSeconds: 871, retry: { baseDelaySeconds: 60, maxDelaySeconds: 30 } }),
    );
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'jobs[0].heartbeatSeconds',
      'jobs[0].retry.maxDelaySeconds',
      'jobs[0].timeoutSeconds',
    ]);
  });
});

describe('parseJobSettingsList', () => {
  it('returns the validated settings by id, with defaults applied', () => {
    const byId = parseJobSettingsList(JSON.stringify([original(), { id: 'other' }]), SOURCE);
    expect([...byId.keys()]).toEqual(['daily-report', 'other']);
    expect(byId.get('other')).toEqual(withDefaults({ id: 'other' }));
    expect(byId.get('daily-report')).toMatchObject({ heartbeatSeconds: 45, retry: DEFAULT_RETRY_POLICY });
  });

  it.each([undefined, '', '   '])('rejects an unset source (%j), naming it', (json) => {
    expect(parseProblems(json)).toEqual([`${SOURCE} is not set`]);
  });

  it('rejects a misspelt field instead of silently using the default, naming it', () => {
    expect(parseProblems('[{"id":"a","heartbeatSecond":55}]')).toEqual([
      expect.stringMatching(/^JOB_SETTINGS\[0\]\.heartbeatSecond: unknown field/),
    ]);
    expect(parseProblems('[{"id":"a","retry":{"maxAttempt":3}}]')).toEqual([
      expect.stringMatching(/^JOB_SETTINGS\[0\]\.retry\.maxAttempt: unknown field/),
    ]);
  });

  it.each([
    ['[null]', /JOB_SETTINGS\[0\]: must be an object of job settings, got null/],
    ['[{"id":"a","retry":"abc"}]', /JOB_SETTINGS\[0\]\.retry: must be an object/],
  ])('rejects a wrongly typed entry %s with a JobSettingsError naming it', (json, message) => {
    expect(parseProblems(json)).toEqual([expect.stringMatching(message)]);
  });

  it('rejects bad JSON, naming the source', () => {
    expect(parseProblems('[{"id": "a",]')).toEqual([expect.stringMatching(/^JOB_SETTINGS is not valid JSON: /)]);
  });

  it.each(['{"id": "a"}', '"a"', 'null'])('rejects a non-array (%s), naming the source', (json) => {
    expect(parseProblems(json)).toEqual([`${SOURCE} must be a JSON array of job settings`]);
  });

  it('rejects duplicate ids, naming the index of the second', () => {
    expect(parseProblems(JSON.stringify([{ id: 'a' }, { id: 'b' }, { id: 'a' }]))).toEqual([
      'JOB_SETTINGS[2].id: duplicate job id "a"',
    ]);
  });

  it('names the source and the index of the wrong item, like JOB_SETTINGS[1].leaseSeconds', () => {
    const problems = parseProblems(JSON.stringify([original(), { id: 'b', leaseSeconds: 5 }]));
    expect(problems).toEqual([
      expect.stringMatching(/^JOB_SETTINGS\[1\]\.leaseSeconds: must be a whole number from 10 to 900, got 5$/),
    ]);
  });

  it('validateJobSettingsList collects problems of several items into one error', () => {
    const list: JobSettingsInput[] = [original({ timeoutSeconds: 871 }), { id: 'b', retentionDays: 0 }];
    let error: unknown;
    try {
      validateJobSettingsList(list, SOURCE);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(JobSettingsError);
    const problems = (error as JobSettingsError).problems;
    expect(problems.some((p) => p.startsWith('JOB_SETTINGS[0].timeoutSeconds:'))).toBe(true);
    expect(problems.some((p) => p.startsWith('JOB_SETTINGS[1].retentionDays:'))).toBe(true);
    expect((error as Error).message).toContain('JOB_SETTINGS[1].retentionDays');
  });
});

describe('a huge bad value is quoted by its start and length only', () => {
  it('a 1 MB job id or retry policy in the settings JSON', () => {
    const json = JSON.stringify([{ id: 'i'.repeat(1_000_000) }, { id: 'ok', retry: 'r'.repeat(1_000_000) }]);
    let error: JobSettingsError | undefined;
    try {
      parseJobSettingsList(json, SOURCE);
    } catch (e) {
      error = e as JobSettingsError;
    }
    expect(error?.problems).toEqual([
      expect.stringMatching(/^JOB_SETTINGS\[1\]\.retry: must be an object, got "r+…" \(1000000 chars\)$/),
    ]);
    expect(jobSettingsProblems({ id: 'i'.repeat(1_000_000) }, SOURCE)).toEqual([
      expect.stringMatching(/^JOB_SETTINGS\.id: must be 1-64 .* got "i+…" \(1000000 chars\)$/),
    ]);
    expect(error!.message.length).toBeLessThan(300);
  });
});

describe('maxConcurrency and fairnessKey (docs/concurrency.md)', () => {
  it('keeps a whole cap and a field name, and leaves both out by default', () => {
    expect(withDefaults({ id: 'a', maxConcurrency: 50, fairnessKey: 'tenantId' })).toMatchObject({
      maxConcurrency: 50,
      fairnessKey: 'tenantId',
    });
    expect(withDefaults({ id: 'a' })).not.toHaveProperty('maxConcurrency');
  });

  it.each([0, -1, 2.5, 1001, '5'])('rejects maxConcurrency %j, naming the field and the value', (n) => {
    expect(problemsOf(original({ maxConcurrency: n as number }))).toEqual([
      expect.stringMatching(/^jobs\[0\]\.maxConcurrency: must be a whole number from 1 to 1000, got /),
    ]);
  });

  it.each(['', '1tenant', 'a.b', 'x'.repeat(65), 7])('rejects fairnessKey %j', (key) => {
    expect(problemsOf(original({ maxConcurrency: 2, fairnessKey: key as string }))).toEqual([
      expect.stringMatching(/^jobs\[0\]\.fairnessKey: must be the name of a top-level field of the schedule's input/),
    ]);
  });

  it('rejects a fairnessKey without maxConcurrency: it would order a line that never forms', () => {
    expect(problemsOf(original({ fairnessKey: 'tenantId' }))).toEqual([
      'jobs[0].fairnessKey: orders the occurrences waiting for maxConcurrency: give maxConcurrency too, got fairnessKey "tenantId" alone',
    ]);
  });
});
