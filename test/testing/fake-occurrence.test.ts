import { describe, expect, it } from 'vitest';
import { isClaimable } from '../../functions/protocol/claimability';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import { shardOf, statusShardOf } from '../../functions/protocol/table-schema';
import { fakeOccurrence } from '../../testing';
import { FAKE_JOB_ID, FAKE_LEASE_ID, FAKE_SCHEDULED_TIME } from '../../testing/fake-occurrence';

describe('Function: fakeOccurrence', () => {
  it('is the row as the worker passes it to run: RUNNING, attempt 1, leased, recorded on time', () => {
    const o = fakeOccurrence();
    expect(o).toEqual({
      jobId: FAKE_JOB_ID,
      scheduledTime: FAKE_SCHEDULED_TIME,
      status: 'RUNNING',
      attempt: 1,
      worker: FAKE_JOB_ID,
      createdAt: '2026-01-01T06:00:00.000Z',
      deadlineAt: '2026-01-01T12:00:00.000Z',
      leaseId: FAKE_LEASE_ID,
      leaseOwner: 'testJob',
      claimedAt: '2026-01-01T06:00:01.000Z',
      heartbeatAt: '2026-01-01T06:00:01.000Z',
      leaseExpiresAt: '2026-01-01T06:02:01.000Z',
      statusShard: statusShardOf({ jobId: FAKE_JOB_ID, scheduledTime: FAKE_SCHEDULED_TIME }, 'RUNNING'),
      ttl: Date.parse(FAKE_SCHEDULED_TIME) / 1000 + 90 * 86_400,
    });
    // Held: nobody else could claim it while the lease runs, and it could be claimed once it expired.
    expect(isClaimable(o, Date.parse(o.claimedAt!) + 1_000, 20)).toBe(false);
    expect(isClaimable(o, Date.parse(o.leaseExpiresAt!) + 1, 20)).toBe(true);
  });

  it('takes the key and any field over the defaults, and normalises the scheduled time to the key format', () => {
    const o = fakeOccurrence({ jobId: 'daily-digest', scheduledTime: '2026-11-30T07:00:00+01:00', attempt: 3 });
    expect(o).toMatchObject({ jobId: 'daily-digest', scheduledTime: '2026-11-30T06:00:00Z', attempt: 3 });
    expect(o.worker).toBe('daily-digest');
    expect(fakeOccurrence({ status: OccurrenceStatus.RETRY_WAIT, lastError: 'x' })).toMatchObject({
      status: 'RETRY_WAIT',
      lastError: 'x',
    });
  });

  it.each([
    [{ jobId: 'has space' }, /jobId must be 1-64 letters/],
    [{ scheduledTime: '2026-11-30' }, /scheduledTime must be ISO-8601 with a zone/],
    [{ scheduledTime: '2026-11-30T06:00:00.5Z' }, /whole seconds/],
    [{ status: 'DONE' as never }, /status must be one of PENDING, RUNNING/],
    [{ attempt: 1.5 }, /attempt must be a whole number, got 1.5/],
    [{ scheduleKey: 'a/b' }, /scheduleKey must be 1-128 letters/],
    [{ input: 'x'.repeat(3000) }, /input must be at most 2048 bytes/],
  ])('rejects %j with a TypeError that says what a valid value is', (fields, message) => {
    expect(() => fakeOccurrence(fields)).toThrow(TypeError);
    expect(() => fakeOccurrence(fields)).toThrow(message);
  });

  it('an occurrence of a schedule created at run time carries its key and input, and its shard names the key', () => {
    const o = fakeOccurrence({ jobId: 'weekly-report', scheduleKey: 'cust-42', input: { plan: 'pro' } });
    expect(o).toMatchObject({ jobId: 'weekly-report', scheduleKey: 'cust-42', input: { plan: 'pro' } });
    expect(o.statusShard).toBe(statusShardOf(o, 'RUNNING'));
  });

  it('carries the status index key its state has: OPEN#k in flight, its own for FAILED, none once announced', () => {
    const key = { jobId: FAKE_JOB_ID, scheduledTime: FAKE_SCHEDULED_TIME };
    expect(fakeOccurrence({ status: 'PENDING' }).statusShard).toBe(`OPEN#${shardOf(key)}`);
    expect(fakeOccurrence({ status: 'FAILED' }).statusShard).toBe(`FAILED#${shardOf(key)}`);
    expect(fakeOccurrence({ status: 'SUCCEEDED', reportKey: 'r' }).statusShard).toBe(`OPEN#${shardOf(key)}`);
    expect(fakeOccurrence({ status: 'SUCCEEDED', reportKey: 'r', notifiedAt: FAKE_SCHEDULED_TIME })).not.toHaveProperty(
      'statusShard',
    );
  });

  it('rejects what is not an object of fields', () => {
    expect(() => fakeOccurrence('2026-01-01T06:00:00Z' as never)).toThrow(
      'fakeOccurrence: expected an object of occurrence fields, got "2026-01-01T06:00:00Z"',
    );
  });
});
