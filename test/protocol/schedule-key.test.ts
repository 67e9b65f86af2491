/** functions/protocol/schedule-key.ts and the parts of the occurrence model that a schedule key changes. */
import { describe, expect, it } from 'vitest';
import { deduplicationIdOf, messageGroupIdOf } from '../../functions/protocol/announce-report';
import { decodeEnvelope, encodeEnvelope } from '../../functions/protocol/envelope';
import { reportKeyOf } from '../../functions/protocol/occurrence';
import {
  MAX_SCHEDULE_INPUT_BYTES,
  scheduleInput,
  scheduleKey,
  seriesKeyOf,
  seriesOf,
} from '../../functions/protocol/schedule-key';
import { fromTableItem, STATUS_INDEX_SHARDS, shardOf, tableKeyOf } from '../../functions/protocol/table-schema';
import { CachedWholeJobPauses } from '../../functions/protocol/whole-job-pause';

const T = '2026-11-30T06:00:00Z';

describe('series', () => {
  it('is the job id for a fixed schedule and jobId#key for a run-time one, and splits back at the first #', () => {
    expect(seriesOf({ jobId: 'report' })).toBe('report');
    expect(seriesOf({ jobId: 'report', scheduleKey: 'cust-1' })).toBe('report#cust-1');
    expect(seriesKeyOf('report')).toEqual({ jobId: 'report' });
    expect(seriesKeyOf('report#tenant:42@x.io')).toEqual({ jobId: 'report', scheduleKey: 'tenant:42@x.io' });
  });

  it('a row goes to the table under its series and comes back as job and key', () => {
    const key = { jobId: 'report', scheduleKey: 'cust-1', scheduledTime: T };
    expect(tableKeyOf(key)).toEqual({ jobId: 'report#cust-1', scheduledTime: T });
    expect(fromTableItem({ jobId: 'report#cust-1', scheduledTime: T, status: 'PENDING' })).toEqual({
      ...key,
      status: 'PENDING',
    });
    expect(fromTableItem({ jobId: 'report', scheduledTime: T })).toEqual({ jobId: 'report', scheduledTime: T });
  });

  it("reads a row's bulkActions string set (a Set from the document client) as a sorted array, which JSON can print", () => {
    const row = fromTableItem({ jobId: 'report', scheduledTime: T, bulkActions: new Set(['bulk-b', 'bulk-a']) });
    expect(row.bulkActions).toEqual(['bulk-a', 'bulk-b']);
    expect(JSON.stringify(row)).toContain('"bulkActions":["bulk-a","bulk-b"]');
  });

  it("spreads one job's 100,000 keys due at one time over every status-index shard, within 10% of even", () => {
    const counts = new Array<number>(STATUS_INDEX_SHARDS).fill(0);
    for (let i = 0; i < 100_000; i++)
      counts[shardOf({ jobId: 'report', scheduleKey: `cust-${i}`, scheduledTime: T })]++;
    const even = 100_000 / STATUS_INDEX_SHARDS;
    expect(Math.max(...counts)).toBeLessThan(even * 1.1);
    expect(Math.min(...counts)).toBeGreaterThan(even * 0.9);
    // A fixed schedule's shard is what it was before schedule keys existed (the series is the job id).
    let hash = 0x811c9dc5;
    for (const c of `report\u0000${T}`) hash = Math.imul(hash ^ c.charCodeAt(0), 0x01000193) >>> 0;
    expect(shardOf({ jobId: 'report', scheduledTime: T })).toBe(hash % STATUS_INDEX_SHARDS);
  });

  it('reports and queue messages carry the key; a message without one names the fixed schedule, as before', () => {
    const key = { jobId: 'report', scheduleKey: 'cust-1', scheduledTime: T };
    expect(reportKeyOf(key, 'pdf')).toBe(`reports/report/cust-1/${T}.pdf`);
    expect(reportKeyOf({ jobId: 'report', scheduledTime: T }, 'pdf')).toBe(`reports/report/${T}.pdf`);
    const jobs = new Set(['report']);
    expect(decodeEnvelope(encodeEnvelope(key), jobs)).toEqual(key);
    expect(decodeEnvelope(encodeEnvelope({ jobId: 'report', scheduledTime: T }), jobs)).toEqual({
      jobId: 'report',
      scheduledTime: T,
    });
    expect(() =>
      decodeEnvelope(JSON.stringify({ v: 1, jobId: 'report', scheduleKey: 'a/b', scheduledTime: T }), jobs),
    ).toThrow(/scheduleKey must be 1-128 letters/);
  });

  it('announcements of a key stay within SNS FIFO limits (128 characters) and apart from every other key', () => {
    const long = 'k'.repeat(128);
    const id = deduplicationIdOf({ jobId: 'j'.repeat(64), scheduleKey: long, scheduledTime: T });
    expect(id.length).toBeLessThanOrEqual(128);
    expect(messageGroupIdOf({ jobId: 'report', scheduleKey: 'a' })).not.toBe(
      messageGroupIdOf({ jobId: 'report', scheduleKey: 'b' }),
    );
    expect(deduplicationIdOf({ jobId: 'report', scheduledTime: T })).toBe(`report#${T}`);
  });
});

