/**
 * The capacity world: one job with `maxConcurrency`, occurrences of several fairness keys (unequal: one key often has
 * most of them), run by the protocol of functions/protocol/concurrency-cap.ts over the in-memory capacity store
 * (sim/fakes/memory-capacity.ts), on virtual time, under faults: worker crashes mid-run or after its outcome, before
 * its release (the hold expires with its invocation), lost wake-ups (a send that fails), duplicate deliveries, a take whose write landed but whose
 * answer was lost (the delivery fails and its message comes back), clock skew between workers within the margin. Every
 * store call takes a random latency, so concurrent deliveries interleave at every await. The reconciler's repair runs
 * every RECONCILE_MS.
 *
 * The protocol, not the handlers: claims are the world's own (an atomic compare of the occurrence's lease), so that
 * thousands of plans run in seconds. The handlers over the DynamoDB adapter are tested in
 * test/functions/worker-concurrency.test.ts.
 *
 * Invariants:
 *   C1 never more than maxConcurrency occurrences running at once (true time; a crashed run stops when it crashes)
 *   C2 every occurrence ends SUCCEEDED, and a unit never sits free while an occurrence waits for longer than the
 *      stated bound: (1 + faults of the plan) x (invocation + skew margin + reconciler interval + redelivery)
 *   C3 no key starves while others get more than their share: in a burst due at once (duplicates and latencies, no
 *      other fault: a crash or lost write delays the key it hits by up to C2's bound while the others go on), whenever
 *      a key has an occurrence not yet started, no other key has started more than its starts + maxConcurrency + 1
 */
import fc from 'fast-check';
import {
  admit,
  type CapacityDeps,
  type CapSettings,
  leaveWaiting,
  occurrenceIdOf,
  release,
  repairCapacity,
} from '../functions/protocol/concurrency-cap';
import { decodeEnvelope } from '../functions/protocol/envelope';
import type { OccurrenceKey } from '../functions/protocol/occurrence';
import type { Logger } from '../functions/protocol/ports';
import { MemoryCapacityStore } from './fakes/memory-capacity';

export type CapacityInvariantId = 'C1' | 'C2' | 'C3';

export const CAPACITY_INVARIANTS: Readonly<Record<CapacityInvariantId, string>> = {
  C1: 'never more than maxConcurrency occurrences running at once',
  C2: 'every occurrence ends SUCCEEDED; no unit sits free while one waits longer than the stated bound',
  C3: 'no key starves while others get more than their share (a burst: round-robin within cap + 1)',
};

const JOB = 'capped';
const T0 = Date.parse('2026-12-01T00:00:00Z');
/** One invocation's length: a hold expires this long after its take (plus the skew margin). */
export const INVOCATION_MS = 60_000;
export const SKEW_MARGIN_MS = 2_000;
export const RECONCILE_MS = 120_000;
/** A failed delivery's message comes back after this (the queue's visibility timeout). */
export const REDELIVERY_MS = 30_000;
const MAX_LATENCY_MS = 40;
const quiet: Logger = { info() {}, warn() {}, error() {} };

export interface CapacityPlan {
  readonly cap: number;
  /** Occurrences per key (key i is `k${i}`). */
  readonly perKey: readonly number[];
  /** Whether all are due at once (a burst: C3 applies) or spread over ten minutes. */
  readonly burst: boolean;
  readonly runMs: readonly number[];
  readonly arrivalMs: readonly number[];
  /** Indexes (into the run's starts, in order) of runs whose worker crashes mid-run. */
  readonly crashes: readonly number[];
  /** Indexes of runs whose worker dies after recording SUCCEEDED, before its release: the hold must expire. */
  readonly diesBeforeRelease: readonly number[];
  /** Indexes of sends (wake-ups) that fail. */
  readonly lostSends: readonly number[];
  /** Indexes of capacity writes that land but whose answer is lost. */
  readonly lostAnswers: readonly number[];
  /** Indexes of sends that are delivered twice. */
  readonly duplicates: readonly number[];
  readonly seed: number;
}

