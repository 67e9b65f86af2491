/**
 * Reads occurrences through the status index, for the reconciler, for jobs that report on them and for the
 * occurrences CLI. The index is sharded (each key prefix spread over STATUS_INDEX_SHARDS partition keys: OPEN for
 * the rows in flight or unannounced, FAILED, SKIPPED and CANCELLED; an announced success is not in it) and projects
 * only what a heartbeat does not change, so a reader queries every shard of a prefix, merges them in scheduled-time
 * order, and reads full rows from the table (BatchGetItem) where it needs more than the projection. Never a Scan.
 */
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { DependencyError } from '../protocol/errors';
import { isoSeconds, type Occurrence, type OccurrenceKey, OccurrenceStatus } from '../protocol/occurrence';
import type { OccurrenceIndex } from '../protocol/ports';
import { seriesOf } from '../protocol/schedule-key';
import {
  fromTableItem,
  type IndexedOccurrence,
  indexKeyPrefixOf,
  indexShards,
  OCCURRENCE_TABLE,
  statusShardsOf,
  tableKeyOf,
} from '../protocol/table-schema';
import { delay } from '../protocol/transient-retry';
import { asDependencyError } from './classify-error';

export interface OccurrenceReader {
  /** Occurrences (full rows) with this status and `from <= scheduledTime < to`, oldest first. */
  listByStatus(status: OccurrenceStatus, from: string, to: string, signal?: AbortSignal): Promise<Occurrence[]>;
}

/** Keys per BatchGetItem request: DynamoDB's limit. */
const BATCH_GET_MAX_KEYS = 100;
/** Rounds of BatchGetItem for the keys DynamoDB left unprocessed (throttling) before giving up. */
const UNPROCESSED_ROUNDS = 5;
/** Queries in flight at once: every shard of a status, without opening more sockets than the SDK keeps. */
const QUERY_CONCURRENCY = 16;
/**
 * Entries per page of shardPages (the reconciler's read): its candidates then fit one BatchGetItem, and the rows it
 * holds at once stay a page's, however many occurrences are open.
 */
export const SHARD_PAGE_ITEMS = BATCH_GET_MAX_KEYS;

export class DynamoOccurrenceReader implements OccurrenceReader, OccurrenceIndex {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async listByStatus(status: OccurrenceStatus, from: string, to: string, signal?: AbortSignal): Promise<Occurrence[]> {
    return this.readRows(await this.listIndexed(status, from, to, signal), signal);
  }

  /**
   * The index entries (keys and projected attributes) with this status and `from <= scheduledTime < to`, oldest first.
   * An open status shares its shards with the other open ones (table-schema.ts): the query keeps this status with a
   * FilterExpression rather than in memory. It reads (and bills) the same items either way, but the others are never
   * sent back nor held here.
   */
  async listIndexed(
    status: OccurrenceStatus,
    from: string,
    to: string,
    signal?: AbortSignal,
  ): Promise<IndexedOccurrence[]> {
    const last = lastSecondBefore(to);
    if (last < from) return [];
    const perShard = await inBatches(statusShardsOf(status), QUERY_CONCURRENCY, async (shard) => {
      const items: IndexedOccurrence[] = [];
      for await (const page of this.pagesOf(shard, from, last, statusFilter([status]), signal)) items.push(...page);
      return items;
    });
    return perShard.flat().sort(oldestFirst);
  }

  /** See OccurrenceIndex.shardPages: pages of at most SHARD_PAGE_ITEMS entries. */
  async *shardPages(
    shard: string,
    from: string,
    to: string,
    signal?: AbortSignal,
  ): AsyncGenerator<readonly IndexedOccurrence[]> {
    const last = lastSecondBefore(to);
    if (last < from) return;
    yield* this.pagesOf(shard, from, last, undefined, signal, SHARD_PAGE_ITEMS);
  }

  /**
   * The full rows of these keys, in the order given; a key whose row is gone (TTL, or never there) is left out.
   * Eventually consistent, like the index the keys came from: every write that acts on a row is conditional.
   */
  async readRows(keys: readonly OccurrenceKey[], signal?: AbortSignal): Promise<Occurrence[]> {
    const found = new Map<string, Occurrence>();
    for (let i = 0; i < keys.length; i += BATCH_GET_MAX_KEYS) {
      for (const row of await this.batchGet(keys.slice(i, i + BATCH_GET_MAX_KEYS), signal)) found.set(idOf(row), row);
    }
    return keys.flatMap((k) => found.get(idOf(k)) ?? []);
  }

