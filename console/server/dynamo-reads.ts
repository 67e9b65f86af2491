/**
 * The pages' reads of the occurrence table on DynamoDB: a key-range Query of one series, newest first, with a
 * ProjectionExpression of the attributes a bar needs, and a GetItem of one row in full. Never a Scan, never the
 * status index. The projection does not lower the read units (DynamoDB bills the items a Query reads), but it keeps
 * a page of a thousand resumable runs from carrying their checkpoints (up to 64 KB each) over the wire.
 */
import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { asDependencyError } from '../../functions/aws/classify-error';
import { isoSeconds, type Occurrence, type OccurrenceKey } from '../../functions/protocol/occurrence';
import { fromTableItem, OCCURRENCE_TABLE, tableKeyOf } from '../../functions/protocol/table-schema';
import type { ConsoleOccurrenceReads, SeriesRange } from './deps';

/** The attributes of a row the timeline and the jobs page draw (timeline.ts reads no others). */
export const TIMELINE_ATTRIBUTES = [
  'jobId',
  'scheduledTime',
  'status',
  'attempt',
  'claimedAt',
  'runStartedAt',
  'succeededAt',
  'failedAt',
  'skippedAt',
  'cancelledAt',
  'skipReason',
  'yieldedTo',
  'cancelledBy',
  'origin',
  'segment',
  'progress',
  'lastError',
] as const;

/** Items asked for per Query page; DynamoDB stops a page at 1 MB read anyway. */
const PAGE_ITEMS = 1000;

const names = Object.fromEntries(TIMELINE_ATTRIBUTES.map((a, i) => [`#a${i}`, a]));
const projection = Object.keys(names).join(', ');

export class DynamoConsoleReads implements ConsoleOccurrenceReads {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async newestFirst(series: string, range: SeriesRange): Promise<Occurrence[]> {
    // `to` is exclusive and scheduled times are whole seconds; BETWEEN with its bounds reversed is a validation error.
    const last = isoSeconds(Date.parse(range.to) - 1000);
    if (last < range.from || range.limit <= 0) return [];
    const rows: Occurrence[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      try {
        const page = await this.documents.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: '#job = :job AND #time BETWEEN :from AND :last',
            ExpressionAttributeNames: {
              '#job': OCCURRENCE_TABLE.partitionKey,
              '#time': OCCURRENCE_TABLE.sortKey,
              ...names,
            },
            ExpressionAttributeValues: { ':job': series, ':from': range.from, ':last': last },
            ProjectionExpression: projection,
            ScanIndexForward: false,
            Limit: Math.min(range.limit - rows.length, PAGE_ITEMS),
            ExclusiveStartKey: startKey,
          }),
        );
        rows.push(...((page.Items ?? []) as Occurrence[]).map(fromTableItem));
        startKey = page.LastEvaluatedKey;
      } catch (error) {
        throw asDependencyError(`list the occurrences of ${series}`, error);
      }
    } while (startKey !== undefined && rows.length < range.limit);
    return rows;
  }

  async get(key: OccurrenceKey): Promise<Readonly<Record<string, unknown>> | undefined> {
    try {
      // Consistent: the page reads the row again right after an action, and polls a running one.
      const out = await this.documents.send(
        new GetCommand({ TableName: this.tableName, Key: tableKeyOf(key), ConsistentRead: true }),
      );
      return out.Item === undefined
        ? undefined
        : (fromTableItem(out.Item as Occurrence) as unknown as Record<string, unknown>);
    } catch (error) {
      throw asDependencyError(`read the occurrence ${key.jobId} ${key.scheduledTime}`, error);
    }
  }
}
