import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DependencyError, JobTimeoutError, LeaseExpiringError, LeaseLostError } from '../../functions/protocol/errors';
import {
  type GuardOptions,
  type LeaseTiming,
  runUnderLease,
  transientRetryMs,
} from '../../functions/protocol/lease-guard';
import type { Clock, Logger } from '../../functions/protocol/ports';

// The original design's constants: a two-minute lease, a heartbeat every 45 s, and a 15 s safety margin.
const T0 = Date.parse('2026-11-30T06:00:00Z');
const ORIGINAL: LeaseTiming = { leaseMs: 120_000, heartbeatMs: 45_000, safetyMarginMs: 15_000 };
const S = 1_000;

const clock: Clock = { now: () => Date.now() };
const silentLogger = (): Logger => ({ info: () => {}, warn: () => {}, error: () => {} });
/** Seconds since T0 on the fake clock. */
const elapsed = () => (Date.now() - T0) / S;

interface ExtendCall {
  readonly at: number;
  readonly target: number;
  readonly now: number;
  readonly signal: AbortSignal;
}

/** A job that finishes after `ms` (never when undefined) unless aborted; records when its signal aborted. */
function timedJob<T>(ms: number | undefined, value: T) {
  const seen: { abortedAt?: number; reason?: unknown } = {};
  const work = (signal: AbortSignal) =>
    new Promise<T>((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(() => resolve(value), ms);
      signal.addEventListener('abort', () => {
        seen.abortedAt = elapsed();
        seen.reason = signal.reason;
        clearTimeout(timer);
        // Like a job that ignores cancellation's outcome: it never settles. The guard must not wait for it.
      });
    });
  return { work, seen };
}

/** A job that never finishes on its own; records when its signal aborted. */
const endlessJob = () => timedJob<string>(undefined, 'never');

function guard<T>(overrides: Partial<GuardOptions<T>> & Pick<GuardOptions<T>, 'work' | 'extend'>): Promise<T> {
  return runUnderLease<T>({
    timing: ORIGINAL,
    clock,
    logger: silentLogger(),
    leaseExpiresAt: T0 + ORIGINAL.leaseMs,
    deadlineAt: T0 + 800 * S,
    ...overrides,
  });
}

/** An extend fake that records every call and answers with `answer(callIndex)`. */
function recordingExtend(answer: (index: number, call: ExtendCall) => Promise<void> = () => Promise.resolve()) {
  const calls: ExtendCall[] = [];
  const extend = (target: number, now: number, signal: AbortSignal) => {
    const call = { at: elapsed(), target, now, signal };
    calls.push(call);
    return answer(calls.length - 1, call);
  };
  return { calls, extend, times: () => calls.map((c) => c.at) };
}

/** Attach handlers at once so a rejection that happens while time is advanced is never reported as unhandled. */
function settle<T>(promise: Promise<T>) {
  const state: { done: boolean; value?: T; error?: unknown; settledAt?: number } = { done: false };
  promise.then(
    (value) => Object.assign(state, { done: true, value, settledAt: elapsed() }),
    (error) => Object.assign(state, { done: true, error, settledAt: elapsed() }),
  );
  return state;
}

