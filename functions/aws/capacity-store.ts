/**
 * A capped job's capacity row and waiting list on DynamoDB (functions/protocol/concurrency-ports.ts), in the
 * occurrence table under the job's own partition, beside its job-state row (`#job`). None of these items has a
 * status, a status-index key or a TTL-free life of its own beyond what is said here: the status index, the notifier's
 * stream filter and a job's queries of occurrences (scheduledTime BETWEEN two times: '#' sorts before digits) never
 * see them.
 *
 *   (jobId, '#capacity')                       holds (list), servedSeq, version: compare-and-swap on version
 *   (jobId, '#seq#' + fairnessKey)             last: a key's line, one UpdateItem per number (read, then CAS)
 *   (jobId, '#wait#' + seq(12 digits) + '#' + time + '#' + key)   the waiting list: its sort-key order is fair order
 *   (jobId, '#waitof#' + occurrence)           the entry's copy by occurrence: find and remove without a scan
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { occurrenceIdOf } from '../protocol/concurrency-cap';
import type {
  CapacityHold,
  CapacityRow,
  CapacityStore,
  CapacityWrite,
  WaitingEntry,
  WaitingOccurrences,
} from '../protocol/concurrency-ports';
import { iso, type Occurrence, type OccurrenceKey, OccurrenceStatus, TERMINAL_STATUSES } from '../protocol/occurrence';
import { fromTableItem, statusShardOf, tableKeyOf } from '../protocol/table-schema';
import { asDependencyError, isConditionalFailure } from './classify-error';

export const CAPACITY_SORT_KEY = '#capacity';
const SEQ_PREFIX = '#seq#';
export const WAIT_PREFIX = '#wait#';
const WAIT_OF_PREFIX = '#waitof#';
/** A waiting item is deleted by DynamoDB this long after it was written if nothing took it off the list. */
const WAITING_TTL_SECONDS = 15 * 86_400;

/** (seq, scheduled time, schedule key): fair order is the sort key's order. */
const waitSortKey = (seq: number, key: Pick<StoredEntry, 'occurrenceTime' | 'scheduleKey'>) =>
  `${WAIT_PREFIX}${String(seq).padStart(12, '0')}#${key.occurrenceTime}#${key.scheduleKey ?? ''}`;

interface StoredEntry {
  readonly scheduleKey?: string;
  readonly occurrenceTime: string;
  readonly fairnessKey: string;
  readonly seq: number;
  readonly since: number;
}

