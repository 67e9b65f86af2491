/**
 * The trigger's one write of an occurrence row: the put with attribute_not_exists that makes a doubled trigger lose
 * the race. A class of its own so that the trigger's bundle carries this and not every write of the row
 * (occurrence-store.ts extends it with the rest).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Occurrence } from '../protocol/occurrence';
import type { CreateResult, OccurrenceRecorder } from '../protocol/ports';
import { fromTableItem, statusShardOf, toTableItem } from '../protocol/table-schema';
import { asDependencyError, isConditionalFailure, refusedItem } from './classify-error';

export class DynamoOccurrenceRecorder implements OccurrenceRecorder {
  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly tableName: string,
  ) {}

  async create(occurrence: Occurrence): Promise<CreateResult> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          // The index key goes in with the status it belongs to.
          Item: { ...toTableItem(occurrence), statusShard: statusShardOf(occurrence, occurrence.status) },
          ConditionExpression: 'attribute_not_exists(#jobId)',
          ExpressionAttributeNames: { '#jobId': 'jobId' },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { created: true };
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError('create occurrence', error);
      const existing = refusedItem<Occurrence>(error);
      return { created: false, existing: existing === undefined ? undefined : fromTableItem(existing) };
    }
  }
}