describe('scheduleKey', () => {
  it.each(['cust-42', '0b7f5a4e-9c1d-4a57-8e3b-1f2d3c4b5a69', 'tenant:42', 'ann+reports@example.com', 'a'.repeat(128)])(
    'accepts %s',
    (key) => expect(scheduleKey('scheduleKey', key)).toEqual({ ok: true, value: key }),
  );

  it.each([
    ['', 'an empty string'],
    ['a'.repeat(129), '129 characters'],
    ['has space', 'a space'],
    ['a/b', "a '/' (it would be a folder in the report key)"],
    ['a#b', "a '#' (the series separator)"],
    ['-lead', 'a leading dash'],
  ])('rejects %j: %s, naming the field', (key) => {
    const checked = scheduleKey('scheduleKey', key);
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.error).toMatch(/^scheduleKey must be 1-128 letters/);
  });

  it('rejects what is not a string', () => {
    expect(scheduleKey('key', 42)).toEqual({ ok: false, error: expect.stringContaining('got number') });
  });
});

describe('scheduleInput', () => {
  it('accepts JSON up to the limit and names the field and size past it', () => {
    expect(scheduleInput('input', { customerId: 42, tags: ['a'], on: true, none: null })).toMatchObject({ ok: true });
    const at = 'x'.repeat(MAX_SCHEDULE_INPUT_BYTES - 2); // with its two quotes: exactly the limit
    expect(scheduleInput('input', at)).toMatchObject({ ok: true });
    expect(scheduleInput('input', `${at}é`)).toEqual({
      ok: false,
      error: `input must be at most ${MAX_SCHEDULE_INPUT_BYTES} bytes as JSON, got ${MAX_SCHEDULE_INPUT_BYTES + 2} bytes`,
    });
  });

  it.each([
    ['a function', { f: () => 1 }],
    ['NaN', { n: Number.NaN }],
    ['a Date', { d: new Date(0) }],
  ])('rejects %s', (_what, value) => {
    expect(scheduleInput('input', value)).toMatchObject({ ok: false, error: expect.stringMatching(/^input must be/) });
  });
});

describe('CachedWholeJobPauses', () => {
  it('reads the job state row at most once per interval per job, then again', async () => {
    let now = 0;
    let reads = 0;
    let pausedAt: string | undefined;
    const pauses = new CachedWholeJobPauses(
      {
        read: async (jobId) => {
          reads++;
          return { jobId, scheduledTime: '#job', version: 1, ...(pausedAt ? { pausedAt } : {}) };
        },
      },
      { now: () => now },
      15_000,
    );
    expect(await pauses.isPaused('report')).toBe(false);
    pausedAt = '2026-11-30T06:00:00.000Z';
    now = 14_999;
    expect(await pauses.isPaused('report')).toBe(false);
    expect(reads).toBe(1);
    now = 15_000;
    expect(await pauses.isPaused('report')).toBe(true);
    expect(reads).toBe(2);
    // The starts of one batch share a read in flight.
    now = 30_000;
    expect(await Promise.all([pauses.isPaused('report'), pauses.isPaused('report')])).toEqual([true, true]);
    expect(reads).toBe(3);
  });

  it('does not keep a failed read: the next start reads again', async () => {
    let fail = true;
    const pauses = new CachedWholeJobPauses(
      {
        read: async (jobId) => {
          if (fail) throw new Error('throttled');
          return { jobId, scheduledTime: '#job', version: 1 };
        },
      },
      { now: () => 0 },
    );
    await expect(pauses.isPaused('report')).rejects.toThrow('throttled');
    fail = false;
    expect(await pauses.isPaused('report')).toBe(false);
  });
});