  /** One index partition key's entries in [from, last], ascending, a Query page at a time; `filter` keeps some. */
  private async *pagesOf(
    shard: string,
    from: string,
    last: string,
    filter: QueryFilter | undefined,
    signal?: AbortSignal,
    limit?: number,
  ): AsyncGenerator<IndexedOccurrence[]> {
    const index = OCCURRENCE_TABLE.statusIndex;
    let startKey: Record<string, unknown> | undefined;
    do {
      let page: QueryCommandOutput;
      try {
        signal?.throwIfAborted();
        page = await this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: index.name,
            KeyConditionExpression: '#shard = :shard AND #time BETWEEN :from AND :last',
            ExpressionAttributeNames: { '#shard': index.partitionKey, '#time': index.sortKey, ...filter?.names },
            ExpressionAttributeValues: { ':shard': shard, ':from': from, ':last': last, ...filter?.values },
            FilterExpression: filter?.expression,
            Limit: limit,
            ExclusiveStartKey: startKey,
          }),
          { abortSignal: signal },
        );
      } catch (error) {
        throw asDependencyError('list occurrences', error);
      }
      startKey = page.LastEvaluatedKey;
      yield ((page.Items ?? []) as IndexedOccurrence[]).map(fromTableItem);
    } while (startKey !== undefined);
  }

  /** One BatchGetItem of at most 100 keys, asked again for what DynamoDB left unprocessed. */
  private async batchGet(keys: readonly OccurrenceKey[], signal?: AbortSignal): Promise<Occurrence[]> {
    const rows: Occurrence[] = [];
    let pending: Record<string, unknown>[] = keys.map(tableKeyOf);
    for (let round = 0; pending.length > 0; round++) {
      if (round === UNPROCESSED_ROUNDS) {
        // Transient, as a throttled request is: the caller counts it and the next run (or a retry) reads again.
        const cause = new Error(`${pending.length} key(s) still unprocessed after ${round} rounds`);
        throw new DependencyError('transient', 'read occurrences', cause);
      }
      if (round > 0) await delay(50 * 2 ** round, signal);
      try {
        signal?.throwIfAborted();
        const out = await this.client.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: pending } } }),
          { abortSignal: signal },
        );
        rows.push(...((out.Responses?.[this.tableName] ?? []) as Occurrence[]).map(fromTableItem));
        pending = (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
      } catch (error) {
        throw asDependencyError('read occurrences', error);
      }
    }
    return rows;
  }
}

/** Where a newest-first listing may stop: `from <= scheduledTime < to`, at most `limit` rows. */
export interface NewestFirstRange {
  /** The earliest scheduled time, included. */
  readonly from: string;
  /** The latest scheduled time, excluded. */
  readonly to: string;
  /** The most rows to return. */
  readonly limit: number;
}

/**
 * Additions for the occurrences CLI: newest-first listings that stop at a limit. Each is a Query on the table key
 * (one job) or one per shard of the status index (one status), then a BatchGetItem of the page; never a Scan.
 */
export class OperatorOccurrenceReader extends DynamoOccurrenceReader {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {
    super(documents, table);
  }

  /**
   * One job's occurrences, newest first; with `statuses`, only those (a filter on the key query). For a job that takes
   * schedules at run time, those of the schedule `scheduleKey` (each schedule's occurrences are a partition of their
   * own); without it, such a job's listing is empty.
   */
  async listJobNewestFirst(
    jobId: string,
    range: NewestFirstRange,
    statuses?: readonly OccurrenceStatus[],
    scheduleKey?: string,
  ): Promise<Occurrence[]> {
    const filter = statuses === undefined || statuses.length === 0 ? undefined : statuses;
    return (await this.newestFirst(range, {
      KeyConditionExpression: '#job = :job AND #time BETWEEN :from AND :last',
      ExpressionAttributeNames: {
        '#job': OCCURRENCE_TABLE.partitionKey,
        '#time': OCCURRENCE_TABLE.sortKey,
        ...(filter ? { '#status': 'status' } : {}),
      },
      ExpressionAttributeValues: {
        ':job': seriesOf({ jobId, scheduleKey }),
        ...Object.fromEntries((filter ?? []).map((s, i) => [`:s${i}`, s])),
      },
      FilterExpression: filter ? `#status IN (${filter.map((_, i) => `:s${i}`).join(', ')})` : undefined,
    })) as Occurrence[];
  }

  /**
   * One series' rows in the range, newest first, with only `attributes` (a ProjectionExpression): for a page that
   * draws many rows (the console's timeline) without carrying their checkpoints. DynamoDB bills the whole items read
   * all the same. The attributes must include the key (`jobId`, `scheduledTime`).
   */
  async listSeriesNewestFirst(
    series: string,
    range: NewestFirstRange,
    attributes: readonly string[],
  ): Promise<Occurrence[]> {
    const names = Object.fromEntries(attributes.map((a, i) => [`#a${i}`, a]));
    return (await this.newestFirst(range, {
      KeyConditionExpression: '#job = :job AND #time BETWEEN :from AND :last',
      ExpressionAttributeNames: { '#job': OCCURRENCE_TABLE.partitionKey, '#time': OCCURRENCE_TABLE.sortKey, ...names },
      ExpressionAttributeValues: { ':job': series },
      ProjectionExpression: Object.keys(names).join(', '),
    })) as Occurrence[];
  }

