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
 */
import { STATUS_INDEX_SHARDS } from '../functions/protocol/table-schema';

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
  /** Which index partition that is, e.g. `RUNNING` or `RUNNING#<shard>`. */
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
 * Index writes per status partition key while a tick flows through at rate r: each status key gets a put for every
 * occurrence that enters the status and a delete for every one that leaves it (a changed index key is a delete
 * and a put); SUCCEEDED gets its put and the one update of notifiedAt; RUNNING also every heartbeat when the
 * lease expiry is projected.
 */
function perStatusWrites(r: number, heartbeats: number, projectsLease: boolean): Record<string, number> {
  return {
    PENDING: r /* insert */ + r /* claim moves it out */,
    RUNNING: r /* claim */ + r /* complete moves it out */ + (projectsLease ? heartbeats : 0),
    SUCCEEDED: r /* complete */ + r /* notifiedAt */,
  };
}

export function partitionLoad(
  occurrences: number,
  design: IndexDesign,
  a: PartitionModelAssumptions = DEFAULT_ASSUMPTIONS,
): PartitionLoad {
  const r = statusChangesPerSecond(occurrences, a);
  const heartbeats = heartbeatsPerSecond(occurrences, a);
  const sharded = design === 'byStatusShard (after)';
  const writes = perStatusWrites(r, heartbeats, !sharded);
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

/** The smallest shard count that keeps the hottest index partition within `fraction` of its limit at rate r. */
export function shardsNeeded(r: number, fraction = 1, a: PartitionModelAssumptions = DEFAULT_ASSUMPTIONS): number {
  return Math.ceil((2 * r * a.entryWriteUnits) / (a.partitionWriteUnitsPerSecond * fraction));
}

/** A plain-text table of the model, for a terminal. */
export function formatPartitionModel(rows: readonly PartitionLoad[]): string {
  const head = [
    'N',
    'index',
    'changes/s',
    'hottest index partition',
    'WCU/s',
    'table key WCU/s',
    'table WCU/s',
    'limit',
    'ok',
  ];
  const body = rows.map((r) => [
    r.occurrences.toLocaleString('en-US'),
    r.design,
    r.statusChangesPerSecond.toLocaleString('en-US'),
    r.hottestIndexPartition,
    Math.round(r.indexPartitionWcu).toLocaleString('en-US'),
    String(r.tableKeyWcu),
    `${Math.round(r.tableWcu).toLocaleString('en-US')} (${r.tablePartitionsNeeded} partitions)`,
    r.limitWcu.toLocaleString('en-US'),
    r.withinLimit ? 'yes' : 'THROTTLED',
  ]);
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
