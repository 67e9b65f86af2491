import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoRunStateStore } from '../../functions/aws/run-state-store';
import { LeaseLostError } from '../../functions/protocol/errors';
import { iso, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { Lease } from '../../functions/protocol/ports';
import { evaluateCondition } from '../../sim/fakes/dynamo-expressions';
import { conditionFailed, KEY, MINUTE, NOW, occurrence, TABLE } from './fixtures';

const ddbMock = mockClient(DynamoDBDocumentClient);
const store = new DynamoRunStateStore(DynamoDBDocumentClient.from(new DynamoDBClient({})), TABLE);
const lease: Lease = { key: KEY, leaseId: 'lease-ours' };
const heldRow = occurrence({ status: OccurrenceStatus.RUNNING, leaseId: 'lease-ours', leaseExpiresAt: iso(NOW) });
const progress = { done: 10, total: 100, at: iso(NOW) };

const updateInput = (): UpdateCommandInput =>
  ddbMock.commandCalls(UpdateCommand)[0]?.args[0].input as UpdateCommandInput;
const holds = (input: UpdateCommandInput, row: Occurrence) => evaluateCondition(input.ConditionExpression!, input, row);

beforeEach(() => ddbMock.reset());

describe('DynamoRunStateStore.extendWithProgress', () => {
  // The same late extend as the simulation's P3 (seed 73104), on a resumable run's heartbeat.
  it('never moves the expiry back: refused where the lease already runs later, allowed to repeat itself', async () => {
    ddbMock.on(UpdateCommand).resolves({});
    await store.extendWithProgress(lease, NOW + 5 * MINUTE, NOW, progress);
    const input = updateInput();
    expect(holds(input, { ...heldRow, leaseExpiresAt: iso(NOW + 6 * MINUTE) })).toBe(false);
    expect(holds(input, { ...heldRow, leaseExpiresAt: iso(NOW + 5 * MINUTE) })).toBe(true);
    expect(holds(input, heldRow)).toBe(true);
    expect(holds(input, { ...heldRow, leaseId: 'lease-theirs' })).toBe(false);
  });

  it('refused because our own lease already runs later, succeeds; refused under another lease, the lease is lost', async () => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed({ ...heldRow, leaseExpiresAt: iso(NOW + 6 * MINUTE) }));
    await expect(store.extendWithProgress(lease, NOW + 5 * MINUTE, NOW, progress)).resolves.toBeUndefined();
    ddbMock.reset();
    ddbMock
      .on(UpdateCommand)
      .rejects(conditionFailed({ ...heldRow, leaseId: 'lease-theirs', leaseExpiresAt: iso(NOW + 6 * MINUTE) }));
    await expect(store.extendWithProgress(lease, NOW + 5 * MINUTE, NOW, progress)).rejects.toBeInstanceOf(
      LeaseLostError,
    );
  });
});
