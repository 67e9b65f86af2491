/**
 * A model of one tick with many occurrences on DynamoDB: the write units per second that land on the hottest table
 * partition key and on the hottest index partition, under the status index as it was (`byStatus`: keyed by status,
 * projecting every attribute) and as it is (`byStatusShard`: keyed by status and a shard of the occurrence key,
 * projecting only what a heartbeat leaves alone), against DynamoDB's documented ~1,000 write units per second per
 * partition. Arithmetic only, no AWS: `npm run bench` prints it beside the measured figures, and
 * docs/design.md ("The status index") explains it.
 *
 * Why a single index key is the limit that matters: every occurrence of a tick has the same scheduled time, so under
 * `byStatus` all of a tick's entries of one status share one index partition key and one sort key value, and
 * DynamoDB cannot split them over partitions. The table's keys are all different (one row per job and tick), so
 * the table spreads a tick over as many partitions as it needs.
 *
 * The second half models run-time schedules (issue 22): ONE job with N schedule keys, all due at once, where the
 * table's partition key is the series `jobId#scheduleKey` and the index shard a hash of the series and the time; the
 * rates come from Scheduler's invocation rate or a flexible window, and the trigger's and the worker's concurrency.
 */

import { DEFAULT_JOB_SETTINGS } from '../functions/protocol/job-settings';
import { STATUS_INDEX_SHARDS, shardOf } from '../functions/protocol/table-schema';
import { WHOLE_JOB_PAUSE_CACHE_MS } from '../functions/protocol/whole-job-pause';
import { WORKER_BATCH_SIZE } from '../functions/protocol/worker-limits';

export interface PartitionModelAssumptions {
  /** DynamoDB: write units per second one partition serves, for tables and indexes alike. */
  readonly partitionWriteUnitsPerSecond: number;
  /** EventBridge Scheduler's invocations per second (the "Invocations throttle limit" quota). */
  readonly schedulerInvocationsPerSecond: number;
  /** Lambda concurrent executions in the account (default quota 1,000), shared by trigger and worker. */
  readonly lambdaConcurrency: number;
  /** The shortest invocation that changes a status (a trigger's PutItem and SendMessage; a claim). */
  readonly shortestInvocationSeconds: number;
  /** Seconds between heartbeats of a running job. */
  readonly heartbeatSeconds: number;
  /** Write units of one index write of a whole row (projection ALL): rows stay under 1 KB until their history grows. */
  readonly rowWriteUnits: number;
  /** Write units of one entry of the reduced projection (keys and ten short attributes, well under 1 KB). */
  readonly entryWriteUnits: number;
  /** Shards per status in the sharded index. */
  readonly shards: number;
}

/** The defaults the design is checked against; the Scheduler rate is the raised one a 100,000-tenant account needs. */
export const DEFAULT_ASSUMPTIONS: PartitionModelAssumptions = {
  partitionWriteUnitsPerSecond: 1_000,
  // Default 1,000 per second, adjustable "to tens of thousands": assume it was raised to what Lambda can absorb.
  schedulerInvocationsPerSecond: 20_000,
  lambdaConcurrency: 1_000,
  shortestInvocationSeconds: 0.05,
  heartbeatSeconds: 45,
  rowWriteUnits: 1,
  entryWriteUnits: 1,
  shards: STATUS_INDEX_SHARDS,
};

export type IndexDesign = 'byStatus (before)' | 'byStatusShard (after)';

export interface PartitionLoad {
  readonly occurrences: number;
  readonly design: IndexDesign;
  /** Status changes per second at the tick's peak: how fast occurrences enter (and leave) one status. */
  readonly statusChangesPerSecond: number;
  /** Write units per second on the hottest index partition. */
  readonly indexPartitionWcu: number;
  /** Which index partition that is, e.g. `RUNNING` or `OPEN#<shard>`. */
  readonly hottestIndexPartition: string;
  /** Write units per second on the hottest table partition key (one occurrence's row). */
  readonly tableKeyWcu: number;
  /** Write units per second on the whole table at the peak, and the partitions that needs at the per-partition limit. */
  readonly tableWcu: number;
  readonly tablePartitionsNeeded: number;
  readonly limitWcu: number;
  /** Whether every partition stays within its limit. */
  readonly withinLimit: boolean;
}

