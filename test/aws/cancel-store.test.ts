/**
 * The writes of an operator's cancel and of the worker's commit point (aws/occurrence-store.ts), against the
 * stateful fake, which evaluates the real condition and update expressions.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { DependencyError, LeaseLostError } from '../../functions/protocol/errors';
import { iso, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { CancelRequest } from '../../functions/protocol/ports';
import { FakeAws, faults } from '../../sim/fakes/fake-aws';
import { indexed, KEY, MINUTE, NOW, occurrence, TABLE } from './fixtures';

const { PENDING, RUNNING, RETRY_WAIT, BUFFERED, CANCELLED } = OccurrenceStatus;
let aws: FakeAws;
let store: OperatorOccurrenceStore;

beforeEach(() => {
  aws = new FakeAws(() => NOW);
  store = new OperatorOccurrenceStore(DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })), TABLE);
});
afterEach(() => aws.restore());

const row = () => aws.row(KEY.jobId, KEY.scheduledTime);
const seed = (o: Occurrence) =>
  aws.table.set(`${o.jobId}|${o.scheduledTime}`, indexed(o) as unknown as Record<string, unknown>);
const running = occurrence({ status: RUNNING, attempt: 1, leaseId: 'L1', leaseExpiresAt: iso(NOW + MINUTE) });
const lease = { key: KEY, leaseId: 'L1', attempt: 1 };
const cancelOf = (o: Occurrence, extra: Partial<CancelRequest> = {}): CancelRequest => ({
  now: NOW,
  by: 'alice@host (arn:aws:iam::1:user/alice)',
  note: 'upstream broken',
  observed: { status: o.status, leaseId: o.leaseId, attempt: o.attempt },
  ...extra,
});

describe('OperatorOccurrenceStore.cancel', () => {
  it.each([PENDING, BUFFERED])(
    'closes a %s row CANCELLED with who, why, the time and a history entry',
    async (status) => {
      const waiting = occurrence({ status });
      seed(waiting);

      expect(await store.cancel(KEY, cancelOf(waiting))).toEqual({ cancelled: true });

      expect(row()).toMatchObject({
        status: CANCELLED,
        cancelledAt: iso(NOW),
        cancelledByOperator: 'alice@host (arn:aws:iam::1:user/alice)',
        cancelNote: 'upstream broken',
        history: [
          { outcome: 'cancelled', at: iso(NOW), by: 'alice@host (arn:aws:iam::1:user/alice)', note: 'upstream broken' },
        ],
      });
      expect(row()?.statusShard).toMatch(/^CANCELLED#\d+$/);
      // cancelledBy keeps its meaning: the occurrence that cancelled it under cancelOther.
      expect(row()?.cancelledBy).toBeUndefined();
    },
  );

  it('closes a RETRY_WAIT row and removes its next attempt time', async () => {
    const waiting = occurrence({ status: RETRY_WAIT, attempt: 2, leaseId: 'L2', nextAttemptAt: iso(NOW + MINUTE) });
    seed(waiting);
    expect(await store.cancel(KEY, cancelOf(waiting, { note: undefined }))).toEqual({ cancelled: true });
    expect(row()).toMatchObject({ status: CANCELLED, leaseId: 'L2' });
    expect(row()?.nextAttemptAt).toBeUndefined();
    expect(row()?.cancelNote).toBeUndefined();
  });

  it("RUNNING: replaces the lease id and keeps its expiry; the holder's extend and commit point fail after it", async () => {
    seed(running);
    expect(await store.cancel(KEY, cancelOf(running, { revocationId: 'cancelled-by-operator-u1' }))).toEqual({
      cancelled: true,
    });
    expect(row()).toMatchObject({ status: CANCELLED, leaseId: 'cancelled-by-operator-u1' });
    expect(row()?.leaseExpiresAt).toBe(running.leaseExpiresAt);

    await expect(store.extend(lease, NOW + 2 * MINUTE, NOW)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(store.markCommitting(lease, NOW)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(store.complete(lease, 'reports/x.txt', NOW)).rejects.toBeInstanceOf(LeaseLostError);
    expect(row()?.status).toBe(CANCELLED);
  });

  it('RUNNING past its commit point: refused, with the row as it is, and nothing written', async () => {
    seed(running);
    await store.markCommitting(lease, NOW - 10);
    const before = structuredClone(row());

    const result = await store.cancel(KEY, cancelOf(running, { revocationId: 'cancelled-by-operator-u1' }));

    expect(result).toEqual({ cancelled: false, current: expect.objectContaining({ committingLease: 'L1' }) });
    expect(row()).toEqual(before);
  });

  it.each([
    ['RUNNING, claimed again', { ...running, attempt: 2, leaseId: 'L2' }],
    [
      'RETRY_WAIT after a failed commit',
      occurrence({ status: RETRY_WAIT, attempt: 1, leaseId: 'L1', nextAttemptAt: iso(NOW + MINUTE) }),
    ],
  ])(
    "refuses a %s row whose earlier lease reached its commit point: that lease's put may still land",
    async (_case, r) => {
      const o = { ...r, committingLease: 'L1', committingAt: iso(NOW - MINUTE) } as Occurrence;
      seed(o);
      expect(await store.cancel(KEY, cancelOf(o, { revocationId: 'cancelled-by-operator-u2' }))).toMatchObject({
        cancelled: false,
        current: { committingLease: 'L1' },
      });
      expect(row()?.status).toBe(o.status);
    },
  );

  it.each([
    ['claimed since it was read', { status: RUNNING, attempt: 1, leaseId: 'L9', leaseExpiresAt: iso(NOW + MINUTE) }],
    [
      'claimed again under a new lease',
      { status: RUNNING, attempt: 2, leaseId: 'L2', leaseExpiresAt: iso(NOW + MINUTE) },
    ],
    ['finished since it was read', { status: 'SUCCEEDED', attempt: 1, leaseId: 'L1', reportKey: 'reports/x.txt' }],
  ] as const)('is refused when the row was %s, and returns it', async (_case, now) => {
    seed(occurrence(now as Partial<Occurrence>));
    const result = await store.cancel(KEY, cancelOf(running, { revocationId: 'cancelled-by-operator-u1' }));
    expect(result).toMatchObject({ cancelled: false, current: { status: now.status, leaseId: now.leaseId } });
    expect(row()?.status).toBe(now.status);
  });

  it('is refused for a row that does not exist, and creates none', async () => {
    expect(await store.cancel(KEY, cancelOf(occurrence()))).toEqual({ cancelled: false, current: undefined });
    expect(row()).toBeUndefined();
  });

  it('counts a retried request that finds its own cancel (a lost response) as done', async () => {
    seed(occurrence());
    aws.loseResponseOf = 'UpdateItem';
    expect(await store.cancel(KEY, cancelOf(occurrence()))).toEqual({ cancelled: true });
    expect(row()?.status).toBe(CANCELLED);
  });

  it('throws a throttled write as a transient DependencyError', async () => {
    seed(occurrence());
    aws.failNext('UpdateItem', faults.throttled);
    const error = await store.cancel(KEY, cancelOf(occurrence())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'transient', operation: 'cancel occurrence' });
  });
});

describe('DynamoOccurrenceStore.markCommitting (the commit point)', () => {
  it('records the lease and the time, fenced by the lease, in one write that leaves the status index key alone', async () => {
    seed(running);
    const shard = row()?.statusShard;
    await store.markCommitting(lease, NOW);
    expect(row()).toMatchObject({ status: RUNNING, committingLease: 'L1', committingAt: iso(NOW), statusShard: shard });
  });

  it('fails with LeaseLostError under a lease the row no longer names', async () => {
    seed({ ...running, leaseId: 'L2' });
    await expect(store.markCommitting(lease, NOW)).rejects.toBeInstanceOf(LeaseLostError);
    expect(row()?.committingLease).toBeUndefined();
  });
});

describe('DynamoOccurrenceStore.revoke (cancelOther) and the commit point', () => {
  it('leaves a RUNNING holder past its commit point to finish', async () => {
    seed(running);
    await store.markCommitting(lease, NOW);
    const revocation = { mode: 'cancel' as const, observed: running, revocationId: 'revoked-by-X', by: 'X' };
    expect(await store.revoke(KEY, revocation, NOW)).toEqual({ revoked: false });
    expect(row()).toMatchObject({ status: RUNNING, leaseId: 'L1' });
  });
});