const transient = () => new DependencyError('transient', 'extend lease', new Error('ThrottlingException'));

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('runUnderLease: heartbeat with the original timing (lease 120 s, heartbeat 45 s, margin 15 s)', () => {
  it('extends every 45 s while a 200 s job runs, each to sentAt + lease, and returns the job result', async () => {
    const ext = recordingExtend();
    const job = timedJob(200 * S, 'report');
    const result = settle(guard({ extend: ext.extend, work: job.work }));

    await vi.advanceTimersByTimeAsync(200 * S);

    expect(result).toMatchObject({ done: true, value: 'report', settledAt: 200 });
    // 45, 90, 135 and, since the job is still running at 180 s, a fourth beat at 180.
    expect(ext.times()).toEqual([45, 90, 135, 180]);
    for (const call of ext.calls) {
      expect(call.now).toBe(T0 + call.at * S);
      expect(call.target).toBe(call.now + ORIGINAL.leaseMs);
    }
    expect(job.seen.abortedAt).toBeUndefined();
  });

  it('absorbs one transient extend failure at 45 s: retries heartbeat/3 = 15 s later and keeps the job running', async () => {
    expect(transientRetryMs(ORIGINAL)).toBe(15 * S);
    const ext = recordingExtend((i) => (i === 0 ? Promise.reject(transient()) : Promise.resolve()));
    const job = timedJob(200 * S, 'report');
    const result = settle(guard({ extend: ext.extend, work: job.work }));

    await vi.advanceTimersByTimeAsync(200 * S);

    expect(ext.times().slice(0, 3)).toEqual([45, 60, 105]); // failed, retried, then the regular beat 45 s after the success
    expect(ext.calls[1].target).toBe(T0 + 60 * S + ORIGINAL.leaseMs);
    expect(job.seen.abortedAt).toBeUndefined();
    expect(result).toMatchObject({ done: true, value: 'report' });
  });

  it('gives the lease up at exactly 105 s (confirmed expiry 120 - margin 15) when every extend from 45 s fails transiently', async () => {
    const ext = recordingExtend(() => Promise.reject(transient()));
    const job = endlessJob();
    const result = settle(guard({ extend: ext.extend, work: job.work }));

    await vi.advanceTimersByTimeAsync(300 * S);

    expect(job.seen.abortedAt).toBe(105);
    expect(job.seen.abortedAt!).toBeLessThan(120); // before the store could hand the lease to another worker
    expect(job.seen.reason).toBeInstanceOf(LeaseExpiringError);
    expect(result.done).toBe(true);
    expect(result.settledAt).toBe(105);
    expect(result.error).toBeInstanceOf(LeaseExpiringError);
    expect((result.error as LeaseExpiringError).confirmedUntil).toBe('2026-11-30T06:02:00.000Z');
    expect((result.error as LeaseExpiringError).lastError).toBeInstanceOf(DependencyError);
    // 45, then a retry every 15 s; nothing after the guard gave up.
    expect(ext.times()).toEqual([45, 60, 75, 90]);
  });

  it('aborts at once when an extend reports the lease lost, and rejects with LeaseLostError', async () => {
    const lost = new LeaseLostError('extend', 'leaseId changed');
    const ext = recordingExtend((i) => (i === 1 ? Promise.reject(lost) : Promise.resolve()));
    const job = endlessJob();
    const result = settle(guard({ extend: ext.extend, work: job.work }));

    await vi.advanceTimersByTimeAsync(300 * S);

    expect(job.seen.abortedAt).toBe(90);
    expect(job.seen.reason).toBe(lost);
    expect(result).toMatchObject({ done: true, error: lost, settledAt: 90 });
    expect(ext.times()).toEqual([45, 90]); // no retry of a definitive answer
  });

  it('aborts at once on a fatal DependencyError from an extend (retrying cannot help)', async () => {
    const denied = new DependencyError('fatal', 'extend lease', new Error('AccessDeniedException'));
    const ext = recordingExtend(() => Promise.reject(denied));
    const job = endlessJob();
    const result = settle(guard({ extend: ext.extend, work: job.work }));

    await vi.advanceTimersByTimeAsync(300 * S);

    expect(job.seen.abortedAt).toBe(45);
    expect(result).toMatchObject({ done: true, error: denied, settledAt: 45 });
    expect(ext.times()).toEqual([45]);
  });

  it('never starts the work on a lease already past its give-up point (the worker paused after its claim)', async () => {
    // Claimed at T0, resumed 110 s later: the lease may be anybody's by now, and a first attempt does not look for
    // a report another holder committed meanwhile.
    vi.setSystemTime(T0 + 110 * S);
    let started = false;
    const extend = recordingExtend();
    const work = async () => {
      started = true;
    };
    const run = guard({ work, extend: extend.extend });
    await expect(run).rejects.toBeInstanceOf(LeaseExpiringError);
    expect(started).toBe(false);
    expect(extend.calls).toEqual([]);
  });

  it('aborts at the deadline with JobTimeoutError even while the lease is healthy', async () => {
    const ext = recordingExtend();
    const job = endlessJob();
    const result = settle(guard({ extend: ext.extend, work: job.work, deadlineAt: T0 + 100 * S }));

    await vi.advanceTimersByTimeAsync(300 * S);

    expect(job.seen.abortedAt).toBe(100);
    expect(result.settledAt).toBe(100);
    expect(result.error).toBeInstanceOf(JobTimeoutError);
    expect((result.error as JobTimeoutError).deadline).toBe('2026-11-30T06:01:40.000Z');
    expect(ext.times()).toEqual([45, 90]); // the heartbeat stops with the job
  });

  it('stops heartbeating once the job has returned, and never aborts its signal afterwards', async () => {
    const ext = recordingExtend();
    const job = timedJob(50 * S, 'done');
    const result = settle(guard({ extend: ext.extend, work: job.work, deadlineAt: T0 + 100 * S }));

    await vi.advanceTimersByTimeAsync(50 * S);
    expect(result).toMatchObject({ done: true, value: 'done' });
    expect(vi.getTimerCount()).toBe(0); // no heartbeat, safety or deadline timer left behind
    const extendsWhileRunning = ext.calls.length;

    await vi.advanceTimersByTimeAsync(10 * 60 * S); // past several heartbeats, the safety point and the deadline

    expect(extendsWhileRunning).toBe(1);
    expect(ext.times()).toEqual([45]);
    expect(job.seen.abortedAt).toBeUndefined();
  });

  it('an extend that completes after the job returned changes nothing and schedules nothing', async () => {
    let finishExtend!: () => void;
    const ext = recordingExtend(
      () =>
        new Promise<void>((resolve) => {
          finishExtend = resolve;
        }),
    );
    const job = timedJob(50 * S, 'done');
    const result = settle(guard({ extend: ext.extend, work: job.work }));

    await vi.advanceTimersByTimeAsync(50 * S); // the extend sent at 45 is still in flight
    expect(result).toMatchObject({ done: true, value: 'done' });
    expect(ext.calls[0].signal.aborted).toBe(true); // the guard cancels its in-flight extend when it stops
    finishExtend();
    await vi.advanceTimersByTimeAsync(10 * 60 * S);

    expect(ext.times()).toEqual([45]);
  });
});

