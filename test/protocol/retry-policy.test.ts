import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../functions/protocol/job-settings';
import { hideSecondsUntil } from '../../functions/protocol/process-delivery';
import { decideRetry, retryDelayMs, SQS_ARRIVAL_SLACK_MS } from '../../functions/protocol/retry-policy';

const S = 1_000;
const HOUR_MS = 60 * 60 * S;
const policy: RetryPolicy = {
  maxAttempts: 10,
  baseDelaySeconds: 4,
  maxDelaySeconds: 60,
  deadlineSeconds: 3600,
  jitter: 0.2,
};
const noJitter = () => 0; // random() = 0 keeps the full nominal delay
const shortest = () => 1; // random() = 1 takes the whole jitter off: the shortest delay the policy can give

describe('retryDelayMs', () => {
  it('doubles from the base delay per failed attempt', () => {
    expect([1, 2, 3, 4].map((a) => retryDelayMs(policy, a, noJitter))).toEqual([4_000, 8_000, 16_000, 32_000]);
  });

  it('is capped at maxDelaySeconds, however many attempts failed', () => {
    expect(retryDelayMs(policy, 5, noJitter)).toBe(60_000); // 64 s nominal, capped
    expect(retryDelayMs(policy, 40, noJitter)).toBe(60_000);
    expect(retryDelayMs(policy, 2000, noJitter)).toBe(60_000); // 2 ** 1999 is Infinity; the cap still holds
  });

  it('treats attempt 0 like attempt 1 (never less than the base)', () => {
    expect(retryDelayMs(policy, 0, noJitter)).toBe(4_000);
  });

  it('jitter keeps each delay in (d * (1 - jitter), d]', () => {
    for (const attempt of [1, 3, 5, 9]) {
      const d = retryDelayMs(policy, attempt, noJitter);
      for (const r of [0, 0.01, 0.25, 0.5, 0.75, 0.999]) {
        const delay = retryDelayMs(policy, attempt, () => r);
        expect(delay).toBeGreaterThan(d * (1 - policy.jitter));
        expect(delay).toBeLessThanOrEqual(d);
      }
    }
  });

  it('a larger random value gives a shorter delay (the jitter is subtracted)', () => {
    expect(retryDelayMs(policy, 3, () => 0.9)).toBeLessThan(retryDelayMs(policy, 3, () => 0.1));
    expect(retryDelayMs(policy, 3, shortest)).toBe(Math.round(16_000 * 0.8));
  });

  it('with no jitter configured, the random source has no effect', () => {
    expect(retryDelayMs({ ...policy, jitter: 0 }, 3, () => 0.7)).toBe(16_000);
  });
});

describe('decideRetry', () => {
  const now = Date.parse('2026-11-30T06:05:00Z');
  const farDeadline = now + 10 * HOUR_MS;

  it('retries with nextAttemptAt = now + delay while attempts remain', () => {
    expect(decideRetry({ policy, failedAttempt: 2, now, deadlineAt: farDeadline, random: noJitter })).toEqual({
      retry: true,
      nextAttemptAt: now + 8_000,
      delayMs: 8_000,
    });
  });

  it('gives up when the failed attempt was the last one (failedAttempt >= maxAttempts)', () => {
    expect(
      decideRetry({ policy, failedAttempt: policy.maxAttempts - 1, now, deadlineAt: farDeadline, random: noJitter })
        .retry,
    ).toBe(true);
    const last = decideRetry({
      policy,
      failedAttempt: policy.maxAttempts,
      now,
      deadlineAt: farDeadline,
      random: noJitter,
    });
    expect(last).toEqual({ retry: false, reason: expect.stringMatching(/attempt 10 of 10 failed; no attempts left/) });
    expect(
      decideRetry({ policy, failedAttempt: policy.maxAttempts + 1, now, deadlineAt: farDeadline, random: noJitter })
        .retry,
    ).toBe(false);
  });

  it('gives up when the retry message would arrive at or after the deadline (SQS rounds its wait up by up to 2 s)', () => {
    const delay = retryDelayMs(policy, 3, noJitter);
    const arrival = delay + SQS_ARRIVAL_SLACK_MS;
    expect(decideRetry({ policy, failedAttempt: 3, now, deadlineAt: now + arrival + 1, random: noJitter }).retry).toBe(
      true,
    );
    const atDeadline = decideRetry({ policy, failedAttempt: 3, now, deadlineAt: now + arrival, random: noJitter });
    expect(atDeadline).toEqual({
      retry: false,
      reason: expect.stringMatching(/would start after the deadline 2026-11-30T06:05:18.000Z/),
    });
    expect(decideRetry({ policy, failedAttempt: 3, now, deadlineAt: now - 1, random: noJitter }).retry).toBe(false);
  });

  it('uses the jittered delay for the deadline check', () => {
    // The nominal 16 s (+2 s arrival slack) would miss a deadline 15 s away; the shortest jittered 12.8 s does not.
    expect(decideRetry({ policy, failedAttempt: 3, now, deadlineAt: now + 15_000, random: noJitter }).retry).toBe(
      false,
    );
    expect(decideRetry({ policy, failedAttempt: 3, now, deadlineAt: now + 15_000, random: shortest })).toEqual({
      retry: true,
      nextAttemptAt: now + 12_800,
      delayMs: 12_800,
    });
  });
});

