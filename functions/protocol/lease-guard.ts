/**
 * Runs work while keeping its lease alive, and stops the work the moment the lease cannot be vouched for.
 *
 * The seed's heartbeat dropped the result of every extend, so a lost lease surfaced only at Complete. Here every
 * extend is checked, with the two-tier rule Temporal uses for activity heartbeats:
 * - definitive (the condition failed: the lease was taken or the row finished): abort at once;
 * - transient: retry every heartbeat/3, but if nothing was confirmed by `safetyMargin` before the last confirmed
 *   expiry, abort anyway, so the worker never works on a lease it may no longer hold;
 * - fatal (e.g. access denied): abort at once, retrying cannot help.
 * A hard deadline (the job's time limit or the Lambda's remaining time) aborts too.
 *
 * Cancellation reaches the work as an AbortSignal; the guard does not wait for the work to notice it.
 */
import { DependencyError, JobTimeoutError, LeaseExpiringError, LeaseLostError, messageOf } from './errors';
import { iso } from './occurrence';
import type { Clock, Logger } from './ports';

export interface LeaseTiming {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly safetyMarginMs: number;
}

export interface GuardOptions<T> {
  readonly timing: LeaseTiming;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Expiry written by the claim. */
  readonly leaseExpiresAt: number;
  /** Absolute time at which the work is aborted whatever the lease says. */
  readonly deadlineAt: number;
  /** Extend the lease to `leaseExpiresAt`; throws LeaseLostError on a failed condition, DependencyError otherwise. */
  extend(leaseExpiresAt: number, now: number, signal: AbortSignal): Promise<void>;
  work(signal: AbortSignal): Promise<T>;
}

export const transientRetryMs = (timing: LeaseTiming): number => Math.max(1_000, Math.floor(timing.heartbeatMs / 3));

export async function runUnderLease<T>(options: GuardOptions<T>): Promise<T> {
  const { timing, clock, logger } = options;
  const controller = new AbortController();
  let confirmedUntil = options.leaseExpiresAt;
  let lastExtendError: unknown;
  let beatTimer: ReturnType<typeof setTimeout> | undefined;
  let safetyTimer: ReturnType<typeof setTimeout> | undefined;
  let callTimer: ReturnType<typeof setTimeout> | undefined;
  let callController: AbortController | undefined;
  let finished = false;
  let rejectStopped!: (reason: unknown) => void;
  const stopped = new Promise<never>((_, reject) => {
    rejectStopped = reject;
  });

  const abort = (reason: Error) => {
    if (finished || controller.signal.aborted) return;
    logger.warn('aborting job', { reason: messageOf(reason) });
    // Settle the guard first: a job that rejects inside its abort listener must not win the race below.
    rejectStopped(reason);
    controller.abort(reason);
    stopTimers();
  };

  const stopTimers = () => {
    clearTimeout(beatTimer);
    clearTimeout(safetyTimer);
    clearTimeout(callTimer);
    callController?.abort();
  };

  const armSafety = () => {
    clearTimeout(safetyTimer);
    const giveUpAt = confirmedUntil - timing.safetyMarginMs;
    safetyTimer = setTimeout(
      () => abort(new LeaseExpiringError(iso(confirmedUntil), lastExtendError)),
      Math.max(0, giveUpAt - clock.now()),
    );
  };

  const scheduleBeat = (delayMs: number) => {
    clearTimeout(beatTimer);
    beatTimer = setTimeout(() => void beat(), delayMs);
  };

  const beat = async () => {
    const sentAt = clock.now();
    const target = sentAt + timing.leaseMs;
    // A hung extend counts as one failed extend: cut it after heartbeat/3, so that the retry still lands before the
    // give-up point, and never let it outlive that point.
    callController = new AbortController();
    const callBudget = Math.max(1, Math.min(transientRetryMs(timing), confirmedUntil - timing.safetyMarginMs - sentAt));
    const thisCall = callController;
    callTimer = setTimeout(() => thisCall.abort(new Error(`extend took longer than ${callBudget} ms`)), callBudget);
    try {
      await options.extend(target, sentAt, thisCall.signal);
      if (finished || controller.signal.aborted) return;
      // Count from when the request was sent, not when the answer came: the store's clock may have started then.
      confirmedUntil = target;
      lastExtendError = undefined;
      armSafety();
      scheduleBeat(timing.heartbeatMs);
    } catch (error) {
      if (finished || controller.signal.aborted) return;
      lastExtendError = error;
      if (error instanceof LeaseLostError) return abort(error);
      if (error instanceof DependencyError && error.kind === 'fatal') return abort(error);
      logger.warn('lease extend failed; retrying', { error: messageOf(error), confirmedUntil: iso(confirmedUntil) });
      scheduleBeat(transientRetryMs(timing));
    } finally {
      clearTimeout(callTimer);
    }
  };

  const deadlineTimer = setTimeout(
    () => abort(new JobTimeoutError(iso(options.deadlineAt))),
    Math.max(0, options.deadlineAt - clock.now()),
  );
  armSafety();
  scheduleBeat(timing.heartbeatMs);

  const work = options.work(controller.signal);
  // If the guard stops first, the work's own late rejection must not become an unhandled rejection.
  work.catch((error) => {
    if (controller.signal.aborted) logger.info('job settled after it was aborted', { error: messageOf(error) });
  });
  try {
    return await Promise.race([work, stopped]);
  } finally {
    finished = true;
    clearTimeout(deadlineTimer);
    stopTimers();
  }
}
