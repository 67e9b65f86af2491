import { describe, expect, it } from 'vitest';
import { decodeEnvelope } from '../../functions/protocol/envelope';
import { decideManualRetry, ReopenedNotEnqueuedError, retryOccurrence } from '../../functions/protocol/manual-retry';
import { iso, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { ReopenableStore, ReopenRequest } from '../../functions/protocol/ports';

const { PENDING, RUNNING, RETRY_WAIT, SUCCEEDED, FAILED } = OccurrenceStatus;
const NOW = Date.parse('2026-11-30T12:00:00.000Z');
const JOB = 'daily-report';
const KEY = { jobId: JOB, scheduledTime: '2026-11-30T06:00:00Z' };
/** The job as its schedule describes it: run by worker `exports`, a 2 h deadline, 30 days of retention. */
const route = { worker: 'exports', deadlineSeconds: 7200, retentionDays: 30 };

const row = (status: OccurrenceStatus, extra: Partial<Occurrence> = {}): Occurrence => ({
  ...KEY,
  status,
  attempt: 3,
  createdAt: '2026-11-30T06:00:00.100Z',
  deadlineAt: '2026-11-30T12:00:00.000Z',
  ttl: Date.parse('2026-12-30T06:00:00Z') / 1000,
  ...extra,
});

/** The store's side of the contract: a conditional FAILED -> PENDING, as the DynamoDB adapter writes it. */
class MemoryStore implements ReopenableStore {
  reopens: ReopenRequest[] = [];
  constructor(public current: Occurrence | undefined) {}
  async get() {
    return this.current;
  }
  async reopenFailed(_key: unknown, request: ReopenRequest) {
    this.reopens.push(request);
    if (this.current?.status !== FAILED) return { reopened: false as const, current: this.current };
    this.current = {
      ...this.current,
      status: PENDING,
      attempt: 0,
      deadlineAt: iso(request.deadlineAt),
      ttl: request.ttl,
    };
    return { reopened: true as const };
  }
}

function deps(current: Occurrence | undefined, send: (body: string) => Promise<void> = async () => undefined) {
  const sent: string[] = [];
  const store = new MemoryStore(current);
  return {
    store,
    sent,
    deps: {
      store,
      queues: new Map([
        [
          'exports',
          {
            send: async (b: string) => {
              await send(b);
              sent.push(b);
            },
          },
        ],
      ]),
      clock: { now: () => NOW },
      jobs: new Map([[JOB, route]]),
    },
  };
}

describe('decideManualRetry', () => {
  const live = row(RUNNING, { leaseOwner: 'w-1', leaseExpiresAt: iso(NOW + 60_000) });
  const expired = row(RUNNING, { leaseOwner: 'w-1', leaseExpiresAt: iso(NOW - 1) });

  it('reopens a FAILED occurrence, forced or not', () => {
    expect(decideManualRetry(row(FAILED), NOW, false)).toEqual({ action: 'reopen' });
    expect(decideManualRetry(row(FAILED), NOW, true)).toEqual({ action: 'reopen' });
  });

  it.each([[false], [true]])('refuses SUCCEEDED even with force=%s, because the report is write-once', (force) => {
    const d = decideManualRetry(row(SUCCEEDED, { reportKey: 'reports/x.md' }), NOW, force);
    expect(d).toMatchObject({ action: 'refuse', forceWouldEnqueue: false });
    expect(d.action === 'refuse' && d.reason).toMatch(
      /report is at reports\/x\.md.*Not even with --force.*write-once.*adopt it/,
    );
  });

  it.each([[false], [true]])('refuses RUNNING under a live lease even with force=%s, naming the holder', (force) => {
    const d = decideManualRetry(live, NOW, force);
    expect(d).toMatchObject({ action: 'refuse', forceWouldEnqueue: false });
    expect(d.action === 'refuse' && d.reason).toContain('w-1 holds its lease until 2026-11-30T12:01:00.000Z');
  });

  it.each([
    ['RUNNING with an expired lease', expired],
    ['RETRY_WAIT past its due time', row(RETRY_WAIT, { nextAttemptAt: iso(NOW - 5000) })],
    ['PENDING', row(PENDING, { attempt: 0 })],
  ])('refuses %s unless forced, and says that --force only enqueues', (_, r) => {
    const refused = decideManualRetry(r, NOW, false);
    expect(refused).toMatchObject({ action: 'refuse', forceWouldEnqueue: true });
    expect(refused.action === 'refuse' && refused.reason).toContain(
      'Use --force to enqueue one more message (the row is left as it is',
    );
    expect(decideManualRetry(r, NOW, true)).toMatchObject({ action: 'enqueue' });
  });

  it.each([[false], [true]])(
    'refuses a RETRY_WAIT before its due time even with force=%s: the worker would drop a second message',
    (force) => {
      const d = decideManualRetry(row(RETRY_WAIT, { nextAttemptAt: iso(NOW + 5000) }), NOW, force);
      expect(d).toMatchObject({ action: 'refuse', forceWouldEnqueue: false });
      expect(d.action === 'refuse' && d.reason).toContain('the next one is due at 2026-11-30T12:00:05.000Z');
      expect(d.action === 'refuse' && d.reason).toContain('dropped as a copy of it');
    },
  );

  it('warns that a forced message for a row past its deadline ends in FAILED, not a run', () => {
    const d = decideManualRetry(row(PENDING, { deadlineAt: iso(NOW - 1) }), NOW, true);
    expect(d.action === 'enqueue' && d.note).toContain('Its deadline 2026-11-30T11:59:59.999Z has passed');
  });
});

describe('retryOccurrence', () => {
  it('reopens a FAILED occurrence with a deadline and retention counted from now, then enqueues it', async () => {
    const { store, sent, deps: d } = deps(row(FAILED, { lastError: 'Error: 503' }));

    const result = await retryOccurrence(d, KEY, { force: false });

    expect(result).toMatchObject({ outcome: 'reopened', deadlineAt: '2026-11-30T14:00:00.000Z' });
    expect(store.reopens).toEqual([
      { now: NOW, deadlineAt: NOW + 7200_000, ttl: NOW / 1000 + 30 * 86_400, worker: 'exports' },
    ]);
    expect(sent.map((b) => decodeEnvelope(b, new Set([JOB])))).toEqual([KEY]);
  });

  it('passes who retries it and the bulk run to the reopening', async () => {
    const { store, deps: d } = deps(row(FAILED));

    await retryOccurrence(d, KEY, { force: false, by: 'alice@bastion', bulkId: 'bulk-9' });

    expect(store.reopens[0]).toMatchObject({ by: 'alice@bastion', bulkId: 'bulk-9' });
  });

  it('refuses, with no write and no message, a row the same bulk run retried already', async () => {
    const { store, sent, deps: d } = deps({ ...row(FAILED), bulkActions: ['bulk-9'] } as Occurrence);

    const result = await retryOccurrence(d, KEY, { force: false, bulkId: 'bulk-9' });

    expect(result).toMatchObject({ outcome: 'refused', alreadyInBulk: true, status: FAILED });
    expect(store.reopens).toEqual([]);
    expect(sent).toEqual([]);
    // Another run (or a single retry) may reopen it.
    await expect(retryOccurrence(d, KEY, { force: false, bulkId: 'bulk-10' })).resolves.toMatchObject({
      outcome: 'reopened',
    });
  });

  it('counts a reopening refused for the bulk marker (a concurrent copy of the run) as already done', async () => {
    const { store, sent, deps: d } = deps(row(FAILED));
    store.reopenFailed = async () => ({
      reopened: false,
      current: { ...row(PENDING), bulkActions: ['bulk-9'] } as Occurrence,
    });

    await expect(retryOccurrence(d, KEY, { force: false, bulkId: 'bulk-9' })).resolves.toMatchObject({
      outcome: 'refused',
      alreadyInBulk: true,
    });
    expect(sent).toEqual([]);
  });

  it('never shortens the retention of a row that would be kept longer anyway', async () => {
    const far = Date.parse('2027-06-01T00:00:00Z') / 1000;
    const { store, deps: d } = deps(row(FAILED, { ttl: far }));

    await retryOccurrence(d, KEY, { force: false });

    expect(store.reopens[0].ttl).toBe(far);
  });

  it('refuses, without enqueueing, when the row changed between the read and the conditional write', async () => {
    const { store, sent, deps: d } = deps(row(FAILED));
    store.reopenFailed = async () => ({ reopened: false, current: row(PENDING) });

    const result = await retryOccurrence(d, KEY, { force: false });

    expect(result).toMatchObject({ outcome: 'refused', status: PENDING });
    expect(result.outcome === 'refused' && result.reason).toContain(
      'it changed while being retried: it is PENDING now',
    );
    expect(sent).toEqual([]);
  });

  it('leaves the row alone and sends one message when forced on a PENDING occurrence', async () => {
    const before = row(PENDING, { attempt: 0 });
    const { store, sent, deps: d } = deps(before);

    await expect(retryOccurrence(d, KEY, { force: true })).resolves.toMatchObject({
      outcome: 'enqueued',
      status: PENDING,
    });

    expect(store.reopens).toEqual([]);
    expect(store.current).toBe(before);
    expect(sent).toHaveLength(1);
  });

  it('refuses an occurrence that does not exist, and a job that is not configured', async () => {
    await expect(retryOccurrence(deps(undefined).deps, KEY, { force: true })).resolves.toMatchObject({
      outcome: 'refused',
      reason: 'there is no such occurrence',
    });
    await expect(
      retryOccurrence(deps(row(FAILED)).deps, { ...KEY, jobId: 'nope' }, { force: false }),
    ).resolves.toMatchObject({
      outcome: 'refused',
      reason: expect.stringContaining('"nope" is not one of the deployed jobs'),
    });
  });

  it("refuses a job whose worker's queue is unknown, naming the worker", async () => {
    const d = deps(row(FAILED)).deps;
    await expect(retryOccurrence({ ...d, queues: new Map() }, KEY, { force: false })).resolves.toMatchObject({
      outcome: 'refused',
      reason: expect.stringContaining('the queue of worker "exports"'),
    });
  });

  it('says how to recover when the row was reopened but the message could not be sent', async () => {
    const { store, deps: d } = deps(row(FAILED), () => Promise.reject(new Error('SQS down')));

    const error = await retryOccurrence(d, KEY, { force: false }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ReopenedNotEnqueuedError);
    expect((error as Error).message).toContain('run the retry again with --force');
    expect(store.current?.status).toBe(PENDING);
    // ... and the forced retry that the message asks for is allowed for a PENDING row.
    expect(decideManualRetry(store.current!, NOW, true).action).toBe('enqueue');
  });
});
