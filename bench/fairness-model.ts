/**
 * A model of a job with maxConcurrency at AWS scale (issue 34): N keys due at one tick, owned by tenants of unequal
 * size, started in the waiting list's fair order (functions/protocol/concurrency-cap.ts: each tenant's line numbered
 * 1, 2, 3…, the list read by (number, scheduled time, key)) by `cap` units. It prints the drain time, the spread of
 * start delays per tenant against its fair share, the same under first come first served for contrast, and what the
 * burst asks of the job's one partition key (the capacity row and the waiting list live there) against DynamoDB's
 * ~1,000 write and ~3,000 read units per second per partition. Arithmetic and a replay of the order, no AWS.
 *
 *   npx tsx bench/fairness-model.ts
 *
 * A tenant's fair share of delay: under round-robin between tenants, the median of a tenant with n keys starts once
 * every tenant has had min(its size, ⌈n/2⌉) starts, i.e. after Σ_j min(n_j, ⌈n/2⌉) runs at `cap` at a time.
 */

export interface FairnessAssumptions {
  readonly keys: number;
  readonly tenants: number;
  readonly largestTenant: number;
  readonly cap: number;
  /** One run's length, seconds (every run the same: the order, not the noise, is what is measured). */
  readonly runSeconds: number;
  /** EventBridge Scheduler's invocations per second: how fast the tick's occurrences arrive at most. */
  readonly arrivalsPerSecond: number;
  readonly partitionWriteUnitsPerSecond: number;
  readonly partitionReadUnitsPerSecond: number;
  /** Writes on the job's partition per occurrence that waits: its line's number, the entry, the entry's copy. */
  readonly waitWrites: number;
  /** Strongly consistent reads per waiting arrival: the capacity row twice, the entry's copy, the line's number. */
  readonly waitReadUnits: number;
  /** Write units of one write of the capacity row with `cap` holds (about 90 bytes each, 1 unit per KB). */
  readonly capacityRowWriteUnits: number;
}

export const DEFAULT_FAIRNESS_ASSUMPTIONS: FairnessAssumptions = {
  keys: 100_000,
  tenants: 1_000,
  largestTenant: 10_000,
  cap: 50,
  runSeconds: 10,
  arrivalsPerSecond: 1_000,
  partitionWriteUnitsPerSecond: 1_000,
  partitionReadUnitsPerSecond: 3_000,
  waitWrites: 3,
  // The row with 50 holds is about 4.5 KB: 2 units per strongly consistent read (4 KB each), twice; 1 + 1 for the rest.
  waitReadUnits: 6,
  capacityRowWriteUnits: 5,
};

/**
 * Tenant sizes: a Zipf-like curve, the largest `largestTenant`, each at least 1, summing exactly to `keys`. The
 * exponent is found by bisection; the rounding remainder goes to the tenants after the largest, one each.
 */
export function tenantSizes(a: Pick<FairnessAssumptions, 'keys' | 'tenants' | 'largestTenant'>): number[] {
  const sizesFor = (s: number) =>
    Array.from({ length: a.tenants }, (_, i) => Math.max(1, Math.round(a.largestTenant / (i + 1) ** s)));
  const total = (s: number) => sizesFor(s).reduce((x, y) => x + y, 0);
  let [lo, hi] = [0.1, 3];
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (total(mid) > a.keys) lo = mid;
    else hi = mid;
  }
  const sizes = sizesFor(hi);
  let rest = a.keys - sizes.reduce((x, y) => x + y, 0);
  for (let i = 1; rest !== 0; i = (i % (a.tenants - 1)) + 1) {
    if (rest < 0 && sizes[i] <= 1) continue;
    sizes[i] += Math.sign(rest);
    rest -= Math.sign(rest);
  }
  return sizes;
}

export interface TenantDelays {
  readonly size: number;
  readonly medianSeconds: number;
  readonly fairShareSeconds: number;
}

export interface FairnessFigures {
  readonly drainSeconds: number;
  readonly tenants: readonly TenantDelays[];
  /** The largest ratio of a tenant's median delay to its fair share, and the tenant's size. */
  readonly worst: { readonly ratio: number; readonly size: number };
  readonly fifoWorst: { readonly ratio: number; readonly size: number };
  readonly burst: {
    readonly arrivalSeconds: number;
    readonly jobPartitionWritesPerSecond: number;
    readonly jobPartitionReadsPerSecond: number;
    /** How long the tick's waiting writes take at the partition's write limit. */
    readonly recordSecondsAtPartitionLimit: number;
    readonly steadyCapacityRowWritesPerSecond: number;
    readonly steadyWriteUnitsPerSecond: number;
  };
}

/** Start delays when the occurrences start in `order` (tenant index per start), `cap` at a time, runs equal. */
function mediansOf(order: readonly number[], sizes: readonly number[], a: FairnessAssumptions): number[] {
  const delays: number[][] = sizes.map(() => []);
  order.forEach((tenant, i) => {
    delays[tenant].push(Math.floor(i / a.cap) * a.runSeconds);
  });
  return delays.map((d) => d[Math.ceil(d.length / 2) - 1] ?? 0);
}

