/**
 * operations/bulk-schedules.ts: the bulk upsert honours its rate (fake timers: no item starts before its slot),
 * bounds its concurrency, backs off exponentially with jitter on throttling (and slows everyone), reports each bad
 * item by its index while writing the rest, stops on an error that is no item's own, saves a checkpoint that a
 * second run resumes from, and a re-run of the same items writes nothing.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DependencyError, InvalidInputError } from '../../functions/protocol/errors';
import { UnknownScheduleJobError } from '../../functions/protocol/manage-schedule';
import type { ScheduleSpec } from '../../functions/protocol/schedule-registry-ports';
import {
  BULK_BACKOFF_BASE_MS,
  type BulkUpsertOptions,
  checkBulkItem,
  upsertEach,
  upsertSchedules,
} from '../../operations/bulk-schedules';
import { scheduleOperationsOver } from '../../operations/schedules';
import { FakeProjection, FakeRegistry, template } from '../protocol/drift-fakes';

const T0 = Date.parse('2026-12-01T12:00:00Z');

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

/** An idempotent upsert over a map: true when it wrote. Records when each call started and how many ran at once. */
function fakeUpsert(latencyMs = 30) {
  const stored = new Map<string, string>();
  const starts: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const upsert = async (key: string, spec: ScheduleSpec) => {
    starts.push(Date.now());
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, latencyMs));
    inFlight--;
    const wanted = JSON.stringify(spec);
    if (stored.get(key) === wanted) return false;
    stored.set(key, wanted);
    return true;
  };
  return { upsert, stored, starts, maxInFlight: () => maxInFlight };
}

const items = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ scheduleKey: `cust-${i}`, expression: 'cron(0 8 ? * MON *)' }));

/** Let the fake timers run the bulk upsert to its end. */
async function run<T>(p: Promise<T>): Promise<T> {
  await vi.runAllTimersAsync();
  return p;
}

const throttled = () => new DependencyError('transient', 'create a schedule', new Error('ThrottlingException'));

describe('upsertEach: the rate and the concurrency', () => {
  it('starts at most `rate` items in any second, and keeps at most `concurrency` in flight', async () => {
    const f = fakeUpsert(300);
    const result = await run(upsertEach(f.upsert, items(200), { rate: 50, concurrency: 8 }));
    expect(result).toMatchObject({ total: 200, written: 200, unchanged: 0, failed: [], nextIndex: 200 });
    for (let i = 50; i < f.starts.length; i++) expect(f.starts[i] - f.starts[i - 50]).toBeGreaterThanOrEqual(1000);
    expect(f.maxInFlight()).toBeLessThanOrEqual(8);
    // 200 items at 50/s: the last starts 3.98 s after the first, not sooner.
    expect(f.starts.at(-1)! - f.starts[0]).toBeGreaterThanOrEqual(3_980);
  });

  it('reports progress after every item, done counting the failed', async () => {
    const f = fakeUpsert();
    const seen: Array<{ done: number; total: number; failed: number }> = [];
    await run(upsertEach(f.upsert, [...items(3), 'not an object'], { onProgress: (p) => seen.push(p) }));
    expect(seen).toHaveLength(4);
    expect(seen.at(-1)).toEqual({ done: 4, total: 4, failed: 1 });
  });
});

