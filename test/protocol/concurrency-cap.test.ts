/**
 * protocol/concurrency-cap.ts: a job's maxConcurrency and its fair order across keys, over the in-memory capacity
 * store (sim/fakes/memory-capacity.ts) on fake timers: take, release, a crashed holder's expiry, waiting, waking, the
 * fair order, a lost wake-up repaired, a contended row.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  admit,
  type CapacityDeps,
  type CapSettings,
  FIXED_SCHEDULE_FAIRNESS_KEY,
  fairnessKeyOf,
  leaveWaiting,
  MAX_CAPACITY_ROUNDS,
  occurrenceIdOf,
  release,
  repairCapacity,
} from '../../functions/protocol/concurrency-cap';
import { decodeEnvelope } from '../../functions/protocol/envelope';
import { DependencyError } from '../../functions/protocol/errors';
import type { OccurrenceKey } from '../../functions/protocol/occurrence';
import type { Logger } from '../../functions/protocol/ports';
import { MemoryCapacityStore } from '../../sim/fakes/memory-capacity';

const T0 = Date.parse('2026-12-01T00:00:00Z');
const JOB = 'sync';
const HOLD_MS = 300_000;
const quiet: Logger = { info() {}, warn() {}, error() {} };

let store: MemoryCapacityStore;
let sent: OccurrenceKey[];
let waitingRows: Map<string, string>;
let finalRows: Set<string>;
let deps: CapacityDeps;

const keyOf = (scheduleKey: string | undefined, minute = 0): OccurrenceKey => ({
  jobId: JOB,
  ...(scheduleKey === undefined ? {} : { scheduleKey }),
  scheduledTime: new Date(T0 + minute * 60_000).toISOString().replace('.000Z', 'Z'),
});
const settings = (maxConcurrency: number | undefined, fairnessKey?: string): CapSettings => ({
  id: JOB,
  ...(maxConcurrency === undefined ? {} : { maxConcurrency }),
  ...(fairnessKey === undefined ? {} : { fairnessKey }),
});
const start = (s: CapSettings, key: OccurrenceKey & { input?: unknown }, lease = `lease-${occurrenceIdOf(key)}`) =>
  admit(deps, s, key, lease, Date.now() + HOLD_MS, quiet);
const running = () => (store.rows.get(JOB)?.holds ?? []).filter((h) => h.expiresAt > Date.now()).length;
const sentIds = () => sent.map(occurrenceIdOf);

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  store = new MemoryCapacityStore();
  sent = [];
  waitingRows = new Map();
  finalRows = new Set();
  deps = {
    capacity: store,
    clock: { now: () => Date.now() },
    queue: {
      async send(body) {
        sent.push(decodeEnvelope(body, new Set([JOB])));
      },
      async hide() {},
    },
    waiting: {
      async recordWaiting(key, _leaseId, fairnessKey) {
        waitingRows.set(occurrenceIdOf(key), fairnessKey);
      },
      async isFinal(key) {
        return finalRows.has(occurrenceIdOf(key));
      },
    },
  };
});
afterEach(() => vi.useRealTimers());

describe('admit: taking a unit', () => {
  it('runs without a cap and writes nothing', async () => {
    expect(await start(settings(undefined), keyOf('a'))).toBe('run');
    expect(store.calls.read + store.calls.write).toBe(0);
  });

  it('takes units up to the cap, then records the next occurrence WAITING and acks it', async () => {
    const s = settings(2);
    expect(await start(s, keyOf('a'))).toBe('run');
    expect(await start(s, keyOf('b'))).toBe('run');
    expect(await start(s, keyOf('c'))).toBe('waiting');
    expect(running()).toBe(2);
    expect(waitingRows.get(occurrenceIdOf(keyOf('c')))).toBe('c');
    expect([...(store.waiting.get(JOB)?.keys() ?? [])]).toEqual([occurrenceIdOf(keyOf('c'))]);
  });

  it("renews the occurrence's own hold instead of counting it against the cap (a retried take, a next attempt)", async () => {
    const s = settings(1);
    expect(await start(s, keyOf('a'), 'lease-1')).toBe('run');
    expect(await start(s, keyOf('a'), 'lease-2')).toBe('run');
    expect(store.rows.get(JOB)?.holds).toEqual([
      { occurrence: occurrenceIdOf(keyOf('a')), leaseId: 'lease-2', expiresAt: T0 + HOLD_MS },
    ]);
  });

  it("counts a crashed holder's unit as free once its hold expired, without a release", async () => {
    const s = settings(1);
    await start(s, keyOf('a'));
    expect(await start(s, keyOf('b'))).toBe('waiting');
    vi.setSystemTime(T0 + HOLD_MS - 1);
    expect(await start(s, keyOf('c'))).toBe('waiting');
    vi.setSystemTime(T0 + HOLD_MS);
    // b waits ahead of it; the woken b takes the freed unit.
    expect(await start(s, keyOf('b'))).toBe('run');
    expect(store.rows.get(JOB)?.holds.map((h) => h.occurrence)).toEqual([occurrenceIdOf(keyOf('b'))]);
  });

  it('gives up a row that changed under every try as a transient DependencyError (the message comes back)', async () => {
    store.writeIfVersion = async () => false;
    const error = await start(settings(2), keyOf('a')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect((error as DependencyError).kind).toBe('transient');
    expect(store.calls.read).toBe(MAX_CAPACITY_ROUNDS);
  });
});

describe('release and wake', () => {
  it('frees the unit and wakes the first waiting occurrence, which then takes it and leaves the list', async () => {
    const s = settings(1);
    await start(s, keyOf('a'), 'la');
    await start(s, keyOf('b'));
    sent = [];
    await release(deps, s, keyOf('a'), 'la', quiet);
    expect(sentIds()).toEqual([occurrenceIdOf(keyOf('b'))]);
    expect(await start(s, keyOf('b'))).toBe('run');
    expect(store.waiting.get(JOB)?.size).toBe(0);
  });

  it('does not free a unit whose hold another attempt renewed (a stale release is refused by its lease id)', async () => {
    const s = settings(1);
    await start(s, keyOf('a'), 'old');
    await start(s, keyOf('a'), 'new');
    await release(deps, s, keyOf('a'), 'old', quiet);
    expect(running()).toBe(1);
  });

  it('wakes one waiting occurrence per free unit, not the whole list', async () => {
    const s = settings(3);
    for (const k of ['a', 'b', 'c']) await start(s, keyOf(k), `l-${k}`);
    for (const k of ['d', 'e', 'f', 'g']) await start(s, keyOf(k));
    sent = [];
    await release(deps, s, keyOf('a'), 'l-a', quiet);
    await release(deps, s, keyOf('b'), 'l-b', quiet);
    // The second release sees two free units and the same two heads (the first one woken has not taken its unit yet).
    expect(new Set(sentIds())).toEqual(new Set([occurrenceIdOf(keyOf('d')), occurrenceIdOf(keyOf('e'))]));
  });

  it('a fresh occurrence does not jump the waiting list: it waits behind it, and the head is woken instead', async () => {
    const s = settings(1);
    await start(s, keyOf('a'), 'la');
    await start(s, keyOf('b'));
    // a's release is lost with its worker: the unit frees when its hold expires, and nobody woke b.
    vi.setSystemTime(T0 + HOLD_MS);
    sent = [];
    expect(await start(s, keyOf('c', 5))).toBe('waiting');
    expect(sentIds()).toEqual([occurrenceIdOf(keyOf('b'))]);
    expect(await start(s, keyOf('b'))).toBe('run');
  });

  it('wakes the head when the unit freed between its refused take and its entry in the list', async () => {
    const s = settings(1);
    await start(s, keyOf('a'), 'la');
    const read = store.read.bind(store);
    let reads = 0;
    // b's take reads the row while a holds it; a releases (seeing nobody waiting) before b's entry is written.
    store.read = async (jobId) => {
      const row = await read(jobId);
      if (++reads === 1) await release(deps, s, keyOf('a'), 'la', quiet);
      return row;
    };
    expect(await start(s, keyOf('b'))).toBe('waiting');
    expect(sentIds()).toEqual([occurrenceIdOf(keyOf('b'))]);
  });
});

describe('fair order across keys', () => {
  it('interleaves keys round-robin: a key with many waiting occurrences does not delay one with a single one', async () => {
    const s = settings(1);
    await start(s, keyOf('holder'), 'lh');
    for (let minute = 0; minute < 5; minute++) await start(s, keyOf('big', minute));
    await start(s, keyOf('small', 9));
    const order = (await store.firstWaiting(JOB, 10)).map((e) => `${e.key.scheduleKey}:${e.seq}`);
    expect(order).toEqual(['big:1', 'small:1', 'big:2', 'big:3', 'big:4', 'big:5']);
  });

  it('a key that starts to wait late joins at the sequence being served, not ahead of the backlog', async () => {
    const s = settings(1);
    await start(s, keyOf('holder'), 'lh');
    for (let minute = 0; minute < 4; minute++) await start(s, keyOf('big', minute));
    // Serve big:1 and big:2: the list's virtual time is 2.
    for (const minute of [0, 1]) {
      const row = store.rows.get(JOB);
      await release(deps, s, occurrenceFrom(row?.holds[0]?.occurrence), row?.holds[0]?.leaseId ?? '', quiet);
      expect(await start(s, keyOf('big', minute), `lb${minute}`)).toBe('run');
    }
    await start(s, keyOf('late', 30));
    const order = (await store.firstWaiting(JOB, 10)).map((e) => `${e.key.scheduleKey}:${e.seq}`);
    expect(order).toEqual(['late:2', 'big:3', 'big:4']);
  });

  it('reads the tenant from the input when the job names a fairnessKey field, else the schedule key', () => {
    const s = settings(5, 'tenant');
    expect(fairnessKeyOf(s, { ...keyOf('k1'), input: { tenant: 'acme' } })).toBe('input:acme');
    expect(fairnessKeyOf(s, { ...keyOf('k2'), input: { tenant: 42 } })).toBe('input:42');
    expect(fairnessKeyOf(s, { ...keyOf('k3'), input: { other: 'x' } })).toBe('k3');
    expect(fairnessKeyOf(s, { ...keyOf('k4'), input: ['tenant'] })).toBe('k4');
    expect(fairnessKeyOf(settings(5), { ...keyOf('k5'), input: { tenant: 'acme' } })).toBe('k5');
    expect(fairnessKeyOf(s, keyOf(undefined))).toBe(FIXED_SCHEDULE_FAIRNESS_KEY);
  });

  it('two keys of one tenant share its line: the tenant with more keys gets no more turns', async () => {
    const s = settings(1, 'tenant');
    await start(s, keyOf('holder'), 'lh');
    for (const k of ['big-1', 'big-2', 'big-3']) await start(s, { ...keyOf(k), input: { tenant: 'big' } });
    await start(s, { ...keyOf('small-1', 1), input: { tenant: 'small' } });
    const order = (await store.firstWaiting(JOB, 10)).map((e) => e.key.scheduleKey);
    expect(order).toEqual(['big-1', 'small-1', 'big-2', 'big-3']);
  });
});

describe('repairs', () => {
  it('the reconciler wakes the head after a lost wake-up, once the unit is free', async () => {
    const s = settings(1);
    await start(s, keyOf('a'), 'la');
    await start(s, keyOf('b'));
    sent = [];
    expect(await repairCapacity(deps, s, quiet)).toEqual({ woken: 0, dropped: 0 });
    vi.setSystemTime(T0 + HOLD_MS);
    expect(await repairCapacity(deps, s, quiet)).toEqual({ woken: 1, dropped: 0 });
    expect(sentIds()).toEqual([occurrenceIdOf(keyOf('b'))]);
  });

  it('drops waiting occurrences that went final (deadline, cancel) and wakes the next one that can start', async () => {
    const s = settings(1);
    await start(s, keyOf('a'), 'la');
    await start(s, keyOf('b'));
    await start(s, keyOf('c', 1));
    finalRows.add(occurrenceIdOf(keyOf('b')));
    vi.setSystemTime(T0 + HOLD_MS);
    sent = [];
    expect(await repairCapacity(deps, s, quiet)).toEqual({ woken: 1, dropped: 1 });
    expect(sentIds()).toEqual([occurrenceIdOf(keyOf('c', 1))]);
  });

  it('an occurrence closed while waiting leaves the list and wakes the next', async () => {
    const s = settings(1);
    await start(s, keyOf('a'), 'la');
    await start(s, keyOf('b'));
    await start(s, keyOf('c', 1));
    await release(deps, s, keyOf('a'), 'la', quiet);
    sent = [];
    await leaveWaiting(deps, s, keyOf('b'), quiet);
    expect(sentIds()).toEqual([occurrenceIdOf(keyOf('c', 1))]);
  });
});

function occurrenceFrom(id: string | undefined): OccurrenceKey {
  const [scheduleKey, scheduledTime] = (id ?? '@').split('@');
  return { jobId: JOB, ...(scheduleKey === '' ? {} : { scheduleKey }), scheduledTime };
}
