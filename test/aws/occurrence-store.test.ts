import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { isClaimable } from '../../functions/protocol/claimability';
import { DependencyError, LeaseLostError } from '../../functions/protocol/errors';
import { iso, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { ClaimRequest, Lease } from '../../functions/protocol/ports';
import { statusShardOf } from '../../functions/protocol/table-schema';
import { applyUpdate, evaluateCondition, placeholderProblems } from '../../sim/fakes/dynamo-expressions';
import { conditionFailed, KEY, MINUTE, NOW, occurrence, SECOND, TABLE, throttled, validationError } from './fixtures';

const { PENDING, RUNNING, RETRY_WAIT, SUCCEEDED, FAILED } = OccurrenceStatus;

const ddbMock = mockClient(DynamoDBDocumentClient);
let store: DynamoOccurrenceStore;

beforeEach(() => {
  ddbMock.reset();
  store = new DynamoOccurrenceStore(DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })), TABLE);
});

const updateInput = (n = 0): UpdateCommandInput => {
  const calls = ddbMock.commandCalls(UpdateCommand);
  expect(calls.length).toBeGreaterThan(n);
  return calls[n]!.args[0].input;
};

/** Every placeholder defined is used and every one used is defined (DynamoDB rejects the request otherwise). */
const expectValidPlaceholders = (input: UpdateCommandInput) =>
  expect(placeholderProblems([input.UpdateExpression, input.ConditionExpression], input)).toEqual([]);

const holds = (input: UpdateCommandInput, row: Occurrence | undefined) =>
  evaluateCondition(input.ConditionExpression!, input, row);
const applied = (input: UpdateCommandInput, row: Occurrence) => applyUpdate(input.UpdateExpression!, input, row);