export class DynamoCapacityStore implements CapacityStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async read(jobId: string): Promise<CapacityRow | undefined> {
    const item = await this.get('read the capacity row', jobId, CAPACITY_SORT_KEY);
    if (item === undefined) return undefined;
    return {
      jobId,
      holds: (item.holds as CapacityHold[] | undefined) ?? [],
      servedSeq: Number(item.servedSeq ?? 0),
      version: Number(item.version),
    };
  }

  async writeIfVersion(jobId: string, version: number | undefined, write: CapacityWrite): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { jobId, scheduledTime: CAPACITY_SORT_KEY },
          UpdateExpression: 'SET #holds = :holds, #servedSeq = :servedSeq, #version = :next',
          ConditionExpression: version === undefined ? 'attribute_not_exists(#version)' : '#version = :read',
          ExpressionAttributeNames: { '#holds': 'holds', '#servedSeq': 'servedSeq', '#version': 'version' },
          ExpressionAttributeValues: {
            ':holds': write.holds.map((h) => ({
              occurrence: h.occurrence,
              leaseId: h.leaseId,
              expiresAt: h.expiresAt,
            })),
            ':servedSeq': write.servedSeq,
            ':next': (version ?? 0) + 1,
            ...(version === undefined ? {} : { ':read': version }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw asDependencyError('write the capacity row', error);
    }
  }

  async nextSeq(jobId: string, fairnessKey: string, floor: number): Promise<number> {
    const sortKey = `${SEQ_PREFIX}${fairnessKey}`;
    for (let round = 0; round < 8; round++) {
      const item = await this.get("read a fairness key's line", jobId, sortKey);
      const last = item === undefined ? undefined : Number(item.last);
      const seq = Math.max((last ?? 0) + 1, floor);
      try {
        await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { jobId, scheduledTime: sortKey },
            UpdateExpression: 'SET #last = :seq',
            ConditionExpression: last === undefined ? 'attribute_not_exists(#last)' : '#last = :read',
            ExpressionAttributeNames: { '#last': 'last' },
            ExpressionAttributeValues: { ':seq': seq, ...(last === undefined ? {} : { ':read': last }) },
          }),
        );
        return seq;
      } catch (error) {
        if (!isConditionalFailure(error)) throw asDependencyError("number a fairness key's waiting occurrence", error);
      }
    }
    throw asDependencyError("number a fairness key's waiting occurrence", new Error('the line changed under 8 tries'));
  }

  async addWaiting(entry: WaitingEntry): Promise<void> {
    const { jobId } = entry.key;
    const id = occurrenceIdOf(entry.key);
    const stored: StoredEntry = {
      ...(entry.key.scheduleKey === undefined ? {} : { scheduleKey: entry.key.scheduleKey }),
      occurrenceTime: entry.key.scheduledTime,
      fairnessKey: entry.fairnessKey,
      seq: entry.seq,
      since: entry.since,
    };
    const ttl = Math.floor(entry.since / 1000) + WAITING_TTL_SECONDS;
    // The copy first, and only once: a retry after a crash between the two puts finds it and writes the same entry.
    let kept = stored;
    try {
      await this.put(jobId, `${WAIT_OF_PREFIX}${id}`, { ...stored, ttl }, 'attribute_not_exists(#seq)');
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError('add to the waiting list', error);
      kept = (await this.get('read a waiting entry', jobId, `${WAIT_OF_PREFIX}${id}`)) as unknown as StoredEntry;
    }
    await this.put(jobId, waitSortKey(kept.seq, kept), { ...kept, ttl });
  }

  async removeWaiting(jobId: string, occurrence: string): Promise<void> {
    const entry = await this.get('read a waiting entry', jobId, `${WAIT_OF_PREFIX}${occurrence}`);
    if (entry === undefined) return;
    // The list's entry first: a crash between the two leaves the copy, which a later remove or its TTL clears.
    await this.delete(jobId, waitSortKey(Number(entry.seq), entry as unknown as StoredEntry));
    await this.delete(jobId, `${WAIT_OF_PREFIX}${occurrence}`);
  }

  async findWaiting(jobId: string, occurrence: string): Promise<WaitingEntry | undefined> {
    const item = await this.get('read a waiting entry', jobId, `${WAIT_OF_PREFIX}${occurrence}`);
    return item === undefined ? undefined : entryOf(jobId, item as unknown as StoredEntry);
  }

  async firstWaiting(jobId: string, limit: number): Promise<readonly WaitingEntry[]> {
    if (limit <= 0) return [];
    try {
      const out = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: '#jobId = :jobId AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#jobId': 'jobId', '#sk': 'scheduledTime' },
          ExpressionAttributeValues: { ':jobId': jobId, ':prefix': WAIT_PREFIX },
          ConsistentRead: true,
          Limit: limit,
        }),
      );
      return (out.Items ?? []).map((item) => entryOf(jobId, item as unknown as StoredEntry));
    } catch (error) {
      throw asDependencyError('read the waiting list', error);
    }
  }

  private async get(operation: string, jobId: string, sortKey: string): Promise<Record<string, unknown> | undefined> {
    try {
      const out = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { jobId, scheduledTime: sortKey }, ConsistentRead: true }),
      );
      return out.Item;
    } catch (error) {
      throw asDependencyError(operation, error);
    }
  }

  /** An UpdateItem that writes every field (the worker may UpdateItem its own partition; PutItem it is not given). */
  private async put(jobId: string, sortKey: string, fields: Record<string, unknown>, condition?: string) {
    const entries = Object.entries(fields);
    const names = Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name]));
    const values = Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value]));
    const request = new UpdateCommand({
      TableName: this.tableName,
      Key: { jobId, scheduledTime: sortKey },
      UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
      ExpressionAttributeNames: { ...names, ...(condition === undefined ? {} : { '#seq': 'seq' }) },
      ExpressionAttributeValues: values,
      ...(condition === undefined ? {} : { ConditionExpression: condition }),
    });
    try {
      await this.client.send(request);
    } catch (error) {
      if (condition !== undefined && isConditionalFailure(error)) throw error;
      throw asDependencyError('add to the waiting list', error);
    }
  }

  private async delete(jobId: string, sortKey: string): Promise<void> {
    try {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { jobId, scheduledTime: sortKey } }));
    } catch (error) {
      throw asDependencyError('take an occurrence off the waiting list', error);
    }
  }
}

