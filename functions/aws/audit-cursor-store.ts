/**
 * The schedule audit's cursor (protocol/reconcile-schedules.ts) as one row of the registry table: jobId '#audit',
 * scheduleKey '#cursor'. No job id or schedule key has a '#', so no job's rows or grant (scoped by the leading key
 * jobId) reach it; it has neither `syncShard` nor `auditBucket`, so neither sparse index holds it. A PutItem that is a
 * compare-and-swap on `version` (or, for the first, on the row's absence): of two overlapping reconciler runs, one
 * claims the next slices and the other is refused.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditCursorStore, AuditPosition, StoredAuditCursor } from '../protocol/reconcile-schedules';
import { asDependencyError, isConditionalFailure } from './classify-error';

/** The key of the cursor row in the registry table. */
export const AUDIT_CURSOR_KEY = { jobId: '#audit', scheduleKey: '#cursor' } as const;

export class DynamoAuditCursorStore implements AuditCursorStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async read(): Promise<StoredAuditCursor | undefined> {
    try {
      const out = await this.documents.send(
        new GetCommand({ TableName: this.table, Key: AUDIT_CURSOR_KEY, ConsistentRead: true }),
      );
      const item = out.Item;
      if (item === undefined) return undefined;
      // A cursor of the bucket walk (nextJobId, nextBucket) has no nextSlice: the slice walk starts over at 0.
      return {
        slice: Number(item.nextSlice ?? 0),
        cycle: Number(item.cycle ?? 0),
        version: Number(item.version ?? 0),
      };
    } catch (error) {
      throw asDependencyError('read the schedule audit cursor', error);
    }
  }

  async write(next: AuditPosition, expectedVersion: number | undefined): Promise<boolean> {
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            ...AUDIT_CURSOR_KEY,
            nextSlice: next.slice,
            cycle: next.cycle,
            version: (expectedVersion ?? 0) + 1,
          },
          ...(expectedVersion === undefined
            ? {
                ConditionExpression: 'attribute_not_exists(#version)',
                ExpressionAttributeNames: { '#version': 'version' },
              }
            : {
                ConditionExpression: '#version = :expected',
                ExpressionAttributeNames: { '#version': 'version' },
                ExpressionAttributeValues: { ':expected': expectedVersion },
              }),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw asDependencyError('advance the schedule audit cursor', error);
    }
  }
}
