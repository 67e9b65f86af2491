import { describe, expect, it } from 'vitest';
import {
  type AnnounceDeps,
  announceableProblem,
  announceFromStreamImage,
  announceReport,
  CLOCK_SKEW_SECONDS,
  deduplicationIdOf,
  FIFO_DEDUP_WINDOW_SECONDS,
  FRESH_IMAGE_MS,
  NOTIFIER_TIMEOUT_SECONDS,
} from '../../functions/protocol/announce-report';
import { DEFAULT_JOB_SETTINGS } from '../../functions/protocol/job-settings';
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
    markCommitting: notUsed('markCommitting'),
    complete: notUsed('complete'),
    release: notUsed('release'),
    fail: notUsed('fail'),
    skipClaimed: notUsed('skipClaimed'),
    bufferClaimed: notUsed('bufferClaimed'),
    revoke: notUsed('revoke'),
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

describe('announceFromStreamImage', () => {
  // succeeded() has succeededAt 06:02:10, NOW is 06:03:00: a record 50 s old.
  it('announces a fresh image without reading the row', async () => {
    const image = succeeded();
    const t = deps(undefined); // a read would find no row and announce nothing

    await expect(announceFromStreamImage(t.deps, image)).resolves.toBe('announced');

    expect(t.gets).toEqual([]);
    expect(t.published).toHaveLength(1);
    expect(t.marked).toHaveLength(1);
  });

  it('counts a succeededAt up to the tolerated skew in the future as fresh (the worker clock ahead)', async () => {
    const t = deps(undefined);
    await expect(announceFromStreamImage(t.deps, succeeded({ succeededAt: '2026-11-30T06:03:15.000Z' }))).resolves.toBe(
      'announced',
    );
    expect(t.gets).toEqual([]);
  });

  describe('the fresh window: as long as the FIFO deduplication window allows', () => {
    it('is 240 s: 300 s of window less 15 s of skew, 30 s of notifier timeout and 15 s of margin', () => {
      expect(FRESH_IMAGE_MS).toBe(240_000);
      // A second publish lands at most FRESH + skew + timeout after the first: still inside the window.
      expect(FRESH_IMAGE_MS / 1000 + CLOCK_SKEW_SECONDS + NOTIFIER_TIMEOUT_SECONDS).toBeLessThan(
        FIFO_DEDUP_WINDOW_SECONDS,
      );
      expect(CLOCK_SKEW_SECONDS).toBe(DEFAULT_JOB_SETTINGS.leaseSafetyMarginSeconds);
    });

    it.each([
      ['1 ms inside it', FRESH_IMAGE_MS - 1, 0],
      ['at its end', FRESH_IMAGE_MS, 1],
      ['past it', FRESH_IMAGE_MS + 1, 1],
    ])(
      'announces an image %s after succeededAt, reading the row only from the window end on',
      async (_, age, reads) => {
        const t = deps(succeeded({ succeededAt: new Date(NOW - age).toISOString() }));
        const image = succeeded({ succeededAt: new Date(NOW - age).toISOString() });

        await expect(announceFromStreamImage(t.deps, image)).resolves.toBe('announced');

        expect(t.gets).toHaveLength(reads);
        expect(t.published).toHaveLength(1);
      },
    );
  });

  it.each([
    ['older than the fresh window', { succeededAt: new Date(NOW - FRESH_IMAGE_MS).toISOString() }],
    ['without succeededAt', { succeededAt: undefined }],
    ['with an unreadable succeededAt', { succeededAt: 'soon' }],
    ['from a clock far ahead', { succeededAt: '2026-11-30T07:00:00.000Z' }],
  ])('reads the row for an image %s, and does not publish an announced one again', async (_, change) => {
    const image = succeeded(change);
    const t = deps(succeeded({ notifiedAt: '2026-11-30T06:02:11.000Z' }));

    await expect(announceFromStreamImage(t.deps, image)).resolves.toBe('already-announced');

    expect(t.gets).toHaveLength(1);
    expect(t.published).toEqual([]);
  });

  it.each<[string, unknown]>([
    ['no report key', succeeded({ reportKey: undefined })],
    ['an empty report key', succeeded({ reportKey: '' })],
    ['an attempt that is not a number', { ...succeeded(), attempt: '2' }],
    ['a status other than SUCCEEDED', succeeded({ status: OccurrenceStatus.RUNNING })],
    ['a notifiedAt that is not a string', { ...succeeded(), notifiedAt: 5 }],
  ])('reports an image with %s, and reads the row its key names instead', async (_, image) => {
    const errors: string[] = [];
    const t = deps(succeeded());
    const logged: AnnounceDeps = { ...t.deps, logger: { ...quietLogger, error: (m) => void errors.push(m) } };

    await expect(announceFromStreamImage(logged, image)).resolves.toBe('announced');

    expect(errors).toEqual(['malformed stream image of a change to SUCCEEDED; not announcing from it']);
    expect(t.gets).toEqual([{ jobId: 'occurrence-digest', scheduledTime: '2026-11-30T06:00:00Z' }]);
    expect(t.published).toHaveLength(1);
  });

  it.each<[string, unknown]>([
    ['no jobId', { ...succeeded(), jobId: undefined }],
    ['a scheduledTime that is not a string', { ...succeeded(), scheduledTime: 1 }],
    ['nothing at all', null],
  ])('skips an image with %s: nothing to read, nothing to announce', async (_, image) => {
    const t = deps(succeeded());

    await expect(announceFromStreamImage(t.deps, image)).resolves.toBe('malformed-image');

    expect(t.gets).toEqual([]);
    expect(t.published).toEqual([]);
  });
});

describe('announceableProblem', () => {
  it('accepts a SUCCEEDED row with its report key', () => {
    expect(announceableProblem(succeeded())).toBeUndefined();
    // Adopted without a claim: a first delivery after the deadline that found a report a late put had left.
    expect(announceableProblem({ ...succeeded(), attempt: 0 })).toBeUndefined();
    expect(announceableProblem(succeeded({ notifiedAt: '2026-11-30T06:02:30.000Z' }))).toBeUndefined();
  });

  it('says what is wrong', () => {
    expect(announceableProblem(succeeded({ reportKey: undefined }))).toBe('no reportKey');
    expect(announceableProblem(succeeded({ status: OccurrenceStatus.FAILED }))).toBe('status "FAILED", not SUCCEEDED');
    expect(announceableProblem({ ...succeeded(), attempt: -1 })).toBe('no attempt');
    expect(announceableProblem({ ...succeeded(), attempt: 1.5 })).toBe('no attempt');
    expect(announceableProblem({ ...succeeded(), attempt: '1' })).toBe('no attempt');
    expect(announceableProblem('SUCCEEDED')).toBe('not an object');
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
