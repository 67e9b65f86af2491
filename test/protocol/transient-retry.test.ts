import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DependencyError, LeaseLostError } from '../../functions/protocol/errors';
import { withTransientRetries } from '../../functions/protocol/transient-retry';

const T0 = Date.parse('2026-11-30T06:00:00Z');
const transient = () => new DependencyError('transient', 'put report', new Error('ConditionalRequestConflict'));

/** A call that answers from a script, one entry per call, recording when (ms since T0) each call was made. */
function scriptedCall<T>(script: ReadonlyArray<() => Promise<T>>) {
  const at: number[] = [];
  const call = () => {
    at.push(Date.now() - T0);
    const next = script[Math.min(at.length - 1, script.length - 1)];
    return next();
  };
  return { call, at };
}
const fail = (error: unknown) => () => Promise.reject(error);
const succeed =
  <T>(value: T) =>
  () =>
    Promise.resolve(value);

/** Attach handlers at once so a rejection that happens while time is advanced is not reported as unhandled. */
function settle<T>(promise: Promise<T>) {
  const state: { done: boolean; value?: T; error?: unknown } = { done: false };
  promise.then(
    (value) => Object.assign(state, { done: true, value }),
    (error) => Object.assign(state, { done: true, error }),
  );
  return state;
}

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('withTransientRetries', () => {
  it('stops waiting for the next try as soon as the signal aborts', async () => {
    const controller = new AbortController();
    const { call, at } = scriptedCall([fail(transient())]);
    const result = settle(withTransientRetries(call, { attempts: 4, firstDelayMs: 10_000, signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort(new Error('lease lost'));
    await vi.advanceTimersByTimeAsync(0);
    expect(result).toMatchObject({ done: true, error: new Error('lease lost') });
    expect(at).toEqual([0]);
  });

  it('returns the first answer without waiting when the call succeeds', async () => {
    const c = scriptedCall([succeed('created')]);
    await expect(withTransientRetries(c.call, { attempts: 4, firstDelayMs: 200 })).resolves.toBe('created');
    expect(c.at).toEqual([0]);
  });

  it('retries transient failures with doubling delays and returns the eventual answer', async () => {
    const c = scriptedCall([fail(transient()), fail(transient()), fail(transient()), succeed('created')]);
    const result = settle(withTransientRetries(c.call, { attempts: 4, firstDelayMs: 200 }));

    await vi.advanceTimersByTimeAsync(10_000);

    expect(result).toMatchObject({ done: true, value: 'created' });
    expect(c.at).toEqual([0, 200, 600, 1_400]); // waits of 200, 400, 800 ms
  });

  it('makes at most `attempts` calls, then throws the last transient error', async () => {
    const last = transient();
    const c = scriptedCall([fail(transient()), fail(transient()), fail(last)]);
    const result = settle(withTransientRetries(c.call, { attempts: 3, firstDelayMs: 100 }));

    await vi.advanceTimersByTimeAsync(10_000);

    expect(result).toMatchObject({ done: true, error: last });
    expect(c.at).toEqual([0, 100, 300]);
  });

  it.each<[string, unknown]>([
    ['a fatal DependencyError', new DependencyError('fatal', 'put report', new Error('AccessDenied'))],
    ['a LeaseLostError', new LeaseLostError('complete', 'taken')],
    ['a plain Error', new Error('bug')],
    ['a non-Error value', 'boom'],
  ])('does not retry %s', async (_, error) => {
    const c = scriptedCall([fail(error), succeed('created')]);
    const result = settle(withTransientRetries(c.call, { attempts: 4, firstDelayMs: 200 }));

    await vi.advanceTimersByTimeAsync(10_000);

    expect(result).toMatchObject({ done: true, error });
    expect(c.at).toEqual([0]);
  });

  it('does not call at all when the signal is already aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('lease lost');
    controller.abort(reason);
    const c = scriptedCall([succeed('created')]);

    await expect(
      withTransientRetries(c.call, { attempts: 4, firstDelayMs: 200, signal: controller.signal }),
    ).rejects.toBe(reason);
    expect(c.at).toEqual([]);
  });

  it('stops retrying once the signal is aborted, rejecting with its reason', async () => {
    const controller = new AbortController();
    const reason = new Error('lease lost');
    const c = scriptedCall([fail(transient())]);
    const result = settle(withTransientRetries(c.call, { attempts: 10, firstDelayMs: 200, signal: controller.signal }));

    await vi.advanceTimersByTimeAsync(250); // calls at 0 and 200; now waiting 400 ms
    expect(c.at).toEqual([0, 200]);
    controller.abort(reason);
    await vi.advanceTimersByTimeAsync(60_000);

    expect(result).toMatchObject({ done: true, error: reason });
    expect(c.at).toEqual([0, 200]);
  });
});