describe('DynamoOccurrenceStore.create', () => {
  const row = occurrence();

  it('puts the row only if no row has this key (attribute_not_exists on jobId), asking for the old row on failure', async () => {
    ddbMock.on(PutCommand).resolves({});
    await store.create(row);
    expect(ddbMock).toHaveReceivedCommandTimes(PutCommand, 1);
    expect(ddbMock).toHaveReceivedCommandWith(PutCommand, {
      TableName: TABLE,
      // With the status index key of its status, PENDING#<shard>.
      Item: { ...row, statusShard: statusShardOf(row, row.status) },
      ConditionExpression: 'attribute_not_exists(#jobId)',
      ExpressionAttributeNames: { '#jobId': 'jobId' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    const input = ddbMock.commandCalls(PutCommand)[0]!.args[0].input;
    expect(evaluateCondition(input.ConditionExpression!, input, undefined)).toBe(true);
    expect(evaluateCondition(input.ConditionExpression!, input, occurrence({ status: SUCCEEDED }))).toBe(false);
  });

  it('returns created: true when the put succeeds', async () => {
    ddbMock.on(PutCommand).resolves({});
    await expect(store.create(row)).resolves.toEqual({ created: true });
  });

  it('returns created: false with the existing row, unmarshalled from the exception, when the key exists', async () => {
    const existing = occurrence({
      status: RUNNING,
      attempt: 1,
      leaseId: 'lease-1',
      leaseOwner: 'worker-a',
      leaseExpiresAt: iso(NOW + MINUTE),
    });
    ddbMock.on(PutCommand).rejects(conditionFailed(existing));
    await expect(store.create(row)).resolves.toEqual({ created: false, existing });
  });

  it('accepts an old row that arrives already unmarshalled', async () => {
    const existing = occurrence({ status: SUCCEEDED, reportKey: 'reports/x.md' });
    const error = conditionFailed();
    (error as unknown as { Item: unknown }).Item = existing;
    ddbMock.on(PutCommand).rejects(error);
    await expect(store.create(row)).resolves.toEqual({ created: false, existing });
  });

  it('throws a transient DependencyError when throttled', async () => {
    ddbMock.on(PutCommand).rejects(throttled());
    const error = await store.create(row).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'transient', operation: 'create occurrence' });
  });

  it('throws a fatal DependencyError on a validation error', async () => {
    ddbMock.on(PutCommand).rejects(validationError());
    await expect(store.create(row)).rejects.toMatchObject({ name: 'DependencyError', kind: 'fatal' });
  });
});

describe('DynamoOccurrenceStore.claim', () => {
  const request: ClaimRequest = {
    leaseId: 'lease-new',
    owner: 'worker-b',
    now: NOW,
    leaseExpiresAt: NOW + 5 * MINUTE,
    maxAttempts: 3,
  };

  const claimOnce = async (row?: Occurrence): Promise<UpdateCommandInput> => {
    ddbMock.on(UpdateCommand).resolves({ Attributes: row });
    await store.claim(KEY, request);
    return updateInput();
  };

  it('updates the row by its key, returning the new row on success and the old row on a refused condition', async () => {
    const input = await claimOnce();
    expect(input).toMatchObject({
      TableName: TABLE,
      Key: { jobId: KEY.jobId, scheduledTime: KEY.scheduledTime },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expectValidPlaceholders(input);
  });

  it('the condition spells out the claimability rule: pending, retry due, or expired lease; attempts and deadline left', async () => {
    const input = await claimOnce();
    const condition = input.ConditionExpression!;
    expect(condition).toContain('attribute_exists(#jobId)');
    expect(condition).toContain('#attempt < :maxAttempts');
    expect(condition).toContain('#deadlineAt > :now');
    expect(condition).toContain('#status IN (:pending, :buffered)');
    expect(condition).toContain('(#status = :retryWait AND #nextAttemptAt <= :now)');
    expect(condition).toContain('(#status = :running AND #leaseExpiresAt < :now)');
    expect(input.ExpressionAttributeNames).toMatchObject({
      '#jobId': 'jobId',
      '#status': 'status',
      '#attempt': 'attempt',
      '#deadlineAt': 'deadlineAt',
      '#nextAttemptAt': 'nextAttemptAt',
      '#leaseExpiresAt': 'leaseExpiresAt',
    });
    expect(input.ExpressionAttributeValues).toMatchObject({
      ':now': iso(NOW),
      ':expires': iso(NOW + 5 * MINUTE),
      ':maxAttempts': 3,
      ':pending': PENDING,
      ':retryWait': RETRY_WAIT,
      ':running': RUNNING,
      ':leaseId': 'lease-new',
      ':owner': 'worker-b',
    });
  });

  it('the condition accepts exactly the rows isClaimable accepts (rows as the store writes them)', async () => {
    const input = await claimOnce();
    const times = { past: iso(NOW - SECOND), now: iso(NOW), future: iso(NOW + SECOND) };
    const rows: Occurrence[] = [];
    for (const attempt of [0, 2, 3, 4]) {
      for (const deadlineAt of Object.values(times)) {
        rows.push(occurrence({ status: PENDING, attempt, deadlineAt }));
        for (const nextAttemptAt of Object.values(times)) {
          rows.push(occurrence({ status: RETRY_WAIT, attempt, deadlineAt, nextAttemptAt, lastError: 'x' }));
        }
        for (const leaseExpiresAt of Object.values(times)) {
          rows.push(
            occurrence({
              status: RUNNING,
              attempt,
              deadlineAt,
              leaseExpiresAt,
              leaseId: 'lease-old',
              leaseOwner: 'worker-a',
            }),
          );
        }
        rows.push(occurrence({ status: SUCCEEDED, attempt, deadlineAt, reportKey: 'r' }));
        rows.push(occurrence({ status: FAILED, attempt, deadlineAt, lastError: 'x' }));
      }
    }
    const disagreements = rows
      .filter((row) => holds(input, row) !== isClaimable(row, NOW, request.maxAttempts))
      .map((row) => ({ ...row, isClaimable: isClaimable(row, NOW, request.maxAttempts) }));
    expect(disagreements).toEqual([]);
    // Both outcomes occur in the grid, so the comparison cannot pass vacuously.
    expect(rows.some((row) => holds(input, row))).toBe(true);
    expect(rows.some((row) => !holds(input, row))).toBe(true);
  });

  it('the condition refuses a key with no row', async () => {
    const input = await claimOnce();
    expect(holds(input, undefined)).toBe(false);
  });

  it('the update sets RUNNING under the new lease, increments attempt by one and clears nextAttemptAt', async () => {
    const input = await claimOnce();
    const before = occurrence({
      status: RETRY_WAIT,
      attempt: 1,
      nextAttemptAt: iso(NOW - SECOND),
      lastError: 'earlier failure',
    });
    const after = applied(input, before);
    expect(after).toMatchObject({
      status: RUNNING,
      leaseId: 'lease-new',
      leaseOwner: 'worker-b',
      leaseExpiresAt: iso(NOW + 5 * MINUTE),
      attempt: 2,
      claimedAt: iso(NOW),
      heartbeatAt: iso(NOW),
    });
    expect(after).not.toHaveProperty('nextAttemptAt');
    expect(input.UpdateExpression).toContain('#attempt = #attempt + :one');
    expect(input.ExpressionAttributeValues).toMatchObject({ ':one': 1 });
  });

  it('returns claimed: true with the row from Attributes', async () => {
    const after = occurrence({
      status: RUNNING,
      attempt: 1,
      leaseId: 'lease-new',
      leaseOwner: 'worker-b',
      leaseExpiresAt: iso(NOW + 5 * MINUTE),
    });
    ddbMock.on(UpdateCommand).resolves({ Attributes: after });
    await expect(store.claim(KEY, request)).resolves.toEqual({ claimed: true, occurrence: after });
  });

  it('returns claimed: false with the refusing row, unmarshalled, on a conditional failure', async () => {
    const current = occurrence({
      status: RUNNING,
      attempt: 1,
      leaseId: 'lease-old',
      leaseOwner: 'worker-a',
      leaseExpiresAt: iso(NOW + MINUTE),
    });
    ddbMock.on(UpdateCommand).rejects(conditionFailed(current));
    await expect(store.claim(KEY, request)).resolves.toEqual({ claimed: false, current });
  });

  it('returns claimed: true when the refusing row is RUNNING under its own lease id (the first response was lost)', async () => {
    const ours = occurrence({
      status: RUNNING,
      attempt: 1,
      leaseId: request.leaseId,
      leaseOwner: request.owner,
      leaseExpiresAt: iso(request.leaseExpiresAt),
    });
    ddbMock.on(UpdateCommand).rejects(conditionFailed(ours));
    await expect(store.claim(KEY, request)).resolves.toEqual({ claimed: true, occurrence: ours });
  });

  it('returns claimed: false with current undefined when the exception carries no row (no such key)', async () => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed());
    await expect(store.claim(KEY, request)).resolves.toEqual({ claimed: false, current: undefined });
  });

  it('throws a transient DependencyError when throttled', async () => {
    ddbMock.on(UpdateCommand).rejects(throttled());
    const error = await store.claim(KEY, request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'transient', operation: 'claim occurrence' });
  });

  it('throws a transient DependencyError for a ThrottlingException-named error', async () => {
    ddbMock.on(UpdateCommand).rejects(Object.assign(new Error('slow down'), { name: 'ThrottlingException' }));
    await expect(store.claim(KEY, request)).rejects.toMatchObject({ name: 'DependencyError', kind: 'transient' });
  });
});

