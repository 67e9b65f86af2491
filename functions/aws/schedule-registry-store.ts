/**
 * The schedule registry on DynamoDB (ScheduleRegistry): one row per (job, schedule key), written by conditional
 * puts on `version`; a refused write returns the row as it is (ReturnValuesOnConditionCheckFailure: ALL_OLD).
 *
 * A row's `input` is stored as its JSON text (attribute `inputJson`): DynamoDB keeps neither the order of a map's
 * keys nor numbers beyond its 38 digits as JSON has them, and the text is what the projection hands on anyway.
 * A listing's cursor is the base64url JSON of DynamoDB's LastEvaluatedKey, checked on its way back in.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { iso } from '../protocol/occurrence';
import { quoteValue } from '../protocol/quote-value';
import { type JsonValue, SCHEDULE_KEY_PATTERN } from '../protocol/schedule-key';
import { auditBucketKey, InvalidScheduleError, REGISTRY_TABLE, syncShards } from '../protocol/schedule-registry';
import type {
  RegisteredSchedule,
  RegistryPage,
  RegistryWriteResult,
  RowVersion,
  ScheduleRegistry,
} from '../protocol/schedule-registry-ports';
import { asDependencyError, isConditionalFailure, refusedItem } from './classify-error';

/** A listing's page size when none is asked for, and the largest one asked for. */
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1_000;

type Item = Record<string, unknown>;

/**
 * The condition of every write that expects a row: its version and its life (createdAt), so that a write read from a
 * row since deleted and created again (its versions start over) is refused rather than landing on the new one.
 */
const AT_VERSION = '#version = :expected AND #createdAt = :createdAt';
const VERSION_NAMES = { '#version': 'version', '#createdAt': 'createdAt' };
const versionValues = (expected: RowVersion) => ({ ':expected': expected.version, ':createdAt': expected.createdAt });

/** The rows of one registry table. */
export class DynamoScheduleRegistry implements ScheduleRegistry {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(jobId: string, scheduleKey: string, consistent: boolean): Promise<RegisteredSchedule | undefined> {
    try {
      const out = await this.documents.send(
        new GetCommand({ TableName: this.table, Key: { jobId, scheduleKey }, ConsistentRead: consistent }),
      );
      return rowOf(out.Item);
    } catch (error) {
      throw asDependencyError(`read schedule ${jobId}/${scheduleKey}`, error);
    }
  }

