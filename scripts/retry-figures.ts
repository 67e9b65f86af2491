/**
 * Prints what a dependency outage costs under a retry policy: wake-ups (attempts that fail inside the outage),
 * time to the first retry, and how long after the outage ends the occurrence recovers. It runs the project's own
 * backoff (retryDelayMs), the worker's hiding of the message (the delay plus the default 15 s of tolerated clock
 * skew, rounded up to SQS's whole seconds by hideSecondsUntil) and the default attempt limit and deadline, side by side with the original design's `1 << min(attempt, 6)` seconds.
 *
 *   npm run figures -- [--outage-minutes 60] [--base 4] [--cap 1800] [--jitter 0.2]
 */
import { parseArgs } from 'node:util';
import { DEFAULT_JOB_SETTINGS, DEFAULT_RETRY_POLICY, type RetryPolicy } from '../functions/protocol/job-settings';
import { hideSecondsUntil } from '../functions/protocol/process-delivery';
import { retryDelayMs } from '../functions/protocol/retry-policy';

const SKEW_TOLERANCE_MS = DEFAULT_JOB_SETTINGS.leaseSafetyMarginSeconds * 1000;

interface Figures {
  wakeUps: number;
  firstRetryS: number;
  /** Seconds from the end of the outage to the attempt that succeeds, or why it never does. */
  outcome: string;
}

/**
 * Attempt 1 fails at t = 0 (the scheduled time) as the outage starts; every attempt before `outageMs` fails too.
 * The occurrence gives up like the worker does: after `maxAttempts`, or when the next retry would arrive after the
 * deadline.
 */
function simulate(
  nextDelayMs: (failedAttempt: number) => number,
  outageMs: number,
  limits: { maxAttempts: number; deadlineMs: number },
  roundForSqs: boolean,
): Figures {
  let t = 0;
  let attempt = 1;
  const retries: number[] = [];
  while (t < outageMs) {
    if (attempt >= limits.maxAttempts)
      return summary(retries, outageMs, `FAILED: ${attempt} attempts used by ${(t / 3600_000).toFixed(1)} h`);
    const delay = nextDelayMs(attempt);
    // Ours: the worker hides the retry past nextAttemptAt by the clock skew workers may have.
    const wait = roundForSqs ? hideSecondsUntil(t + delay + SKEW_TOLERANCE_MS, t) * 1000 : delay;
    if (t + wait >= limits.deadlineMs)
      return summary(retries, outageMs, `FAILED: deadline at ${(limits.deadlineMs / 3600_000).toFixed(1)} h`);
    t += wait;
    retries.push(t);
    attempt++;
  }
  return summary(retries, outageMs, `recovered ${((t - outageMs) / 1000).toFixed(0)} s after`);
}

function summary(retries: number[], outageMs: number, outcome: string): Figures {
  return { wakeUps: retries.filter((r) => r < outageMs).length, firstRetryS: (retries[0] ?? NaN) / 1000, outcome };
}

function main(): void {
  const { values } = parseArgs({
    options: {
      'outage-minutes': { type: 'string', default: '60' },
      base: { type: 'string' },
      cap: { type: 'string' },
      jitter: { type: 'string' },
    },
  });
  const number = (name: string, raw: string | undefined, fallback: number): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) {
      console.error(`--${name} must be a non-negative number, got ${JSON.stringify(raw)}`);
      console.error('usage: npm run figures -- [--outage-minutes 60] [--base 4] [--cap 1800] [--jitter 0.2]');
      process.exit(2);
    }
    return n;
  };
  const outageMs = number('outage-minutes', values['outage-minutes'], 60) * 60_000;
  const policy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    baseDelaySeconds: number('base', values.base, DEFAULT_RETRY_POLICY.baseDelaySeconds),
    maxDelaySeconds: number('cap', values.cap, DEFAULT_RETRY_POLICY.maxDelaySeconds),
    jitter: number('jitter', values.jitter, DEFAULT_RETRY_POLICY.jitter),
  };
  const ours = { maxAttempts: policy.maxAttempts, deadlineMs: policy.deadlineSeconds * 1000 };
  // The original design had no attempt limit or deadline of its own.
  const seed = { maxAttempts: Number.MAX_SAFE_INTEGER, deadlineMs: Number.MAX_SAFE_INTEGER };
  const rows: [string, Figures][] = [
    [
      'original: 1 << min(attempt, 6) s, cap 64 s',
      simulate((a) => 1000 * (1 << Math.min(a, 6)), outageMs, seed, false),
    ],
    [
      `ours: base ${policy.baseDelaySeconds} s, cap ${policy.maxDelaySeconds} s, no jitter drawn`,
      simulate((a) => retryDelayMs(policy, a, () => 0), outageMs, ours, true),
    ],
    [
      `ours: same, shortest jitter (-${policy.jitter * 100}%)`,
      simulate((a) => retryDelayMs(policy, a, () => 1), outageMs, ours, true),
    ],
  ];
  console.log(
    `Dependency outage of ${outageMs / 60_000} min from the scheduled time; ours gives up after ` +
      `${policy.maxAttempts} attempts or ${policy.deadlineSeconds / 3600} h`,
  );
  console.log(['policy'.padEnd(52), 'wake-ups', 'first retry (s)', 'outcome'].join(' | '));
  for (const [name, f] of rows) {
    console.log(
      [name.padEnd(52), String(f.wakeUps).padStart(8), f.firstRetryS.toFixed(1).padStart(15), f.outcome].join(' | '),
    );
  }
}

main();
