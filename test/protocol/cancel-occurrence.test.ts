/**
 * protocol/cancel-occurrence.ts: an operator's cancel decided from the row and written with one conditional write,
 * decided again from the refusing row (bounded), over a store fake that applies the write's condition.
 */
import { describe, expect, it } from 'vitest';
import { CANCEL_ROUNDS, cancelOccurrence, decideCancel } from '../../functions/protocol/cancel-occurrence';
import { InvalidInputError } from '../../functions/protocol/errors';
import { iso, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { CancellableStore, CancelRequest, CancelWriteResult } from '../../functions/protocol/ports';

const { PENDING, RUNNING, RETRY_WAIT, BUFFERED, SUCCEEDED, FAILED, SKIPPED, CANCELLED } = OccurrenceStatus;
const NOW = Date.parse('2026-11-30T12:00:00.000Z');
const KEY = { jobId: 'daily-report', scheduledTime: '2026-11-30T06:00:00Z' };
const BY = 'alice@laptop (arn:aws:sts::123456789012:assumed-role/ops/alice)';

const row = (status: OccurrenceStatus, extra: Partial<Occurrence> = {}): Occurrence => ({
  ...KEY,
  status,
  attempt: 1,
  createdAt: '2026-11-30T06:00:00.100Z',
  deadlineAt: '2026-11-30T18:00:00.000Z',
  ttl: Date.parse('2026-12-30T06:00:00Z') / 1000,
  ...extra,
});
const live = row(RUNNING, { leaseId: 'L1', leaseExpiresAt: iso(NOW + 60_000) });

/** The store's side: CANCELLED only while the row is as observed and not past its commit point. */
class MemoryStore implements CancellableStore {
  writes: CancelRequest[] = [];
  /** Changes the row just before each write arrives (a racing worker); returns the row the write then meets. */
  constructor(
    public current: Occurrence | undefined,
    private readonly race: (current: Occurrence | undefined, write: number) => Occurrence | undefined = (c) => c,
  ) {}
  async get() {
    return this.current;
  }
  async cancel(_key: unknown, request: CancelRequest): Promise<CancelWriteResult> {
    this.writes.push(request);
    this.current = this.race(this.current, this.writes.length);
    const c = this.current;
    const asObserved =
      c !== undefined &&
      c.status === request.observed.status &&
      c.leaseId === request.observed.leaseId &&
      c.attempt === request.observed.attempt &&
      c.committingLease === undefined;
    if (!asObserved) return { cancelled: false, current: c };
    this.current = {
      ...c,
      status: CANCELLED,
      cancelledAt: iso(request.now),
      cancelledByOperator: request.by,
      ...(request.note === undefined ? {} : { cancelNote: request.note }),
      ...(request.revocationId === undefined ? {} : { leaseId: request.revocationId }),
    };
    return { cancelled: true };
  }
}

const depsOf = (store: CancellableStore) => ({ store, clock: { now: () => NOW }, newId: () => 'u1' });

describe('decideCancel', () => {
  it.each([PENDING, RETRY_WAIT, BUFFERED])('closes a %s occurrence without a lease to revoke', (status) => {
    expect(decideCancel(row(status))).toEqual({ action: 'cancel', revoke: false });
  });

  it.each([
    ['a live lease', live],
    ['an expired lease', row(RUNNING, { leaseId: 'L1', leaseExpiresAt: iso(NOW - 1) })],
    ['a continued run', row(RUNNING, { leaseId: 'continued:L1', leaseExpiresAt: iso(NOW - 1) })],
    ['a revoked lease', row(RUNNING, { leaseId: 'revoked-by-x', leaseExpiresAt: iso(NOW + 1000) })],
  ])('cancels a RUNNING occurrence under %s, revoking its lease id', (_case, r) => {
    expect(decideCancel(r)).toEqual({ action: 'cancel', revoke: true });
  });

  it('refuses a RUNNING occurrence whose lease reached its commit point: too late', () => {
    const d = decideCancel({ ...live, committingLease: 'L1', committingAt: iso(NOW - 5) });
    expect(d).toMatchObject({
      action: 'refuse',
      reason: expect.stringMatching(/^too late: it is committing its report/),
    });
  });

  it.each([
    ['RUNNING again', { ...live, attempt: 2, leaseId: 'L2' }],
    ['RETRY_WAIT', row(RETRY_WAIT, { leaseId: 'L1' })],
  ])('refuses a %s occurrence whose earlier lease reached its commit point: that report may still land', (_c, r) => {
    const d = decideCancel({ ...r, committingLease: 'L1', committingAt: iso(NOW - 5) });
    expect(d).toMatchObject({ action: 'refuse', reason: expect.stringMatching(/^too late: an earlier attempt/) });
  });

  it.each([
    [SUCCEEDED, /SUCCEEDED and its report is at reports\/x\.md/],
    [FAILED, /FAILED/],
    [SKIPPED, /SKIPPED \(overlap\)/],
    [CANCELLED, /CANCELLED already \(by bob\)/],
  ] as const)('refuses a finished (%s) occurrence with the reason', (status, reason) => {
    const r = row(status, { reportKey: 'reports/x.md', skipReason: 'overlap', cancelledByOperator: 'bob' });
    expect(decideCancel(r)).toEqual({ action: 'refuse', reason: expect.stringMatching(reason) });
  });

  it('refuses an unknown occurrence', () => {
    expect(decideCancel(undefined)).toEqual({ action: 'refuse', reason: 'there is no such occurrence' });
  });
});

describe('cancelOccurrence', () => {
  it('cancels a RUNNING occurrence under a live lease: one write, the lease id replaced, and when its worker stops', async () => {
    const store = new MemoryStore(live);
    const result = await cancelOccurrence(depsOf(store), KEY, { by: BY, note: ' upstream broken ' });

    expect(result).toEqual({ outcome: 'cancelled', previous: live, stopsBy: live.leaseExpiresAt });
    expect(store.writes).toEqual([
      {
        now: NOW,
        by: BY,
        note: 'upstream broken',
        observed: { status: RUNNING, leaseId: 'L1', attempt: 1 },
        revocationId: 'cancelled-by-operator-u1',
      },
    ]);
    expect(store.current).toMatchObject({ status: CANCELLED, leaseId: 'cancelled-by-operator-u1' });
  });

  it('cancels a PENDING occurrence with no note and no lease written', async () => {
    const store = new MemoryStore(row(PENDING, { attempt: 0 }));
    expect(await cancelOccurrence(depsOf(store), KEY, { by: BY })).toMatchObject({ outcome: 'cancelled' });
    expect(store.writes[0]).toEqual({
      now: NOW,
      by: BY,
      observed: { status: PENDING, leaseId: undefined, attempt: 0 },
    });
  });

  it('decides again from the refusing row: a claim raced the cancel of a PENDING one, and the RUNNING row is cancelled', async () => {
    const claimed = row(RUNNING, { attempt: 1, leaseId: 'L1', leaseExpiresAt: iso(NOW + 60_000) });
    const store = new MemoryStore(row(PENDING, { attempt: 0 }), (c, n) => (n === 1 ? claimed : c));
    const result = await cancelOccurrence(depsOf(store), KEY, { by: BY });
    expect(result).toMatchObject({ outcome: 'cancelled', previous: claimed });
    expect(store.writes.map((w) => w.observed.status)).toEqual([PENDING, RUNNING]);
  });

  it('is refused, too late, when the worker reached its commit point between the read and the write', async () => {
    const store = new MemoryStore(live, (c) => (c === undefined ? c : { ...c, committingLease: 'L1' }));
    const result = await cancelOccurrence(depsOf(store), KEY, { by: BY });
    expect(result).toMatchObject({ outcome: 'refused', status: RUNNING, reason: expect.stringMatching(/^too late/) });
    expect(store.writes).toHaveLength(1);
  });

  it('is refused with the finished status when the worker completed between the read and the write', async () => {
    const store = new MemoryStore(live, (c) => (c === undefined ? c : { ...c, status: SUCCEEDED }));
    expect(await cancelOccurrence(depsOf(store), KEY, { by: BY })).toMatchObject({
      outcome: 'refused',
      status: SUCCEEDED,
    });
  });

  it(`gives up after ${CANCEL_ROUNDS} refused writes in a row and says so`, async () => {
    let attempt = 1;
    const store = new MemoryStore(live, (c) =>
      c === undefined ? c : { ...c, attempt: ++attempt, leaseId: `L${attempt}` },
    );
    const result = await cancelOccurrence(depsOf(store), KEY, { by: BY });
    expect(result).toMatchObject({ outcome: 'refused', reason: expect.stringContaining(`${CANCEL_ROUNDS} tries`) });
    expect(store.writes).toHaveLength(CANCEL_ROUNDS);
  });

  it.each([
    ['an unknown occurrence', undefined, 'there is no such occurrence'],
    ['a SUCCEEDED one', row(SUCCEEDED), 'it SUCCEEDED: nothing to cancel'],
  ])('refuses %s and writes nothing', async (_case, current, reason) => {
    const store = new MemoryStore(current);
    expect(await cancelOccurrence(depsOf(store), KEY, { by: BY })).toEqual({
      outcome: 'refused',
      reason,
      status: current?.status,
    });
    expect(store.writes).toEqual([]);
  });

  it.each([
    ['an empty by', { by: '  ' }, /by must name who cancels/],
    ['a note too long', { by: BY, note: 'x'.repeat(501) }, /note must be at most 500 characters, got 501/],
    ['a note that is not text', { by: BY, note: 5 as unknown as string }, /note must be a string/],
  ])('refuses %s with a clear error before reading or writing', async (_case, options, message) => {
    const store = new MemoryStore(live);
    const error = await cancelOccurrence(depsOf(store), KEY, options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toMatch(message);
    expect(store.writes).toEqual([]);
  });
});