  async put(row: RegisteredSchedule, expected: RowVersion | undefined): Promise<RegistryWriteResult> {
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.table,
          Item: itemOf(row),
          ...(expected === undefined
            ? { ConditionExpression: 'attribute_not_exists(jobId)' }
            : {
                ConditionExpression: AT_VERSION,
                ExpressionAttributeNames: VERSION_NAMES,
                ExpressionAttributeValues: versionValues(expected),
              }),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { written: true, current: row };
    } catch (error) {
      if (!isConditionalFailure(error)) {
        throw asDependencyError(`write schedule ${row.jobId}/${row.scheduleKey} v${row.version}`, error);
      }
      return { written: false, current: rowOf(refusedItem<Item>(error)) };
    }
  }

  async markSynced(
    jobId: string,
    scheduleKey: string,
    expected: RowVersion,
    now: number,
    templateHash: string,
  ): Promise<RegistryWriteResult> {
    const { version } = expected;
    try {
      const out = await this.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { jobId, scheduleKey },
          UpdateExpression:
            'SET syncedVersion = :expected, syncedAt = :now, syncedTemplateHash = :template REMOVE syncDueAt, syncShard',
          ConditionExpression: AT_VERSION,
          ExpressionAttributeNames: VERSION_NAMES,
          ExpressionAttributeValues: { ...versionValues(expected), ':now': iso(now), ':template': templateHash },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { written: true, current: rowOf(out.Attributes) as RegisteredSchedule };
    } catch (error) {
      if (!isConditionalFailure(error)) {
        throw asDependencyError(`mark schedule ${jobId}/${scheduleKey} v${version} synced`, error);
      }
      return { written: false, current: rowOf(refusedItem<Item>(error)) };
    }
  }

  async remove(jobId: string, scheduleKey: string, expected: RowVersion): Promise<{ readonly removed: boolean }> {
    const { version } = expected;
    try {
      await this.documents.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { jobId, scheduleKey },
          ConditionExpression: `${AT_VERSION} AND attribute_exists(deletedAt)`,
          ExpressionAttributeNames: VERSION_NAMES,
          ExpressionAttributeValues: versionValues(expected),
        }),
      );
      return { removed: true };
    } catch (error) {
      if (!isConditionalFailure(error)) {
        throw asDependencyError(`remove the tombstone of schedule ${jobId}/${scheduleKey} v${version}`, error);
      }
      return { removed: false };
    }
  }

  /**
   * One page of a job's rows in key order. @throws InvalidScheduleError for a limit outside 1-1,000 or a cursor
   * that is not one this listing gave.
   */
  async list(
    jobId: string,
    options: { readonly prefix?: string; readonly limit?: number; readonly cursor?: string },
  ): Promise<RegistryPage<RegisteredSchedule>> {
    const limit = options.limit ?? DEFAULT_LIST_LIMIT;
    const problems: string[] = [];
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
      problems.push(`limit must be a whole number from 1 to ${MAX_LIST_LIMIT}, got ${quoteValue(limit)}`);
    }
    if (options.prefix !== undefined && typeof options.prefix !== 'string') {
      problems.push(`prefix must be a string, got ${quoteValue(options.prefix)}`);
    }
    const start = options.cursor === undefined ? undefined : cursorKey(jobId, options.cursor);
    if (start === null) problems.push(`cursor ${quoteValue(options.cursor)} is not a cursor of this listing`);
    if (problems.length > 0) throw new InvalidScheduleError(jobId, undefined, problems);
    const prefix = options.prefix ?? '';
    try {
      const out = await this.documents.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression:
            prefix === '' ? 'jobId = :jobId' : 'jobId = :jobId AND begins_with(scheduleKey, :prefix)',
          ExpressionAttributeValues: { ':jobId': jobId, ...(prefix === '' ? {} : { ':prefix': prefix }) },
          Limit: limit,
          ExclusiveStartKey: start ?? undefined,
        }),
      );
      const items = (out.Items ?? []).map((item) => rowOf(item) as RegisteredSchedule);
      const last = out.LastEvaluatedKey;
      return last === undefined ? { items } : { items, cursor: cursorOf(last) };
    } catch (error) {
      throw asDependencyError(`list the schedules of ${jobId}`, error);
    }
  }

  /** One query per shard of the sparse index (SYNC_INDEX_SHARDS, in parallel), each at most `limit` rows. */
  async dueForSync(now: number, limit: number): Promise<readonly RegisteredSchedule[]> {
    const { name, partitionKey, sortKey } = REGISTRY_TABLE.syncIndex;
    try {
      const pages = await Promise.all(
        syncShards().map((shard) =>
          this.documents.send(
            new QueryCommand({
              TableName: this.table,
              IndexName: name,
              KeyConditionExpression: '#shard = :shard AND #due <= :now',
              ExpressionAttributeNames: { '#shard': partitionKey, '#due': sortKey },
              ExpressionAttributeValues: { ':shard': shard, ':now': iso(now) },
              Limit: limit,
            }),
          ),
        ),
      );
      return pages
        .flatMap((page) => (page.Items ?? []).map((item) => rowOf(item) as RegisteredSchedule))
        .sort((a, b) => ((a.syncDueAt ?? '') < (b.syncDueAt ?? '') ? -1 : 1))
        .slice(0, limit);
    } catch (error) {
      throw asDependencyError('read the schedules due for their projection', error);
    }
  }

  /** Every row of one bucket of a job, page after page, in the order of the schedules' names. */
  async auditBucket(jobId: string, bucket: number): Promise<readonly RegisteredSchedule[]> {
    const { name, partitionKey } = REGISTRY_TABLE.auditIndex;
    const rows: RegisteredSchedule[] = [];
    let start: Record<string, unknown> | undefined;
    try {
      do {
        const out = await this.documents.send(
          new QueryCommand({
            TableName: this.table,
            IndexName: name,
            KeyConditionExpression: '#bucket = :bucket',
            ExpressionAttributeNames: { '#bucket': partitionKey },
            ExpressionAttributeValues: { ':bucket': auditBucketKey(jobId, bucket) },
            ExclusiveStartKey: start,
          }),
        );
        rows.push(...(out.Items ?? []).map((item) => rowOf(item) as RegisteredSchedule));
        start = out.LastEvaluatedKey;
      } while (start !== undefined);
      return rows;
    } catch (error) {
      throw asDependencyError(`read audit bucket ${bucket} of ${jobId}`, error);
    }
  }
}

/** The item of a row: `input` as its JSON text. */
export function itemOf(row: RegisteredSchedule): Item {
  const { input, ...rest } = row;
  return input === undefined ? { ...rest } : { ...rest, inputJson: JSON.stringify(input) };
}

/** The row of an item (undefined for none): `inputJson` parsed back into `input`. */
export function rowOf(item: Item | undefined): RegisteredSchedule | undefined {
  if (item === undefined) return undefined;
  const { inputJson, ...rest } = item;
  const row = typeof inputJson === 'string' ? { ...rest, input: JSON.parse(inputJson) as JsonValue } : rest;
  return row as unknown as RegisteredSchedule;
}

function cursorOf(lastEvaluatedKey: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(lastEvaluatedKey), 'utf8').toString('base64url');
}

/** The start key a cursor of `jobId`'s listing holds, or null when it is not one. */
function cursorKey(jobId: string, cursor: unknown): { jobId: string; scheduleKey: string } | null {
  if (typeof cursor !== 'string' || cursor.length > 1_000) return null;
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (typeof key !== 'object' || key === null || Array.isArray(key)) return null;
    const { jobId: job, scheduleKey, ...more } = key as Record<string, unknown>;
    if (job !== jobId || typeof scheduleKey !== 'string' || !SCHEDULE_KEY_PATTERN.test(scheduleKey)) return null;
    return Object.keys(more).length === 0 ? { jobId, scheduleKey } : null;
  } catch {
    return null;
  }
}