describe('upsertEach: throttling', () => {
  it('retries a throttled item after an exponential, jittered backoff that slows every item', async () => {
    const f = fakeUpsert(10);
    let throttles = 3;
    const calls: Array<[string, number]> = [];
    const upsert = async (key: string, spec: ScheduleSpec) => {
      calls.push([key, Date.now()]);
      if (key === 'cust-0' && throttles-- > 0) throw throttled();
      return f.upsert(key, spec);
    };
    const result = await run(upsertEach(upsert, items(3), { rate: 1000, concurrency: 1, random: () => 1 }));
    expect(result).toMatchObject({ written: 3, retries: 3, failed: [] });
    const first = calls.filter(([k]) => k === 'cust-0').map(([, at]) => at);
    // random() = 1: the whole window, 200, 400, 800 ms.
    expect(first.slice(1).map((at, i) => at - first[i])).toEqual([
      BULK_BACKOFF_BASE_MS,
      2 * BULK_BACKOFF_BASE_MS,
      4 * BULK_BACKOFF_BASE_MS,
    ]);
  });

  it('uses the jitter: a random of 0.25 waits a quarter of the window', async () => {
    const at: number[] = [];
    let fail = true;
    const upsert = async () => {
      at.push(Date.now());
      if (fail) {
        fail = false;
        throw throttled();
      }
      return true;
    };
    await run(upsertEach(upsert, items(1), { random: () => 0.25 }));
    expect(at[1] - at[0]).toBe(BULK_BACKOFF_BASE_MS / 4);
  });

  it('reports an item still throttled after maxAttempts, and goes on with the rest', async () => {
    const upsert = async (key: string) => {
      if (key === 'cust-1') throw throttled();
      return true;
    };
    const result = await run(upsertEach(upsert, items(3), { maxAttempts: 3, random: () => 0 }));
    expect(result.written).toBe(2);
    expect(result.retries).toBe(2);
    expect(result.failed).toEqual([
      { index: 1, scheduleKey: 'cust-1', error: expect.stringContaining('ThrottlingException') },
    ]);
  });
});

describe('upsertEach: bad items', () => {
  it('reports each bad item by its index, naming the field, and writes the rest', async () => {
    const f = fakeUpsert();
    const upsert = async (key: string, spec: ScheduleSpec) => {
      if (spec.expression === 'every monday')
        throw new InvalidInputError('schedule cust-x', ['expression must be cron(...), rate(...) or at(...)']);
      return f.upsert(key, spec);
    };
    const list = [
      { scheduleKey: 'a', expression: 'rate(1 day)' },
      'oops',
      { scheduleKey: 'bad key!', expression: 'rate(1 day)' },
      { scheduleKey: 'c', expression: 'rate(1 day)', timezone: 'Europe/Paris' },
      { scheduleKey: 'd', expression: 'every monday' },
      { scheduleKey: 'e', expression: 'rate(1 day)' },
    ];
    const result = await run(upsertEach(upsert, list));
    expect(result.written).toBe(2);
    expect([...f.stored.keys()].sort()).toEqual(['a', 'e']);
    expect(result.failed.map((x) => [x.index, x.scheduleKey])).toEqual([
      [1, undefined],
      [2, 'bad key!'],
      [3, 'c'],
      [4, 'd'],
    ]);
    expect(result.failed[0].error).toMatch(/must be a JSON object/);
    expect(result.failed[1].error).toMatch(/^scheduleKey must be 1-128/);
    expect(result.failed[2].error).toMatch(/^timezone is not a field of a schedule/);
    expect(result.failed[3].error).toBe('expression must be cron(...), rate(...) or at(...)');
    expect(result.nextIndex).toBe(6);
  });

  it('checks an item alone: the key and the spec apart', () => {
    expect(checkBulkItem({ scheduleKey: 'k', expression: 'rate(1 day)', enabled: false })).toEqual({
      ok: true,
      key: 'k',
      spec: { expression: 'rate(1 day)', enabled: false },
    });
    expect(checkBulkItem(null)).toMatchObject({ ok: false });
  });
});

