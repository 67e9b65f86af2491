/**
 * Retry a call a few times when it fails transiently (e.g. S3's 409 ConditionalRequestConflict, which the SDK
 * does not retry). Conditional outcomes are results, and fatal errors are thrown at once.
 */
import { isTransient } from './errors';

export interface TransientRetryOptions {
  readonly attempts: number;
  readonly firstDelayMs: number;
  readonly signal?: AbortSignal;
}

export async function withTransientRetries<T>(call: () => Promise<T>, options: TransientRetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      return await call();
    } catch (error) {
      if (!isTransient(error) || attempt >= options.attempts) throw error;
      await delay(options.firstDelayMs * 2 ** (attempt - 1), options.signal);
    }
  }
}

/**
 * Wait, but stop waiting (rejecting with the abort reason) as soon as the signal aborts; either way no listener is
 * left on the signal. (A delay, not a pause: pausing is what an operator does to a job.)
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Wait `ms`, or less when the signal aborts: resolves either way, so a loop that polls stops between two polls at
 * once (Ctrl-C ends a watch; a backfill stops starting new occurrences).
 */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
