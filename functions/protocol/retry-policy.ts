/**
 * Capped exponential backoff with jitter, and the decision to retry or give up.
 */
import type { RetryPolicy } from './job-settings';

/** Delay after the given failed attempt (1-based): base * 2^(attempt-1), capped, minus up to `jitter` of it. */
export function retryDelayMs(policy: RetryPolicy, failedAttempt: number, random: () => number): number {
  const nominal = Math.min(policy.maxDelaySeconds, policy.baseDelaySeconds * 2 ** Math.max(0, failedAttempt - 1));
  return Math.round(nominal * 1000 * (1 - policy.jitter * random()));
}

/**
 * A retry waits as a hidden SQS message whose visibility is whole seconds, rounded up (hideSecondsUntil), so it
 * arrives up to this much after nextAttemptAt. A retry that would arrive after the deadline is not scheduled.
 */
export const SQS_ARRIVAL_SLACK_MS = 2_000;

export type RetryDecision = { retry: true; nextAttemptAt: number; delayMs: number } | { retry: false; reason: string };

export function decideRetry(args: {
  policy: RetryPolicy;
  failedAttempt: number;
  now: number;
  deadlineAt: number;
  random: () => number;
  /** How long after nextAttemptAt the retry's message is hidden (the clock skew workers may have); default 0. */
  hiddenPastDueMs?: number;
}): RetryDecision {
  const { policy, failedAttempt, now, deadlineAt, random } = args;
  if (failedAttempt >= policy.maxAttempts) {
    return { retry: false, reason: `attempt ${failedAttempt} of ${policy.maxAttempts} failed; no attempts left` };
  }
  const delayMs = retryDelayMs(policy, failedAttempt, random);
  const nextAttemptAt = now + delayMs;
  if (nextAttemptAt + (args.hiddenPastDueMs ?? 0) + SQS_ARRIVAL_SLACK_MS >= deadlineAt) {
    return {
      retry: false,
      reason: `the next attempt (in ${Math.ceil(delayMs / 1000)} s) would start after the deadline ${new Date(deadlineAt).toISOString()}`,
    };
  }
  return { retry: true, nextAttemptAt, delayMs };
}
