import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoJobStateStore } from '../../functions/aws/job-state-store';
import { DependencyError } from '../../functions/protocol/errors';
import type { JobState } from '../../functions/protocol/job-state';
import { applyUpdate, evaluateCondition, placeholderProblems } from '../../sim/fakes/dynamo-expressions';
import { conditionFailed, TABLE, throttled, validationError } from './fixtures';

const ddbMock = mockClient(DynamoDBDocumentClient);
let store: DynamoJobStateStore;
const JOB = 'daily-report';
const KEY = { jobId: JOB, scheduledTime: '#job' };
const ROW: JobState = { ...KEY, scheduledTime: '#job', version: 3, slotTime: '2026-11-30T06:00:00Z' };

beforeEach(() => {
  ddbMock.reset();
  store = new DynamoJobStateStore(DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })), TABLE);
});

const updateInput = (): UpdateCommandInput => ddbMock.commandCalls(UpdateCommand)[0]!.args[0].input;

/** The update applied to `row` by the expression evaluator the simulation uses, if its condition holds. */
function applied(input: UpdateCommandInput, row: JobState | undefined) {
  if (!evaluateCondition(input.ConditionExpression ?? '', input, row)) return 'refused';
  return applyUpdate(input.UpdateExpression ?? '', input, row ?? { ...KEY });
}

describe('Class: DynamoJobStateStore', () => {
  describe('Method: read', () => {
    it('reads the job-state row consistently, by the job id and the "#job" sort key', async () => {
      ddbMock.on(GetCommand).resolves({ Item: ROW });
      expect(await store.read(JOB)).toEqual(ROW);
      expect(ddbMock.commandCalls(GetCommand)[0]!.args[0].input).toEqual({
        TableName: TABLE,
        Key: KEY,
        ConsistentRead: true,
      });
    });

    it('classifies a throttled read as transient', async () => {
      ddbMock.on(GetCommand).rejects(throttled());
      const error = await store.read(JOB).catch((e) => e);
      expect(error).toBeInstanceOf(DependencyError);
      expect(error.kind).toBe('transient');
    });
  });

  describe('Method: write', () => {
    const change = { set: { pausedAt: '2026-11-30T07:00:00Z', pausedBy: 'alice' }, remove: ['resumedAt' as const] };

    it('sets, removes and increments version on condition that the version is still the one read', async () => {
      ddbMock.on(UpdateCommand).resolves({ Attributes: { ...ROW, version: 4 } });
      const result = await store.write(JOB, 3, change);
      expect(result).toEqual({ written: true, state: { ...ROW, version: 4 } });
      const input = updateInput();
      expect(placeholderProblems([input.UpdateExpression, input.ConditionExpression], input)).toEqual([]);
      expect(input).toMatchObject({
        Key: KEY,
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      expect(applied(input, { ...ROW, resumedAt: 'x' } as JobState)).toEqual({
        ...ROW,
        version: 4,
        pausedAt: '2026-11-30T07:00:00Z',
        pausedBy: 'alice',
      });
      expect(applied(input, { ...ROW, version: 5 })).toBe('refused');
    });

    it('creates the row only if it does not exist when no version was read', async () => {
      ddbMock.on(UpdateCommand).resolves({ Attributes: { ...KEY, version: 1 } });
      await store.write(JOB, undefined, change);
      const input = updateInput();
      expect(applied(input, undefined)).toMatchObject({ version: 1, pausedBy: 'alice' });
      expect(applied(input, ROW)).toBe('refused');
    });

    it('returns the row that refused the write, so the caller decides again without a read', async () => {
      ddbMock.on(UpdateCommand).rejects(conditionFailed({ ...ROW, version: 7 } as never));
      expect(await store.write(JOB, 3, change)).toEqual({ written: false, current: { ...ROW, version: 7 } });
    });

    it('classifies a refused request other than the condition as fatal', async () => {
      ddbMock.on(UpdateCommand).rejects(validationError());
      const error = await store.write(JOB, 3, change).catch((e) => e);
      expect(error).toBeInstanceOf(DependencyError);
      expect(error.kind).toBe('fatal');
    });
  });
});