  /**
   * Occurrences of every job with these statuses (one, or several), newest first: the newest `limit` of each shard
   * they are under (the newest `limit` of all are among them), merged, cut to `limit`, then their full rows. The open
   * statuses share their shards (table-schema.ts), so they are queried once, with a filter unless all are asked for.
   * An announced SUCCEEDED row is in no shard: this lists only the SUCCEEDED rows not yet announced.
   */
  async listStatusNewestFirst(
    statuses: OccurrenceStatus | readonly OccurrenceStatus[],
    range: NewestFirstRange,
  ): Promise<Occurrence[]> {
    const wanted = typeof statuses === 'string' ? [statuses] : [...new Set(statuses)];
    const index = OCCURRENCE_TABLE.statusIndex;
    const prefixes = [...new Set(wanted.map(indexKeyPrefixOf))];
    const shards = prefixes.flatMap((prefix) => {
      const filter = statusFilter(wanted.filter((s) => indexKeyPrefixOf(s) === prefix));
      return indexShards(prefix).map((shard) => ({ shard, filter }));
    });
    const perShard = await inBatches(shards, QUERY_CONCURRENCY, ({ shard, filter }) =>
      this.newestFirst(range, {
        IndexName: index.name,
        KeyConditionExpression: '#shard = :shard AND #time BETWEEN :from AND :last',
        ExpressionAttributeNames: { '#shard': index.partitionKey, '#time': index.sortKey, ...filter?.names },
        ExpressionAttributeValues: { ':shard': shard, ...filter?.values },
        FilterExpression: filter?.expression,
      }),
    );
    const page = perShard.flat().sort(newestFirstOrder).slice(0, range.limit);
    return this.readRows(page);
  }

  private async newestFirst(range: NewestFirstRange, query: QueryParts): Promise<IndexedOccurrence[]> {
    // `to` is exclusive and scheduled times are whole seconds (see listIndexed); an empty range needs no request,
    // and BETWEEN with its bounds reversed would be a validation error.
    const last = isoSeconds(Date.parse(range.to) - 1000);
    if (last < range.from || range.limit <= 0) return [];
    const items: IndexedOccurrence[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      try {
        const page = await this.documents.send(
          new QueryCommand({
            TableName: this.table,
            ...query,
            ExpressionAttributeValues: { ...query.ExpressionAttributeValues, ':from': range.from, ':last': last },
            ScanIndexForward: false,
            // Limit counts the items read, before a filter: never read more than could still be shown.
            Limit: Math.min(range.limit - items.length, MAX_PAGE_ITEMS),
            ExclusiveStartKey: startKey,
          }),
        );
        items.push(...((page.Items ?? []) as IndexedOccurrence[]).map(fromTableItem));
        startKey = page.LastEvaluatedKey;
      } catch (error) {
        throw asDependencyError('list occurrences', error);
      }
    } while (startKey !== undefined && items.length < range.limit);
    return items.slice(0, range.limit);
  }
}

/** Items asked for per page (DynamoDB stops a page at 1 MB anyway). */
const MAX_PAGE_ITEMS = 1000;

interface QueryParts {
  readonly IndexName?: string;
  readonly KeyConditionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues: Record<string, unknown>;
  readonly FilterExpression?: string;
  readonly ProjectionExpression?: string;
}

/** Scheduled time, then job: the order one shard's query returns, kept across shards. */
export function oldestFirst(a: OccurrenceKey, b: OccurrenceKey): number {
  return a.scheduledTime.localeCompare(b.scheduledTime) || seriesOf(a).localeCompare(seriesOf(b));
}

function newestFirstOrder(a: OccurrenceKey, b: OccurrenceKey): number {
  return b.scheduledTime.localeCompare(a.scheduledTime) || seriesOf(a).localeCompare(seriesOf(b));
}

/** A FilterExpression and its placeholders. */
interface QueryFilter {
  readonly expression: string;
  readonly names: Record<string, string>;
  readonly values: Record<string, unknown>;
}

/**
 * The filter that keeps these statuses, or none when they are all the statuses the shards hold (a finished status's
 * own shards, or every open status).
 */
function statusFilter(statuses: readonly OccurrenceStatus[]): QueryFilter | undefined {
  const prefixes = new Set(statuses.map(indexKeyPrefixOf));
  const under = Object.values(OccurrenceStatus).filter((s) => prefixes.has(indexKeyPrefixOf(s)));
  if (under.every((s) => statuses.includes(s))) return undefined;
  return {
    expression: `#status IN (${statuses.map((_, i) => `:status${i}`).join(', ')})`,
    names: { '#status': 'status' },
    values: Object.fromEntries(statuses.map((s, i) => [`:status${i}`, s])),
  };
}

/**
 * The last whole second before `to`. `to` belongs to the next period; a key condition takes one range, and a filter
 * may not name a key attribute, so the range ends one second earlier: scheduled times are whole seconds.
 */
const lastSecondBefore = (to: string): string => isoSeconds(Date.parse(to) - 1000);

const idOf = (k: OccurrenceKey) => `${seriesOf(k)}\u0000${k.scheduledTime}`;

/** Run `work` over `items`, at most `concurrency` at once, results in the order of the items. */
async function inBatches<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += concurrency) {
    results.push(...(await Promise.all(items.slice(i, i + concurrency).map(work))));
  }
  return results;
}