/**
 * The peak rate at which one tick's occurrences change status: all N at once if nothing held them back, but no
 * faster than Scheduler invokes the trigger, nor than the account's Lambda concurrency can turn over its shortest
 * invocation.
 */
export function statusChangesPerSecond(n: number, a: PartitionModelAssumptions = DEFAULT_ASSUMPTIONS): number {
  return Math.min(n, a.schedulerInvocationsPerSecond, a.lambdaConcurrency / a.shortestInvocationSeconds);
}

/** Occurrences running at once (one Lambda each), each heartbeating every heartbeatSeconds. */
function heartbeatsPerSecond(n: number, a: PartitionModelAssumptions): number {
  return Math.min(n, a.lambdaConcurrency) / a.heartbeatSeconds;
}

/**
 * Index writes per status partition key while a tick flows through at rate r, under `byStatus`: each status key gets
 * a put for every occurrence that enters the status and a delete for every one that leaves it (a changed index key is
 * a delete and a put); SUCCEEDED gets its put and the one update of notifiedAt; RUNNING also every heartbeat, the
 * lease expiry being projected.
 */
function perStatusWrites(r: number, heartbeats: number): Record<string, number> {
  return {
    PENDING: r /* insert */ + r /* claim moves it out */,
    RUNNING: r /* claim */ + r /* complete moves it out */ + heartbeats,
    SUCCEEDED: r /* complete */ + r /* notifiedAt */,
  };
}

/**
 * Index writes per key prefix under `byStatusShard` with the OPEN key (issue 24): an occurrence's one OPEN entry
 * takes the trigger's put, the claim's and the completion's update in place and the announcement's delete, all
 * within seconds of each other for a short job; heartbeats write no index (the lease is not projected).
 */
function perPrefixWrites(r: number): Record<string, number> {
  return { OPEN: 4 * r };
}

export function partitionLoad(
  occurrences: number,
  design: IndexDesign,
  a: PartitionModelAssumptions = DEFAULT_ASSUMPTIONS,
): PartitionLoad {
  const r = statusChangesPerSecond(occurrences, a);
  const heartbeats = heartbeatsPerSecond(occurrences, a);
  const sharded = design === 'byStatusShard (after)';
  const writes = sharded ? perPrefixWrites(r) : perStatusWrites(r, heartbeats);
  const [status, statusWrites] = Object.entries(writes).reduce((hottest, entry) =>
    entry[1] > hottest[1] ? entry : hottest,
  );
  const indexPartitionWcu = sharded ? (statusWrites / a.shards) * a.entryWriteUnits : statusWrites * a.rowWriteUnits;
  // The table: every row is written on insert, claim, complete and notify, and on every heartbeat.
  const tableWcu = (4 * r + heartbeats) * a.rowWriteUnits;
  // One row is written at most a few times in one second (insert and claim, or complete and notify).
  const tableKeyWcu = 2 * a.rowWriteUnits;
  const tablePartitionsNeeded = Math.ceil(tableWcu / a.partitionWriteUnitsPerSecond);
  return {
    occurrences,
    design,
    statusChangesPerSecond: r,
    indexPartitionWcu,
    hottestIndexPartition: sharded ? `${status}#<shard>` : status,
    tableKeyWcu,
    tableWcu,
    tablePartitionsNeeded,
    limitWcu: a.partitionWriteUnitsPerSecond,
    withinLimit: indexPartitionWcu <= a.partitionWriteUnitsPerSecond && tableKeyWcu <= a.partitionWriteUnitsPerSecond,
  };
}