describe('DynamoOccurrenceStore fenced transitions (extend, complete, release, fail)', () => {
  const lease: Lease = { key: KEY, leaseId: 'lease-ours' };
  const heldRow = occurrence({
    status: RUNNING,
    attempt: 1,
    leaseId: 'lease-ours',
    leaseOwner: 'worker-a',
    leaseExpiresAt: iso(NOW + MINUTE),
    claimedAt: iso(NOW - MINUTE),
    heartbeatAt: iso(NOW - MINUTE),
  });
  const stolenRow = occurrence({
    status: RUNNING,
    attempt: 2,
    leaseId: 'lease-theirs',
    leaseOwner: 'worker-b',
    leaseExpiresAt: iso(NOW + 4 * MINUTE),
  });

  type Case = {
    name: string;
    operation: string;
    run: (s: DynamoOccurrenceStore, signal?: AbortSignal) => Promise<void>;
    expectEffect: (after: Record<string, unknown>) => void;
  };
  const cases: Case[] = [
    {
      name: 'extend',
      operation: 'extend lease',
      run: (s, signal) => s.extend(lease, NOW + 5 * MINUTE, NOW, signal),
      expectEffect: (after) =>
        expect(after).toMatchObject({
          status: RUNNING,
          leaseId: 'lease-ours',
          leaseExpiresAt: iso(NOW + 5 * MINUTE),
          heartbeatAt: iso(NOW),
        }),
    },
    {
      name: 'complete',
      operation: 'complete occurrence',
      run: (s) => s.complete(lease, 'reports/daily-report/2026-11-30T06:00:00Z.md', NOW),
      expectEffect: (after) => {
        expect(after).toMatchObject({
          status: SUCCEEDED,
          reportKey: 'reports/daily-report/2026-11-30T06:00:00Z.md',
          succeededAt: iso(NOW),
        });
        expect(after).not.toHaveProperty('leaseExpiresAt');
      },
    },
    {
      name: 'release',
      operation: 'release occurrence',
      run: (s) => s.release(lease, NOW + 2 * MINUTE, 'upstream timed out', NOW, 'msg-1'),
      expectEffect: (after) => {
        expect(after).toMatchObject({
          status: RETRY_WAIT,
          nextAttemptAt: iso(NOW + 2 * MINUTE),
          lastError: 'upstream timed out',
          releasedAt: iso(NOW),
        });
        expect(after).not.toHaveProperty('leaseExpiresAt');
      },
    },
    {
      name: 'fail',
      operation: 'fail occurrence',
      run: (s) => s.fail(lease, 'bad input', NOW),
      expectEffect: (after) => {
        expect(after).toMatchObject({ status: FAILED, lastError: 'bad input', failedAt: iso(NOW) });
        expect(after).not.toHaveProperty('leaseExpiresAt');
        expect(after).not.toHaveProperty('nextAttemptAt');
      },
    },
  ];

  describe.each(cases)('$name', ({ operation, run, expectEffect }) => {
    it('is conditioned on the row being RUNNING under our lease id', async () => {
      ddbMock.on(UpdateCommand).resolves({});
      await run(store);
      const input = updateInput();
      expect(input).toMatchObject({
        TableName: TABLE,
        Key: { jobId: KEY.jobId, scheduledTime: KEY.scheduledTime },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      expect(input.ConditionExpression).toMatch(/^#status = :running AND #leaseId = :leaseId( AND |$)/);
      expect(input.ExpressionAttributeNames).toMatchObject({ '#status': 'status', '#leaseId': 'leaseId' });
      expect(input.ExpressionAttributeValues).toMatchObject({ ':running': RUNNING, ':leaseId': 'lease-ours' });
      expectValidPlaceholders(input);
      expect(holds(input, heldRow)).toBe(true);
      expect(holds(input, stolenRow)).toBe(false);
      expect(holds(input, { ...heldRow, status: SUCCEEDED })).toBe(false);
      expect(holds(input, { ...heldRow, status: RETRY_WAIT })).toBe(false);
      expect(holds(input, undefined)).toBe(false);
    });

    it('writes the transition', async () => {
      ddbMock.on(UpdateCommand).resolves({});
      await run(store);
      expectEffect(applied(updateInput(), heldRow));
    });

    it('throws LeaseLostError naming the current holder when the condition fails', async () => {
      ddbMock.on(UpdateCommand).rejects(conditionFailed(stolenRow));
      const error = await run(store).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LeaseLostError);
      expect(error).not.toBeInstanceOf(DependencyError);
      const lost = error as LeaseLostError;
      expect(lost.operation).toBe(operation);
      expect(lost.message).toContain('worker-b');
      expect(lost.message).toContain('lease-theirs');
      expect(lost.message).toContain('lease-ours');
    });

    it('succeeds when the row already shows this very update under our lease (a retry after a lost response), but not for extend', async () => {
      ddbMock.on(UpdateCommand).resolves({});
      await run(store);
      const after = applied(updateInput(), heldRow) as unknown as Occurrence;
      ddbMock.reset();
      ddbMock.on(UpdateCommand).rejects(conditionFailed(after));
      if (operation === 'extend lease') {
        // extend's condition still holds after its own first try, so a refusal always means someone else.
        await expect(run(store)).rejects.toBeInstanceOf(LeaseLostError);
      } else {
        await expect(run(store)).resolves.toBeUndefined();
      }
    });

    it('throws LeaseLostError saying the row is gone when the exception carries no row', async () => {
      ddbMock.on(UpdateCommand).rejects(conditionFailed());
      const error = await run(store).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LeaseLostError);
      expect((error as Error).message).toContain('gone');
    });

    it('throws a transient DependencyError, not LeaseLostError, when throttled', async () => {
      ddbMock.on(UpdateCommand).rejects(throttled());
      const error = await run(store).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DependencyError);
      expect(error).not.toBeInstanceOf(LeaseLostError);
      expect(error).toMatchObject({ kind: 'transient', operation });
    });

    it('throws a fatal DependencyError on a validation error', async () => {
      ddbMock.on(UpdateCommand).rejects(validationError());
      await expect(run(store)).rejects.toMatchObject({ name: 'DependencyError', kind: 'fatal', operation });
    });
  });

  // The simulation's P3 (seed 73104): an extend the worker had given up on reached the table after its next one and
  // set the expiry back, below what the worker believed; a cancelOther start waited out only the shorter one.
  it('extend never moves the expiry back: refused where the lease already runs later, allowed to repeat itself', async () => {
    ddbMock.on(UpdateCommand).resolves({});
    await store.extend(lease, NOW + 5 * MINUTE, NOW);
    const input = updateInput();
    expectValidPlaceholders(input);
    expect(holds(input, { ...heldRow, leaseExpiresAt: iso(NOW + 6 * MINUTE) })).toBe(false);
    expect(holds(input, { ...heldRow, leaseExpiresAt: iso(NOW + 5 * MINUTE) })).toBe(true);
    expect(holds(input, heldRow)).toBe(true);
  });

  it('extend refused because our own lease already runs later succeeds: the lease is at least as long as asked', async () => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed({ ...heldRow, leaseExpiresAt: iso(NOW + 6 * MINUTE) }));
    await expect(store.extend(lease, NOW + 5 * MINUTE, NOW)).resolves.toBeUndefined();
    ddbMock.reset();
    ddbMock.on(UpdateCommand).rejects(conditionFailed({ ...stolenRow, leaseExpiresAt: iso(NOW + 6 * MINUTE) }));
    await expect(store.extend(lease, NOW + 5 * MINUTE, NOW)).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('extend passes the abort signal to the SDK call', async () => {
    ddbMock.on(UpdateCommand).resolves({});
    const controller = new AbortController();
    await store.extend(lease, NOW + 5 * MINUTE, NOW, controller.signal);
    expect((ddbMock.call(0).args as unknown[])[1]).toEqual({ abortSignal: controller.signal });
  });

  it('extend classifies an aborted call as a transient DependencyError, not a lost lease', async () => {
    ddbMock.on(UpdateCommand).rejects(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
    const error = await store.extend(lease, NOW + 5 * MINUTE, NOW, AbortSignal.abort()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'transient' });
  });
});

