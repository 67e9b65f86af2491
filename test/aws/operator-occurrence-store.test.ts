import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { DependencyError } from '../../functions/protocol/errors';
import { iso, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { evaluateCondition, placeholderProblems } from '../../sim/fakes/dynamo-expressions';
import { conditionFailed, KEY, NOW, occurrence, TABLE, throttled } from './fixtures';

const { PENDING, RUNNING, SUCCEEDED, FAILED } = OccurrenceStatus;
const ddbMock = mockClient(DynamoDBDocumentClient);
let store: OperatorOccurrenceStore;
const request = { now: NOW, deadlineAt: NOW + 3600_000, ttl: 2_000_000_000, worker: 'reports' };

beforeEach(() => {
  ddbMock.reset();
  store = new OperatorOccurrenceStore(DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })), TABLE);
});

describe('OperatorOccurrenceStore.reopenFailed', () => {
  it('is one update conditioned on the row being FAILED, with every placeholder defined and used', async () => {
    ddbMock.on(UpdateCommand).resolves({});

    await expect(store.reopenFailed(KEY, request)).resolves.toEqual({ reopened: true });

    const input = ddbMock.commandCalls(UpdateCommand)[0]!.args[0].input;
    expect(input).toMatchObject({ TableName: TABLE, Key: KEY, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' });
    expect(placeholderProblems([input.UpdateExpression, input.ConditionExpression], input)).toEqual([]);
    expect(evaluateCondition(input.ConditionExpression!, input, occurrence({ status: FAILED }))).toBe(true);
    for (const status of [PENDING, RUNNING, SUCCEEDED]) {
      expect(evaluateCondition(input.ConditionExpression!, input, occurrence({ status }))).toBe(false);
    }
    expect(evaluateCondition(input.ConditionExpression!, input, undefined)).toBe(false);
    expect(input.ExpressionAttributeValues).toMatchObject({
      ':pending': PENDING,
      ':deadline': iso(NOW + 3600_000),
      ':ttl': 2_000_000_000,
      ':now': iso(NOW),
    });
    // The reconciler judges the reopened row from now, not from its old createdAt; the old retry's carrier is gone.
    expect(input.UpdateExpression).toContain('#requeuedAt = :now');
    expect(input.UpdateExpression).toMatch(/REMOVE .*#retryMessageId/);
    expect(input.ExpressionAttributeNames).toMatchObject({
      '#requeuedAt': 'requeuedAt',
      '#retryMessageId': 'retryMessageId',
    });
  });

  it("records who retried it, and a bulk run's id in bulkActions, refused where the row holds that id", async () => {
    ddbMock.on(UpdateCommand).resolves({});

    await store.reopenFailed(KEY, { ...request, by: 'alice@bastion (arn:aws:iam::1:user/alice)', bulkId: 'bulk-7' });

    const input = ddbMock.commandCalls(UpdateCommand)[0]!.args[0].input;
    expect(input.UpdateExpression).toMatch(/ ADD #bulkActions :bulkIds$/);
    expect(input.ConditionExpression).toBe(
      'attribute_exists(#jobId) AND #status = :failed AND (attribute_not_exists(#bulkActions) OR NOT contains(#bulkActions, :bulkId))',
    );
    expect(input.ExpressionAttributeValues).toMatchObject({ ':bulkIds': new Set(['bulk-7']), ':bulkId': 'bulk-7' });
    expect(input.ExpressionAttributeValues?.[':historyEntry']).toEqual([
      { outcome: 'reopened', at: iso(NOW), by: 'alice@bastion (arn:aws:iam::1:user/alice)', bulkId: 'bulk-7' },
    ]);
  });

  it('without a bulk run, neither adds to nor tests bulkActions', async () => {
    ddbMock.on(UpdateCommand).resolves({});

    await store.reopenFailed(KEY, request);

    const input = ddbMock.commandCalls(UpdateCommand)[0]!.args[0].input;
    expect(`${input.UpdateExpression} ${input.ConditionExpression}`).not.toContain('bulkActions');
    expect(input.ExpressionAttributeValues?.[':historyEntry']).toEqual([{ outcome: 'reopened', at: iso(NOW) }]);
  });

  it('counts a retried request that finds its own reopening (same manualRetryAt) as done', async () => {
    const ownReopening = { ...occurrence({ status: PENDING }), manualRetryAt: iso(NOW), manualRetries: 1 };
    ddbMock.on(UpdateCommand).rejects(conditionFailed(ownReopening as never));

    await expect(store.reopenFailed(KEY, request)).resolves.toEqual({ reopened: true });
  });

  it('returns the row that refused it when someone else changed it first', async () => {
    const other = { ...occurrence({ status: PENDING }), manualRetryAt: iso(NOW - 5000) };
    ddbMock.on(UpdateCommand).rejects(conditionFailed(other as never));

    await expect(store.reopenFailed(KEY, request)).resolves.toEqual({ reopened: false, current: other });
  });

  it('throws any other failure as a classified DependencyError', async () => {
    ddbMock.on(UpdateCommand).rejects(throttled());

    const error = await store.reopenFailed(KEY, request).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'transient', operation: 'reopen failed occurrence' });
  });
});