/**
 * An outage: every attempt fails the moment it starts. Count the retries that start within the first hour.
 * `delayAfter` gives the wait after each failed attempt (1-based).
 */
function retriesDuringOutage(
  delayAfter: (failedAttempt: number) => number,
  outageMs: number,
  maxAttempts = Infinity,
): number {
  let t = 0;
  let retries = 0;
  for (let attempt = 1; attempt < maxAttempts; attempt++) {
    t += delayAfter(attempt);
    if (t >= outageMs) break;
    retries++;
  }
  return retries;
}

describe('DEFAULT_RETRY_POLICY against a long outage (the original design costs ~56 wake-ups an hour)', () => {
  const p = DEFAULT_RETRY_POLICY;

  it('retries the first failure within 5 s, whatever the jitter', () => {
    for (const r of [0, 0.5, 1]) expect(retryDelayMs(p, 1, () => r)).toBeLessThanOrEqual(5_000);
  });

  it('a one-hour outage costs at most 10 retries, even with the shortest jitter', () => {
    const shortestDelays = retriesDuringOutage((a) => retryDelayMs(p, a, shortest), HOUR_MS, p.maxAttempts);
    // As the worker actually waits: SQS hides the message for whole seconds, rounded up, plus one.
    const asHidden = retriesDuringOutage(
      (a) => hideSecondsUntil(retryDelayMs(p, a, shortest), 0) * S,
      HOUR_MS,
      p.maxAttempts,
    );
    expect(shortestDelays).toBeLessThanOrEqual(10);
    expect(asHidden).toBeLessThanOrEqual(10);
    // And the policy still tries: a short blip is retried several times within its first minutes.
    expect(retriesDuringOutage((a) => retryDelayMs(p, a, shortest), 5 * 60 * S)).toBeGreaterThanOrEqual(5);
  });

  it("the original design's 1 << min(attempt, 6) s policy would cost more than 50 retries in the same hour", () => {
    const seedDelayMs = (failedAttempt: number) => (1 << Math.min(failedAttempt, 6)) * S;
    const seedRetries = retriesDuringOutage(seedDelayMs, HOUR_MS);
    expect(seedRetries).toBeGreaterThan(50);
    expect(retriesDuringOutage((a) => retryDelayMs(p, a, shortest), HOUR_MS)).toBeLessThan(seedRetries / 5);
  });

  it('the default policy gives up within its 6 h deadline', () => {
    const deadlineAt = p.deadlineSeconds * S;
    let t = 0;
    let attempt = 1;
    for (;;) {
      const d = decideRetry({ policy: p, failedAttempt: attempt, now: t, deadlineAt, random: noJitter });
      if (!d.retry) break;
      t = d.nextAttemptAt;
      attempt++;
    }
    expect(t).toBeLessThan(deadlineAt);
    expect(attempt).toBeLessThanOrEqual(p.maxAttempts);
  });
});