describe('DynamoOccurrenceStore.completeUnheld', () => {
  it('marks an unheld row SUCCEEDED with the committed report, under the same condition as failUnheld', async () => {
    ddbMock.on(UpdateCommand).resolves({});
    await expect(store.completeUnheld(KEY, 'reports/daily-report/x.md', NOW)).resolves.toBe(true);
    const input = updateInput();
    expectValidPlaceholders(input);
    const expired = occurrence({ status: RUNNING, attempt: 3, leaseId: 'l', leaseExpiresAt: iso(NOW - SECOND) });
    expect(applied(input, expired)).toMatchObject({
      status: SUCCEEDED,
      reportKey: 'reports/daily-report/x.md',
      succeededAt: iso(NOW),
    });
    expect(holds(input, expired)).toBe(true);
    expect(holds(input, occurrence({ status: RUNNING, leaseId: 'l', leaseExpiresAt: iso(NOW + SECOND) }))).toBe(false);
    expect(holds(input, occurrence({ status: FAILED }))).toBe(false);
  });

  it('returns false when the row changed meanwhile', async () => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed(occurrence({ status: SUCCEEDED })));
    await expect(store.completeUnheld(KEY, 'r', NOW)).resolves.toBe(false);
  });
});

describe('DynamoOccurrenceStore.failUnheld', () => {
  it('returns true when the row was marked FAILED', async () => {
    ddbMock.on(UpdateCommand).resolves({});
    await expect(store.failUnheld(KEY, 'attempts used up', NOW)).resolves.toBe(true);
    const input = updateInput();
    expectValidPlaceholders(input);
    const after = applied(
      input,
      occurrence({ status: RUNNING, attempt: 3, leaseId: 'l', leaseExpiresAt: iso(NOW - SECOND) }),
    );
    expect(after).toMatchObject({ status: FAILED, lastError: 'attempts used up', failedAt: iso(NOW) });
    expect(after).not.toHaveProperty('leaseExpiresAt');
  });

  it('only fails rows nobody holds: pending, waiting for a retry, or running under an expired lease', async () => {
    ddbMock.on(UpdateCommand).resolves({});
    await store.failUnheld(KEY, 'x', NOW);
    const input = updateInput();
    expect(holds(input, occurrence({ status: PENDING }))).toBe(true);
    expect(holds(input, occurrence({ status: RETRY_WAIT, nextAttemptAt: iso(NOW + MINUTE) }))).toBe(true);
    expect(holds(input, occurrence({ status: RUNNING, leaseId: 'l', leaseExpiresAt: iso(NOW - SECOND) }))).toBe(true);
    expect(holds(input, occurrence({ status: RUNNING, leaseId: 'l', leaseExpiresAt: iso(NOW) }))).toBe(false);
    expect(holds(input, occurrence({ status: RUNNING, leaseId: 'l', leaseExpiresAt: iso(NOW + SECOND) }))).toBe(false);
    expect(holds(input, occurrence({ status: SUCCEEDED, reportKey: 'r' }))).toBe(false);
    expect(holds(input, occurrence({ status: FAILED }))).toBe(false);
    expect(holds(input, undefined)).toBe(false);
  });

  it('returns false when the condition fails (the row changed meanwhile)', async () => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed(occurrence({ status: SUCCEEDED })));
    await expect(store.failUnheld(KEY, 'x', NOW)).resolves.toBe(false);
  });

  it('throws a transient DependencyError when throttled', async () => {
    ddbMock.on(UpdateCommand).rejects(throttled());
    await expect(store.failUnheld(KEY, 'x', NOW)).rejects.toMatchObject({ name: 'DependencyError', kind: 'transient' });
  });
});