export const anyCapacityPlan: fc.Arbitrary<CapacityPlan> = fc
  .record({
    cap: fc.integer({ min: 1, max: 5 }),
    perKey: fc.oneof(
      fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 5 }),
      // One big key and small ones: what fairness is for.
      fc
        .tuple(
          fc.integer({ min: 10, max: 25 }),
          fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 1, maxLength: 4 }),
        )
        .map(([big, small]) => [big, ...small]),
    ),
    burst: fc.boolean(),
    crashes: fc.uniqueArray(fc.integer({ min: 0, max: 30 }), { maxLength: 2 }),
    diesBeforeRelease: fc.uniqueArray(fc.integer({ min: 0, max: 30 }), { maxLength: 2 }),
    lostSends: fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 3 }),
    lostAnswers: fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 2 }),
    duplicates: fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 3 }),
    seed: fc.integer({ min: 1, max: 2 ** 30 }),
  })
  .chain((p) => {
    const n = p.perKey.reduce((a, b) => a + b, 0);
    return fc
      .record({
        runMs: fc.array(fc.integer({ min: 500, max: 40_000 }), { minLength: n, maxLength: n }),
        arrivalMs: fc.array(fc.integer({ min: 0, max: 600_000 }), { minLength: n, maxLength: n }),
      })
      .map((r) => ({ ...p, ...r }));
  });

export interface CapacityViolation {
  readonly invariant: CapacityInvariantId;
  readonly message: string;
}

interface Occ {
  readonly key: OccurrenceKey;
  readonly fairness: string;
  state: 'pending' | 'running' | 'waiting' | 'done';
  leaseId?: string;
  /** True time the current lease expires (a crashed holder's occurrence is claimable again then). */
  leaseUntil: number;
  started?: number;
}

/** A small deterministic random source (mulberry32) for latencies and skews. */
function randomOf(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A discrete-event loop: `at(ms, fn)` schedules, `sleep(ms)` suspends the caller until then. */
class Loop {
  now = T0;
  private seq = 0;
  private readonly timers: { at: number; seq: number; fn: () => void }[] = [];
  at(ms: number, fn: () => void): void {
    this.timers.push({ at: Math.max(ms, this.now), seq: this.seq++, fn });
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.at(this.now + ms, resolve));
  }
  async run(until: number): Promise<void> {
    for (;;) {
      // Let every continuation that is ready run before time moves (one macrotask turn drains the microtasks).
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.timers.length === 0) return;
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift();
      if (next === undefined || next.at > until) return;
      this.now = next.at;
      next.fn();
    }
  }
}

