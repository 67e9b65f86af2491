/**
 * A fault plan: everything that goes wrong in one simulated occurrence, as plain data, so fast-check can generate
 * it, shrink it and print it, and a run can be replayed from it exactly.
 *
 * The bounds below are the fault combinations the invariants are claimed under. Faults beyond a bound are not
 * generated, or are skipped at run time and counted (see `world.ts`), and the summary says so.
 */
import fc from 'fast-check';

export type CallFault =
  /** The call fails before it reaches the service (after the SDK's own retries): a throttle, a 503, a timeout. */
  | { readonly kind: 'transient' }
  /** The service throttles the call (ThrottlingException), after the SDK's own retries; nothing is applied. */
  | { readonly kind: 'throttled' }
  /** The request reaches the service this much later than usual (the response is on time after that). */
  | { readonly kind: 'slow'; readonly ms: number }
  /** Applied, the response is lost, the SDK retries the same request and the caller sees the retry's answer. */
  | { readonly kind: 'lost-retried' }
  /** Applied, the response is lost, and the SDK gives up: the caller sees a timeout for a write that happened. */
  | { readonly kind: 'lost-error' }
  /** Applied, and the process freezes (a long GC pause) right after sending it, for `ms`; then it carries on. */
  | { readonly kind: 'pause-after'; readonly ms: number }
  /** The process dies as it sends this call (nothing is applied). */
  | { readonly kind: 'crash-before' }
  /** The call is applied and the process dies before the response arrives (commit-then-die, for PutObject). */
  | { readonly kind: 'crash-after' };

/**
 * `reconciler` (every world) and `operator` (pause, resume; the policy world only): no plan of the occurrence worlds
 * faults them. `app`: the user's app managing its schedules (the registry world, which faults it and the reconciler).
 */
export type ActorKind = 'trigger' | 'worker' | 'notifier' | 'reconciler' | 'operator' | 'app';

export interface FaultPlan {
  /** Drives the retry jitter and the queue poller's delays. */
  readonly seed: number;
  /** How long the job works when nothing stops it. */
  readonly jobMs: number;
  /** When EventBridge Scheduler delivers the trigger event, ms after the scheduled time (at least once). */
  readonly schedulerDeliveries: readonly number[];
  /**
   * The fault of the `call`-th AWS call (1-based) made by actors of that kind in the run, or, with `invocation`,
   * by that one invocation of that kind (e.g. the first worker's extends are its calls 3, 4, ...).
   */
  readonly callFaults: readonly {
    readonly actor: ActorKind;
    readonly call: number;
    readonly invocation?: number;
    readonly fault: CallFault;
  }[];
  /** The `invocation`-th worker invocation is killed `atMs` after it starts (any await point). */
  readonly crashes: readonly { readonly invocation: number; readonly atMs: number }[];
  /** The `invocation`-th worker invocation freezes (a GC pause) `atMs` after it starts, for `forMs`. */
  readonly freezes: readonly { readonly invocation: number; readonly atMs: number; readonly forMs: number }[];
  /** SQS hands out an extra copy of the job message this long after it was first sent (at-least-once delivery). */
  readonly sqsDuplicates: readonly number[];
  /** Clock offset of each worker invocation in turn (cycled), within ±SKEW_BOUND_MS / 2. */
  readonly skewsMs: readonly number[];
  /** The job's upstream is down for this window, relative to the scheduled time. */
  readonly outage?: { readonly fromMs: number; readonly forMs: number };
  /**
   * The table unreachable from one worker invocation (a broken connection, a bad host): every table call it makes
   * in the window (relative to the scheduled time) fails transiently, while other workers get through.
   */
  readonly storeBrownouts?: readonly { readonly invocation: number; readonly fromMs: number; readonly forMs: number }[];
  /** retry.maxAttempts of the job (a valid setting), so that runs also end FAILED by running out of attempts. */
  readonly maxAttempts?: number;
}