describe('DynamoOccurrenceStore.markNotified', () => {
  it('records the notification only on a SUCCEEDED row that has none yet', async () => {
    ddbMock.on(UpdateCommand).resolves({});
    await expect(store.markNotified(KEY, 'msg-1', NOW)).resolves.toBe(true);
    const input = updateInput();
    expect(input.ConditionExpression).toContain('#status = :succeeded');
    expect(input.ConditionExpression).toContain('attribute_not_exists(#notifiedAt)');
    expect(input.ExpressionAttributeValues).toMatchObject({ ':succeeded': SUCCEEDED });
    expect(input.Key).toEqual({ jobId: KEY.jobId, scheduledTime: KEY.scheduledTime });
    expectValidPlaceholders(input);
    const succeeded = occurrence({ status: SUCCEEDED, reportKey: 'r' });
    expect(holds(input, succeeded)).toBe(true);
    expect(holds(input, { ...succeeded, notifiedAt: iso(NOW - MINUTE), notificationId: 'msg-0' })).toBe(false);
    expect(holds(input, occurrence({ status: RUNNING }))).toBe(false);
    expect(applied(input, succeeded)).toMatchObject({ notifiedAt: iso(NOW), notificationId: 'msg-1' });
  });

  it('returns false when already recorded (conditional failure)', async () => {
    ddbMock.on(UpdateCommand).rejects(conditionFailed());
    await expect(store.markNotified(KEY, 'msg-1', NOW)).resolves.toBe(false);
  });

  it('throws a transient DependencyError when throttled', async () => {
    ddbMock.on(UpdateCommand).rejects(throttled());
    await expect(store.markNotified(KEY, 'msg-1', NOW)).rejects.toMatchObject({
      name: 'DependencyError',
      kind: 'transient',
      operation: 'record notification',
    });
  });
});

