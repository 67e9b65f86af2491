/**
 * protocol/overlap-policy.ts: the start decision, one case per rule, on plain rows (no store, no clock).
 */
import { describe, expect, it } from 'vitest';
import type { JobState } from '../../functions/protocol/job-state';
import type { Occurrence } from '../../functions/protocol/occurrence';
import {
  decideStart,
  effectivePolicyOf,
  holderToRead,
  isHolderLive,
  type StartInput,
} from '../../functions/protocol/overlap-policy';

const NOW = Date.parse('2026-11-30T07:00:00Z');
const at = (ms: number) => new Date(NOW + ms).toISOString();
const H = '2026-11-30T06:00:00Z';
const O = '2026-11-30T06:30:00Z';
const EARLIER = '2026-11-30T06:10:00Z';
const LATER = '2026-11-30T06:50:00Z';

const state = (fields: Partial<JobState> = {}): JobState => ({
  jobId: 'report',
  scheduledTime: '#job',
  version: 3,
  slotTime: H,
  slotLeaseId: 'lease-h',
  ...fields,
});
const row = (fields: Partial<Occurrence> = {}): Occurrence => ({
  jobId: 'report',
  scheduledTime: H,
  status: 'RUNNING',
  attempt: 1,
  leaseId: 'lease-h',
  leaseExpiresAt: at(60_000),
  deadlineAt: at(3600_000),
  createdAt: H,
  ttl: 0,
  ...fields,
});
const decide = (fields: Partial<StartInput>) =>
  decideStart({ state: state(), holder: row(), scheduledTime: O, policy: 'skip', now: NOW, ...fields });

describe('isHolderLive: whether the occurrence the slot names still runs it', () => {
  it('is live while RUNNING with a lease that has not expired, under any lease id', () => {
    expect(isHolderLive(row(), NOW)).toBe(true);
    expect(isHolderLive(row({ leaseId: 'its-retry' }), NOW)).toBe(true);
    expect(isHolderLive(row({ leaseExpiresAt: at(0) }), NOW)).toBe(true);
  });
  it('is not live once the lease has expired', () => {
    expect(isHolderLive(row({ leaseExpiresAt: at(-1) }), NOW)).toBe(false);
  });
  it('is live in RETRY_WAIT before the deadline (its retry is the same run), not after', () => {
    expect(isHolderLive(row({ status: 'RETRY_WAIT', leaseExpiresAt: undefined }), NOW)).toBe(true);
    expect(isHolderLive(row({ status: 'RETRY_WAIT', deadlineAt: at(0) }), NOW)).toBe(false);
  });
  it('is live while a resumable run is between segments (its lease given up as continued:…), until its deadline', () => {
    const between = { leaseId: 'continued:lease-1', leaseExpiresAt: at(-60_000) };
    expect(isHolderLive(row(between), NOW)).toBe(true);
    expect(isHolderLive(row({ ...between, deadlineAt: at(0) }), NOW)).toBe(false);
  });
  it.each(['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED', 'PENDING', 'BUFFERED'] as const)(
    'a %s holder is not live',
    (status) => {
      expect(isHolderLive(row({ status }), NOW)).toBe(false);
    },
  );
  it('no row: not live', () => {
    expect(isHolderLive(undefined, NOW)).toBe(false);
  });
});

describe('holderToRead and effectivePolicyOf', () => {
  it('reads the holder only when the slot names another occurrence', () => {
    expect(holderToRead(state(), O)).toEqual({ jobId: 'report', scheduledTime: H });
    expect(holderToRead(state({ slotTime: O }), O)).toBeUndefined();
    expect(holderToRead(state({ slotTime: undefined }), O)).toBeUndefined();
    expect(holderToRead(undefined, O)).toBeUndefined();
  });
  it("an occurrence's own policy wins over its job's", () => {
    expect(effectivePolicyOf({ overlap: 'bufferAll' }, 'skip')).toBe('bufferAll');
    expect(effectivePolicyOf({}, 'cancelOther')).toBe('cancelOther');
  });
});

