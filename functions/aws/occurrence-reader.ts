/**
 * Reads occurrences through the byStatus index (status + scheduled time), for jobs that report on them.
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { isoSeconds, type Occurrence, type OccurrenceStatus } from '../protocol/occurrence';
import { OCCURRENCE_TABLE } from '../protocol/table-schema';
import { asDependencyError } from './classify-error';

export interface OccurrenceReader {
  /** Occurrences with this status and `from <= scheduledTime < to`, oldest first. */
  listByStatus(status: OccurrenceStatus, from: string, to: string, signal?: AbortSignal): Promise<Occurrence[]>;
}

export class DynamoOccurrenceReader implements OccurrenceReader {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async listByStatus(status: OccurrenceStatus, from: string, to: string, signal?: AbortSignal): Promise<Occurrence[]> {
    const index = OCCURRENCE_TABLE.statusIndex;
    const items: Occurrence[] = [];
    let startKey: Record<string, unknown> | undefined;
    // `to` belongs to the next period. A key condition takes one range, and a filter may not name a key
    // attribute, so end the range one second earlier: scheduled times are whole seconds.
    const lastIncluded = isoSeconds(Date.parse(to) - 1000);
    do {
      try {
        signal?.throwIfAborted();
        const page = await this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: index.name,
            KeyConditionExpression: '#status = :status AND #time BETWEEN :from AND :last',
            ExpressionAttributeNames: { '#status': index.partitionKey, '#time': index.sortKey },
            ExpressionAttributeValues: { ':status': status, ':from': from, ':last': lastIncluded },
            ExclusiveStartKey: startKey,
          }),
          { abortSignal: signal },
        );
        items.push(...((page.Items ?? []) as Occurrence[]));
        startKey = page.LastEvaluatedKey;
      } catch (error) {
        throw asDependencyError('list occurrences', error);
      }
    } while (startKey !== undefined);
    return items;
  }
}

/** Where a newest-first listing may stop: `from <= scheduledTime < to`, at most `limit` rows. */
export interface NewestFirstRange {
  readonly from: string;
  readonly to: string;
  readonly limit: number;
}

/**
 * Additions for the occurrences CLI: newest-first listings that stop at a limit. Each is a Query on the table key
 * (one job) or on the byStatus index (one status); never a Scan.
 */
export class OperatorOccurrenceReader extends DynamoOccurrenceReader {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {
    super(documents, table);
  }

  /** One job's occurrences, newest first; with `statuses`, only those (a filter on the key query). */
  async listJobNewestFirst(
    jobId: string,
    range: NewestFirstRange,
    statuses?: readonly OccurrenceStatus[],
  ): Promise<Occurrence[]> {
    const filter = statuses === undefined || statuses.length === 0 ? undefined : statuses;
    return this.newestFirst(range, {
      KeyConditionExpression: '#job = :job AND #time BETWEEN :from AND :last',
      ExpressionAttributeNames: {
        '#job': OCCURRENCE_TABLE.partitionKey,
        '#time': OCCURRENCE_TABLE.sortKey,
        ...(filter ? { '#status': OCCURRENCE_TABLE.statusIndex.partitionKey } : {}),
      },
      ExpressionAttributeValues: { ':job': jobId, ...Object.fromEntries((filter ?? []).map((s, i) => [`:s${i}`, s])) },
      FilterExpression: filter ? `#status IN (${filter.map((_, i) => `:s${i}`).join(', ')})` : undefined,
    });
  }

  /** Occurrences of every job with this status, newest first (the byStatus index). */
  async listStatusNewestFirst(status: OccurrenceStatus, range: NewestFirstRange): Promise<Occurrence[]> {
    const index = OCCURRENCE_TABLE.statusIndex;
    return this.newestFirst(range, {
      IndexName: index.name,
      KeyConditionExpression: '#status = :status AND #time BETWEEN :from AND :last',
      ExpressionAttributeNames: { '#status': index.partitionKey, '#time': index.sortKey },
      ExpressionAttributeValues: { ':status': status },
    });
  }

  private async newestFirst(range: NewestFirstRange, query: QueryParts): Promise<Occurrence[]> {
    // `to` is exclusive and scheduled times are whole seconds (see listByStatus); an empty range needs no request,
    // and BETWEEN with its bounds reversed would be a validation error.
    const last = isoSeconds(Date.parse(range.to) - 1000);
    if (last < range.from || range.limit <= 0) return [];
    const items: Occurrence[] = [];
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
        items.push(...((page.Items ?? []) as Occurrence[]));
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
}