describe('DynamoOccurrenceStore.get', () => {
  it('reads the row by key with a strongly consistent read', async () => {
    const row = occurrence({ status: SUCCEEDED, reportKey: 'r' });
    ddbMock.on(GetCommand).resolves({ Item: row });
    await expect(store.get(KEY)).resolves.toEqual(row);
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, {
      TableName: TABLE,
      Key: { jobId: KEY.jobId, scheduledTime: KEY.scheduledTime },
      ConsistentRead: true,
    });
  });

  it('sends only the key attributes even when given a whole row', async () => {
    ddbMock.on(GetCommand).resolves({});
    await store.get(occurrence({ status: SUCCEEDED }));
    expect(ddbMock.commandCalls(GetCommand)[0]!.args[0].input.Key).toEqual({
      jobId: KEY.jobId,
      scheduledTime: KEY.scheduledTime,
    });
  });

  it('returns undefined when there is no row', async () => {
    ddbMock.on(GetCommand).resolves({});
    await expect(store.get(KEY)).resolves.toBeUndefined();
  });

  it('throws a DependencyError when the read fails', async () => {
    ddbMock.on(GetCommand).rejects(throttled());
    await expect(store.get(KEY)).rejects.toMatchObject({
      name: 'DependencyError',
      kind: 'transient',
      operation: 'read occurrence',
    });
  });
});