/** The figures `npm run bench` shows: N = 10,000 and 100,000 on one tick, before and after. */
export function partitionModel(
  a: PartitionModelAssumptions = DEFAULT_ASSUMPTIONS,
  sizes: readonly number[] = [10_000, 100_000],
): PartitionLoad[] {
  const designs: IndexDesign[] = ['byStatus (before)', 'byStatusShard (after)'];
  return sizes.flatMap((n) => designs.map((d) => partitionLoad(n, d, a)));
}

/**
 * The smallest shard count that keeps the hottest index partition within `fraction` of its limit at rate r: the OPEN
 * key takes four writes an occurrence.
 */
export function shardsNeeded(r: number, fraction = 1, a: PartitionModelAssumptions = DEFAULT_ASSUMPTIONS): number {
  return Math.ceil((4 * r * a.entryWriteUnits) / (a.partitionWriteUnitsPerSecond * fraction));
}

/** A plain-text table of the model, for a terminal. */
export function formatPartitionModel(rows: readonly PartitionLoad[]): string {
  return formatTable(
    ['N', 'index', 'changes/s', 'hottest index partition', 'WCU/s', 'table key WCU/s', 'table WCU/s', 'limit', 'ok'],
    rows.map((r) => [
      r.occurrences.toLocaleString('en-US'),
      r.design,
      r.statusChangesPerSecond.toLocaleString('en-US'),
      r.hottestIndexPartition,
      Math.round(r.indexPartitionWcu).toLocaleString('en-US'),
      String(r.tableKeyWcu),
      `${Math.round(r.tableWcu).toLocaleString('en-US')} (${r.tablePartitionsNeeded} partitions)`,
      r.limitWcu.toLocaleString('en-US'),
      r.withinLimit ? 'yes' : 'THROTTLED',
    ]),
  );
}

