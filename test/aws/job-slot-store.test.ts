/**
 * aws/job-slot-store.ts (and the fenced writes of aws/occurrence-store.ts the policies add), against the stateful
 * fake, which evaluates the real condition and update expressions.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DynamoJobSlotStore } from '../../functions/aws/job-slot-store';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { DependencyError, LeaseLostError } from '../../functions/protocol/errors';
import { iso, type Occurrence } from '../../functions/protocol/occurrence';
import { FakeAws, faults } from '../../sim/fakes/fake-aws';
import { indexed, KEY, MINUTE, NOW, occurrence, TABLE } from './fixtures';

const JOB = KEY.jobId;
const O = KEY.scheduledTime;
const H = '2026-11-30T05:00:00Z';
let aws: FakeAws;
let slots: DynamoJobSlotStore;
let store: DynamoOccurrenceStore;

beforeEach(() => {
  aws = new FakeAws(() => NOW);
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
  slots = new DynamoJobSlotStore(doc, TABLE);
  store = new DynamoOccurrenceStore(doc, TABLE);
});
afterEach(() => aws.restore());

const state = () => aws.row(JOB, '#job');
const seedState = (fields: Record<string, unknown>) =>
  aws.table.set(`${JOB}|#job`, { jobId: JOB, scheduledTime: '#job', version: 5, ...fields });
const seedRow = (row: Occurrence) =>
  aws.table.set(`${row.jobId}|${row.scheduledTime}`, indexed(row) as unknown as Record<string, unknown>);

describe('DynamoJobSlotStore.tryTake (the fast path)', () => {
  it('creates the job-state row with the slot when there is none', async () => {
    expect(await slots.tryTake(JOB, O, 'L')).toEqual({ written: true });
    expect(state()).toEqual({ jobId: JOB, scheduledTime: '#job', slotTime: O, slotLeaseId: 'L', version: 1 });
  });

  it("takes a slot that already names this occurrence (its earlier attempt's), under the new lease", async () => {
    seedState({ slotTime: O, slotLeaseId: 'old' });
    expect(await slots.tryTake(JOB, O, 'L')).toEqual({ written: true });
    expect(state()).toMatchObject({ slotTime: O, slotLeaseId: 'L', version: 6 });
  });

  it.each([
    ['another occurrence holds the slot', { slotTime: H, slotLeaseId: 'h' }],
    ['the job is paused', { pausedAt: iso(NOW) }],
    ['something is buffered', { buffer: [H] }],
  ])('is refused when %s, and returns the row as it was', async (_case, fields) => {
    seedState(fields);
    const before = structuredClone(state());
    expect(await slots.tryTake(JOB, O, 'L')).toEqual({ written: false, state: before });
    expect(state()).toEqual(before);
  });

  it('a throttled write is a transient DependencyError', async () => {
    aws.failNext('UpdateItem', faults.throttled);
    const error = await slots.tryTake(JOB, O, 'L').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect((error as DependencyError).kind).toBe('transient');
  });
});

describe('DynamoJobSlotStore.writeIfVersion (compare and swap)', () => {
  it('writes the slot and the buffer at the version read, and increments it', async () => {
    seedState({ slotTime: H, slotLeaseId: 'h', buffer: [O] });
    expect(await slots.writeIfVersion(JOB, 5, { slot: { slotTime: O, slotLeaseId: 'L' }, buffer: [] })).toEqual({
      written: true,
    });
    expect(state()).toEqual({ jobId: JOB, scheduledTime: '#job', slotTime: O, slotLeaseId: 'L', version: 6 });
  });

  it('is refused at another version, returning the row as it is', async () => {
    seedState({ buffer: [H] });
    const result = await slots.writeIfVersion(JOB, 4, { buffer: [H, O] });
    expect(result).toEqual({ written: false, state: expect.objectContaining({ version: 5, buffer: [H] }) });
  });

  it('version undefined: only while the row does not exist', async () => {
    expect(await slots.writeIfVersion(JOB, undefined, { buffer: [O] })).toEqual({ written: true });
    expect(state()).toMatchObject({ version: 1, buffer: [O] });
    expect((await slots.writeIfVersion(JOB, undefined, { buffer: [] })).written).toBe(false);
  });
});

describe('DynamoJobSlotStore.release', () => {
  it('frees the slot held under the lease, counts a failure, and returns the row after', async () => {
    seedState({ slotTime: O, slotLeaseId: 'L', buffer: [H], consecutiveFailures: 1 });
    const released = await slots.release(JOB, 'L', 'failed');
    expect(released).toEqual({
      released: true,
      state: {
        jobId: JOB,
        scheduledTime: '#job',
        version: 6,
        buffer: [H],
        consecutiveFailures: 2,
        countedLeaseId: 'L',
      },
    });
    expect(state()).toEqual(released.state);
  });

  it('a counting release whose response was lost is released once: the SDK retry, refused by it, reads as released', async () => {
    seedState({ slotTime: O, slotLeaseId: 'L', consecutiveFailures: 1 });
    aws.loseResponseOf = 'UpdateItem';
    const released = await slots.release(JOB, 'L', 'failed');
    expect(released).toMatchObject({ released: true, state: { version: 6, consecutiveFailures: 2 } });
    expect(state()).toMatchObject({ version: 6, consecutiveFailures: 2, countedLeaseId: 'L' });
    expect(state()?.slotTime).toBeUndefined();
  });

  it('a success sets the failures back to 0; without counting, they are left alone', async () => {
    seedState({ slotTime: O, slotLeaseId: 'L', consecutiveFailures: 3 });
    expect((await slots.release(JOB, 'L', 'succeeded')).state?.consecutiveFailures).toBe(0);
    seedState({ slotTime: O, slotLeaseId: 'L', consecutiveFailures: 3 });
    expect((await slots.release(JOB, 'L', undefined)).state?.consecutiveFailures).toBe(3);
  });

  it('is refused when the slot was taken over under another lease, leaving it', async () => {
    seedState({ slotTime: H, slotLeaseId: 'other' });
    expect(await slots.release(JOB, 'L', 'failed')).toEqual({
      released: false,
      state: expect.objectContaining({ slotTime: H, slotLeaseId: 'other', version: 5 }),
    });
  });
});

describe('DynamoJobSlotStore: failures and the pause', () => {
  it('countFailures (allowAll) creates the row and counts', async () => {
    expect(await slots.countFailures(JOB, 'failed', 'L1')).toMatchObject({ version: 1, consecutiveFailures: 1 });
    expect(await slots.countFailures(JOB, 'succeeded', 'L2')).toMatchObject({ version: 2, consecutiveFailures: 0 });
  });

  it('countFailures counts a lease once: the SDK retry of a count whose response was lost changes nothing', async () => {
    expect(await slots.countFailures(JOB, 'failed', 'L1')).toMatchObject({ consecutiveFailures: 1 });
    aws.loseResponseOf = 'UpdateItem';
    expect(await slots.countFailures(JOB, 'failed', 'L2')).toMatchObject({ version: 2, consecutiveFailures: 2 });
    expect(state()).toMatchObject({ version: 2, consecutiveFailures: 2, countedLeaseId: 'L2' });
    expect(await slots.countFailures(JOB, 'failed', 'L2')).toMatchObject({ version: 2, consecutiveFailures: 2 });
  });

  it('pauseIfVersion pauses once: refused when the row changed or is paused already, with the row as it was', async () => {
    seedState({ consecutiveFailures: 3 });
    const pause = { pausedAt: NOW, pausedBy: 'pauseAfterFailures', pauseCause: 'failures' as const, pauseNote: 'n' };
    expect(await slots.pauseIfVersion(JOB, 4, pause)).toEqual({
      written: false,
      state: expect.objectContaining({ version: 5, consecutiveFailures: 3 }),
    });
    expect(await slots.pauseIfVersion(JOB, 5, pause)).toEqual({ written: true });
    expect(state()).toMatchObject({ version: 6, pausedAt: iso(NOW), pausedBy: 'pauseAfterFailures', pauseNote: 'n' });
    expect(await slots.pauseIfVersion(JOB, 6, pause)).toMatchObject({ written: false, state: { version: 6 } });
  });

  it('pauseIfVersion whose response was lost: the SDK retry is refused by the pause itself, and returns it', async () => {
    seedState({ consecutiveFailures: 3 });
    const pause = { pausedAt: NOW, pausedBy: 'pauseAfterFailures', pauseCause: 'failures' as const, pauseNote: 'n' };
    aws.loseResponseOf = 'UpdateItem';
    expect(await slots.pauseIfVersion(JOB, 5, pause)).toEqual({
      written: false,
      state: expect.objectContaining({ version: 6, pausedAt: iso(NOW), pausedBy: 'pauseAfterFailures' }),
    });
  });
});

describe('DynamoOccurrenceStore: the writes of a start the policy refused', () => {
  const claimed = occurrence({
    status: 'RUNNING',
    attempt: 3,
    leaseId: 'L',
    leaseOwner: 'w',
    leaseExpiresAt: iso(NOW + MINUTE),
  });
  const lease = { key: KEY, leaseId: 'L' };

  it('skipClaimed: SKIPPED with its reason, the attempt given back, the lease ended, under its status shard', async () => {
    seedRow(claimed);
    await store.skipClaimed(lease, { reason: 'overlap', yieldedTo: H }, NOW);
    const row = aws.row(JOB, O);
    expect(row).toMatchObject({
      status: 'SKIPPED',
      skipReason: 'overlap',
      yieldedTo: H,
      attempt: 2,
      skippedAt: iso(NOW),
    });
    expect(row?.leaseExpiresAt).toBeUndefined();
    expect(row?.leaseOwner).toBeUndefined();
    expect(row?.statusShard).toMatch(/^SKIPPED#/);
  });

  it('bufferClaimed: a lost response retried by the SDK counts as done', async () => {
    seedRow(claimed);
    aws.loseResponseOf = 'UpdateItem';
    await store.bufferClaimed(lease, NOW);
    expect(aws.row(JOB, O)).toMatchObject({ status: 'BUFFERED', attempt: 2, bufferedAt: iso(NOW) });
  });

  it('both are fenced: under another lease, LeaseLostError and nothing written', async () => {
    seedRow({ ...claimed, leaseId: 'other' });
    await expect(store.skipClaimed(lease, { reason: 'paused' }, NOW)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(store.bufferClaimed(lease, NOW)).rejects.toBeInstanceOf(LeaseLostError);
    expect(aws.row(JOB, O)?.status).toBe('RUNNING');
  });

  it('a BUFFERED occurrence is claimable like a PENDING one', async () => {
    seedRow(occurrence({ status: 'BUFFERED', attempt: 0 }));
    const claim = await store.claim(KEY, {
      leaseId: 'N',
      owner: 'w',
      now: NOW,
      leaseExpiresAt: NOW + MINUTE,
      maxAttempts: 3,
    });
    expect(claim.claimed).toBe(true);
    expect(aws.row(JOB, O)).toMatchObject({ status: 'RUNNING', attempt: 1, leaseId: 'N' });
  });
});

describe('DynamoOccurrenceStore.revoke', () => {
  const holderKey = { jobId: JOB, scheduledTime: H };
  const holder = occurrence({
    ...holderKey,
    status: 'RUNNING',
    attempt: 1,
    leaseId: 'h',
    leaseExpiresAt: iso(NOW - 1),
  });
  const revocation = { revocationId: 'revoked-by-O', by: O };

  it('expired: replaces the lease id of a RUNNING holder whose lease ran out, and leaves it RUNNING', async () => {
    seedRow(holder);
    expect(await store.revoke(holderKey, { ...revocation, mode: 'expired', observed: holder }, NOW)).toEqual({
      revoked: true,
      leaseExpiresAt: holder.leaseExpiresAt,
    });
    expect(aws.row(JOB, H)).toMatchObject({ status: 'RUNNING', leaseId: 'revoked-by-O' });
  });

  it('expired: refused while the lease is still live', async () => {
    const live = { ...holder, leaseExpiresAt: iso(NOW + MINUTE) };
    seedRow(live);
    expect(await store.revoke(holderKey, { ...revocation, mode: 'expired', observed: live }, NOW)).toEqual({
      revoked: false,
    });
    expect(aws.row(JOB, H)?.leaseId).toBe('h');
  });

  it('cancel: a RUNNING holder ends CANCELLED by the canceller, its lease replaced', async () => {
    const live = { ...holder, leaseExpiresAt: iso(NOW + MINUTE) };
    seedRow(live);
    // With the lease expiry as it was: its worker may work on until then.
    expect(await store.revoke(holderKey, { ...revocation, mode: 'cancel', observed: live }, NOW)).toEqual({
      revoked: true,
      leaseExpiresAt: live.leaseExpiresAt,
    });
    const row = aws.row(JOB, H);
    expect(row).toMatchObject({ status: 'CANCELLED', cancelledBy: O, cancelledAt: iso(NOW), leaseId: 'revoked-by-O' });
    expect(row?.statusShard).toMatch(/^CANCELLED#/);
    // Kept: whoever takes the slot later waits until then.
    expect(row?.leaseExpiresAt).toBe(live.leaseExpiresAt);
  });

  it('cancel: a holder waiting for its retry, unless it was claimed since; a lost response counts as done', async () => {
    const { leaseExpiresAt: _released, ...rest } = holder;
    const waiting = { ...rest, status: 'RETRY_WAIT' as const, nextAttemptAt: iso(NOW + MINUTE) };
    seedRow({ ...waiting, attempt: 2 });
    expect(await store.revoke(holderKey, { ...revocation, mode: 'cancel', observed: waiting }, NOW)).toEqual({
      revoked: false,
    });
    seedRow(waiting);
    aws.loseResponseOf = 'UpdateItem';
    expect(await store.revoke(holderKey, { ...revocation, mode: 'cancel', observed: waiting }, NOW)).toEqual({
      revoked: true,
      unknown: true,
    });
    expect(aws.row(JOB, H)).toMatchObject({ status: 'CANCELLED', cancelledBy: O });
    expect(aws.row(JOB, H)?.nextAttemptAt).toBeUndefined();
  });
});