describe('DynamoOccurrenceStore.markRequeued', () => {
  const stuckBefore = NOW - 20 * MINUTE;
  const expired = occurrence({ status: RUNNING, attempt: 1, leaseId: 'dead', leaseExpiresAt: iso(NOW - 30 * MINUTE) });

  it('marks a row that is still as observed and stuck since before the cut-off, counting the re-enqueues', async () => {
    ddbMock.on(UpdateCommand).resolves({});
    expect(await store.markRequeued(KEY, { status: RUNNING, attempt: 1, stuckBefore }, NOW, 'rq-1')).toBe(true);
    const input = updateInput();
    expectValidPlaceholders(input);
    expect(holds(input, expired)).toBe(true);
    expect(applied(input, expired)).toMatchObject({ requeuedAt: iso(NOW), requeueCount: 1 });
    expect(applied(input, { ...expired, requeueCount: 2 })).toMatchObject({ requeueCount: 3 });
  });

  it('refuses a row a worker claimed since (attempt changed), extended since, finished, or re-enqueued recently', async () => {
    ddbMock.on(UpdateCommand).resolves({});
    await store.markRequeued(KEY, { status: RUNNING, attempt: 1, stuckBefore }, NOW, 'rq-1');
    const input = updateInput();
    expect(holds(input, { ...expired, attempt: 2 })).toBe(false);
    expect(holds(input, { ...expired, leaseExpiresAt: iso(NOW + MINUTE) })).toBe(false);
    expect(holds(input, { ...expired, status: SUCCEEDED })).toBe(false);
    expect(holds(input, { ...expired, requeuedAt: iso(NOW - 5 * MINUTE) })).toBe(false);
    expect(holds(input, { ...expired, requeuedAt: iso(NOW - 25 * MINUTE) })).toBe(true);
    expect(holds(input, undefined)).toBe(false);
  });

  it('judges PENDING by createdAt and RETRY_WAIT by nextAttemptAt', async () => {
    ddbMock.on(UpdateCommand).resolves({});
    await store.markRequeued(KEY, { status: PENDING, attempt: 0, stuckBefore }, NOW, 'rq-1');
    await store.markRequeued(KEY, { status: RETRY_WAIT, attempt: 1, stuckBefore }, NOW, 'rq-1');
    const pending = updateInput(0);
    const retry = updateInput(1);
    expect(holds(pending, occurrence({ createdAt: iso(NOW - 30 * MINUTE) }))).toBe(true);
    expect(holds(pending, occurrence({ createdAt: iso(NOW - 10 * MINUTE) }))).toBe(false);
    const waiting = occurrence({ status: RETRY_WAIT, attempt: 1, nextAttemptAt: iso(NOW - 30 * MINUTE) });
    expect(holds(retry, waiting)).toBe(true);
    expect(holds(retry, { ...waiting, nextAttemptAt: iso(NOW - MINUTE) })).toBe(false);
  });

  it('answers false on a failed condition, true when the failure is its own earlier write whose response was lost', async () => {
    ddbMock.on(UpdateCommand).rejectsOnce(conditionFailed({ ...expired, attempt: 2 }));
    expect(await store.markRequeued(KEY, { status: RUNNING, attempt: 1, stuckBefore }, NOW, 'rq-1')).toBe(false);
    ddbMock
      .on(UpdateCommand)
      .rejectsOnce(conditionFailed({ ...expired, requeuedAt: iso(NOW), requeueCount: 1, requeueId: 'rq-1' }));
    expect(await store.markRequeued(KEY, { status: RUNNING, attempt: 1, stuckBefore }, NOW, 'rq-1')).toBe(true);
    // Another re-enqueue at the very same millisecond is not ours.
    ddbMock.reset();
    ddbMock
      .on(UpdateCommand)
      .rejectsOnce(conditionFailed({ ...expired, requeuedAt: iso(NOW), requeueCount: 1, requeueId: 'rq-2' }));
    expect(await store.markRequeued(KEY, { status: RUNNING, attempt: 1, stuckBefore }, NOW, 'rq-1')).toBe(false);
  });

  it('throws a classified DependencyError for anything else, and refuses a terminal status outright', async () => {
    ddbMock.on(UpdateCommand).rejects(throttled());
    await expect(
      store.markRequeued(KEY, { status: RUNNING, attempt: 1, stuckBefore }, NOW, 'rq-1'),
    ).rejects.toMatchObject({ name: 'DependencyError', kind: 'transient', operation: 'mark occurrence re-enqueued' });
    await expect(store.markRequeued(KEY, { status: FAILED, attempt: 1, stuckBefore }, NOW, 'rq-1')).rejects.toThrow(
      /does not wait for a worker/,
    );
  });
});