describe('runUnderLease: a hanging extend', () => {
  /** An extend that never answers on its own, only rejects when its signal aborts. */
  const hangUntilAborted = (call: ExtendCall) =>
    new Promise<void>((_, reject) => {
      call.signal.addEventListener('abort', () => reject(call.signal.reason));
    });

  it('passes each extend a signal and aborts it when the call hangs; the next attempt follows in time', async () => {
    // Default timing (heartbeat 40 s): give-up point 120 - 15 = 105 s.
    const timing: LeaseTiming = { leaseMs: 120_000, heartbeatMs: 40_000, safetyMarginMs: 15_000 };
    let hungCallAbortedAt: number | undefined;
    const ext = recordingExtend((i, call) => {
      if (i > 0) return Promise.resolve();
      call.signal.addEventListener('abort', () => {
        hungCallAbortedAt = elapsed();
      });
      return hangUntilAborted(call);
    });
    const job = timedJob(150 * S, 'report');
    const result = settle(guard({ timing, extend: ext.extend, work: job.work }));

    await vi.advanceTimersByTimeAsync(150 * S);

    expect(ext.calls[0].at).toBe(40);
    expect(hungCallAbortedAt).toBeGreaterThan(40);
    // The hung call is given up in time for a retry, heartbeat/3 later, to land before the give-up point.
    expect(ext.calls[1].at).toBeCloseTo(hungCallAbortedAt! + 40 / 3, 2);
    expect(ext.calls[1].at).toBeLessThan(105);
    expect(ext.calls[1].signal.aborted).toBe(false);
    expect(job.seen.abortedAt).toBeUndefined();
    expect(result).toMatchObject({ done: true, value: 'report' });
  });

  it('an extend that ignores its signal cannot keep the job running past the give-up point', async () => {
    const ext = recordingExtend(() => new Promise<void>(() => {}));
    const job = endlessJob();
    const result = settle(guard({ extend: ext.extend, work: job.work }));

    await vi.advanceTimersByTimeAsync(300 * S);

    expect(ext.calls[0].signal.aborted).toBe(true);
    expect(job.seen.abortedAt).toBe(105);
    expect(result.error).toBeInstanceOf(LeaseExpiringError);
  });

  // With the original timing a hung extend must be cut early enough for its retry (heartbeat/3 later) to land before the
  // give-up point; a budget of a whole heartbeat would put the retry at 45 + 45 + 15 = 105 s, exactly at give-up.
  it('with the original timing, absorbs one hung extend as it absorbs one failed extend', async () => {
    const ext = recordingExtend((i, call) => (i === 0 ? hangUntilAborted(call) : Promise.resolve()));
    const job = timedJob(200 * S, 'report');
    const result = settle(guard({ extend: ext.extend, work: job.work }));

    await vi.advanceTimersByTimeAsync(200 * S);

    expect(job.seen.abortedAt).toBeUndefined();
    expect(result).toMatchObject({ done: true, value: 'report' });
  });
});

