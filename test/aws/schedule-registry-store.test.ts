import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoScheduleRegistry, itemOf } from '../../functions/aws/schedule-registry-store';
import { DependencyError } from '../../functions/protocol/errors';
import {
  InvalidScheduleError,
  newRow,
  SYNC_INDEX_SHARDS,
  validateScheduleSpec,
} from '../../functions/protocol/schedule-registry';
import type { RegisteredSchedule } from '../../functions/protocol/schedule-registry-ports';
import { JOB, NOW } from '../protocol/schedule-registry-fakes';
import { conditionFailed, throttled, validationError } from './fixtures';

const TABLE = 'registry';
const ddbMock = mockClient(DynamoDBDocumentClient);
let store: DynamoScheduleRegistry;

const ROW: RegisteredSchedule = newRow(
  JOB,
  'customer-42',
  validateScheduleSpec(JOB, 'customer-42', { expression: 'rate(1 day)', input: { b: 1, a: [true, null] } }, NOW),
  NOW,
);

/** The refusal DynamoDB returns with ALL_OLD, carrying `row` as the stored item. */
function refusedWith(row: RegisteredSchedule) {
  const error = conditionFailed();
  return Object.assign(error, { Item: marshall(itemOf(row), { removeUndefinedValues: true }) });
}

beforeEach(() => {
  ddbMock.reset();
  store = new DynamoScheduleRegistry(DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })), TABLE);
});