export const BOUNDS = {
  /**
   * Worker processes killed per occurrence (crash faults, timed kills, Lambda timeouts). Every crash costs one
   * receive of the job message, and each comes back after a visibility timeout: the finish bound of invariant 4
   * counts them (world.ts finishBoundMs). A message that still runs out of receives goes to the job DLQ, and the
   * reconciler re-enqueues its row.
   */
  maxWorkerCrashes: 3,
  /**
   * Failed invocations of the trigger per Scheduler delivery: Lambda retries an async invocation twice, then the
   * event goes to the trigger's DLQ. A row recorded before that is the reconciler's (PENDING, never claimed); one that
   * never was has nothing to repair, so at most two of the three tries may fail.
   */
  maxTriggerFailuresPerDelivery: 2,
  /**
   * Failed notifier invocations per occurrence: four retries (2+4+8+16 s apart) land well inside the SNS FIFO
   * topic's five-minute deduplication window, which is what makes publish-then-fail-to-record announce once.
   */
  maxNotifierFailures: 4,
  /**
   * Clock offset of any worker from true time: ±7.5 s, so two workers differ by at most 15 s, the default
   * leaseSafetyMarginSeconds, which is the skew the protocol says it tolerates.
   */
  skewBoundMs: 15_000,
} as const;

const callFault: fc.Arbitrary<CallFault> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'transient' } as const) },
  { weight: 2, arbitrary: fc.integer({ min: 1_000, max: 40_000 }).map((ms) => ({ kind: 'slow', ms }) as const) },
  { weight: 2, arbitrary: fc.constant({ kind: 'lost-retried' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'lost-error' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'crash-before' } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: 'crash-after' } as const) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1_000, max: 300_000 }).map((ms) => ({ kind: 'pause-after', ms }) as const),
  },
);

const actorKind: fc.Arbitrary<ActorKind> = fc.oneof(
  { weight: 1, arbitrary: fc.constant('trigger' as const) },
  { weight: 5, arbitrary: fc.constant('worker' as const) },
  { weight: 1, arbitrary: fc.constant('notifier' as const) },
);

export const faultPlan: fc.Arbitrary<FaultPlan> = fc.record(
  {
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    jobMs: fc.integer({ min: 1_000, max: 260_000 }),
    schedulerDeliveries: fc.array(fc.integer({ min: 0, max: 30_000 }), { minLength: 1, maxLength: 3 }),
    callFaults: fc.array(fc.record({ actor: actorKind, call: fc.integer({ min: 1, max: 14 }), fault: callFault }), {
      maxLength: 8,
    }),
    crashes: fc.array(
      fc.record({ invocation: fc.integer({ min: 1, max: 4 }), atMs: fc.integer({ min: 0, max: 300_000 }) }),
      { maxLength: 2 },
    ),
    // Short pauses (within the margin, where overlap is still excluded) as often as long ones (past the lease).
    freezes: fc.array(
      fc.record({
        invocation: fc.integer({ min: 1, max: 4 }),
        atMs: fc.integer({ min: 0, max: 200_000 }),
        forMs: fc.oneof(fc.integer({ min: 100, max: 8_000 }), fc.integer({ min: 8_000, max: 400_000 })),
      }),
      { maxLength: 1 },
    ),
    sqsDuplicates: fc.array(fc.integer({ min: 0, max: 400_000 }), { maxLength: 2 }),
    // Often all clocks agree closely, so that freezes within the margin are checked for overlap too.
    skewsMs: fc.oneof(
      fc.array(fc.integer({ min: -BOUNDS.skewBoundMs / 2, max: BOUNDS.skewBoundMs / 2 }), {
        minLength: 1,
        maxLength: 4,
      }),
      fc.array(fc.integer({ min: -1_000, max: 1_000 }), { minLength: 1, maxLength: 4 }),
    ),
    outage: fc.option(
      fc.record({ fromMs: fc.integer({ min: 0, max: 600_000 }), forMs: fc.integer({ min: 1_000, max: 7 * 3600_000 }) }),
      { nil: undefined },
    ),
    maxAttempts: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
  },
  {
    requiredKeys: [
      'seed',
      'jobMs',
      'schedulerDeliveries',
      'callFaults',
      'crashes',
      'freezes',
      'sqsDuplicates',
      'skewsMs',
    ],
  },
);