function entryOf(jobId: string, item: StoredEntry): WaitingEntry {
  return {
    key: {
      jobId,
      ...(item.scheduleKey === undefined ? {} : { scheduleKey: item.scheduleKey }),
      scheduledTime: item.occurrenceTime,
    },
    fairnessKey: item.fairnessKey,
    seq: Number(item.seq),
    since: Number(item.since),
  };
}

/**
 * The occurrence rows' side: WAITING is recorded as BUFFERED with `waitingFor: 'capacity'` (claimable as a BUFFERED
 * row is, and left to the capacity repair by the reconciler), undoing the claim as a BUFFERED write does.
 */
export class DynamoWaitingOccurrences implements WaitingOccurrences {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async recordWaiting(key: OccurrenceKey, leaseId: string, fairnessKey: string, now: number): Promise<void> {
    const { BUFFERED, RUNNING } = OccurrenceStatus;
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tableKeyOf(key),
          UpdateExpression:
            'SET #status = :buffered, #statusShard = :shard, #bufferedAt = :now, #waitingFor = :capacity, #waitingSince = :now, ' +
            '#fairnessKey = :fairnessKey, #attempt = #attempt - :one REMOVE #leaseExpiresAt, #leaseOwner',
          ConditionExpression: '#status = :running AND #leaseId = :leaseId',
          ExpressionAttributeNames: {
            '#status': 'status',
            '#statusShard': 'statusShard',
            '#bufferedAt': 'bufferedAt',
            '#waitingFor': 'waitingFor',
            '#waitingSince': 'waitingSince',
            '#fairnessKey': 'fairnessKey',
            '#attempt': 'attempt',
            '#leaseExpiresAt': 'leaseExpiresAt',
            '#leaseOwner': 'leaseOwner',
            '#leaseId': 'leaseId',
          },
          ExpressionAttributeValues: {
            ':buffered': BUFFERED,
            ':shard': statusShardOf(key, BUFFERED),
            ':now': iso(now),
            ':capacity': 'capacity',
            ':fairnessKey': fairnessKey,
            ':one': 1,
            ':running': RUNNING,
            ':leaseId': leaseId,
          },
        }),
      );
    } catch (error) {
      // Refused: our lease is gone (an operator's cancel, a revoke): the row is someone else's to record.
      if (!isConditionalFailure(error)) throw asDependencyError('record occurrence WAITING', error);
    }
  }

  async isFinal(key: OccurrenceKey): Promise<boolean> {
    try {
      const out = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: tableKeyOf(key), ConsistentRead: true }),
      );
      const row = out.Item === undefined ? undefined : fromTableItem(out.Item as Occurrence);
      // A row gone (its TTL) will never start either.
      return row === undefined || TERMINAL_STATUSES.includes(row.status);
    } catch (error) {
      throw asDependencyError('read a waiting occurrence', error);
    }
  }
}