/** Runs one plan; the violations found (empty: it held). */
export async function runCapacityWorld(
  plan: CapacityPlan,
  /** Another store (a broken one, to show that the invariants catch it); default the in-memory one. */
  storeOf: () => MemoryCapacityStore = () => new MemoryCapacityStore(),
): Promise<CapacityViolation[]> {
  const random = randomOf(plan.seed);
  const loop = new Loop();
  const store = storeOf();
  const settings: CapSettings = { id: JOB, maxConcurrency: plan.cap };
  const occs = new Map<string, Occ>();
  plan.perKey.forEach((count, k) => {
    for (let i = 0; i < count; i++) {
      const scheduledTime = new Date(T0 + i * 60_000).toISOString().replace('.000Z', 'Z');
      const key: OccurrenceKey = { jobId: JOB, scheduleKey: `k${k}`, scheduledTime };
      occs.set(occurrenceIdOf(key), { key, fairness: `k${k}`, state: 'pending', leaseUntil: 0 });
    }
  });
  const all = [...occs.values()];
  const faults = plan.crashes.length + plan.diesBeforeRelease.length + plan.lostSends.length + plan.lostAnswers.length;
  const violations: CapacityViolation[] = [];
  /** Runs in true time: [start, end] (end undefined while running). */
  const runs: { id: string; key: string; start: number; end?: number }[] = [];
  let sends = 0;
  let writes = 0;
  let starts = 0;
  let leases = 0;

  // Every store call takes a random latency, so that concurrent deliveries interleave at each await.
  const slow = <T>(call: () => Promise<T>): Promise<T> => loop.sleep(Math.floor(random() * MAX_LATENCY_MS)).then(call);
  const latent: MemoryCapacityStore = Object.create(store);
  latent.read = (jobId) => slow(() => store.read(jobId));
  latent.writeIfVersion = (jobId, version, write) =>
    slow(async () => {
      const written = await store.writeIfVersion(jobId, version, write);
      if (plan.lostAnswers.includes(writes++)) throw new Error('no answer (the write landed)');
      return written;
    });
  latent.nextSeq = (jobId, key, floor) => slow(() => store.nextSeq(jobId, key, floor));
  latent.addWaiting = (entry) => slow(() => store.addWaiting(entry));
  latent.removeWaiting = (jobId, id) => slow(() => store.removeWaiting(jobId, id));
  latent.findWaiting = (jobId, id) => slow(() => store.findWaiting(jobId, id));
  latent.firstWaiting = (jobId, limit) => slow(() => store.firstWaiting(jobId, limit));

  const depsWith = (skewMs: number): CapacityDeps => ({
    capacity: latent,
    clock: { now: () => loop.now + skewMs },
    queue: {
      async send(body) {
        const n = sends++;
        if (plan.lostSends.includes(n)) throw new Error('SQS unavailable');
        const key = decodeEnvelope(body, new Set([JOB]));
        const copies = plan.duplicates.includes(n) ? 2 : 1;
        for (let c = 0; c < copies; c++) loop.at(loop.now + 5 + Math.floor(random() * 200), () => void deliver(key));
      },
      async hide() {},
    },
    waiting: {
      async recordWaiting(key, leaseId) {
        const occ = occs.get(occurrenceIdOf(key));
        if (occ?.state === 'running' && occ.leaseId === leaseId) occ.state = 'waiting';
      },
      async isFinal(key) {
        return occs.get(occurrenceIdOf(key))?.state === 'done';
      },
    },
  });

  async function deliver(key: OccurrenceKey): Promise<void> {
    const occ = occs.get(occurrenceIdOf(key));
    if (occ === undefined) return;
    const skewMs = Math.floor((random() - 0.5) * SKEW_MARGIN_MS);
    const deps = depsWith(skewMs);
    if (occ.state === 'done') {
      // The worker's leftWaiting: off the list if it was there, and the next one woken.
      await leaveWaiting(deps, settings, key, quiet);
      return;
    }
    // The claim: refused while another delivery's lease lives (a duplicate is dropped).
    if (occ.state === 'running' && occ.leaseUntil > loop.now) return;
    const leaseId = `lease-${++leases}`;
    occ.state = 'running';
    occ.leaseId = leaseId;
    occ.leaseUntil = loop.now + INVOCATION_MS;
    const holdUntil = deps.clock.now() + INVOCATION_MS + SKEW_MARGIN_MS;
    let admitted: 'run' | 'waiting';
    try {
      admitted = await admit(deps, settings, occ.key, leaseId, holdUntil, quiet);
    } catch {
      // The delivery failed: its message comes back after the visibility timeout.
      loop.at(loop.now + REDELIVERY_MS, () => void deliver(key));
      return;
    }
    if (admitted === 'waiting') return;
    const n = starts++;
    const run = { id: occurrenceIdOf(key), key: occ.fairness, start: loop.now } as (typeof runs)[number];
    runs.push(run);
    occ.started ??= loop.now;
    checkC1(run.start);
    const runMs = plan.runMs[all.indexOf(occ)] ?? 1000;
    if (plan.crashes.includes(n)) {
      // The worker dies halfway: nothing after; the message comes back after the visibility timeout.
      await loop.sleep(runMs / 2);
      run.end = loop.now;
      loop.at(Math.max(loop.now + REDELIVERY_MS, occ.leaseUntil), () => void deliver(key));
      return;
    }
    await loop.sleep(runMs);
    run.end = loop.now;
    if (occ.leaseId === leaseId) occ.state = 'done';
    if (plan.diesBeforeRelease.includes(n)) return;
    await release(deps, settings, key, leaseId, quiet);
  }

  function checkC1(at: number): void {
    const running = runs.filter((r) => r.start <= at && (r.end === undefined || r.end > at)).length;
    if (running > plan.cap)
      violations.push({ invariant: 'C1', message: `${running} running at ${at - T0} ms, cap ${plan.cap}` });
  }

  const arrivals = all.map((_, i) => (plan.burst ? 0 : (plan.arrivalMs[i] ?? 0)));
  all.forEach((o, i) => {
    loop.at(T0 + arrivals[i], () => void deliver(o.key));
  });
  const reconcile = async () => {
    // The occurrences' reconciler: a RUNNING row whose lease expired (its delivery failed, its worker died) again.
    for (const o of all) if (o.state === 'running' && o.leaseUntil <= loop.now) void deliver(o.key);
    await repairCapacity(depsWith(0), settings, quiet).catch(() => undefined);
    if (all.some((o) => o.state !== 'done')) loop.at(loop.now + RECONCILE_MS, () => void reconcile());
  };
  loop.at(T0 + RECONCILE_MS, () => void reconcile());
  const totalRun = plan.runMs.reduce((a, b) => a + b, 0);
  const bound = (1 + faults) * (INVOCATION_MS + SKEW_MARGIN_MS + RECONCILE_MS + REDELIVERY_MS);
  await loop.run(T0 + 600_000 + totalRun + (all.length + 2) * bound);

  // C2: all done, and no idle unit while something waits for longer than the bound.
  const notDone = all.filter((o) => o.state !== 'done');
  if (notDone.length > 0)
    violations.push({
      invariant: 'C2',
      message: `${notDone.length} never finished: ${occurrenceIdOf(notDone[0].key)}`,
    });
  const idle = longestIdleWhileWaiting(runs, all, arrivals, plan.cap);
  if (idle.ms > bound)
    violations.push({
      invariant: 'C2',
      message: `a unit sat free for ${idle.ms} ms while ${idle.waiting} waited (bound ${bound})`,
    });
  // A fault delays the key it hits by up to the C2 bound, while the others go on: fairness is judged without one.
  if (plan.burst && faults === 0) checkC3(runs, all, plan.cap + 1, violations);
  return violations;
}

