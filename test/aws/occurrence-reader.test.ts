import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandInput,
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoOccurrenceReader, OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { DependencyError } from '../../functions/protocol/errors';
import { type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { STATUS_INDEX_SHARDS, statusShardOf, statusShardsOf } from '../../functions/protocol/table-schema';
import { attributesOf, evaluateCondition, placeholderProblems } from '../../sim/fakes/dynamo-expressions';
import { indexed, occurrence, TABLE, throttled } from './fixtures';

const { SUCCEEDED, FAILED, RUNNING, PENDING } = OccurrenceStatus;
const FROM = '2026-11-29T06:00:00Z';
const TO = '2026-11-30T06:00:00Z';

const ddbMock = mockClient(DynamoDBDocumentClient);
const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
let reader: DynamoOccurrenceReader;

beforeEach(() => {
  ddbMock.reset();
  reader = new DynamoOccurrenceReader(documents, TABLE);
});

const queryInputs = (): QueryCommandInput[] => ddbMock.commandCalls(QueryCommand).map((c) => c.args[0].input);

const at = (jobId: string, scheduledTime: string, status: Occurrence['status'] = SUCCEEDED) =>
  indexed(occurrence({ jobId, scheduledTime, status, leaseExpiresAt: '2026-11-30T07:00:00.000Z' }));

/**
 * What DynamoDB would answer: the key condition selects on the index entries (or the table's rows), sorted by the
 * sort key, newest first when asked, `Limit` items at most; BatchGetItem answers the full rows.
 */
function fakeDynamo(table: Occurrence[]) {
  ddbMock.on(QueryCommand).callsFake((input: QueryCommandInput) => {
    const selected = table
      .filter((row) => evaluateCondition(input.KeyConditionExpression!, input, row))
      .filter((row) => input.FilterExpression === undefined || evaluateCondition(input.FilterExpression, input, row))
      .sort((a, b) => a.scheduledTime.localeCompare(b.scheduledTime) * (input.ScanIndexForward === false ? -1 : 1))
      .slice(0, input.Limit);
    // The index projects no lease expiry.
    return { Items: selected.map(({ leaseExpiresAt: _, ...entry }) => entry) };
  });
  ddbMock.on(BatchGetCommand).callsFake((input: BatchGetCommandInput) => {
    const keys = input.RequestItems![TABLE]!.Keys!;
    const rows = table.filter((r) => keys.some((k) => k.jobId === r.jobId && k.scheduledTime === r.scheduledTime));
    return { Responses: { [TABLE]: rows } };
  });
}

describe('DynamoOccurrenceReader.listIndexed', () => {
  it('queries every shard of the status on the sharded index, with the time bounds', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [] });
    await reader.listIndexed(SUCCEEDED, FROM, TO);
    const inputs = queryInputs();
    expect(inputs).toHaveLength(STATUS_INDEX_SHARDS);
    expect(inputs.map((i) => i.ExpressionAttributeValues?.[':shard']).sort()).toEqual(statusShardsOf(SUCCEEDED).sort());
    for (const input of inputs) {
      expect(input).toMatchObject({ TableName: TABLE, IndexName: 'byStatusShard' });
      expect(input.ExpressionAttributeValues).toMatchObject({ ':from': FROM, ':last': '2026-11-30T05:59:59Z' });
      expect(attributesOf(input.KeyConditionExpression!, input)).toEqual(['statusShard', 'scheduledTime']);
      expect(placeholderProblems([input.KeyConditionExpression, input.FilterExpression], input)).toEqual([]);
    }
  });

  it('returns the entries with that status and from <= scheduledTime < to, merged across shards, oldest first', async () => {
    fakeDynamo([
      at('a', '2026-11-29T05:59:59Z'),
      at('e', '2026-11-30T05:59:59Z'),
      at('c', '2026-11-29T18:00:00Z'),
      at('b', FROM),
      at('c2', '2026-11-29T18:00:00Z'),
      at('d', '2026-11-29T18:00:00Z', FAILED),
      at('f', TO),
      at('g', '2026-11-30T06:00:01Z'),
    ]);
    const entries = await reader.listIndexed(SUCCEEDED, FROM, TO);
    expect(entries.map((r) => r.jobId)).toEqual(['b', 'c', 'c2', 'e']);
    expect(ddbMock).toHaveReceivedCommandTimes(BatchGetCommand, 0);
  });

  it('follows LastEvaluatedKey within a shard', async () => {
    const shard = statusShardOf({ jobId: 'a', scheduledTime: '2026-11-29T07:00:00Z' }, SUCCEEDED);
    const lastKey = { statusShard: shard, scheduledTime: '2026-11-29T07:00:00Z', jobId: 'a' };
    ddbMock.on(QueryCommand).callsFake((input: QueryCommandInput) => {
      if (input.ExpressionAttributeValues?.[':shard'] !== shard) return { Items: [] };
      if (input.ExclusiveStartKey === undefined)
        return { Items: [at('a', '2026-11-29T07:00:00Z')], LastEvaluatedKey: lastKey };
      return { Items: [at('b', '2026-11-29T08:00:00Z')] };
    });
    const entries = await reader.listIndexed(SUCCEEDED, FROM, TO);
    expect(entries.map((e) => e.jobId)).toEqual(['a', 'b']);
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, STATUS_INDEX_SHARDS + 1);
  });

  it('sends no query once the signal is aborted, and none for an empty range', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [] });
    await expect(reader.listIndexed(SUCCEEDED, FROM, TO, AbortSignal.abort())).rejects.toThrow();
    expect(await reader.listIndexed(SUCCEEDED, TO, TO)).toEqual([]);
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, 0);
  });

  it('throws a DependencyError when a shard query fails, instead of returning a partial list', async () => {
    ddbMock
      .on(QueryCommand)
      .resolves({ Items: [] })
      .on(QueryCommand, { ExpressionAttributeValues: { ':shard': 'OPEN#7' } })
      .rejects(throttled());
    const error = await reader.listIndexed(SUCCEEDED, FROM, TO).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'transient', operation: 'list occurrences' });
  });
});

