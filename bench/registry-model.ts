/**
 * The schedule registry of issue 22 on DynamoDB, modelled: how big a row is, what one upsert writes, what a bulk
 * upsert at a given rate puts on the one partition key of a job (`jobId`) and on the two indexes, how long 100,000
 * creations take at Scheduler's CreateSchedule rate, and what the reconciler's rolling audit reads per run.
 * Arithmetic only, no AWS; `npm run bench` prints it (docs/benchmarks.md, "Run-time schedules").
 *
 * The table (functions/protocol/schedule-registry.ts, the registry helper's): PK `jobId`, SK `scheduleKey`; GSI
 * `bySyncDue` (PK `syncShard`, one of 16, sparse: only rows whose projection may lag), GSI `byAuditBucket` (PK
 * `${jobId}#${bucket}`, one of 256). Both project ALL, so an index entry is as large as the row.
 */
import { MAX_SCHEDULE_INPUT_BYTES } from '../functions/protocol/schedule-key';
import {
  AUDIT_BUCKETS,
  auditBucketKey,
  auditBucketOf,
  SYNC_INDEX_SHARDS,
  scheduleNameOf,
} from '../functions/protocol/schedule-registry';
import { READ_UNIT_BYTES, WRITE_UNIT_BYTES } from './capacity';
import { itemSize, type WireItem } from './item-size';
import { busiestShardPerSecond } from './partition-model';

export { AUDIT_BUCKETS, SYNC_INDEX_SHARDS };
/** ListSchedules returns at most this many schedules a page. */
export const LIST_SCHEDULES_PAGE = 100;
/** The reconciler's audit: buckets per run (the brief's default), and its period. */
export const AUDIT_BUCKETS_PER_RUN = 8;
export const RECONCILER_PERIOD_MINUTES = 5;

/**
 * A registry row as it stands once synced, with `inputBytes` of input (a JSON string of that length), a UUID key and
 * a weekly cron in a zone: the attributes of RegisteredSchedule (schedule-registry-ports.ts). While it waits for its
 * projection it also holds `syncDueAt` and `syncShard` (about 40 bytes more, within the same write unit here).
 */
export function registryRow(inputBytes: number): WireItem {
  const time = '2026-12-02T05:00:00.000Z';
  const key = '6f1c2a4e-8b3d-4c5e-9f7a-1b2c3d4e5f60';
  const row: WireItem = {
    jobId: { S: 'weekly-report' },
    scheduleKey: { S: key },
    expression: { S: 'cron(0 8 ? * MON *)' },
    timeZone: { S: 'Europe/Amsterdam' },
    state: { S: 'ENABLED' },
    version: { N: '3' },
    scheduleName: { S: scheduleNameOf(key) },
    createdAt: { S: time },
    updatedAt: { S: time },
    updatedBy: { S: 'signup-service' },
    syncedVersion: { N: '3' },
    syncedAt: { S: time },
    auditBucket: { S: auditBucketKey('weekly-report', auditBucketOf(key)) },
  };
  return inputBytes > 0 ? { ...row, input: { S: 'x'.repeat(inputBytes) } } : row;
}

const writeUnitsOf = (bytes: number) => Math.max(1, Math.ceil(bytes / WRITE_UNIT_BYTES));

/** What one upsert of a new or changed schedule costs DynamoDB: read, row write, markSynced, and both indexes. */
export interface UpsertUnits {
  readonly rowBytes: number;
  /** The consistent GetItem before the write. */
  readonly readUnits: number;
  /** The conditional put and markSynced's UpdateItem, on the table (both on the partition key `jobId`). */
  readonly tableWriteUnits: number;
  /** bySyncDue: the put adds the entry (syncShard set), markSynced deletes it (syncShard removed). */
  readonly syncIndexWriteUnits: number;
  /** byAuditBucket: the put writes the entry, markSynced rewrites it (syncedVersion, syncedAt change). */
  readonly auditIndexWriteUnits: number;
  readonly totalWriteUnits: number;
}

export function upsertUnits(inputBytes: number): UpsertUnits {
  const rowBytes = itemSize(registryRow(inputBytes));
  const u = writeUnitsOf(rowBytes);
  return {
    rowBytes,
    // A consistent read of an item under 4 KB, or of none (a new key), is one read unit.
    readUnits: Math.max(1, Math.ceil(rowBytes / READ_UNIT_BYTES)),
    tableWriteUnits: 2 * u,
    syncIndexWriteUnits: 2 * u,
    auditIndexWriteUnits: 2 * u,
    totalWriteUnits: 6 * u,
  };
}

export interface RegistryBulkLoad {
  readonly upsertsPerSecond: number;
  readonly inputBytes: number;
  /** Write and read units per second on the job's one partition key, `jobId`. */
  readonly jobKeyWcu: number;
  readonly jobKeyRcu: number;
  /** The busiest `bySyncDue` shard and `byAuditBucket` key, write units per second. */
  readonly syncShardWcu: number;
  readonly auditBucketWcu: number;
  readonly limitWcu: number;
  /** Upserts per second one partition serves: the rate above which the job's key needs a split for heat. */
  readonly onePartitionUpsertsPerSecond: number;
  /** Within one partition's limit without a split. */
  readonly withinOnePartition: boolean;
}