describe('upsertEach: stopping and resuming', () => {
  it('stops on an error that is no item’s own, and its checkpoint stays before the item that met it', async () => {
    const upsert = async (key: string) => {
      if (key === 'cust-2') throw new DependencyError('fatal', 'create a schedule', new Error('AccessDeniedException'));
      return true;
    };
    const saved: number[] = [];
    const result = await run(
      upsertEach(upsert, items(10), { concurrency: 1, checkpoint: { save: (n) => void saved.push(n) } }),
    );
    expect(result.stopped).toMatch(/AccessDeniedException/);
    expect(result).toMatchObject({ written: 2, nextIndex: 2 });
    expect(saved).toEqual([1, 2]);
  });

  it('resumes from a checkpoint, skipping the items below it', async () => {
    const f = fakeUpsert();
    const result = await run(upsertEach(f.upsert, items(10), { checkpoint: { startAt: 7 } }));
    expect([...f.stored.keys()]).toEqual(['cust-7', 'cust-8', 'cust-9']);
    expect(result).toMatchObject({ written: 3, nextIndex: 10 });
  });

  it('stops starting items when the signal aborts, and finishes those in flight', async () => {
    const f = fakeUpsert(100);
    const controller = new AbortController();
    const options: BulkUpsertOptions = {
      rate: 10,
      concurrency: 2,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.done === 3) controller.abort();
      },
    };
    const result = await run(upsertEach(f.upsert, items(20), options));
    expect(result.stopped).toBe('interrupted');
    expect(result.written).toBeLessThan(6);
    expect(result.nextIndex).toBe(result.written);
  });

  it('writes nothing when run again on the same items (idempotent upsert)', async () => {
    const f = fakeUpsert();
    await run(upsertEach(f.upsert, items(50)));
    const again = await run(upsertEach(f.upsert, items(50)));
    expect(again).toMatchObject({ written: 0, unchanged: 50, failed: [] });
  });

  it('refuses a bad rate or checkpoint, naming it', async () => {
    await expect(upsertEach(async () => true, items(1), { rate: 0 })).rejects.toThrow(/rate must be a positive/);
    await expect(upsertEach(async () => true, items(1), { checkpoint: { startAt: 5 } })).rejects.toThrow(
      /checkpoint.startAt must be a whole number from 0 to 1, got 5/,
    );
  });
});

describe('upsertSchedules: on the registry and Scheduler (fakes)', () => {
  const setup = () => {
    const registry = new FakeRegistry();
    const projection = new FakeProjection(() => Date.now());
    projection.templates.set('weekly-report', template('weekly-report'));
    const ops = scheduleOperationsOver({ registry, projection, clock: { now: () => Date.now() } });
    return { registry, projection, ops };
  };

  it('writes each item as a row and its schedule; a second run reads each once and writes nothing', async () => {
    const { registry, projection, ops } = setup();
    const first = await run(upsertSchedules(ops, 'weekly-report', items(20), { by: 'import' }));
    expect(first).toMatchObject({ written: 20, unchanged: 0, failed: [] });
    expect(registry.rows.size).toBe(20);
    expect(projection.schedules.size).toBe(20);
    expect(registry.row('weekly-report', 'cust-3')).toMatchObject({ updatedBy: 'import', syncedVersion: 1 });

    const calls = { ...registry.calls };
    const puts = projection.calls.put;
    const again = await run(upsertSchedules(ops, 'weekly-report', items(20)));
    expect(again).toMatchObject({ written: 0, unchanged: 20 });
    expect(registry.calls.get - calls.get).toBe(20);
    expect(registry.calls.put).toBe(calls.put);
    expect(projection.calls.put).toBe(puts);
  });

  it('reports a bad spec by its index, naming the field, and writes the rest', async () => {
    const { registry, ops } = setup();
    const list = [...items(2), { scheduleKey: 'x', expression: 'cron(0 8 * * MON *)', timeZone: 'Mars/Base' }];
    const result = await run(upsertSchedules(ops, 'weekly-report', list));
    expect(result.written).toBe(2);
    expect(result.failed).toHaveLength(1);
    expect(result.failed[0]).toMatchObject({ index: 2, scheduleKey: 'x' });
    expect(result.failed[0].error).toMatch(/timeZone/);
    expect(registry.row('weekly-report', 'x')).toBeUndefined();
  });

  it('throws for a job that takes no schedules at run time, before writing anything', async () => {
    const { registry, ops } = setup();
    await expect(upsertSchedules(ops, 'nightly', items(3))).rejects.toBeInstanceOf(UnknownScheduleJobError);
    expect(registry.rows.size).toBe(0);
  });
});
