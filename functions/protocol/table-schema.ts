/**
 * The occurrence table's schema: key names, the status index, TTL and stream, written once and used by the
 * functions, by the CDK constructs and by local set-up. Plain TypeScript: no CDK or AWS SDK imports.
 *
 * The status index is sharded, projects only what does not change while a worker holds its lease, and is keyed so
 * that the rows still in flight or unannounced share one key prefix (OPEN) and an announced success leaves it; see
 * "The status index" in docs/design.md for the arithmetic behind these choices.
 */
import { type Occurrence, OccurrenceAttributes, type OccurrenceKey, OccurrenceStatus } from './occurrence';
import { type SeriesKey, seriesKeyOf, seriesOf } from './schedule-key';

/**
 * How many index partition keys each key prefix (OPEN, FAILED, SKIPPED, CANCELLED) is spread over. One tick's
 * occurrences share a scheduled time, so without shards every index write of the whole tick lands on one key, which
 * DynamoDB serves from one partition (about 1,000 write units per second). An occurrence writes its OPEN entry four
 * times (the trigger's put, the claim and the completion in place, the announcement's delete), all within seconds for
 * a short job: 128 shards keep the busiest OPEN key at 625 write units per second when a tick changes 20,000
 * occurrences a second, and at the limit at 32,000 (bench/partition-model.ts). 64 were enough while each status had
 * its own key (two writes each); a reader of a row written under 64 shards still finds it, shards 0 to 63 being
 * among these.
 */
export const STATUS_INDEX_SHARDS = 128;

/**
 * The shard count of the index keys written before the OPEN key (`PENDING#k` ... `SUCCEEDED#k`, k below 64), which
 * `occurrences reindex` reads to move them.
 */
export const LEGACY_STATUS_INDEX_SHARDS = 64;

/**
 * The attributes the index carries besides the keys: what the reconciler judges a row by and the CLI's listing
 * needs to pick its page. None of them changes on a heartbeat or a lease extension (leaseExpiresAt, heartbeatAt
 * are left out on purpose), so those writes touch the table only. lastError is left out too: it can be 1,000
 * characters, and would push an index item past the 1 KB of one write unit.
 */
export const STATUS_INDEX_PROJECTION = [
  OccurrenceAttributes.status,
  'attempt',
  'createdAt',
  'claimedAt',
  'nextAttemptAt',
  'requeuedAt',
  'reportKey',
  'succeededAt',
  'failedAt',
  'notifiedAt',
] as const satisfies readonly (keyof Occurrence)[];

export const OCCURRENCE_TABLE = {
  partitionKey: OccurrenceAttributes.jobId,
  sortKey: OccurrenceAttributes.scheduledTime,
  /**
   * Lists occurrences by status and scheduled time across jobs: one query per shard of a status. Named apart from
   * the earlier `byStatus` (keyed by status, projecting everything) because a key schema cannot change in place.
   */
  statusIndex: {
    name: 'byStatusShard',
    partitionKey: OccurrenceAttributes.statusShard,
    sortKey: OccurrenceAttributes.scheduledTime,
    shards: STATUS_INDEX_SHARDS,
    nonKeyAttributes: STATUS_INDEX_PROJECTION,
  },
  /** Both keys and the index keys are strings. */
  keyType: 'S',
  ttlAttribute: OccurrenceAttributes.ttl,
  /** The notifier compares the old and new image of each change. */
  streamViewType: 'NEW_AND_OLD_IMAGES',
} as const;

/** An occurrence as the status index holds it: the keys and the projected attributes. */
export type IndexedOccurrence = Pick<Occurrence, 'jobId' | 'scheduleKey' | 'scheduledTime' | 'status' | 'attempt'> &
  Partial<Pick<Occurrence, (typeof STATUS_INDEX_PROJECTION)[number]>> & { readonly statusShard?: string };

/**
 * The table key of an occurrence: its series (the partition: the job id, or `jobId#scheduleKey` for a schedule
 * created at run time) and its scheduled time.
 */
export const tableKeyOf = (key: OccurrenceKey): { jobId: string; scheduledTime: string } => ({
  jobId: seriesOf(key),
  scheduledTime: key.scheduledTime,
});

/**
 * A row as the table holds it (its `jobId` attribute is its series) read back as the protocol sees it: the job id
 * and, for a schedule created at run time, the schedule key. Every reader of rows maps them through this.
 */
