/**
 * operations/bulk-occurrences.ts: selection by job, status and time range (the job's partition, or the status index
 * for a job with run-time schedules), the cap refused before any write, bad filters named with no read, the rate
 * (fake timers: no row starts before its slot), a run interrupted and resumed with its id acting on each row once,
 * transient failures retried and fatal ones stopping the run, and the injected cancel.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DependencyError, InvalidInputError } from '../../functions/protocol/errors';
import type { ManualRetryDeps, ManualRetryFields } from '../../functions/protocol/manual-retry';
import { iso, type Occurrence, type OccurrenceKey, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { ReopenableStore, ReopenRequest } from '../../functions/protocol/ports';
import type { IndexedOccurrence } from '../../functions/protocol/table-schema';
import {
  BULK_ID_PATTERN,
  type BulkCancel,
  type BulkFilter,
  type BulkSelectionReader,
  bulkCancel,
  bulkRetry,
  checkBulkFilter,
  newBulkId,
  runBulk,
  selectOccurrences,
  TooManyOccurrencesError,
} from '../../operations/bulk-occurrences';

const { PENDING, FAILED, RUNNING, SUCCEEDED } = OccurrenceStatus;
const T0 = Date.parse('2026-12-02T12:00:00Z');
const JOB = 'nightly-export';
const route = { worker: 'exports', deadlineSeconds: 3600, retentionDays: 30 };
const FILTER: BulkFilter = { jobId: JOB, statuses: [FAILED], from: '2026-11-01T00:00:00Z', to: '2026-12-01T00:00:00Z' };
const BY = 'alice@bastion (arn:aws:sts::123456789012:assumed-role/Ops/alice)';

type Row = Occurrence & ManualRetryFields;

const rowAt = (day: number, status: OccurrenceStatus = FAILED, extra: Partial<Row> = {}): Row => ({
  jobId: JOB,
  scheduledTime: `2026-11-${String(day).padStart(2, '0')}T06:00:00Z`,
  status,
  attempt: 3,
  createdAt: '2026-11-01T06:00:00Z',
  deadlineAt: '2026-11-01T07:00:00Z',
  ttl: 2_000_000_000,
  ...extra,
});

const idOf = (k: OccurrenceKey) => `${k.jobId}|${k.scheduleKey ?? ''}|${k.scheduledTime}`;

/** The table's side: rows by key; reopenFailed honours the FAILED condition and the bulk marker, as DynamoDB does. */
class MemoryTable implements ReopenableStore, BulkSelectionReader {
  readonly rows = new Map<string, Row>();
  readonly reopens: ReopenRequest[] = [];
  reads = 0;
  constructor(rows: readonly Row[]) {
    for (const row of rows) this.rows.set(idOf(row), row);
  }
  async get(key: OccurrenceKey) {
    return this.rows.get(idOf(key));
  }
  async reopenFailed(key: OccurrenceKey, request: ReopenRequest) {
    const row = this.rows.get(idOf(key));
    const marked = request.bulkId !== undefined && row?.bulkActions?.includes(request.bulkId) === true;
    if (row?.status !== FAILED || marked) return { reopened: false as const, current: row };
    this.reopens.push(request);
    const bulkActions = [...(row.bulkActions ?? []), ...(request.bulkId ? [request.bulkId] : [])];
    this.rows.set(idOf(key), { ...row, status: PENDING, attempt: 0, manualRetryAt: iso(request.now), bulkActions });
    return { reopened: true as const };
  }
  async listJobNewestFirst(
    jobId: string,
    range: { from: string; to: string; limit: number },
    statuses?: readonly OccurrenceStatus[],
  ) {
    this.reads++;
    return [...this.rows.values()]
      .filter((r) => r.jobId === jobId && r.scheduleKey === undefined && inRange(r, range))
      .filter((r) => statuses === undefined || statuses.includes(r.status))
      .sort((a, b) => b.scheduledTime.localeCompare(a.scheduledTime))
      .slice(0, range.limit);
  }
  async listIndexed(status: OccurrenceStatus, from: string, to: string): Promise<IndexedOccurrence[]> {
    this.reads++;
    return [...this.rows.values()]
      .filter((r) => r.status === status && inRange(r, { from, to }))
      .map(({ jobId, scheduleKey, scheduledTime, status: s, attempt }) => ({
        jobId,
        scheduledTime,
        status: s,
        attempt,
        ...(scheduleKey === undefined ? {} : { scheduleKey }),
      }));
  }
  async readRows(keys: readonly OccurrenceKey[]) {
    return keys.flatMap((k) => this.rows.get(idOf(k)) ?? []);
  }
}