describe('runUnderLease: the job after an abort', () => {
  const captureUnhandled = () => {
    const seen: unknown[] = [];
    const listener = (reason: unknown) => seen.push(reason);
    process.on('unhandledRejection', listener);
    return { seen, stop: () => process.off('unhandledRejection', listener) };
  };

  /** Let Node run its unhandled-rejection check on real timers. */
  const drainRealTimers = async () => {
    vi.useRealTimers();
    await new Promise((resolve) => setTimeout(resolve, 20));
  };

  it('an async job that rejects when aborted causes no unhandled rejection, and the guard error wins', async () => {
    const unhandled = captureUnhandled();
    try {
      const lost = new LeaseLostError('extend', 'taken over');
      const ext = recordingExtend(() => Promise.reject(lost));
      const work = async (signal: AbortSignal) => {
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('job cancelled'))));
        return 'never';
      };
      const result = settle(guard({ extend: ext.extend, work }));

      await vi.advanceTimersByTimeAsync(60 * S);
      expect(result).toMatchObject({ done: true, error: lost, settledAt: 45 });

      await drainRealTimers();
      expect(unhandled.seen).toEqual([]);
    } finally {
      unhandled.stop();
    }
  });

  it('a job that rejects late, long after the abort, causes no unhandled rejection', async () => {
    const unhandled = captureUnhandled();
    try {
      const work = (signal: AbortSignal) =>
        new Promise<string>((_, reject) => {
          signal.addEventListener('abort', () => setTimeout(() => reject(new Error('cleanup failed')), 5 * S));
        });
      const result = settle(guard({ extend: recordingExtend().extend, work, deadlineAt: T0 + 30 * S }));

      await vi.advanceTimersByTimeAsync(60 * S);
      expect(result.error).toBeInstanceOf(JobTimeoutError);

      await drainRealTimers();
      expect(unhandled.seen).toEqual([]);
    } finally {
      unhandled.stop();
    }
  });

  // abort() must settle the guard before controller.abort() runs the job's abort listeners; otherwise a job promise
  // rejected directly in its listener settles first and wins Promise.race.
  it('the guard error wins even over a job promise rejected directly inside its abort listener', async () => {
    const lost = new LeaseLostError('extend', 'taken over');
    const ext = recordingExtend(() => Promise.reject(lost));
    const work = (signal: AbortSignal) =>
      new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(new Error('job cancelled'))));
    const result = settle(guard({ extend: ext.extend, work }));

    await vi.advanceTimersByTimeAsync(60 * S);

    expect(result.error).toBe(lost);
  });
});

describe('runUnderLease: the job signal', () => {
  it('takes one listener per concurrent request of a busy job without a leak warning', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const ext = recordingExtend();
    const work = async (signal: AbortSignal) => {
      // 64 requests in flight at once, each listening for the abort, as the digest's shard queries do.
      for (let i = 0; i < 64; i++) signal.addEventListener('abort', () => undefined);
      return 'report';
    };

    await expect(guard({ extend: ext.extend, work })).resolves.toBe('report');

    expect(warn.mock.calls.filter(([w]) => String(w).includes('MaxListeners'))).toEqual([]);
  });
});
