import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { DependencyError } from '../../functions/protocol/errors';
import { type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { attributesOf, evaluateCondition, placeholderProblems } from '../../sim/fakes/dynamo-expressions';
import { occurrence, TABLE, throttled } from './fixtures';

const { SUCCEEDED, FAILED } = OccurrenceStatus;
const FROM = '2026-11-29T06:00:00Z';
const TO = '2026-11-30T06:00:00Z';

const ddbMock = mockClient(DynamoDBDocumentClient);
let reader: DynamoOccurrenceReader;

beforeEach(() => {
  ddbMock.reset();
  reader = new DynamoOccurrenceReader(DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })), TABLE);
});

const queryInput = (n = 0): QueryCommandInput => {
  const calls = ddbMock.commandCalls(QueryCommand);
  expect(calls.length).toBeGreaterThan(n);
  return calls[n]!.args[0].input;
};

const at = (jobId: string, scheduledTime: string, status: Occurrence['status'] = SUCCEEDED) =>
  occurrence({ jobId, scheduledTime, status });

/** What DynamoDB would answer: the key condition selects, then the filter drops (one page, sorted by the index sort key). */
function fakeDynamo(table: Occurrence[]) {
  ddbMock.on(QueryCommand).callsFake((input: QueryCommandInput) => {
    const selected = table
      .filter((row) => evaluateCondition(input.KeyConditionExpression!, input, row))
      .filter((row) => input.FilterExpression === undefined || evaluateCondition(input.FilterExpression, input, row))
      .sort((a, b) => a.scheduledTime.localeCompare(b.scheduledTime));
    return { Items: selected };
  });
}

describe('DynamoOccurrenceReader.listByStatus', () => {
  it('queries the byStatus index with the status and the time bounds', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [] });
    await reader.listByStatus(SUCCEEDED, FROM, TO);
    const input = queryInput();
    expect(input).toMatchObject({ TableName: TABLE, IndexName: 'byStatus' });
    expect(input.ExpressionAttributeValues).toMatchObject({
      ':status': SUCCEEDED,
      ':from': FROM,
      ':last': '2026-11-30T05:59:59Z',
    });
    expect(attributesOf(input.KeyConditionExpression!, input)).toContain('status');
    expect(attributesOf(input.KeyConditionExpression!, input)).toContain('scheduledTime');
    expect(placeholderProblems([input.KeyConditionExpression, input.FilterExpression], input)).toEqual([]);
  });

  it('returns the rows with that status and from <= scheduledTime < to: `from` included, `to` excluded', async () => {
    fakeDynamo([
      at('a', '2026-11-29T05:59:59Z'),
      at('b', FROM),
      at('c', '2026-11-29T18:00:00Z'),
      at('d', '2026-11-29T18:00:00Z', FAILED),
      at('e', '2026-11-30T05:59:59Z'),
      at('f', TO),
      at('g', '2026-11-30T06:00:01Z'),
    ]);
    const rows = await reader.listByStatus(SUCCEEDED, FROM, TO);
    expect(rows.map((r) => r.jobId)).toEqual(['b', 'c', 'e']);
  });

  // DynamoDB rejects a Query whose FilterExpression names a key attribute of the table or index queried
  // ("Filter Expression can only contain non-primary key attributes"); scheduledTime is the sort key of byStatus.
  it('sends a query DynamoDB accepts: the filter does not name the index key attributes', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [] });
    await reader.listByStatus(SUCCEEDED, FROM, TO);
    const input = queryInput();
    const filtered = input.FilterExpression === undefined ? [] : attributesOf(input.FilterExpression, input);
    expect(filtered.filter((a) => a === 'status' || a === 'scheduledTime')).toEqual([]);
  });

  it('follows LastEvaluatedKey across pages and returns every page in order', async () => {
    const page1 = [at('a', '2026-11-29T07:00:00Z'), at('b', '2026-11-29T08:00:00Z')];
    const page2 = [at('c', '2026-11-29T09:00:00Z')];
    const lastKey = { status: SUCCEEDED, scheduledTime: '2026-11-29T08:00:00Z', jobId: 'b' };
    ddbMock.on(QueryCommand).resolvesOnce({ Items: page1, LastEvaluatedKey: lastKey }).resolvesOnce({ Items: page2 });
    const rows = await reader.listByStatus(SUCCEEDED, FROM, TO);
    expect(rows).toEqual([...page1, ...page2]);
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, 2);
    expect(queryInput(0).ExclusiveStartKey).toBeUndefined();
    expect(queryInput(1).ExclusiveStartKey).toEqual(lastKey);
    // The second page is the same query, continued.
    expect({ ...queryInput(1), ExclusiveStartKey: undefined }).toEqual(queryInput(0));
  });

  it('keeps paging through an empty page that still has a LastEvaluatedKey (all items filtered out)', async () => {
    ddbMock
      .on(QueryCommand)
      .resolvesOnce({ Items: [], LastEvaluatedKey: { k: 1 } })
      .resolvesOnce({ Items: [at('z', '2026-11-29T10:00:00Z')] });
    const rows = await reader.listByStatus(SUCCEEDED, FROM, TO);
    expect(rows.map((r) => r.jobId)).toEqual(['z']);
  });

  it('passes the abort signal to each query', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [] });
    const controller = new AbortController();
    await reader.listByStatus(SUCCEEDED, FROM, TO, controller.signal);
    expect((ddbMock.call(0).args as unknown[])[1]).toEqual({ abortSignal: controller.signal });
  });

  it('sends no query once the signal is aborted', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [] });
    await expect(reader.listByStatus(SUCCEEDED, FROM, TO, AbortSignal.abort())).rejects.toThrow();
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, 0);
  });

  it('throws a DependencyError when a query fails', async () => {
    ddbMock.on(QueryCommand).rejects(throttled());
    const error = await reader.listByStatus(SUCCEEDED, FROM, TO).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'transient', operation: 'list occurrences' });
  });

  it('throws a DependencyError when a later page fails, instead of returning a partial list', async () => {
    ddbMock
      .on(QueryCommand)
      .resolvesOnce({ Items: [at('a', '2026-11-29T07:00:00Z')], LastEvaluatedKey: { k: 1 } })
      .rejectsOnce(throttled());
    await expect(reader.listByStatus(SUCCEEDED, FROM, TO)).rejects.toBeInstanceOf(DependencyError);
  });
});
