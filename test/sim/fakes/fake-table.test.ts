/**
 * FakeAws's added tables (sim/fakes/fake-table.ts): any key schema, sparse global secondary indexes, conditional
 * puts and deletes, and paged queries by key prefix, as the schedule registry's store uses them.
 */

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeAws } from '../../../sim/fakes/fake-aws';

const TABLE = 'registry';
let aws: FakeAws;
const doc = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: 'eu-central-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }),
);

beforeEach(() => {
  aws = new FakeAws(() => 0);
  aws.addTable(TABLE, {
    partitionKey: 'jobId',
    sortKey: 'scheduleKey',
    indexes: [
      { name: 'bySyncDue', partitionKey: 'syncShard', sortKey: 'syncDueAt' },
      { name: 'byAuditBucket', partitionKey: 'auditBucket', sortKey: 'scheduleName' },
    ],
  });
});
afterEach(() => aws.restore());

const put = (item: Record<string, unknown>, condition?: Partial<ConstructorParameters<typeof PutCommand>[0]>) =>
  doc.send(new PutCommand({ TableName: TABLE, Item: item, ...condition }));

describe('an added table', () => {
  it('keeps rows by its own key, apart from the occurrence table, and refuses a failed condition without writing', async () => {
    await put({ jobId: 'report', scheduleKey: 'c1', version: 1 });
    const second = await put(
      { jobId: 'report', scheduleKey: 'c1', version: 9 },
      { ConditionExpression: 'attribute_not_exists(#k)', ExpressionAttributeNames: { '#k': 'jobId' } },
    ).catch((e: Error) => e.name);
    expect(second).toBe('ConditionalCheckFailedException');
    const got = await doc.send(new GetCommand({ TableName: TABLE, Key: { jobId: 'report', scheduleKey: 'c1' } }));
    expect(got.Item).toEqual({ jobId: 'report', scheduleKey: 'c1', version: 1 });
    expect(aws.table.size).toBe(0);
  });

  it('updates and deletes under a condition', async () => {
    await put({ jobId: 'report', scheduleKey: 'c1', version: 1 });
    const update = {
      TableName: TABLE,
      Key: { jobId: 'report', scheduleKey: 'c1' },
      UpdateExpression: 'SET #v = #v + :one',
      ConditionExpression: '#v = :expected',
      ExpressionAttributeNames: { '#v': 'version' },
      ExpressionAttributeValues: { ':one': 1, ':expected': 1 },
    };
    await doc.send(new UpdateCommand(update));
    expect(await doc.send(new UpdateCommand(update)).catch((e: Error) => e.name)).toBe(
      'ConditionalCheckFailedException',
    );
    const remove = (version: number) =>
      doc.send(
        new DeleteCommand({
          TableName: TABLE,
          Key: { jobId: 'report', scheduleKey: 'c1' },
          ConditionExpression: '#v = :v',
          ExpressionAttributeNames: { '#v': 'version' },
          ExpressionAttributeValues: { ':v': version },
        }),
      );
    expect(await remove(1).catch((e: Error) => e.name)).toBe('ConditionalCheckFailedException');
    await remove(2);
    expect(aws.tables.get(TABLE)?.rows.size).toBe(0);
  });

  it('a sparse index holds only the rows with both its keys, in its sort-key order, and refuses a consistent read', async () => {
    await put({ jobId: 'report', scheduleKey: 'c1', syncShard: '3', syncDueAt: '2026-12-01T00:02:00Z' });
    await put({ jobId: 'report', scheduleKey: 'c2', syncShard: '3', syncDueAt: '2026-12-01T00:01:00Z' });
    await put({ jobId: 'report', scheduleKey: 'c3' });
    const query = {
      TableName: TABLE,
      IndexName: 'bySyncDue',
      KeyConditionExpression: '#s = :s AND #d <= :now',
      ExpressionAttributeNames: { '#s': 'syncShard', '#d': 'syncDueAt' },
      ExpressionAttributeValues: { ':s': '3', ':now': '2026-12-01T00:05:00Z' },
    };
    const due = await doc.send(new QueryCommand(query));
    expect(due.Items?.map((i) => i.scheduleKey)).toEqual(['c2', 'c1']);
    const consistent = await doc.send(new QueryCommand({ ...query, ConsistentRead: true })).catch((e: Error) => e.name);
    expect(consistent).toBe('ValidationException');
  });

  it('pages a query by key prefix: Limit items per page, resumed from LastEvaluatedKey', async () => {
    for (const key of ['a1', 'b1', 'b2', 'b3', 'c1']) await put({ jobId: 'report', scheduleKey: key });
    const keys: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: '#j = :j AND begins_with(#k, :p)',
          ExpressionAttributeNames: { '#j': 'jobId', '#k': 'scheduleKey' },
          ExpressionAttributeValues: { ':j': 'report', ':p': 'b' },
          Limit: 2,
          ExclusiveStartKey: start,
        }),
      );
      keys.push(...(page.Items ?? []).map((i) => String(i.scheduleKey)));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    expect(keys).toEqual(['b1', 'b2', 'b3']);
  });
});