/** The longest stretch of true time in which fewer than cap ran while an arrived occurrence had not started. */
function longestIdleWhileWaiting(
  runs: readonly { start: number; end?: number }[],
  all: readonly Occ[],
  arrivals: readonly number[],
  cap: number,
): { ms: number; waiting: number } {
  const instants = [
    ...new Set([...runs.flatMap((r) => [r.start, r.end ?? r.start]), ...arrivals.map((a) => T0 + a)]),
  ].sort((a, b) => a - b);
  let longest = { ms: 0, waiting: 0 };
  let since: number | undefined;
  for (const t of instants) {
    const running = runs.filter((r) => r.start <= t && (r.end === undefined || r.end > t)).length;
    // Waiting: arrived, and its (last) successful run not yet started.
    const waiting = all.filter((o, i) => T0 + arrivals[i] <= t && (o.started === undefined || o.started > t)).length;
    if (running < cap && waiting > 0) {
      since ??= t;
      if (t - since > longest.ms) longest = { ms: t - since, waiting };
    } else since = undefined;
  }
  return longest;
}

function checkC3(
  runs: readonly { id: string; key: string; start: number }[],
  all: readonly Occ[],
  slack: number,
  violations: CapacityViolation[],
): void {
  const firstStarts = [...new Map(runs.map((r) => [r.id, r] as const)).values()].sort((a, b) => a.start - b.start);
  const total = new Map<string, number>();
  for (const o of all) total.set(o.fairness, (total.get(o.fairness) ?? 0) + 1);
  const started = new Map<string, number>();
  for (const run of firstStarts) {
    started.set(run.key, (started.get(run.key) ?? 0) + 1);
    const mine = started.get(run.key) ?? 0;
    for (const [key, count] of total) {
      const theirs = started.get(key) ?? 0;
      if (theirs < count && mine > theirs + slack) {
        violations.push({
          invariant: 'C3',
          message: `key ${run.key} started ${mine} while key ${key} had started ${theirs} of ${count} (slack ${slack})`,
        });
        return;
      }
    }
  }
}

export interface CapacityReport {
  readonly runs: number;
  readonly seed: number;
  readonly failure?: { readonly plan: CapacityPlan; readonly violations: readonly CapacityViolation[] };
}

/** Runs `runs` plans from `seed` with fast-check (shrinking a failure to its smallest plan). */
export async function simulateCapacity(options: { runs: number; seed: number }): Promise<CapacityReport> {
  let failure: CapacityReport['failure'];
  const result = await fc.check(
    fc.asyncProperty(anyCapacityPlan, async (plan) => {
      const violations = await runCapacityWorld(plan);
      if (violations.length > 0) failure = { plan, violations };
      return violations.length === 0;
    }),
    { numRuns: options.runs, seed: options.seed },
  );
  return { runs: result.numRuns, seed: options.seed, ...(result.failed && failure ? { failure } : {}) };
}

export function formatCapacityReport(report: CapacityReport): string {
  const lines = [`capacity world: ${report.runs} plans, seed ${report.seed}`];
  for (const [id, text] of Object.entries(CAPACITY_INVARIANTS)) {
    const broken = report.failure?.violations.filter((v) => v.invariant === id) ?? [];
    lines.push(`  ${id} ${broken.length === 0 ? 'held' : `BROKEN: ${broken[0].message}`}  ${text}`);
  }
  if (report.failure) lines.push(`  smallest failing plan: ${JSON.stringify(report.failure.plan)}`);
  return lines.join('\n');
}