const inRange = (r: Occurrence, range: { from: string; to: string }) =>
  r.scheduledTime >= range.from && r.scheduledTime < range.to;

function retryDeps(table: MemoryTable, send: (body: string) => Promise<void> = async () => undefined) {
  const sent: string[] = [];
  const deps: ManualRetryDeps = {
    store: table,
    queues: new Map([
      [
        'exports',
        {
          send: async (body: string) => {
            await send(body);
            sent.push(body);
          },
        },
      ],
    ]),
    clock: { now: () => Date.now() },
    jobs: new Map([[JOB, route]]),
  };
  return { deps, sent };
}

const failedRows = (n: number) => Array.from({ length: n }, (_, i) => rowAt(i + 1));
const job = { id: JOB };

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

/** Let the fake timers run a bulk run to its end. */
async function settle<T>(p: Promise<T>): Promise<T> {
  await vi.runAllTimersAsync();
  return p;
}

describe('checkBulkFilter', () => {
  it('names each wrong field: an action that cannot act on the status, reversed bounds, a bad cap', () => {
    let error: unknown;
    try {
      checkBulkFilter('retry', { ...FILTER, statuses: [PENDING], from: FILTER.to, to: FILTER.from }, 0);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    const problems = (error as InvalidInputError).problems.join('\n');
    expect(problems).toContain('statuses: retry acts only on FAILED, not PENDING');
    expect(problems).toContain('from (2026-12-01T00:00:00Z) must be before to (2026-11-01T00:00:00Z)');
    expect(problems).toContain('max: must be a whole number above 0, got 0');
  });

  it('accepts the statuses of a cancel and refuses a finished one', () => {
    expect(() => checkBulkFilter('cancel', { ...FILTER, statuses: [PENDING, RUNNING] }, 10)).not.toThrow();
    expect(() => checkBulkFilter('cancel', { ...FILTER, statuses: [SUCCEEDED] }, 10)).toThrow(
      /cancel acts only on PENDING, RETRY_WAIT, BUFFERED, RUNNING, not SUCCEEDED/,
    );
  });
});

describe('selectOccurrences', () => {
  it("selects the job's rows with the statuses in the range, oldest first, and nothing else", async () => {
    const table = new MemoryTable([
      rowAt(3),
      rowAt(1),
      rowAt(2, SUCCEEDED),
      { ...rowAt(4), jobId: 'other-job' },
      { ...rowAt(5), scheduledTime: '2026-12-01T00:00:00Z' }, // `to` is excluded
      { ...rowAt(6), scheduledTime: '2026-11-01T00:00:00Z' }, // `from` is included
    ]);

    const rows = await selectOccurrences(table, job, FILTER);

    expect(rows.map((r) => r.scheduledTime)).toEqual([
      '2026-11-01T00:00:00Z',
      '2026-11-01T06:00:00Z',
      '2026-11-03T06:00:00Z',
    ]);
  });

  it('a filter matching nothing is an empty selection', async () => {
    const table = new MemoryTable([rowAt(1, SUCCEEDED)]);

    await expect(selectOccurrences(table, job, FILTER)).resolves.toEqual([]);
  });

  it('refuses more rows than the cap, saying how to go on, and a raised cap selects them', async () => {
    const table = new MemoryTable(failedRows(6));

    const error = await selectOccurrences(table, job, FILTER, 5).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(TooManyOccurrencesError);
    expect((error as Error).message).toBe(
      'the filter matches more than 5 occurrences, more than the cap of 5; nothing was changed: narrow the time ' +
        'range or the statuses, or raise the cap (--max) after a --dry-run',
    );
    await expect(selectOccurrences(table, job, FILTER, 6)).resolves.toHaveLength(6);
  });

  it("selects a job with run-time schedules through the status index, keeping only that job's entries", async () => {
    const table = new MemoryTable([
      rowAt(2, FAILED, { scheduleKey: 'cust-b' }),
      rowAt(1, FAILED, { scheduleKey: 'cust-a' }),
      { ...rowAt(1, FAILED, { scheduleKey: 'cust-a' }), jobId: 'other-job' },
    ]);

    const rows = await selectOccurrences(table, { id: JOB, runtimeScheduleGroup: 'customers' }, FILTER);

    expect(rows.map((r) => [r.jobId, r.scheduleKey, r.scheduledTime])).toEqual([
      [JOB, 'cust-a', '2026-11-01T06:00:00Z'],
      [JOB, 'cust-b', '2026-11-02T06:00:00Z'],
    ]);
  });
});

describe('newBulkId', () => {
  it('is bulk-<UTC time>-<6 hex>, the form --resume accepts', () => {
    const id = newBulkId({ now: () => T0 }, () => 0.5);
    expect(id).toBe('bulk-20261202T120000Z-800000');
    expect(BULK_ID_PATTERN.test(id)).toBe(true);
  });
});

describe('bulkRetry', () => {
  it('reopens and enqueues each FAILED row once, recording who and the run id', async () => {
    const table = new MemoryTable(failedRows(3));
    const { deps, sent } = retryDeps(table);
    const rows = await selectOccurrences(table, job, FILTER);

    const result = await settle(bulkRetry(deps, rows, { bulkId: 'bulk-1', by: BY }));

    expect(result).toMatchObject({ total: 3, acted: 3, already: 0, refused: [], failed: [] });
    expect(sent).toHaveLength(3);
    expect(table.reopens.map((r) => [r.by, r.bulkId])).toEqual(Array(3).fill([BY, 'bulk-1']));
    expect([...table.rows.values()].every((r) => r.status === PENDING && r.bulkActions?.includes('bulk-1'))).toBe(true);
  });

  it('starts at most `rate` rows per second', async () => {
    const table = new MemoryTable(failedRows(10));
    const starts: number[] = [];
    const { deps } = retryDeps(table, async () => {
      starts.push(Date.now());
    });

    await settle(bulkRetry(deps, await selectOccurrences(table, job, FILTER), { bulkId: 'b', by: BY }, { rate: 5 }));

    expect(starts).toHaveLength(10);
    // Ten rows at 5/s: the tenth starts 1.8 s after the first, never sooner.
    expect(starts[9] - starts[0]).toBeGreaterThanOrEqual(1800);
    for (let i = 5; i < starts.length; i++) expect(starts[i] - starts[i - 5]).toBeGreaterThanOrEqual(1000);
  });

  it('resumed after an interruption, skips the rows it retried (even one that FAILED again) and retries the rest', async () => {
    const table = new MemoryTable(failedRows(8));
    const { deps, sent } = retryDeps(table);
    const stop = new AbortController();
    const first = bulkRetry(
      deps,
      await selectOccurrences(table, job, FILTER),
      { bulkId: 'bulk-r', by: BY },
      { onProgress: ({ done }) => done >= 4 && stop.abort(), signal: stop.signal },
    );
    const interrupted = await settle(first);
    expect(interrupted.stopped).toBe('interrupted');
    const reopenedFirst = interrupted.acted;
    expect(reopenedFirst).toBeGreaterThanOrEqual(4);
    expect(reopenedFirst).toBeLessThan(8);
    // One reopened row has failed again since: it is FAILED, and it carries the run's id.
    const again = [...table.rows.values()].find((r) => r.status === PENDING) as Row;
    table.rows.set(idOf(again), { ...again, status: FAILED });

    const resumed = await settle(
      bulkRetry(deps, await selectOccurrences(table, job, FILTER), { bulkId: 'bulk-r', by: BY }),
    );

    expect(resumed).toMatchObject({ acted: 8 - reopenedFirst, already: 1, refused: [], failed: [] });
    expect(sent).toHaveLength(8);
    expect(table.reopens).toHaveLength(8);
  });

  it('a row that changed since the selection is refused with the reason and left as it is', async () => {
    const table = new MemoryTable(failedRows(2));
    const { deps } = retryDeps(table);
    const rows = await selectOccurrences(table, job, FILTER);
    table.rows.set(idOf(rows[0]), { ...rows[0], status: PENDING });

    const result = await settle(bulkRetry(deps, rows, { bulkId: 'b', by: BY }));

    expect(result.acted).toBe(1);
    expect(result.refused).toEqual([
      { key: { jobId: JOB, scheduledTime: rows[0].scheduledTime }, reason: expect.stringContaining('PENDING') },
    ]);
  });

  it('retries a throttled row with backoff, and stops the run at a fatal failure', async () => {
    const table = new MemoryTable(failedRows(3));
    let sends = 0;
    const { deps } = retryDeps(table, async () => {
      sends++;
      if (sends === 1) throw new DependencyError('transient', 'send', new Error('Throttling'));
    });
    // The send's throttling surfaces as ReopenedNotEnqueuedError (the row was reopened): a failure of that row.
    const result = await settle(bulkRetry(deps, await selectOccurrences(table, job, FILTER), { bulkId: 'b', by: BY }));
    expect(result.acted).toBe(2);
    expect(result.failed).toHaveLength(1);
    expect(result.failed[0].reason).toContain('reopened as PENDING, but enqueueing it failed');

    let calls = 0;
    const flaky = await settle(
      runBulk(failedRows(2), async () => {
        calls++;
        if (calls === 1) throw new DependencyError('transient', 'reopen', new Error('Throttling'));
        return { outcome: 'acted' };
      }),
    );
    expect(flaky).toMatchObject({ acted: 2, retries: 1, failed: [] });

    const denied = await settle(
      runBulk(failedRows(5), async () => {
        throw new DependencyError('fatal', 'reopen failed occurrence', new Error('AccessDeniedException'));
      }),
    );
    expect(denied.acted).toBe(0);
    expect(denied.stopped).toContain('AccessDeniedException');
    // The workers in flight each stopped at their first row; the rest were never started.
    expect(denied.failed.length).toBeLessThanOrEqual(4);
  });

  it('refuses a non-positive rate before acting', async () => {
    await expect(runBulk(failedRows(1), async () => ({ outcome: 'acted' }), { rate: 0 })).rejects.toThrow(
      'rate must be a positive number, got 0',
    );
  });
});

describe('bulkCancel', () => {
  it('calls the injected cancel once per row, counting the refused ones with their reason', async () => {
    const rows = [rowAt(1, PENDING), rowAt(2, RUNNING), rowAt(3, PENDING)];
    const asked: string[] = [];
    const cancel: BulkCancel = async (key) => {
      asked.push(key.scheduledTime);
      return key.scheduledTime.startsWith('2026-11-03')
        ? { outcome: 'refused', reason: 'it SUCCEEDED' }
        : { outcome: 'cancelled' };
    };

    const result = await settle(bulkCancel(cancel, rows));

    expect(asked).toEqual(rows.map((r) => r.scheduledTime));
    expect(result).toMatchObject({ acted: 2, refused: [{ reason: 'it SUCCEEDED' }] });
  });
});