/**
 * The takeover family, weighted into the general generator: a long job, the table unreachable for the worker for
 * a while (so heartbeats fail), sometimes a long pause, and extra copies of the message arriving while the first
 * worker may have lost its lease. This is where an ignored extend result or an unfenced write shows.
 */
export const takeoverPlan: fc.Arbitrary<FaultPlan> = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  jobMs: fc.integer({ min: 60_000, max: 260_000 }),
  schedulerDeliveries: fc.constant([0]),
  callFaults: fc.array(
    fc.record({ actor: fc.constant('worker' as const), call: fc.integer({ min: 1, max: 14 }), fault: callFault }),
    { maxLength: 3 },
  ),
  crashes: fc.constant([]),
  freezes: fc.array(
    fc.record({
      invocation: fc.constant(1),
      atMs: fc.integer({ min: 0, max: 200_000 }),
      forMs: fc.integer({ min: 1_000, max: 300_000 }),
    }),
    { maxLength: 1 },
  ),
  sqsDuplicates: fc.array(fc.integer({ min: 60_000, max: 400_000 }), { minLength: 1, maxLength: 4 }),
  skewsMs: fc.array(fc.integer({ min: -BOUNDS.skewBoundMs / 2, max: BOUNDS.skewBoundMs / 2 }), {
    minLength: 1,
    maxLength: 4,
  }),
  storeBrownouts: fc.array(
    fc.record({
      invocation: fc.constant(1),
      fromMs: fc.integer({ min: 20_000, max: 150_000 }),
      forMs: fc.integer({ min: 10_000, max: 250_000 }),
    }),
    { maxLength: 1 },
  ),
});

/**
 * The paused-commit family: a worker pauses (GC) right after one of its calls, often its commit, for long enough to
 * lose its lease but not to be killed by the Lambda timeout, while copies of its message arrive. This is where an
 * unfenced complete or release shows.
 */
export const pausedCommitPlan: fc.Arbitrary<FaultPlan> = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  jobMs: fc.integer({ min: 1_000, max: 120_000 }),
  schedulerDeliveries: fc.constant([0]),
  callFaults: fc
    .tuple(fc.integer({ min: 2, max: 8 }), fc.integer({ min: 60_000, max: 220_000 }))
    .map(([call, ms]) => [{ actor: 'worker' as const, call, fault: { kind: 'pause-after' as const, ms } }]),
  crashes: fc.constant([]),
  freezes: fc.constant([]),
  sqsDuplicates: fc.array(fc.integer({ min: 100_000, max: 330_000 }), { minLength: 1, maxLength: 3 }),
  skewsMs: fc.array(fc.integer({ min: -BOUNDS.skewBoundMs / 2, max: BOUNDS.skewBoundMs / 2 }), {
    minLength: 1,
    maxLength: 3,
  }),
});

/** Every plan the property runs draw from: mostly anything, a third of the time a takeover or a paused commit. */
export const anyPlan: fc.Arbitrary<FaultPlan> = fc.oneof(
  { weight: 4, arbitrary: faultPlan },
  { weight: 1, arbitrary: takeoverPlan },
  { weight: 1, arbitrary: pausedCommitPlan },
);

/** The plan with nothing going wrong: one delivery, a job of `jobMs`. */
export function calmPlan(overrides: Partial<FaultPlan> = {}): FaultPlan {
  return {
    seed: 1,
    jobMs: 100_000,
    schedulerDeliveries: [0],
    callFaults: [],
    crashes: [],
    freezes: [],
    sqsDuplicates: [],
    skewsMs: [0],
    ...overrides,
  };
}

/** Deterministic uniform [0, 1) from a seed (mulberry32): jitter and poll delays replay exactly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