export function fromTableItem<T extends SeriesKey>(item: T): T {
  const { jobId, scheduleKey } = seriesKeyOf(item.jobId);
  // A string set (`bulkActions`) comes back from the document client as a Set, which JSON (show --json, the
  // console's API) would print as {}: the protocol sees it as a sorted array.
  const sets =
    'bulkActions' in item && item.bulkActions instanceof Set ? { bulkActions: [...item.bulkActions].sort() } : {};
  // The series is the truth; a stored scheduleKey attribute (written for people reading the table) agrees with it.
  return { ...item, jobId, ...(scheduleKey === undefined ? {} : { scheduleKey }), ...sets };
}

/** An occurrence as the table stores it: keyed by its series, and carrying its schedule key for people reading it. */
export function toTableItem<T extends OccurrenceKey>(occurrence: T): T {
  return { ...occurrence, jobId: seriesOf(occurrence) };
}

/**
 * The shard of an occurrence: a stable hash of its series and scheduled time, so the shard never changes with its
 * status, every writer computes the same one without reading the row, and one job's many schedule keys due at the
 * same time spread over every shard.
 */
export function shardOf(key: OccurrenceKey, shards: number = STATUS_INDEX_SHARDS): number {
  // FNV-1a, 32 bits: cheap, stable across processes and releases, and spreads similar keys apart. For a job's fixed
  // schedule the series is the job id, so the shard of every existing row is unchanged.
  let hash = 0x811c9dc5;
  const text = `${seriesOf(key)}\u0000${key.scheduledTime}`;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/**
 * The index key prefix every occurrence shares while the reconciler may still have to act on it: PENDING, RUNNING,
 * RETRY_WAIT, BUFFERED, and SUCCEEDED until its announcement is recorded. A change among them rewrites the index item
 * in place (one write unit: the projected `status` changes) instead of moving it to another key (a delete and a put).
 */
export const OPEN_INDEX_KEY = 'OPEN';

const { PENDING, RUNNING, RETRY_WAIT, BUFFERED, SUCCEEDED } = OccurrenceStatus;

/** The statuses whose rows are indexed under `OPEN#<shard>` (a SUCCEEDED row only until `notifiedAt`). */
export const OPEN_STATUSES: readonly OccurrenceStatus[] = [PENDING, RUNNING, RETRY_WAIT, BUFFERED, SUCCEEDED];

/** Whether rows of this status are indexed under the OPEN key (see OPEN_INDEX_KEY). */
export const isOpenStatus = (status: OccurrenceStatus): boolean => OPEN_STATUSES.includes(status);

/**
 * The index key prefix of a status: OPEN for the open ones, the status itself for FAILED, SKIPPED and CANCELLED
 * (finished rows an operator lists by what became of them, and that no reconciler reads).
 */
export function indexKeyPrefixOf(status: OccurrenceStatus): string {
  return isOpenStatus(status) ? OPEN_INDEX_KEY : status;
}

/** The index partition key value for a key prefix (OPEN, or a finished status) and a shard: `OPEN#17`, `FAILED#3`. */
export function statusShardValue(prefix: string, shard: number): string {
  return `${prefix}#${shard}`;
}

/**
 * The index partition key an occurrence has in this status; written in the same update that sets the status. Every
 * write that sets SUCCEEDED comes before the announcement, so SUCCEEDED is OPEN here; `markNotified` removes the key.
 */
export function statusShardOf(key: OccurrenceKey, status: OccurrenceStatus): string {
  return statusShardValue(indexKeyPrefixOf(status), shardOf(key));
}

/**
 * The index partition key a row must carry as it stands: none for a SUCCEEDED row whose announcement is recorded
 * (it left the index), statusShardOf otherwise. The simulation's invariant and `occurrences reindex` judge by this.
 */
export function expectedStatusShard(
  row: OccurrenceKey & { readonly status: OccurrenceStatus; readonly notifiedAt?: string },
): string | undefined {
  if (row.status === SUCCEEDED && row.notifiedAt !== undefined) return undefined;
  return statusShardOf(row, row.status);
}

/** Every index partition key rows of this status are under, for readers that query them all (OPEN ones share theirs). */
export function statusShardsOf(status: OccurrenceStatus): string[] {
  return indexShards(indexKeyPrefixOf(status));
}

/** Every index partition key of one key prefix: `OPEN#0` ... `OPEN#127` (or as many as `shards` says). */
export function indexShards(prefix: string, shards: number = STATUS_INDEX_SHARDS): string[] {
  return Array.from({ length: shards }, (_, shard) => statusShardValue(prefix, shard));
}