function fairShares(sizes: readonly number[], a: FairnessAssumptions): number[] {
  const sorted = [...sizes].sort((x, y) => x - y);
  const prefix = [0];
  for (const s of sorted) prefix.push(prefix[prefix.length - 1] + s);
  // Σ_j min(n_j, h): the tenants smaller than h count whole, the others h each.
  const servedBefore = (h: number) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] < h) lo = mid + 1;
      else hi = mid;
    }
    return prefix[lo] + (sorted.length - lo) * h;
  };
  return sizes.map((n) => Math.floor((servedBefore(Math.ceil(n / 2)) - 1) / a.cap) * a.runSeconds);
}

/** A deterministic shuffle (mulberry32): the order a tick's occurrences happen to arrive in. */
function shuffled<T>(items: T[], seed: number): T[] {
  let s = seed >>> 0;
  const random = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

export function fairnessFigures(a: FairnessAssumptions = DEFAULT_FAIRNESS_ASSUMPTIONS): FairnessFigures {
  const sizes = tenantSizes(a);
  // Fair order: every tenant's k-th occurrence before any tenant's (k+1)-th; ties by tenant (the key's sort order).
  const fair = sizes
    .flatMap((n, tenant) => Array.from({ length: n }, (_, seq) => ({ tenant, seq })))
    .sort((x, y) => x.seq - y.seq || x.tenant - y.tenant)
    .map((e) => e.tenant);
  const arrival = shuffled(
    sizes.flatMap((n, tenant) => Array<number>(n).fill(tenant)),
    34,
  );
  const shares = fairShares(sizes, a);
  const worstOf = (medians: number[]) =>
    medians.reduce(
      (w, m, i) => {
        // A share of zero (a tenant whose median starts in the first wave) is judged against one run.
        const ratio = m / Math.max(shares[i], a.runSeconds);
        return ratio > w.ratio ? { ratio, size: sizes[i] } : w;
      },
      { ratio: 0, size: 0 },
    );
  const medians = mediansOf(fair, sizes, a);
  const arrivalSeconds = a.keys / a.arrivalsPerSecond;
  const startsPerSecond = a.cap / a.runSeconds;
  return {
    drainSeconds: Math.ceil(a.keys / a.cap) * a.runSeconds,
    tenants: sizes.map((size, i) => ({ size, medianSeconds: medians[i], fairShareSeconds: shares[i] })),
    worst: worstOf(medians),
    fifoWorst: worstOf(mediansOf(arrival, sizes, a)),
    burst: {
      arrivalSeconds,
      jobPartitionWritesPerSecond: a.waitWrites * a.arrivalsPerSecond,
      jobPartitionReadsPerSecond: a.waitReadUnits * a.arrivalsPerSecond,
      recordSecondsAtPartitionLimit: Math.max(
        arrivalSeconds,
        (a.keys * a.waitWrites) / a.partitionWriteUnitsPerSecond,
        (a.keys * a.waitReadUnits) / a.partitionReadUnitsPerSecond,
      ),
      // Each start and each release writes the row once.
      steadyCapacityRowWritesPerSecond: 2 * startsPerSecond,
      // Per start: the row (take) and the entry and its copy deleted; per release: the row again.
      steadyWriteUnitsPerSecond: startsPerSecond * (2 * a.capacityRowWriteUnits + 2),
    },
  };
}

export function formatFairness(f: FairnessFigures, a: FairnessAssumptions = DEFAULT_FAIRNESS_ASSUMPTIONS): string {
  const bySize = [...f.tenants].sort((x, y) => y.size - x.size);
  const row = (t: TenantDelays) =>
    `  tenant of ${String(t.size).padStart(6)} keys: median start delay ${String(t.medianSeconds).padStart(6)} s, fair share ${String(t.fairShareSeconds).padStart(6)} s`;
  return [
    `${a.keys} keys due at one tick, ${a.tenants} tenants (largest ${a.largestTenant}), maxConcurrency ${a.cap}, runs of ${a.runSeconds} s`,
    `drain time: ${f.drainSeconds} s (${(f.drainSeconds / 3600).toFixed(2)} h)`,
    ...[bySize[0], bySize[1], bySize[9], bySize[99], bySize[bySize.length - 1]].map(row),
    `worst median delay / fair share, fair order: ${f.worst.ratio.toFixed(2)} (a tenant of ${f.worst.size} keys)`,
    `worst median delay / fair share, first come first served: ${f.fifoWorst.ratio.toFixed(2)} (a tenant of ${f.fifoWorst.size} keys)`,
    `the burst on the job's partition key: ${f.burst.jobPartitionWritesPerSecond} write units/s and ${f.burst.jobPartitionReadsPerSecond} read units/s at ${a.arrivalsPerSecond} arrivals/s ` +
      `(limits ${a.partitionWriteUnitsPerSecond} and ${a.partitionReadUnitsPerSecond}): recording the tick takes ${f.burst.recordSecondsAtPartitionLimit} s instead of ${f.burst.arrivalSeconds} s`,
    `steady state: the capacity row written ${f.burst.steadyCapacityRowWritesPerSecond} times/s, ${f.burst.steadyWriteUnitsPerSecond} write units/s on the job's partition`,
  ].join('\n');
}

if (process.argv[1]?.endsWith('fairness-model.ts')) console.log(formatFairness(fairnessFigures()));