/** A bulk upsert of one job's keys at `upsertsPerSecond`, each key new (so each also creates its schedule). */
export function registryBulkLoad(
  upsertsPerSecond: number,
  inputBytes: number,
  partitionWriteUnitsPerSecond = 1_000,
): RegistryBulkLoad {
  const units = upsertUnits(inputBytes);
  const jobKeyWcu = upsertsPerSecond * units.tableWriteUnits;
  const perEntry = units.syncIndexWriteUnits; // put + delete per upsert on one shard key
  return {
    upsertsPerSecond,
    inputBytes,
    jobKeyWcu,
    jobKeyRcu: upsertsPerSecond * units.readUnits,
    syncShardWcu: busiestShardPerSecond(upsertsPerSecond, SYNC_INDEX_SHARDS) * perEntry,
    auditBucketWcu: busiestShardPerSecond(upsertsPerSecond, AUDIT_BUCKETS) * units.auditIndexWriteUnits,
    limitWcu: partitionWriteUnitsPerSecond,
    onePartitionUpsertsPerSecond: Math.floor(partitionWriteUnitsPerSecond / units.tableWriteUnits),
    withinOnePartition: jobKeyWcu <= partitionWriteUnitsPerSecond,
  };
}

/**
 * Seconds to create `schedules` new schedules: at Scheduler's CreateSchedule rate, or at what one registry
 * partition serves when the job's key has not been split (whichever is lower).
 */
export function bulkCreateSeconds(
  schedules: number,
  createScheduleRate: number,
  inputBytes: number,
  split: boolean,
): number {
  const partition = registryBulkLoad(1, inputBytes).onePartitionUpsertsPerSecond;
  return schedules / (split ? createScheduleRate : Math.min(createScheduleRate, partition));
}

export interface AuditRunAssumptions {
  readonly bucketsPerRun: number;
  /** A ListSchedules page's round trip, and a Query page's, inside the reconciler. */
  readonly listPageSeconds: number;
  readonly queryPageSeconds: number;
  /** The ListSchedules request rate (an account quota; the oldest quota page says 50 a second). */
  readonly listSchedulesPerSecond: number;
}

export const AUDIT_ASSUMPTIONS: AuditRunAssumptions = {
  bucketsPerRun: AUDIT_BUCKETS_PER_RUN,
  listPageSeconds: 0.1,
  queryPageSeconds: 0.02,
  listSchedulesPerSecond: 50,
};

export interface AuditRun {
  readonly schedules: number;
  readonly perBucket: number;
  readonly listPages: number;
  /** byAuditBucket Query read units (eventually consistent, 1 MB pages) and the sweep's 16 Queries. */
  readonly queryReadUnits: number;
  readonly queryPages: number;
  readonly sweepReadUnits: number;
  /** The reconciler's time in these calls, at the assumed round trips, and at least what the ListSchedules quota allows. */
  readonly seconds: number;
  /** Minutes for the audit to visit every bucket once. */
  readonly fullCycleMinutes: number;
}

/** One reconciler run's audit of K buckets of a job with `schedules` schedules (rows of `inputBytes` input). */
export function auditRun(schedules: number, inputBytes: number, a: AuditRunAssumptions = AUDIT_ASSUMPTIONS): AuditRun {
  const perBucket = Math.ceil(schedules / AUDIT_BUCKETS);
  const rowBytes = itemSize(registryRow(inputBytes));
  const bucketBytes = perBucket * rowBytes;
  const queryPagesPerBucket = Math.max(1, Math.ceil(bucketBytes / (1024 * 1024)));
  // A Query adds up the sizes of the items it reads and rounds up to 4 KB per page; half a unit for eventual reads.
  const queryUnitsPerBucket = Math.max(0.5, Math.ceil(bucketBytes / READ_UNIT_BYTES) * 0.5);
  const listPages = a.bucketsPerRun * Math.max(1, Math.ceil(perBucket / LIST_SCHEDULES_PAGE));
  const queryPages = a.bucketsPerRun * queryPagesPerBucket;
  const seconds = Math.max(
    listPages * a.listPageSeconds + queryPages * a.queryPageSeconds,
    listPages / a.listSchedulesPerSecond,
  );
  return {
    schedules,
    perBucket,
    listPages,
    queryReadUnits: a.bucketsPerRun * queryUnitsPerBucket,
    queryPages,
    sweepReadUnits: SYNC_INDEX_SHARDS * 0.5,
    seconds,
    fullCycleMinutes: (AUDIT_BUCKETS / a.bucketsPerRun) * RECONCILER_PERIOD_MINUTES,
  };
}

/** Runs of the reconciler in a 30-day month. */
export const RECONCILER_RUNS_PER_MONTH = (30 * 24 * 60) / RECONCILER_PERIOD_MINUTES;

/** The input the figures assume unless said otherwise: the largest a schedule may carry. */
export const FIGURE_INPUT_BYTES = MAX_SCHEDULE_INPUT_BYTES;
