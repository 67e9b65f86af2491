import { describe, expect, it } from 'vitest';
import {
  AUDIT_BUCKETS,
  auditBucketKey,
  auditBucketOf,
  bucketLabel,
  changedRow,
  checkScheduleSpec,
  InvalidScheduleError,
  isFinished,
  newRow,
  SYNC_INDEX_SHARDS,
  scheduleNameOf,
  specEquals,
  stateChangedRow,
  syncShardOf,
  tombstoneOf,
  validateScheduleSpec,
} from '../../functions/protocol/schedule-registry';
import type { ScheduleSpec } from '../../functions/protocol/schedule-registry-ports';
import { JOB, NOW } from './schedule-registry-fakes';

const WEEKLY: ScheduleSpec = { expression: 'cron(0 8 ? * MON *)', timeZone: 'Europe/Berlin' };

function problemsOf(spec: unknown, jobId: unknown = JOB, key: unknown = 'customer-42'): string[] {
  const checked = checkScheduleSpec(jobId, key, spec, NOW);
  return checked.ok ? [] : checked.problems;
}

describe('scheduleNameOf', () => {
  const keys = ['customer-42', 'a', 'alice+reports@example.com', 'tenant:42', `k${'x'.repeat(127)}`, 'A=B.c_d-e'];

  it("is at most 64 characters of Scheduler's charset for every kind of key, and the same for the same key", () => {
    for (const key of keys) {
      const name = scheduleNameOf(key);
      expect(name.length).toBeLessThanOrEqual(64);
      expect(name).toMatch(/^[0-9A-Za-z_.-]+$/);
      expect(scheduleNameOf(key)).toBe(name);
    }
  });

  it("starts with the key's audit bucket as two hex digits and a dot, so the audit's hex-digit slice holds it", () => {
    for (const key of keys) {
      expect(scheduleNameOf(key).startsWith(`${bucketLabel(auditBucketOf(key))}.`)).toBe(true);
    }
    expect(bucketLabel(0)).toBe('00');
    expect(bucketLabel(255)).toBe('ff');
  });

  it('keeps a readable start of the key with the characters Scheduler refuses replaced', () => {
    expect(scheduleNameOf('alice+reports@example.com')).toMatch(
      /^[0-9a-f]{2}\.alice_reports_example\.com\.[0-9a-f]{16}$/,
    );
  });

  it('gives different keys different names, also keys alike in their first 40 characters or after replacement', () => {
    const long = 'x'.repeat(40);
    const alike = ['a+b', 'a@b', 'a:b', 'a=b', `${long}1`, `${long}2`];
    expect(new Set(alike.map(scheduleNameOf)).size).toBe(alike.length);
    const many = Array.from({ length: 5_000 }, (_, i) => `customer-${i}`);
    expect(new Set(many.map(scheduleNameOf)).size).toBe(many.length);
  });

  it('spreads keys over every audit bucket and every sync shard', () => {
    const many = Array.from({ length: 5_000 }, (_, i) => `customer-${i}`);
    const buckets = new Set(many.map(auditBucketOf));
    expect(buckets.size).toBe(AUDIT_BUCKETS);
    expect(Math.max(...buckets)).toBe(AUDIT_BUCKETS - 1);
    const shards = new Set(many.map((k) => syncShardOf(JOB, k)));
    expect([...shards].sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: SYNC_INDEX_SHARDS }, (_, i) => String(i)),
    );
    expect(auditBucketKey(JOB, 10)).toBe(`${JOB}#0a`);
  });
});