describe('DynamoOccurrenceReader: the open shards', () => {
  it('lists an open status from the OPEN shards, keeping that status with a FilterExpression', async () => {
    fakeDynamo([
      at('a', '2026-11-29T07:00:00Z', RUNNING),
      at('b', '2026-11-29T08:00:00Z', SUCCEEDED),
      at('c', '2026-11-29T09:00:00Z', PENDING),
      at('d', '2026-11-29T10:00:00Z', FAILED),
    ]);
    const entries = await reader.listIndexed(RUNNING, FROM, TO);
    expect(entries.map((e) => [e.jobId, e.status])).toEqual([['a', RUNNING]]);
    const inputs = queryInputs();
    expect(inputs.map((i) => i.ExpressionAttributeValues?.[':shard']).sort()).toEqual(
      Array.from({ length: STATUS_INDEX_SHARDS }, (_, k) => `OPEN#${k}`).sort(),
    );
    for (const input of inputs) {
      expect(attributesOf(input.FilterExpression!, input)).toEqual(['status']);
      expect(placeholderProblems([input.KeyConditionExpression, input.FilterExpression], input)).toEqual([]);
    }
  });

  it('lists a finished status from its own shards, with no filter', async () => {
    fakeDynamo([at('d', '2026-11-29T10:00:00Z', FAILED), at('a', '2026-11-29T07:00:00Z', RUNNING)]);
    expect((await reader.listIndexed(FAILED, FROM, TO)).map((e) => e.jobId)).toEqual(['d']);
    for (const input of queryInputs()) {
      expect(input.ExpressionAttributeValues?.[':shard']).toMatch(/^FAILED#/);
      expect(input.FilterExpression).toBeUndefined();
    }
  });

  it("gives one shard's entries a Query page at a time, at most 100 per page, asking for the next only when wanted", async () => {
    const shard = 'OPEN#5';
    const first = Array.from({ length: 100 }, (_, i) => at(`job-${i}`, '2026-11-29T07:00:00Z', RUNNING));
    ddbMock.on(QueryCommand).callsFake((input: QueryCommandInput) =>
      input.ExclusiveStartKey === undefined
        ? {
            Items: first,
            LastEvaluatedKey: { statusShard: shard, jobId: 'job-99', scheduledTime: first[0]!.scheduledTime },
          }
        : { Items: [at('z', '2026-11-29T08:00:00Z', SUCCEEDED)] },
    );
    const pages = reader.shardPages(shard, FROM, TO)[Symbol.asyncIterator]();
    expect((await pages.next()).value).toHaveLength(100);
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, 1);
    expect((await pages.next()).value?.map((e: { jobId: string }) => e.jobId)).toEqual(['z']);
    expect((await pages.next()).done).toBe(true);
    for (const input of queryInputs()) {
      expect(input).toMatchObject({ IndexName: 'byStatusShard', Limit: 100 });
      expect(input.ExpressionAttributeValues).toMatchObject({
        ':shard': shard,
        ':from': FROM,
        ':last': '2026-11-30T05:59:59Z',
      });
      expect(input.FilterExpression).toBeUndefined();
    }
  });

  it('lists several statuses newest first with one Query per shard they are under: OPEN (filtered) and FAILED', async () => {
    fakeDynamo([
      at('a', '2026-11-29T07:00:00Z', RUNNING),
      at('b', '2026-11-29T08:00:00Z', SUCCEEDED),
      at('c', '2026-11-29T09:00:00Z', PENDING),
      at('d', '2026-11-29T10:00:00Z', FAILED),
    ]);
    const operator = new OperatorOccurrenceReader(documents, TABLE);
    const rows = await operator.listStatusNewestFirst([RUNNING, PENDING, FAILED], { from: FROM, to: TO, limit: 10 });
    expect(rows.map((r) => r.jobId)).toEqual(['d', 'c', 'a']);
    const inputs = queryInputs();
    expect(inputs).toHaveLength(2 * STATUS_INDEX_SHARDS);
    expect(inputs.filter((i) => String(i.ExpressionAttributeValues?.[':shard']).startsWith('OPEN#'))).toHaveLength(
      STATUS_INDEX_SHARDS,
    );
    for (const input of inputs)
      expect(input.FilterExpression === undefined).toBe(
        String(input.ExpressionAttributeValues?.[':shard']).startsWith('FAILED#'),
      );
  });
});

