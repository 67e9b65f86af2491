import { describe, expect, it } from 'vitest';
import { isClaimable, whyRefused } from '../../functions/protocol/claimability';
import { iso, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';

const NOW = Date.parse('2026-11-30T06:10:00Z');
const MAX_ATTEMPTS = 3;
const S = 1_000;

const row = (fields: Partial<Occurrence>): Occurrence => ({
  jobId: 'occurrence-digest',
  scheduledTime: '2026-11-30T06:00:00Z',
  status: OccurrenceStatus.PENDING,
  attempt: 0,
  createdAt: '2026-11-30T06:00:00.120Z',
  deadlineAt: '2026-11-30T12:00:00.000Z',
  ttl: 1_803_794_400,
  ...fields,
});

const running = (leaseExpiresAt: number, fields: Partial<Occurrence> = {}) =>
  row({
    status: OccurrenceStatus.RUNNING,
    attempt: 1,
    leaseId: 'lease-1',
    leaseExpiresAt: iso(leaseExpiresAt),
    ...fields,
  });
const retryWait = (nextAttemptAt: number, fields: Partial<Occurrence> = {}) =>
  row({ status: OccurrenceStatus.RETRY_WAIT, attempt: 1, nextAttemptAt: iso(nextAttemptAt), ...fields });

describe('isClaimable', () => {
  it.each<[string, Occurrence, boolean]>([
    ['PENDING', row({}), true],
    ['RETRY_WAIT whose retry is due', retryWait(NOW - 1), true],
    ['RETRY_WAIT due exactly now', retryWait(NOW), true],
    ['RETRY_WAIT not due yet', retryWait(NOW + 1), false],
    ['RUNNING with an expired lease', running(NOW - 1), true],
    ['RUNNING whose lease expires exactly now (still held)', running(NOW), false],
    ['RUNNING with a live lease', running(NOW + 60 * S), false],
    ['SUCCEEDED', row({ status: OccurrenceStatus.SUCCEEDED, attempt: 1, reportKey: 'reports/x.md' }), false],
    ['FAILED', row({ status: OccurrenceStatus.FAILED, attempt: 3 }), false],
    ['RETRY_WAIT due but with attempt = maxAttempts', retryWait(NOW - 1, { attempt: MAX_ATTEMPTS }), false],
    ['RUNNING expired but with attempt > maxAttempts', running(NOW - 1, { attempt: MAX_ATTEMPTS + 1 }), false],
    ['RETRY_WAIT due with attempt = maxAttempts - 1', retryWait(NOW - 1, { attempt: MAX_ATTEMPTS - 1 }), true],
    ['PENDING past its deadline', row({ deadlineAt: iso(NOW - 1) }), false],
    ['PENDING at its deadline', row({ deadlineAt: iso(NOW) }), false],
    ['RETRY_WAIT due, deadline passed', retryWait(NOW - 1, { deadlineAt: iso(NOW - 1) }), false],
    ['RUNNING expired, deadline passed', running(NOW - 1, { deadlineAt: iso(NOW - 1) }), false],
    // As in the DynamoDB condition, a comparison with a missing attribute is false.
    ['RETRY_WAIT without nextAttemptAt', row({ status: OccurrenceStatus.RETRY_WAIT, attempt: 1 }), false],
    ['RUNNING without leaseExpiresAt', row({ status: OccurrenceStatus.RUNNING, attempt: 1 }), false],
  ])('%s -> %s', (_, occurrence, expected) => {
    expect(isClaimable(occurrence, NOW, MAX_ATTEMPTS)).toBe(expected);
  });
});

describe('whyRefused', () => {
  it('missing when there is no row', () => {
    expect(whyRefused(undefined, NOW, MAX_ATTEMPTS)).toEqual({ action: 'missing' });
  });

  it.each([OccurrenceStatus.SUCCEEDED, OccurrenceStatus.FAILED])(
    'finished for %s, even past the deadline or attempts',
    (status) => {
      expect(whyRefused(row({ status, attempt: MAX_ATTEMPTS, deadlineAt: iso(NOW - 1) }), NOW, MAX_ATTEMPTS)).toEqual({
        action: 'finished',
      });
    },
  );

  it('held-elsewhere for a live lease, including one expiring exactly now, even past the deadline', () => {
    expect(whyRefused(running(NOW + 60 * S), NOW, MAX_ATTEMPTS)).toEqual({ action: 'held-elsewhere' });
    expect(whyRefused(running(NOW), NOW, MAX_ATTEMPTS)).toEqual({ action: 'held-elsewhere' });
    // The holder will record the outcome itself; failing the row under it would race with its complete.
    expect(whyRefused(running(NOW + S, { deadlineAt: iso(NOW - 1) }), NOW, MAX_ATTEMPTS)).toEqual({
      action: 'held-elsewhere',
    });
  });

  it('revoked, not held-elsewhere, for a lease another start revoked that has not run out on this clock: keep the message', () => {
    // The revoker re-enqueues the holder; a worker whose clock is behind sees the lease still live, and nobody else's
    // message would come back for it.
    const revoked = running(NOW + 2 * S, { leaseId: 'revoked-by-2026-11-30T06:00:00Z-lease-b' });
    expect(whyRefused(revoked, NOW, MAX_ATTEMPTS)).toEqual({ action: 'revoked', dueAt: NOW + 2 * S });
    expect(whyRefused(running(NOW + 2 * S, { leaseId: 'lease-a' }), NOW, MAX_ATTEMPTS)).toEqual({
      action: 'held-elsewhere',
    });
  });

  it('unclaimable, not a retry loop, for a row the claim condition can never accept (RUNNING without a lease expiry)', () => {
    const broken = row({ status: OccurrenceStatus.RUNNING, leaseId: 'x' });
    expect(isClaimable(broken, NOW, MAX_ATTEMPTS)).toBe(false);
    expect(whyRefused(broken, NOW, MAX_ATTEMPTS)).toMatchObject({ action: 'unclaimable' });
    expect(whyRefused(row({ status: OccurrenceStatus.RETRY_WAIT }), NOW, MAX_ATTEMPTS)).toMatchObject({
      action: 'unclaimable',
    });
  });

  it('not-due with the retry time for a RETRY_WAIT whose retry lies ahead', () => {
    const dueAt = NOW + 90 * S;
    expect(whyRefused(retryWait(dueAt), NOW, MAX_ATTEMPTS)).toEqual({ action: 'not-due', dueAt });
  });

  it('not-due now for a row that is claimable after all (it changed between the claim and the read)', () => {
    expect(whyRefused(row({}), NOW, MAX_ATTEMPTS)).toEqual({ action: 'not-due', dueAt: NOW });
    expect(whyRefused(retryWait(NOW - S), NOW, MAX_ATTEMPTS)).toEqual({ action: 'not-due', dueAt: NOW });
  });

  it('exhausted, mentioning the deadline, when the deadline passed', () => {
    const refused = whyRefused(retryWait(NOW + 90 * S, { deadlineAt: iso(NOW) }), NOW, MAX_ATTEMPTS);
    expect(refused).toEqual({
      action: 'exhausted',
      reason: expect.stringMatching(/deadline 2026-11-30T06:10:00.000Z passed before attempt 2/),
    });
  });

  it('exhausted, mentioning the attempts, when an expired holder used the last attempt', () => {
    const refused = whyRefused(running(NOW - S, { attempt: MAX_ATTEMPTS }), NOW, MAX_ATTEMPTS);
    expect(refused).toEqual({ action: 'exhausted', reason: expect.stringMatching(/all 3 attempts used/) });
  });

  it('agrees with isClaimable: every row it calls not-due-now is claimable, every other refusal is not', () => {
    const rows = [
      row({}),
      retryWait(NOW - 1),
      retryWait(NOW + S),
      running(NOW - 1),
      running(NOW + S),
      row({ status: OccurrenceStatus.SUCCEEDED }),
      row({ deadlineAt: iso(NOW) }),
      running(NOW - 1, { attempt: MAX_ATTEMPTS }),
    ];
    for (const o of rows) {
      const refused = whyRefused(o, NOW, MAX_ATTEMPTS);
      const claimableNow = refused.action === 'not-due' && refused.dueAt === NOW;
      expect(isClaimable(o, NOW, MAX_ATTEMPTS), JSON.stringify(o)).toBe(claimableNow);
    }
  });
});