describe('validateScheduleSpec', () => {
  it('fills in the defaults: UTC, enabled', () => {
    expect(validateScheduleSpec(JOB, 'customer-42', { expression: 'rate(1 day)' }, NOW)).toEqual({
      expression: 'rate(1 day)',
      timeZone: 'Etc/UTC',
      state: 'ENABLED',
    });
    expect(validateScheduleSpec(JOB, 'k', { ...WEEKLY, enabled: false }, NOW).state).toBe('PAUSED');
  });

  it('normalises start and end dates to UTC with milliseconds', () => {
    const checked = validateScheduleSpec(
      JOB,
      'k',
      { ...WEEKLY, startDate: '2027-01-04T09:00:00+01:00', endDate: '2027-12-31T23:00Z' },
      NOW,
    );
    expect(checked).toMatchObject({ startDate: '2027-01-04T08:00:00.000Z', endDate: '2027-12-31T23:00:00.000Z' });
  });

  it('names the job id and the key when they are malformed', () => {
    const problems = problemsOf(WEEKLY, 'bad job', 'has space');
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^jobId /);
    expect(problems[1]).toMatch(/^scheduleKey /);
    expect(problemsOf(WEEKLY, JOB, 'a#b')[0]).toMatch(/^scheduleKey /);
    expect(problemsOf(WEEKLY, JOB, 'x'.repeat(129))[0]).toMatch(/^scheduleKey /);
  });

  it.each([
    ['cron(0 8 * * MON)', /^expression cron needs exactly 6 fields/],
    ['rate(1 minutes)', /^expression rate unit must be singular/],
    ['every monday', /^expression must be a cron/],
    ['at(2026-13-01T00:00:00)', /^expression at names a date and time that does not exist/],
  ])('names the expression %s that Scheduler would refuse', (expression, problem) => {
    expect(problemsOf({ expression })).toEqual([expect.stringMatching(problem)]);
  });

  it('refuses an at() in the past in its own time zone, and takes one still ahead there', () => {
    // 09:30 in New York is 14:30 UTC: still ahead at 09:00 UTC. 09:30 UTC is ahead too; 08:30 in Berlin is not.
    expect(problemsOf({ expression: 'at(2026-12-01T09:30:00)', timeZone: 'America/New_York' })).toEqual([]);
    expect(problemsOf({ expression: 'at(2026-12-01T09:30:00)' })).toEqual([]);
    expect(problemsOf({ expression: 'at(2026-12-01T09:30:00)', timeZone: 'Europe/Berlin' })).toEqual([
      expect.stringMatching(/^expression "at\(2026-12-01T09:30:00\)" is in the past in Europe\/Berlin/),
    ]);
  });

  it('refuses an at() at a wall time its time zone skips', () => {
    expect(problemsOf({ expression: 'at(2027-03-28T02:30:00)', timeZone: 'Europe/Berlin' })).toEqual([
      expect.stringMatching(/^expression .* names a time that does not exist in Europe\/Berlin/),
    ]);
  });

  it.each([
    ['Mars/Olympus', /^timeZone "Mars\/Olympus" is not an IANA time zone name/],
    ['europe/berlin', /^timeZone "europe\/berlin" must be spelled "Europe\/Berlin"/],
    ['', /^timeZone must be an IANA time zone name/],
    [3, /^timeZone must be an IANA time zone name/],
  ])('names the time zone %j', (timeZone, problem) => {
    expect(problemsOf({ ...WEEKLY, timeZone })).toEqual([expect.stringMatching(problem)]);
  });

  it('names start and end dates without a zone, that do not exist, in the wrong order or with the end past', () => {
    expect(problemsOf({ ...WEEKLY, startDate: '2027-01-04T08:00:00' })).toEqual([
      expect.stringMatching(/^startDate must be an ISO-8601 date and time with a zone/),
    ]);
    expect(problemsOf({ ...WEEKLY, startDate: '2027-02-30T08:00:00Z' })).toEqual([
      expect.stringMatching(/^startDate names a date that does not exist/),
    ]);
    expect(problemsOf({ ...WEEKLY, startDate: '2027-02-01T00:00:00Z', endDate: '2027-01-01T00:00:00Z' })).toEqual([
      expect.stringMatching(/^endDate 2027-01-01T00:00:00.000Z must be after startDate/),
    ]);
    expect(problemsOf({ ...WEEKLY, endDate: '2026-11-30T00:00:00Z' })).toEqual([
      expect.stringMatching(/^endDate .* is in the past/),
    ]);
  });

  it('names an input that is not JSON or over 2,048 bytes, a description over 512 characters, a non-boolean enabled', () => {
    expect(problemsOf({ ...WEEKLY, input: { big: 'x'.repeat(2_100) } })).toEqual([
      expect.stringMatching(/^input must be at most 2048 bytes/),
    ]);
    expect(problemsOf({ ...WEEKLY, input: { f: () => 1 } })).toEqual([expect.stringMatching(/^input must be/)]);
    expect(problemsOf({ ...WEEKLY, description: 'd'.repeat(513) })).toEqual([
      expect.stringMatching(/^description must be at most 512 characters/),
    ]);
    expect(problemsOf({ ...WEEKLY, enabled: 'yes' })).toEqual([
      expect.stringMatching(/^enabled must be true or false/),
    ]);
  });

  it('names a field a schedule does not have (a typo), and a spec that is not an object', () => {
    expect(problemsOf({ ...WEEKLY, timezone: 'UTC' })).toEqual([
      expect.stringMatching(/^spec\.timezone is not a field of a schedule \(it has: expression, timeZone/),
    ]);
    expect(problemsOf('cron(0 8 ? * MON *)')).toEqual([expect.stringMatching(/^spec must be an object/)]);
  });

  it('reports every wrong field at once, in one InvalidScheduleError naming the job and key', () => {
    const bad = { expression: 'nope', timeZone: 'Nowhere', input: 'x'.repeat(3_000), description: 7 };
    let error: unknown;
    try {
      validateScheduleSpec(JOB, 'customer-42', bad as unknown as ScheduleSpec, NOW);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidScheduleError);
    const invalid = error as InvalidScheduleError;
    expect(invalid.problems.map((p) => p.split(' ')[0])).toEqual(['expression', 'timeZone', 'input', 'description']);
    expect(invalid.message).toMatch(/^invalid schedule weekly-report\/customer-42: expression/);
  });
});