describe('DynamoOccurrenceReader.readRows and listByStatus', () => {
  it('reads the full rows of the entries, 100 keys per BatchGetItem, in the order of the keys', async () => {
    const rows = Array.from({ length: 150 }, (_, i) => at(`job-${String(i).padStart(3, '0')}`, '2026-11-29T07:00:00Z'));
    fakeDynamo(rows);
    const full = await reader.listByStatus(SUCCEEDED, FROM, TO);
    expect(full.map((r) => r.jobId)).toEqual(rows.map((r) => r.jobId));
    expect(full[0]).toHaveProperty('leaseExpiresAt');
    expect(
      ddbMock.commandCalls(BatchGetCommand).map((c) => c.args[0].input.RequestItems![TABLE]!.Keys!.length),
    ).toEqual([100, 50]);
  });

  it('asks again for the keys DynamoDB left unprocessed', async () => {
    const row = at('a', '2026-11-29T07:00:00Z');
    ddbMock
      .on(BatchGetCommand)
      .resolvesOnce({
        Responses: { [TABLE]: [] },
        UnprocessedKeys: { [TABLE]: { Keys: [{ jobId: 'a', scheduledTime: row.scheduledTime }] } },
      })
      .resolvesOnce({ Responses: { [TABLE]: [row] } });
    expect(await reader.readRows([row])).toEqual([row]);
    expect(ddbMock).toHaveReceivedCommandTimes(BatchGetCommand, 2);
  });

  it('gives up as transient when DynamoDB leaves keys unprocessed round after round', async () => {
    const row = at('a', '2026-11-29T07:00:00Z');
    const unprocessed = {
      Responses: { [TABLE]: [] },
      UnprocessedKeys: { [TABLE]: { Keys: [{ jobId: 'a', scheduledTime: row.scheduledTime }] } },
    };
    ddbMock.on(BatchGetCommand).resolves(unprocessed);
    vi.useFakeTimers();
    try {
      const failed = reader.readRows([row]).catch((e: unknown) => e);
      await vi.runAllTimersAsync();
      const error = await failed;
      expect(error).toBeInstanceOf(DependencyError);
      expect(error).toMatchObject({ kind: 'transient', operation: 'read occurrences' });
      expect(String((error as Error).message)).toContain('1 key(s) still unprocessed after 5 rounds');
    } finally {
      vi.useRealTimers();
    }
  });

  it('throws a classified DependencyError when a BatchGetItem fails', async () => {
    ddbMock.on(BatchGetCommand).rejects(throttled());
    const error = await reader.readRows([at('a', FROM)]).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'transient', operation: 'read occurrences' });
  });
});

