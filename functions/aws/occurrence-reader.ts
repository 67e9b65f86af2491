/**
 * Reads occurrences through the byStatus index (status + scheduled time), for jobs that report on them.
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { OCCURRENCE_TABLE } from '../../lib/resource-definitions';
import { isoSeconds, type Occurrence, type OccurrenceStatus } from '../protocol/occurrence';
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
        const page = await this.client.send(new QueryCommand({
          TableName: this.tableName,
          IndexName: index.name,
          KeyConditionExpression: '#status = :status AND #time BETWEEN :from AND :last',
          ExpressionAttributeNames: { '#status': index.partitionKey, '#time': index.sortKey },
          ExpressionAttributeValues: { ':status': status, ':from': from, ':last': lastIncluded },
          ExclusiveStartKey: startKey,
        }), { abortSignal: signal });
        items.push(...((page.Items ?? []) as Occurrence[]));
        startKey = page.LastEvaluatedKey;
      } catch (error) {
        throw asDependencyError('list occurrences', error);
      }
    } while (startKey !== undefined);
    return items;
  }
}
