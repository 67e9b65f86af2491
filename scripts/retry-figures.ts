/**
 * Prints what a dependency outage costs under a retry policy: wake-ups (attempts that fail inside the outage),
 * time to the first retry, and how long after the outage ends the occurrence recovers. It runs the project's own
 * backoff (retryDelayMs) and the worker's rounding of SQS visibility (hideSecondsUntil), side by side with the
 * seed's `1 << min(attempt, 6)` seconds.
 *
 *   npm run figures -- [--outage-minutes 60] [--base 4] [--cap 1800] [--jitter 0.2]
 */
import { parseArgs } from 'node:util';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../functions/protocol/job-settings';
import { hideSecondsUntil } from '../functions/protocol/process-delivery';
import { retryDelayMs } from '../functions/protocol/retry-policy';

interface Figures {
  wakeUps: number;
  firstRetryS: number;
  recoveryS: number;
}

/** Attempt 1 fails at t = 0 when the outage starts; every attempt before `outageMs` fails too. */
function simulate(nextDelayMs: (failedAttempt: number) => number, outageMs: number, roundForSqs: boolean): Figures {
  let t = 0;
  let attempt = 1;
  const retries: number[] = [];
  while (t < outageMs) {
    const delay = nextDelayMs(attempt);
    t += roundForSqs ? hideSecondsUntil(t + delay, t) * 1000 : delay;
    retries.push(t);
    attempt++;
  }
  return {
    wakeUps: retries.filter((r) => r < outageMs).length,
    firstRetryS: retries[0] / 1000,
    recoveryS: (retries[retries.length - 1] - outageMs) / 1000,
  };
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
    maxAttempts: Number.MAX_SAFE_INTEGER,
  };
  const rows: [string, Figures][] = [
    ['seed: 1 << min(attempt, 6) s, cap 64 s', simulate((a) => 1000 * (1 << Math.min(a, 6)), outageMs, false)],
    [`ours: base ${policy.baseDelaySeconds} s, cap ${policy.maxDelaySeconds} s, no jitter drawn`, simulate((a) => retryDelayMs(policy, a, () => 0), outageMs, true)],
    [`ours: same, shortest jitter (-${policy.jitter * 100}%)`, simulate((a) => retryDelayMs(policy, a, () => 1), outageMs, true)],
  ];
  console.log(`Dependency outage of ${outageMs / 60_000} min, starting as attempt 1 fails at t = 0`);
  console.log(['policy'.padEnd(52), 'wake-ups', 'first retry (s)', 'recovered after outage (s)'].join(' | '));
  for (const [name, f] of rows) {
    console.log([name.padEnd(52), String(f.wakeUps).padStart(8), f.firstRetryS.toFixed(1).padStart(15), f.recoveryS.toFixed(1).padStart(26)].join(' | '));
  }
}

main();
