/**
 * Runs work while keeping its lease alive, and stops the work the moment the lease cannot be vouched for.
 *
 * The original design's heartbeat dropped the result of every extend, so a lost lease surfaced only at Complete. Here every
 * extend is checked, with the two-tier rule Temporal uses for activity heartbeats:
 * - definitive (the condition failed: the lease was taken or the row finished): abort at once;
 * - transient: retry every heartbeat/3, but if nothing was confirmed by `safetyMargin` before the last confirmed
 *   expiry, abort anyway, so the worker never works on a lease it may no longer hold;
 * - fatal (e.g. access denied): abort at once, retrying cannot help.
 * A hard deadline (the job's time limit or the Lambda's remaining time) aborts too.
 *
 * Cancellation reaches the work as an AbortSignal; the guard does not wait for the work to notice it.
 */
import { setMaxListeners } from 'node:events';
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

export function runUnderLease<T>(options: GuardOptions<T>): Promise<T> {
  return new LeaseGuard(options).run();
}

type Timer = ReturnType<typeof setTimeout>;

/** Listeners the job's abort signal takes before Node warns of a leak (its default is 10). */
export const JOB_SIGNAL_MAX_LISTENERS = 100;

/** One guarded run: the work's abort controller, the lease's last confirmed expiry, and the timers around them. */
class LeaseGuard<T> {
  private readonly controller = new AbortController();
  private confirmedUntil: number;
  private lastExtendError: unknown;
  private beatTimer: Timer | undefined;
  private safetyTimer: Timer | undefined;
  private callTimer: Timer | undefined;
  private callController: AbortController | undefined;
  private finished = false;
  /** Rejects with the reason the guard stopped the work; raced against the work. */
  private readonly stopped: Promise<never>;
  private rejectStopped: (reason: unknown) => void = () => {};

  constructor(private readonly options: GuardOptions<T>) {
    // A job hands its signal to every request it makes, and makes many at once (the digest reads 128 index shards, 16
    // at a time): Node's leak warning at 11 listeners would be a false alarm. 100 still shows a real leak.
    setMaxListeners(JOB_SIGNAL_MAX_LISTENERS, this.controller.signal);
    this.confirmedUntil = options.leaseExpiresAt;
    this.stopped = new Promise<never>((_, reject) => {
      this.rejectStopped = reject;
    });
  }

  async run(): Promise<T> {
    const { options, controller } = this;
    // A lease already past its give-up point (the worker paused between its claim and here) is not worked on at all:
    // another worker may hold the occurrence by now, and may have committed its report; a first attempt does not look.
    if (options.clock.now() >= this.confirmedUntil - options.timing.safetyMarginMs) {
      this.abort(new LeaseExpiringError(iso(this.confirmedUntil), this.lastExtendError));
      return this.stopped;
    }
    const deadlineTimer = setTimeout(
      () => this.abort(new JobTimeoutError(iso(options.deadlineAt))),
      Math.max(0, options.deadlineAt - options.clock.now()),
    );
    this.armSafety();
    this.scheduleBeat(options.timing.heartbeatMs);

    const work = options.work(controller.signal);
    // If the guard stops first, the work's own late rejection must not become an unhandled rejection.
    work.catch((error) => {
      if (controller.signal.aborted)
        options.logger.info('job settled after it was aborted', { error: messageOf(error) });
    });
    try {
      return await Promise.race([work, this.stopped]);
    } finally {
      this.finished = true;
      clearTimeout(deadlineTimer);
      this.stopTimers();
    }
  }

  private get done(): boolean {
    return this.finished || this.controller.signal.aborted;
  }

  private abort(reason: Error): void {
    if (this.done) return;
    this.options.logger.warn('aborting job', { reason: messageOf(reason) });
    // Settle the guard first: a job that rejects inside its abort listener must not win the race in run().
    this.rejectStopped(reason);
    this.controller.abort(reason);
    this.stopTimers();
  }

  private stopTimers(): void {
    clearTimeout(this.beatTimer);
    clearTimeout(this.safetyTimer);
    clearTimeout(this.callTimer);
    this.callController?.abort();
  }

  /** Give the lease up `safetyMargin` before its last confirmed expiry, unless an extend confirms a later one. */
  private armSafety(): void {
    clearTimeout(this.safetyTimer);
    const giveUpAt = this.confirmedUntil - this.options.timing.safetyMarginMs;
    this.safetyTimer = setTimeout(
      () => this.abort(new LeaseExpiringError(iso(this.confirmedUntil), this.lastExtendError)),
      Math.max(0, giveUpAt - this.options.clock.now()),
    );
  }

  private scheduleBeat(delayMs: number): void {
    clearTimeout(this.beatTimer);
    this.beatTimer = setTimeout(() => void this.beat(), delayMs);
  }

  /** One extend; a confirmed one moves the give-up point, a definitive or fatal failure aborts, a transient one retries. */
  private async beat(): Promise<void> {
    const { timing, clock, logger } = this.options;
    const sentAt = clock.now();
    const target = sentAt + timing.leaseMs;
    // A hung extend counts as one failed extend: cut it after heartbeat/3, so that the retry still lands before the
    // give-up point, and never let it outlive that point.
    const thisCall = new AbortController();
    this.callController = thisCall;
    const callBudget = Math.max(
      1,
      Math.min(transientRetryMs(timing), this.confirmedUntil - timing.safetyMarginMs - sentAt),
    );
    this.callTimer = setTimeout(
      () => thisCall.abort(new Error(`extend took longer than ${callBudget} ms`)),
      callBudget,
    );
    try {
      await this.options.extend(target, sentAt, thisCall.signal);
      if (this.done) return;
      // Count from when the request was sent, not when the answer came: the store's clock may have started then.
      this.confirmedUntil = target;
      this.lastExtendError = undefined;
      this.armSafety();
      this.scheduleBeat(timing.heartbeatMs);
    } catch (error) {
      if (this.done) return;
      this.lastExtendError = error;
      if (error instanceof LeaseLostError) return this.abort(error);
      if (error instanceof DependencyError && error.kind === 'fatal') return this.abort(error);
      logger.warn('lease extend failed; retrying', {
        error: messageOf(error),
        confirmedUntil: iso(this.confirmedUntil),
      });
      this.scheduleBeat(transientRetryMs(timing));
    } finally {
      clearTimeout(this.callTimer);
    }
  }
}