describe('OperatorOccurrenceReader.listStatusNewestFirst', () => {
  it('merges the shards newest first, honours the limit, and reads only the page in full', async () => {
    const rows = ['01', '02', '03', '04', '05', '06'].map((h, i) => at(`job-${i}`, `2026-11-29T${h}:00:00Z`));
    fakeDynamo(rows);
    const operator = new OperatorOccurrenceReader(documents, TABLE);
    const page = await operator.listStatusNewestFirst(SUCCEEDED, { from: '2026-11-29T00:00:00Z', to: TO, limit: 3 });
    expect(page.map((r) => r.scheduledTime)).toEqual([
      '2026-11-29T06:00:00Z',
      '2026-11-29T05:00:00Z',
      '2026-11-29T04:00:00Z',
    ]);
    expect(page[0]).toHaveProperty('leaseExpiresAt');
    for (const input of queryInputs()) expect(input).toMatchObject({ ScanIndexForward: false, Limit: 3 });
    expect(
      ddbMock.commandCalls(BatchGetCommand).map((c) => c.args[0].input.RequestItems![TABLE]!.Keys!.length),
    ).toEqual([3]);
  });
});

describe('OperatorOccurrenceReader.listSeriesNewestFirst', () => {
  it("queries one series' key range newest first, projected to the attributes asked for, and splits the series", async () => {
    const operator = new OperatorOccurrenceReader(documents, TABLE);
    ddbMock
      .on(QueryCommand)
      .resolves({ Items: [{ jobId: 'weekly-report#customer-42', scheduledTime: FROM, status: SUCCEEDED }] });

    const rows = await operator.listSeriesNewestFirst('weekly-report#customer-42', { from: FROM, to: TO, limit: 10 }, [
      'jobId',
      'scheduledTime',
      'status',
    ]);

    expect(rows).toEqual([
      { jobId: 'weekly-report', scheduleKey: 'customer-42', scheduledTime: FROM, status: SUCCEEDED },
    ]);
    const [input] = queryInputs();
    expect(input).toMatchObject({
      ScanIndexForward: false,
      ProjectionExpression: '#a0, #a1, #a2',
      ExpressionAttributeNames: { '#a0': 'jobId', '#a1': 'scheduledTime', '#a2': 'status' },
      ExpressionAttributeValues: {
        ':job': 'weekly-report#customer-42',
        ':from': FROM,
        ':last': '2026-11-30T05:59:59Z',
      },
    });
    expect(input.IndexName).toBeUndefined();
  });
});