describe('decideStart', () => {
  it('paused: SKIPPED as paused, whatever the slot and the policy', () => {
    for (const policy of ['skip', 'bufferOne', 'bufferAll', 'cancelOther'] as const) {
      expect(decide({ policy, state: state({ pausedAt: at(-1) }) })).toEqual({ action: 'skip', reason: 'paused' });
    }
  });

  it('the slot names this occurrence (its own earlier attempt): it takes it back, before anything buffered', () => {
    expect(decide({ state: state({ slotTime: O, buffer: [EARLIER] }), holder: undefined })).toEqual({
      action: 'take',
      buffer: [EARLIER],
    });
  });

  describe('the slot is live, held by another occurrence', () => {
    it('skip: SKIPPED for overlap, yielding to the holder', () => {
      expect(decide({ policy: 'skip' })).toEqual({ action: 'skip', reason: 'overlap', yieldedTo: H });
    });
    it('bufferOne, buffer empty: BUFFERED, alone in the buffer', () => {
      expect(decide({ policy: 'bufferOne' })).toEqual({ action: 'buffer', buffer: [O] });
    });
    it('bufferOne, another already buffered: SKIPPED, yielding to the buffered one', () => {
      expect(decide({ policy: 'bufferOne', state: state({ buffer: [EARLIER] }) })).toEqual({
        action: 'skip',
        reason: 'overlap',
        yieldedTo: EARLIER,
      });
    });
    it('bufferOne, itself the buffered one (a redelivery): stays BUFFERED', () => {
      expect(decide({ policy: 'bufferOne', state: state({ buffer: [O] }) })).toEqual({ action: 'buffer', buffer: [O] });
    });
    it('bufferAll: joins the buffer in scheduled-time order, once', () => {
      expect(decide({ policy: 'bufferAll', state: state({ buffer: [EARLIER, LATER] }) })).toEqual({
        action: 'buffer',
        buffer: [EARLIER, O, LATER],
      });
      expect(decide({ policy: 'bufferAll', state: state({ buffer: [O, LATER] }) })).toEqual({
        action: 'buffer',
        buffer: [O, LATER],
      });
    });
    it('cancelOther: cancels the holder and takes the slot', () => {
      expect(decide({ policy: 'cancelOther' })).toEqual({ action: 'take', buffer: [], revoke: 'cancel' });
    });
    it('cancelOther against a holder waiting for its retry: cancels it too', () => {
      const holder = row({ status: 'RETRY_WAIT', leaseExpiresAt: undefined });
      expect(decide({ policy: 'cancelOther', holder })).toEqual({ action: 'take', buffer: [], revoke: 'cancel' });
    });
  });

  describe('the slot is free', () => {
    it('nothing in the row: take it', () => {
      expect(decide({ state: undefined, holder: undefined })).toEqual({ action: 'take', buffer: [] });
      expect(decide({ state: state({ slotTime: undefined, slotLeaseId: undefined }), holder: undefined })).toEqual({
        action: 'take',
        buffer: [],
      });
    });
    it('the holder finished without releasing it: take it, nothing to revoke', () => {
      expect(decide({ holder: row({ status: 'SUCCEEDED', leaseExpiresAt: undefined }) })).toEqual({
        action: 'take',
        buffer: [],
      });
    });
    it('the holder died and its lease expired: revoke the lease (its late extend must fail), then take it', () => {
      expect(decide({ holder: row({ leaseExpiresAt: at(-1) }) })).toEqual({
        action: 'take',
        buffer: [],
        revoke: 'expired',
      });
    });
    it('a resumable run between segments keeps it: skip yields to it, and its row is never revoked', () => {
      const between = row({ leaseId: 'continued:lease-1', leaseExpiresAt: at(-60_000) });
      expect(decide({ holder: between })).toEqual({ action: 'skip', reason: 'overlap', yieldedTo: H });
      expect(decide({ holder: between, policy: 'bufferAll' })).toMatchObject({ action: 'buffer' });
    });
    it('it is the head of the buffer: take it and leave the buffer', () => {
      expect(
        decide({ policy: 'bufferAll', state: state({ slotTime: undefined, buffer: [O, LATER] }), holder: undefined }),
      ).toEqual({
        action: 'take',
        buffer: [LATER],
      });
    });
    it('it is earlier than the head: take it, the buffer stays', () => {
      expect(
        decide({ policy: 'bufferAll', state: state({ slotTime: undefined, buffer: [LATER] }), holder: undefined }),
      ).toEqual({
        action: 'take',
        buffer: [LATER],
      });
    });
    it('an earlier occurrence waits: bufferAll joins the buffer and wakes the head', () => {
      expect(
        decide({ policy: 'bufferAll', state: state({ slotTime: undefined, buffer: [EARLIER] }), holder: undefined }),
      ).toEqual({
        action: 'buffer',
        buffer: [EARLIER, O],
        wake: EARLIER,
      });
    });
    it('an earlier occurrence waits: skip and cancelOther are SKIPPED, yielding to it, and wake it', () => {
      for (const policy of ['skip', 'cancelOther', 'bufferOne'] as const) {
        expect(decide({ policy, state: state({ slotTime: undefined, buffer: [EARLIER] }), holder: undefined })).toEqual(
          {
            action: 'skip',
            reason: 'overlap',
            yieldedTo: EARLIER,
            wake: EARLIER,
          },
        );
      }
    });
  });
});