/** A plain-text table, for a terminal: columns padded to their widest cell. */
export function formatTable(head: readonly string[], body: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  return [head, ...body]
    .map((cells) =>
      cells
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Run-time schedules (issue 22): ONE job with N schedule keys, every key due at the same scheduled time.
//
// The occurrence table's partition key is the series `jobId#scheduleKey` (seriesOf), so a tick of one job writes N
// table partition keys, not one. The status index's shard is shardOf (table-schema.ts): a hash of the series and the
// scheduled time, so one job's keys spread over the shards even though they share the scheduled time.
// ---------------------------------------------------------------------------------------------------------------

/** How Scheduler spreads one tick's invocations: at once (no flexible window), or uniformly over a window. */
export interface TickSpread {
  readonly label: string;
  /** The flexible window's length in minutes; 0 for none. */
  readonly flexibleWindowMinutes: number;
}

export const NO_WINDOW: TickSpread = { label: 'no flexible window', flexibleWindowMinutes: 0 };
export const FLEXIBLE_15_MIN: TickSpread = { label: 'flexible window 15 min', flexibleWindowMinutes: 15 };
export const NO_WINDOW_RAISED: TickSpread = { label: 'no window, quotas raised', flexibleWindowMinutes: 0 };

/**
 * The quotas a large account would raise (the model of the fixed-schedule tick above assumes the same Scheduler
 * rate): Scheduler 20,000 invocations a second, the trigger 1,000 reserved, the worker 1,000 × 5 jobs at once.
 */
export const RAISED_QUOTAS: Partial<KeyedTickAssumptions> = {
  schedulerInvocationsPerSecond: 20_000,
  triggerConcurrency: 1_000,
  workerConcurrency: 1_000,
};

/**
 * The item sizes of the happy path's four writes of one occurrence row, measured by `npm run bench` (figure 2,
 * bench/results.json `capacity.writes`, 2026-12-01): a row of a job with one fixed schedule and no input.
 */
export const MEASURED_ROW_BYTES = { insert: 172, claim: 390, complete: 550, notify: 634 } as const;

export interface KeyedTickAssumptions {
  /** DynamoDB: write units per second one partition serves (tables and indexes alike). */
  readonly partitionWriteUnitsPerSecond: number;
  /** DynamoDB: read units per second one partition serves. */
  readonly partitionReadUnitsPerSecond: number;
  /** Scheduler's "Invocations throttle limit": 1,000 a second by default; more are delayed, not dropped. */
  readonly schedulerInvocationsPerSecond: number;
  /** The trigger's reserved concurrency, and how long one trigger invocation takes (PutItem + SendMessage). */
  readonly triggerConcurrency: number;
  readonly triggerSeconds: number;
  /** The worker's reserved concurrency; each invocation runs a batch of this many messages at once. */
  readonly workerConcurrency: number;
  readonly workerBatchSize: number;
  /** The job's own run time, and the worker's own time around it (claim, slot, report, completion). */
  readonly jobSeconds: number;
  readonly workerOverheadSeconds: number;
  readonly heartbeatSeconds: number;
  readonly shards: number;
  /** Bytes a schedule key adds to the row: the key in the series, in `scheduleKey` and in the report key. */
  readonly scheduleKeyLength: number;
  /** The schedule's input as JSON (at most MAX_SCHEDULE_INPUT_BYTES). */
  readonly inputBytes: number;
  /** Write units of one status-index entry: keys and the short projected attributes, never the input. */
  readonly entryWriteUnits: number;
  /** The time a worker container keeps the whole job's job-state row (is the whole job paused?) before reading it again. */
  readonly pauseCacheSeconds: number;
}

/**
 * The defaults: Scheduler's default invocation rate; a trigger with 100 reserved (2,000 starts a second at 50 ms,
 * so Scheduler binds); a worker with 200 reserved × batches of 5 (run at once) = 1,000 jobs at once; a customer
 * report of 60 s (so it heartbeats, every 40 s by default); a UUID key; the largest input.
 */
export const KEYED_TICK_ASSUMPTIONS: KeyedTickAssumptions = {
  partitionWriteUnitsPerSecond: 1_000,
  partitionReadUnitsPerSecond: 3_000,
  schedulerInvocationsPerSecond: 1_000,
  triggerConcurrency: 100,
  triggerSeconds: 0.05,
  workerConcurrency: 200,
  workerBatchSize: WORKER_BATCH_SIZE,
  jobSeconds: 60,
  workerOverheadSeconds: 0.1,
  heartbeatSeconds: DEFAULT_JOB_SETTINGS.heartbeatSeconds,
  shards: STATUS_INDEX_SHARDS,
  scheduleKeyLength: 36,
  inputBytes: 2_048,
  entryWriteUnits: 1,
  pauseCacheSeconds: WHOLE_JOB_PAUSE_CACHE_MS / 1000,
};

/** The write units of each write of a keyed occurrence's row: the measured row plus the key and the input. */
export function keyedRowWriteUnits(a: KeyedTickAssumptions = KEYED_TICK_ASSUMPTIONS): {
  readonly insert: number;
  readonly claim: number;
  readonly complete: number;
  readonly notify: number;
  /** An UpdateItem is charged on the larger of the item before and after: a heartbeat on the claimed row. */
  readonly heartbeat: number;
} {
  const key = a.scheduleKeyLength;
  // The series adds '#' + key to the partition key; `scheduleKey` and `input` are two attributes (name + value).
  const extra = 1 + key + 'scheduleKey'.length + key + 'input'.length + a.inputBytes;
  // From the completion on, the report key names the key too (`reports/{jobId}/{scheduleKey}/...`).
  const units = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
  return {
    insert: units(MEASURED_ROW_BYTES.insert + extra),
    claim: units(MEASURED_ROW_BYTES.claim + extra),
    complete: units(MEASURED_ROW_BYTES.complete + extra + key + 1),
    notify: units(MEASURED_ROW_BYTES.notify + extra + key + 1),
    heartbeat: units(MEASURED_ROW_BYTES.claim + extra),
  };
}

/** The status-index shard of one occurrence of a keyed schedule: the real shardOf. */
export function keyedShardOf(jobId: string, scheduleKey: string, scheduledTime: string, shards: number): number {
  return shardOf({ jobId, scheduleKey, scheduledTime }, shards);
}

/**
 * How evenly the real hash spreads N keys of one job on one tick over the shards: the busiest shard's count over
 * the mean (1 is perfect). Keys `customer-000001`..., the scheduled time `2027-01-04T00:00:00Z`.
 */
export function shardImbalance(keys: number, shards: number = STATUS_INDEX_SHARDS): number {
  const counts = new Array<number>(shards).fill(0);
  for (let i = 0; i < keys; i++) {
    const key = `customer-${String(i).padStart(7, '0')}`;
    counts[keyedShardOf('weekly-report', key, '2027-01-04T00:00:00Z', shards)]++;
  }
  return Math.max(...counts) / (keys / shards);
}

/**
 * The busiest of `shards` index keys in one second when `perSecond` writes land on shards at random: the mean plus
 * three standard deviations of the binomial (a second's arrivals are a random subset of the keys).
 */
export function busiestShardPerSecond(perSecond: number, shards: number): number {
  const p = 1 / shards;
  return perSecond * p + 3 * Math.sqrt(perSecond * p * (1 - p));
}

/** The rates at which one keyed tick flows through, at its peak. */
export interface KeyedTickRates {
  /** Scheduler's invocations of the trigger per second. */
  readonly arrivals: number;
  /** The trigger's inserts per second: arrivals, unless the trigger's concurrency holds them back. */
  readonly inserts: number;
  /** Claims per second at the peak: when the tick starts every idle worker slot claims within the first second. */
  readonly claims: number;
  /** Claims per second once every slot is busy: slots / (job + overhead). */
  readonly claimsSteady: number;
  /** Completions (and the notifier's notifiedAt writes) per second at the peak: the first wave ends together. */
  readonly completions: number;
  readonly heartbeats: number;
  /** Seconds from the first invocation to the last start: the tick drains at the slower of inserts and claims. */
  readonly drainSeconds: number;
}

export function keyedTickRates(
  keys: number,
  spread: TickSpread,
  a: KeyedTickAssumptions = KEYED_TICK_ASSUMPTIONS,
): KeyedTickRates {
  const window = spread.flexibleWindowMinutes * 60;
  // Scheduler starts each schedule at a uniformly random time within its window; without one, all at once.
  const offered = window > 0 ? keys / window : keys;
  const arrivals = Math.min(offered, a.schedulerInvocationsPerSecond);
  const inserts = Math.min(arrivals, a.triggerConcurrency / a.triggerSeconds);
  const slots = a.workerConcurrency * a.workerBatchSize;
  const claims = Math.min(inserts, slots);
  const claimsSteady = Math.min(inserts, slots / (a.jobSeconds + a.workerOverheadSeconds));
  // Every running job heartbeats once per heartbeatSeconds (a job shorter than that never does).
  const heartbeats = a.jobSeconds >= a.heartbeatSeconds ? Math.min(keys, slots) / a.heartbeatSeconds : 0;
  return {
    arrivals,
    inserts,
    claims,
    claimsSteady,
    completions: claims,
    heartbeats,
    drainSeconds: keys / Math.min(inserts, claimsSteady),
  };
}

/** One kind of write of the tick: its rate, and the write units it puts on a table key and on an index key. */
export interface KeyedOperationLoad {
  readonly operation: string;
  readonly perSecond: number;
  /** Write units one table partition key (one series) takes from it in its busiest second. */
  readonly tableKeyWcu: number;
  /** Write units per second on the whole table. */
  readonly tableWcu: number;
  /** The index keys it writes (`put OPEN#s`: a put on the OPEN key of its shard), and the units per second on the busiest shard. */
  readonly indexKeys: string;
  readonly indexShardWcu: number;
}

export interface KeyedTickLoad {
  readonly keys: number;
  readonly spread: TickSpread;
  readonly rates: KeyedTickRates;
  readonly operations: readonly KeyedOperationLoad[];
  /** All of one occurrence's writes in one second: the most one series' partition key can take from a tick. */
  readonly tableKeyWcu: number;
  readonly tableWcu: number;
  readonly tablePartitionsNeeded: number;
  /** The busiest index partition key (a status and shard) and its write units per second at the peak. */
  readonly hottestIndexKey: string;
  readonly hottestIndexWcu: number;
  /** Not the design, for comparison: the job id as the table's partition key (every write of the tick on one key). */
  readonly jobIdTableKeyWcu: number;
  /** Not the design, for comparison: the shard hashed from the job id alone (shardOf before issue 22): one shard. */
  readonly jobIdShardIndexWcu: number;
  readonly limitWcu: number;
  readonly withinLimit: boolean;
}

/**
 * One keyed tick on DynamoDB: the OPEN index key of an occurrence's shard takes its put, its claim's and completion's
 * updates and the announcement's delete (heartbeats write no index: the lease is not projected); each series' key takes
 * its own occurrence's writes and its own running slot's take and release (the series' job-state row).
 */
export function keyedTickLoad(
  keys: number,
  spread: TickSpread,
  a: KeyedTickAssumptions = KEYED_TICK_ASSUMPTIONS,
): KeyedTickLoad {
  const r = keyedTickRates(keys, spread, a);
  const u = keyedRowWriteUnits(a);
  const e = a.entryWriteUnits;
  const busiest = (perSecond: number) => busiestShardPerSecond(perSecond, a.shards) * e;
  const operations: KeyedOperationLoad[] = [
    {
      operation: "trigger's insert",
      perSecond: r.inserts,
      tableKeyWcu: u.insert,
      tableWcu: r.inserts * u.insert,
      indexKeys: 'put OPEN#s',
      indexShardWcu: busiest(r.inserts),
    },
    {
      operation: 'claim + slot take',
      perSecond: r.claims,
      tableKeyWcu: u.claim + 1,
      tableWcu: r.claims * (u.claim + 1),
      indexKeys: 'update OPEN#s',
      indexShardWcu: busiest(r.claims),
    },
    {
      operation: 'heartbeat',
      perSecond: r.heartbeats,
      tableKeyWcu: r.heartbeats > 0 ? u.heartbeat : 0,
      tableWcu: r.heartbeats * u.heartbeat,
      indexKeys: 'none',
      indexShardWcu: 0,
    },
    {
      operation: 'completion + slot release',
      perSecond: r.completions,
      tableKeyWcu: u.complete + 1,
      tableWcu: r.completions * (u.complete + 1),
      indexKeys: 'update OPEN#s',
      indexShardWcu: busiest(r.completions),
    },
    {
      operation: "notifier's notifiedAt",
      perSecond: r.completions,
      tableKeyWcu: u.notify,
      tableWcu: r.completions * u.notify,
      indexKeys: 'delete OPEN#s',
      indexShardWcu: busiest(r.completions),
    },
  ];
  // The OPEN key takes every index write of the path: inserts, claims, completions and announcements.
  const perStatus: Record<string, number> = { OPEN: r.inserts + r.claims + 2 * r.completions };
  const [status, statusWrites] = Object.entries(perStatus).reduce((h, x) => (x[1] > h[1] ? x : h));
  const hottestIndexWcu = busiest(statusWrites);
  const tableWcu = operations.reduce((s, o) => s + o.tableWcu, 0);
  const tableKeyWcu = u.insert + u.claim + 1 + u.complete + 1 + u.notify;
  return {
    keys,
    spread,
    rates: r,
    operations,
    tableKeyWcu,
    tableWcu,
    tablePartitionsNeeded: Math.ceil(tableWcu / a.partitionWriteUnitsPerSecond),
    hottestIndexKey: `${status}#<shard>`,
    hottestIndexWcu,
    jobIdTableKeyWcu: tableWcu,
    jobIdShardIndexWcu: statusWrites * e,
    limitWcu: a.partitionWriteUnitsPerSecond,
    withinLimit: tableKeyWcu <= a.partitionWriteUnitsPerSecond && hottestIndexWcu <= a.partitionWriteUnitsPerSecond,
  };
}

/**
 * The figures `npm run bench` shows: N = 100,000 and 1,000,000 keys of one job, without and with a 15-min window at
 * the default quotas, and without a window at raised quotas.
 */
export function keyedPartitionModel(
  a: KeyedTickAssumptions = KEYED_TICK_ASSUMPTIONS,
  sizes: readonly number[] = [100_000, 1_000_000],
): KeyedTickLoad[] {
  const raised = { ...a, ...RAISED_QUOTAS };
  return sizes.flatMap((n) => [
    keyedTickLoad(n, NO_WINDOW, a),
    keyedTickLoad(n, FLEXIBLE_15_MIN, a),
    keyedTickLoad(n, NO_WINDOW_RAISED, raised),
  ]);
}

/**
 * Reads per second of the whole job's job-state row (one item, one partition: it cannot be split), which a worker
 * reads at each start to see whether the whole job is paused. Without a cache, one read per start; with a cache of
 * `cacheSeconds` per container, each warm container reads it at most `missesPerRefresh` times per that time: the
 * cache (CachedWholeJobPauses) does not share a read in flight, so the records of one batch, run at once, can all
 * miss when the entry expires (up to WORKER_BATCH_SIZE).
 */
export function pauseReadsPerSecond(
  startsPerSecond: number,
  warmContainers: number,
  cacheSeconds: number,
  missesPerRefresh = 1,
): {
  readonly reads: number;
  readonly readUnits: number;
  readonly uncachedReads: number;
  readonly uncachedReadUnits: number;
} {
  const cached = (warmContainers * missesPerRefresh) / cacheSeconds;
  const reads = cacheSeconds > 0 ? Math.min(startsPerSecond, cached) : startsPerSecond;
  // An eventually consistent GetItem of an item under 4 KB is half a read unit (a consistent one a whole unit).
  return { reads, readUnits: reads * 0.5, uncachedReads: startsPerSecond, uncachedReadUnits: startsPerSecond * 0.5 };
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** The keyed tick's summary, one line per (N, spread). */
export function formatKeyedPartitionModel(rows: readonly KeyedTickLoad[]): string {
  return formatTable(
    [
      'N keys',
      'spread',
      'inserts/s',
      'claims/s',
      'hb/s',
      'series key WCU',
      'table WCU/s',
      'busiest index key',
      'WCU/s',
      'if PK=jobId',
      'if shard(jobId)',
      'drains in',
      'ok',
    ],
    rows.map((r) => [
      count(r.keys),
      r.spread.label,
      count(r.rates.inserts),
      `${count(r.rates.claims)} (then ${count(r.rates.claimsSteady)})`,
      r.rates.heartbeats.toFixed(1),
      String(r.tableKeyWcu),
      `${count(r.tableWcu)} (${r.tablePartitionsNeeded} partitions)`,
      r.hottestIndexKey,
      count(r.hottestIndexWcu),
      count(r.jobIdTableKeyWcu),
      count(r.jobIdShardIndexWcu),
      `${count(r.rates.drainSeconds)} s`,
      r.withinLimit ? 'yes' : 'THROTTLED',
    ]),
  );
}

/** Each kind of write of one keyed tick. */
export function formatKeyedOperations(load: KeyedTickLoad): string {
  return formatTable(
    ['operation', 'per second', 'WCU on its series key', 'table WCU/s', 'index keys', 'busiest shard WCU/s'],
    load.operations.map((o) => [
      o.operation,
      count(o.perSecond),
      String(o.tableKeyWcu),
      count(o.tableWcu),
      o.indexKeys,
      o.indexShardWcu.toFixed(1),
    ]),
  );
}
