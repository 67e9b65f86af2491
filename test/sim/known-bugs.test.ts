/**
 * Protocol bugs the simulation found. Each is an `it.fails` test: it states the guarantee, fails today, and starts
 * passing (so vitest reports it) when the fix lands on main; then drop `.fails` and the entry in KNOWN_BUGS.
 */
import { describe, expect, it } from 'vitest';
import { calmPlan } from './plan';
import { simulateOne } from './simulate';

/** A six-hour outage: every attempt fails and is retried until attempts or the deadline run out. */
const longOutage = { jobMs: 1_000, outage: { fromMs: 0, forMs: 7 * 3600_000 } };

describe('B1: a retry hidden by one worker\'s clock and claimed by another\'s', () => {
  it('with agreeing clocks, an occurrence whose every attempt fails ends FAILED with its last error', async () => {
    const { outcome, checked } = await simulateOne(calmPlan({ ...longOutage, skewsMs: [0] }));
    expect(checked.violations).toEqual([]);
    expect(outcome.row).toMatchObject({ status: 'FAILED', attempt: 20 });
    expect(String(outcome.row?.lastError)).toContain('upstream unavailable');
  });

  // BUG B1 (open on main): process-delivery hides a retry for hideSecondsUntil(nextAttemptAt) measured on the
  // releasing worker's clock; the next receiver compares nextAttemptAt with its own clock in the claim condition.
  // Two workers whose clocks differ by 3 s (the protocol claims to tolerate 15 s): every retry first arrives "not
  // due" and is hidden again, costing two receives per attempt, while the queue's maxReceiveCount is only
  // maxAttempts + SPARE_RECEIVES (25). The message reaches the job DLQ after about 12 attempts and the row stays
  // RETRY_WAIT with attempts left, swept by nothing: invariant 4 fails.
  it.fails('with worker clocks 3 s apart, the same occurrence still ends FAILED instead of stranding in RETRY_WAIT', async () => {
    const { outcome, checked } = await simulateOne(calmPlan({ ...longOutage, skewsMs: [3_000, 0] }));
    expect(checked.violations).toEqual([]);
    expect(outcome.row?.status).toBe('FAILED');
  });

  it('(the mechanism, asserted as it is today) every early arrival costs a receive and the message reaches the DLQ', async () => {
    const { outcome } = await simulateOne(calmPlan({ ...longOutage, skewsMs: [3_000, 0] }));
    const earlyArrivals = outcome.trace.filter((l) => l.what === 'log: retry not due yet; hiding the message until it is').length;
    expect(earlyArrivals).toBeGreaterThan(10);
    expect(outcome.messagesInDlq).toBe(1);
    expect(outcome.row?.status).toBe('RETRY_WAIT');
    expect(Number(outcome.row?.attempt)).toBeLessThan(20);
  });
});

describe('B2: the last attempt fails to see a committed report', () => {
  /** Attempt 1 commits its report and dies (its calls: claim, look-up, commit); attempt 2 is the last (maxAttempts 2). */
  const commitThenDie = { jobMs: 5_000, maxAttempts: 2, callFaults: [{ actor: 'worker' as const, invocation: 1, call: 3, fault: { kind: 'crash-after' as const } }] };
  /** ... and attempt 2's look-up of the committed report (its second call, HeadObject) fails transiently. */
  const lookUpFails = { actor: 'worker' as const, invocation: 2, call: 2, fault: { kind: 'transient' as const } };

  it('commit-then-die before the last attempt: the last attempt adopts the report', async () => {
    const { outcome, checked } = await simulateOne(calmPlan(commitThenDie));
    expect(checked.violations).toEqual([]);
    expect(outcome.row).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
  });

  // BUG B2 (open on main): runAttempt calls reports.exists once, without withTransientRetries; when it throws, the
  // DependencyError goes to recordFailedAttempt, which on the last attempt calls store.fail() without looking at
  // the report store again (onRefusedClaim's 'exhausted' path does look, but is not reached: the claim succeeded).
  // The row says FAILED with "look for committed report failed", the report sits in S3, nothing is announced.
  it.fails('and when that look-up fails once, the occurrence still ends SUCCEEDED with the committed report', async () => {
    const { outcome, checked } = await simulateOne(calmPlan({ ...commitThenDie, callFaults: [...commitThenDie.callFaults, lookUpFails] }));
    expect(checked.violations).toEqual([]);
    expect(outcome.row?.status).toBe('SUCCEEDED');
  });

  it('(the mechanism, asserted as it is today) the row is FAILED, the report exists, and invariant 5 says so', async () => {
    const { outcome, checked } = await simulateOne(calmPlan({ ...commitThenDie, callFaults: [...commitThenDie.callFaults, lookUpFails] }));
    expect(outcome.row?.status).toBe('FAILED');
    expect(String(outcome.row?.lastError)).toContain('look for committed report failed');
    expect(outcome.objects.size).toBe(1);
    expect(outcome.delivered).toBe(0);
    expect(checked.violations.map((v) => v.invariant)).toEqual([5]);
  });
});