describe('DynamoScheduleRegistry', () => {
  it('stores the input as its JSON text and reads it back as JSON', async () => {
    ddbMock.on(PutCommand).resolves({});
    await store.put(ROW, undefined);
    const item = ddbMock.commandCalls(PutCommand)[0].args[0].input.Item as Record<string, unknown>;
    expect(item.inputJson).toBe('{"b":1,"a":[true,null]}');
    expect(item.input).toBeUndefined();

    ddbMock.on(GetCommand).resolves({ Item: item });
    expect(await store.get(JOB, 'customer-42', true)).toEqual(ROW);
    expect(ddbMock.commandCalls(GetCommand)[0].args[0].input).toEqual({
      TableName: TABLE,
      Key: { jobId: JOB, scheduleKey: 'customer-42' },
      ConsistentRead: true,
    });
  });

  it('puts a new row only where none is, a changed one only on the version and the life (createdAt) read', async () => {
    ddbMock.on(PutCommand).resolves({});
    await store.put(ROW, undefined);
    await store.put({ ...ROW, version: 2 }, ROW);
    const [first, second] = ddbMock.commandCalls(PutCommand).map((c) => c.args[0].input);
    expect(first.ConditionExpression).toBe('attribute_not_exists(jobId)');
    expect(second).toMatchObject({
      ConditionExpression: '#version = :expected AND #createdAt = :createdAt',
      ExpressionAttributeValues: { ':expected': 1, ':createdAt': ROW.createdAt },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('returns a refused put as a result carrying the stored row, and classifies every other failure', async () => {
    const stored = { ...ROW, version: 4 };
    ddbMock.on(PutCommand).rejectsOnce(refusedWith(stored));
    expect(await store.put({ ...ROW, version: 3 }, { ...ROW, version: 2 })).toEqual({
      written: false,
      current: stored,
    });

    ddbMock.reset();
    ddbMock.on(PutCommand).rejects(throttled());
    const transient = await store.put(ROW, undefined).catch((e) => e);
    expect(transient).toBeInstanceOf(DependencyError);
    expect(transient.kind).toBe('transient');

    ddbMock.reset();
    ddbMock.on(PutCommand).rejects(validationError());
    expect(await store.put(ROW, undefined).catch((e) => e.kind)).toBe('fatal');
  });

  it('marks a version synced: removes the sparse index keys, only while the row is at that version', async () => {
    const synced = { ...ROW, syncedVersion: 1, syncedAt: '2026-12-01T09:00:10.000Z', syncedTemplateHash: 'h1' };
    ddbMock.on(UpdateCommand).resolves({ Attributes: itemOf(synced) });
    expect(await store.markSynced(JOB, 'customer-42', ROW, NOW + 10_000, 'h1')).toEqual({
      written: true,
      current: synced,
    });
    expect(ddbMock.commandCalls(UpdateCommand)[0].args[0].input).toMatchObject({
      UpdateExpression:
        'SET syncedVersion = :expected, syncedAt = :now, syncedTemplateHash = :template REMOVE syncDueAt, syncShard',
      ConditionExpression: '#version = :expected AND #createdAt = :createdAt',
      ExpressionAttributeValues: {
        ':expected': 1,
        ':createdAt': ROW.createdAt,
        ':now': '2026-12-01T09:00:10.000Z',
        ':template': 'h1',
      },
    });

    ddbMock.reset();
    ddbMock.on(UpdateCommand).rejects(conditionFailed());
    expect(await store.markSynced(JOB, 'gone', ROW, NOW, 'h1')).toEqual({ written: false, current: undefined });
  });

  it('removes a tombstone only at its version, and says when it did not', async () => {
    ddbMock.on(DeleteCommand).resolvesOnce({}).rejectsOnce(conditionFailed());
    const tombstone = { ...ROW, version: 2 };
    expect(await store.remove(JOB, 'customer-42', tombstone)).toEqual({ removed: true });
    expect(await store.remove(JOB, 'customer-42', tombstone)).toEqual({ removed: false });
    expect(ddbMock.commandCalls(DeleteCommand)[0].args[0].input.ConditionExpression).toBe(
      '#version = :expected AND #createdAt = :createdAt AND attribute_exists(deletedAt)',
    );
  });

  it('lists by key prefix with a cursor that it takes back, and refuses a cursor it did not give', async () => {
    const last = { jobId: JOB, scheduleKey: 'customer-42' };
    ddbMock.on(QueryCommand).resolves({ Items: [itemOf(ROW)], LastEvaluatedKey: last });
    const page = await store.list(JOB, { prefix: 'customer-', limit: 1 });
    expect(page.items).toEqual([ROW]);
    expect(ddbMock.commandCalls(QueryCommand)[0].args[0].input).toMatchObject({
      KeyConditionExpression: 'jobId = :jobId AND begins_with(scheduleKey, :prefix)',
      ExpressionAttributeValues: { ':jobId': JOB, ':prefix': 'customer-' },
      Limit: 1,
    });

    await store.list(JOB, { cursor: page.cursor });
    expect(ddbMock.commandCalls(QueryCommand)[1].args[0].input.ExclusiveStartKey).toEqual(last);

    const otherJob = Buffer.from(JSON.stringify({ jobId: 'other', scheduleKey: 'k' })).toString('base64url');
    for (const cursor of ['not base64 json', otherJob]) {
      await expect(store.list(JOB, { cursor })).rejects.toBeInstanceOf(InvalidScheduleError);
    }
    await expect(store.list(JOB, { limit: 0 })).rejects.toThrow(/limit must be a whole number from 1 to 1000/);
    expect(ddbMock.commandCalls(QueryCommand)).toHaveLength(2);
  });

  it('reads the rows due from every shard of the sparse index, oldest first, at most the limit', async () => {
    ddbMock.on(QueryCommand).callsFake((input) => {
      const shard = Number(input.ExpressionAttributeValues[':shard']);
      const due = `2026-12-01T08:${String(59 - shard).padStart(2, '0')}:00.000Z`;
      return { Items: [itemOf({ ...ROW, scheduleKey: `k${shard}`, syncDueAt: due })] };
    });
    const due = await store.dueForSync(NOW, 3);
    expect(ddbMock.commandCalls(QueryCommand)).toHaveLength(SYNC_INDEX_SHARDS);
    expect(ddbMock.commandCalls(QueryCommand)[0].args[0].input).toMatchObject({
      IndexName: 'bySyncDue',
      KeyConditionExpression: '#shard = :shard AND #due <= :now',
      ExpressionAttributeValues: { ':now': '2026-12-01T09:00:00.000Z' },
    });
    expect(due.map((r) => r.scheduleKey)).toEqual(['k15', 'k14', 'k13']);
  });

  it('reads every page of an audit bucket', async () => {
    ddbMock
      .on(QueryCommand)
      .resolvesOnce({ Items: [itemOf(ROW)], LastEvaluatedKey: { x: 1 } })
      .resolvesOnce({ Items: [itemOf({ ...ROW, scheduleKey: 'b' })] });
    const rows = await store.auditBucket(JOB, 10);
    expect(rows).toHaveLength(2);
    expect(ddbMock.commandCalls(QueryCommand)[0].args[0].input).toMatchObject({
      IndexName: 'byAuditBucket',
      ExpressionAttributeValues: { ':bucket': `${JOB}#0a` },
    });
    expect(ddbMock.commandCalls(QueryCommand)[1].args[0].input.ExclusiveStartKey).toEqual({ x: 1 });
  });
});
