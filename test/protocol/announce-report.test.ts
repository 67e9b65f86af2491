import { describe, expect, it } from 'vitest';
import { type AnnounceDeps, announceReport, deduplicationIdOf } from '../../functions/protocol/announce-report';
import { type Occurrence, type OccurrenceKey, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { Announcer, Logger, OccurrenceStore, ReportAnnouncement } from '../../functions/protocol/ports';

const NOW = Date.parse('2026-11-30T06:03:00Z');
const BUCKET = 'reports-bucket';

const succeeded = (fields: Partial<Occurrence> = {}): Occurrence => ({
  jobId: 'occurrence-digest',
  scheduledTime: '2026-11-30T06:00:00Z',
  status: OccurrenceStatus.SUCCEEDED,
  attempt: 2,
  deadlineAt: '2026-11-30T12:00:00.000Z',
  createdAt: '2026-11-30T06:00:00.100Z',
  reportKey: 'reports/occurrence-digest/2026-11-30T06:00:00Z.md',
  succeededAt: '2026-11-30T06:02:10.000Z',
  ttl: 1_803_794_400,
  ...fields,
});

const notUsed = (name: string) => () => Promise.reject(new Error(`${name} must not be called when announcing`));

/** A store fake holding one row: `get` returns it; `markNotified` records the call (or fails when told to). */
function fakeStore(current: Occurrence | undefined, markNotifiedError?: Error) {
  const marked: { key: OccurrenceKey; notificationId: string; now: number }[] = [];
  const gets: OccurrenceKey[] = [];
  const store: OccurrenceStore = {
    get: async (key) => {
      gets.push(key);
      return current;
    },
    markNotified: async (key, notificationId, now) => {
      if (markNotifiedError) throw markNotifiedError;
      marked.push({ key, notificationId, now });
      return true;
    },
    create: notUsed('create'),
    claim: notUsed('claim'),
    extend: notUsed('extend'),
    complete: notUsed('complete'),
    release: notUsed('release'),
    fail: notUsed('fail'),
    failUnheld: notUsed('failUnheld'),
    completeUnheld: notUsed('completeUnheld'),
  };
  return { store, marked, gets };
}

function fakeAnnouncer() {
  const published: ReportAnnouncement[] = [];
  const announcer: Announcer = {
    publish: async (a) => {
      published.push(a);
      return `msg-${published.length}`;
    },
  };
  return { announcer, published };
}

const quietLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };

function deps(current: Occurrence | undefined, markNotifiedError?: Error) {
  const s = fakeStore(current, markNotifiedError);
  const a = fakeAnnouncer();
  const d: AnnounceDeps = {
    store: s.store,
    announcer: a.announcer,
    clock: { now: () => NOW },
    logger: quietLogger,
    bucketName: BUCKET,
  };
  return { deps: d, ...s, ...a };
}

describe('announceReport', () => {
  it('publishes a SUCCEEDED, not yet notified occurrence once with its s3:// URI, then records notifiedAt', async () => {
    const row = succeeded();
    const t = deps(row);

    await expect(announceReport(t.deps, row)).resolves.toBe('announced');

    expect(t.published).toEqual([
      {
        jobId: 'occurrence-digest',
        scheduledTime: '2026-11-30T06:00:00Z',
        reportKey: 'reports/occurrence-digest/2026-11-30T06:00:00Z.md',
        reportUri: `s3://${BUCKET}/reports/occurrence-digest/2026-11-30T06:00:00Z.md`,
        attempt: 2,
        succeededAt: '2026-11-30T06:02:10.000Z',
      },
    ]);
    expect(t.marked).toHaveLength(1);
    expect(t.marked[0]).toMatchObject({
      key: { jobId: row.jobId, scheduledTime: row.scheduledTime },
      notificationId: 'msg-1',
      now: NOW,
    });
  });

  it('reads the row as it is now rather than trusting the stream image', async () => {
    const image = succeeded(); // the stream's copy, from the transition
    const t = deps(succeeded({ notifiedAt: '2026-11-30T06:02:30.000Z' })); // a retried record: already announced

    await expect(announceReport(t.deps, image)).resolves.toBe('already-announced');

    expect(t.gets).toEqual([image]);
    expect(t.published).toEqual([]);
  });

  it('does not publish again when notifiedAt is already set', async () => {
    const row = succeeded({ notifiedAt: '2026-11-30T06:02:30.000Z', notificationId: 'msg-0' });
    const t = deps(row);

    await expect(announceReport(t.deps, row)).resolves.toBe('already-announced');

    expect(t.published).toEqual([]);
    expect(t.marked).toEqual([]);
  });

  it.each<[string, Occurrence | undefined]>([
    ['RUNNING', succeeded({ status: OccurrenceStatus.RUNNING, reportKey: undefined })],
    ['FAILED', succeeded({ status: OccurrenceStatus.FAILED, reportKey: undefined })],
    ['PENDING', succeeded({ status: OccurrenceStatus.PENDING, reportKey: undefined })],
    ['SUCCEEDED without a report key', succeeded({ reportKey: undefined })],
    ['a missing row', undefined],
  ])('does not publish for %s', async (_, current) => {
    const t = deps(current);

    await expect(announceReport(t.deps, succeeded())).resolves.toBe('not-succeeded');

    expect(t.published).toEqual([]);
    expect(t.marked).toEqual([]);
  });

  it('rethrows when recording the announcement fails, so the stream retries the record', async () => {
    const failure = new Error('ProvisionedThroughputExceeded');
    const row = succeeded();
    const t = deps(row, failure);

    await expect(announceReport(t.deps, row)).rejects.toBe(failure);

    expect(t.published).toHaveLength(1); // published, and the retry relies on the topic's deduplication id
  });

  it('rethrows a publish failure without recording a notification', async () => {
    const row = succeeded();
    const t = deps(row);
    const failure = new Error('SNS down');
    const failing: AnnounceDeps = { ...t.deps, announcer: { publish: () => Promise.reject(failure) } };

    await expect(announceReport(failing, row)).rejects.toBe(failure);
    expect(t.marked).toEqual([]);
  });
});

describe('deduplicationIdOf', () => {
  const key = { jobId: 'occurrence-digest', scheduledTime: '2026-11-30T06:00:00Z' };

  it('is the same for the same occurrence, whatever else the row carries', () => {
    expect(deduplicationIdOf(key)).toBe(deduplicationIdOf({ ...key }));
    expect(deduplicationIdOf(succeeded())).toBe(deduplicationIdOf(succeeded({ attempt: 5, notifiedAt: 'x' })));
  });

  it('differs between occurrences', () => {
    expect(deduplicationIdOf(key)).not.toBe(deduplicationIdOf({ ...key, scheduledTime: '2026-12-01T06:00:00Z' }));
    expect(deduplicationIdOf(key)).not.toBe(deduplicationIdOf({ ...key, jobId: 'other' }));
  });

  it('fits the SNS FIFO limit of 128 characters for the longest job id (64)', () => {
    expect(
      deduplicationIdOf({ jobId: 'j'.repeat(64), scheduledTime: '2026-11-30T06:00:00Z' }).length,
    ).toBeLessThanOrEqual(128);
  });
});