describe('the rows', () => {
  const spec = validateScheduleSpec(JOB, 'customer-42', { ...WEEKLY, input: { plan: 'pro' } }, NOW);

  it('a new row: version 1, its name, bucket and shard, due for its projection a minute on', () => {
    const row = newRow(JOB, 'customer-42', spec, NOW, { by: 'app' });
    expect(row).toMatchObject({
      jobId: JOB,
      scheduleKey: 'customer-42',
      version: 1,
      state: 'ENABLED',
      scheduleName: scheduleNameOf('customer-42'),
      auditBucket: auditBucketKey(JOB, auditBucketOf('customer-42')),
      syncShard: syncShardOf(JOB, 'customer-42'),
      syncDueAt: '2026-12-01T09:01:00.000Z',
      createdAt: '2026-12-01T09:00:00.000Z',
      updatedBy: 'app',
    });
    expect(row.ttl).toBeUndefined();
    expect(row.deletedAt).toBeUndefined();
  });

  it('an at() row expires 30 days after its time', () => {
    const at = validateScheduleSpec(JOB, 'k', { expression: 'at(2026-12-24T18:00:00)' }, NOW);
    expect(newRow(JOB, 'k', at, NOW).ttl).toBe(Date.parse('2026-12-24T18:00:00Z') / 1000 + 30 * 86_400);
  });

  it('specEquals: the same spec with the input keys in another order is equal, any field changed is not', () => {
    const row = newRow(JOB, 'customer-42', spec, NOW);
    expect(specEquals(row, { ...spec, input: { plan: 'pro' } })).toBe(true);
    const reordered = newRow(JOB, 'k', { ...spec, input: { a: 1, b: [1, { c: 2, d: 3 }] } }, NOW);
    expect(specEquals(reordered, { ...spec, input: { b: [1, { d: 3, c: 2 }], a: 1 } })).toBe(true);
    expect(specEquals(row, { ...spec, input: { plan: 'free' } })).toBe(false);
    expect(specEquals(row, { ...spec, state: 'PAUSED' })).toBe(false);
    expect(specEquals(row, { ...spec, timeZone: 'Etc/UTC' })).toBe(false);
    expect(specEquals(row, { ...spec, description: 'x' })).toBe(false);
    expect(specEquals(tombstoneOf(row, NOW), spec)).toBe(false);
  });

  it('a changed row keeps its name and creation, takes the next version and is due again', () => {
    const row = { ...newRow(JOB, 'customer-42', spec, NOW), syncDueAt: undefined, syncedVersion: 1 };
    const changed = changedRow(row, { ...spec, expression: 'rate(1 day)' }, NOW + 5_000);
    expect(changed).toMatchObject({
      version: 2,
      expression: 'rate(1 day)',
      createdAt: row.createdAt,
      syncedVersion: 1,
    });
    expect(changed.syncDueAt).toBe('2026-12-01T09:01:05.000Z');
    expect(stateChangedRow(changed, 'PAUSED', NOW).state).toBe('PAUSED');
  });

  it('a tombstone is the next version with deletedAt, due, and expiring', () => {
    const row = newRow(JOB, 'customer-42', spec, NOW, { by: 'app' });
    const tomb = tombstoneOf(row, NOW + 1_000, { by: 'alice' });
    expect(tomb).toMatchObject({ version: 2, deletedAt: '2026-12-01T09:00:01.000Z', updatedBy: 'alice' });
    expect(tomb.syncDueAt).toBeDefined();
    expect(tombstoneOf(row, NOW).updatedBy).toBeUndefined();
    const revived = changedRow(tomb, spec, NOW + 2_000);
    expect(revived).toMatchObject({ version: 3, createdAt: '2026-12-01T09:00:02.000Z' });
    expect(revived.deletedAt).toBeUndefined();
  });

  it('isFinished: an at() whose time passed, an end date passed; a cron running on is not', () => {
    const at = newRow(JOB, 'k', validateScheduleSpec(JOB, 'k', { expression: 'at(2026-12-01T10:00:00)' }, NOW), NOW);
    expect(isFinished(at, NOW)).toBe(false);
    expect(isFinished(at, Date.parse('2026-12-01T10:00:00Z'))).toBe(true);
    const ends = newRow(JOB, 'k', { ...spec, endDate: '2027-01-01T00:00:00.000Z' }, NOW);
    expect(isFinished(ends, NOW)).toBe(false);
    expect(isFinished(ends, Date.parse('2027-01-01T00:00:00Z'))).toBe(true);
  });
});
