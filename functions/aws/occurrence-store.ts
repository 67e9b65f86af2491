/**
 * The occurrence store on DynamoDB: the two primitives are a put with attribute_not_exists and updates
 * conditioned on the lease id. Conditional failures come back as results (or LeaseLostError); everything else is
 * thrown as a classified DependencyError.
 */

import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LeaseLostError } from '../protocol/errors';
import type { ManualRetryFields, ReopenRecord } from '../protocol/manual-retry';
import {
  ATTEMPT_ERROR_MAX_CHARS,
  type AttemptRecord,
  iso,
  type Occurrence,
  type OccurrenceKey,
  OccurrenceStatus,
} from '../protocol/occurrence';
import type {
  CancellableStore,
  CancelRequest,
  CancelWriteResult,
  ClaimedSkip,
  ClaimRequest,
  ClaimResult,
  Lease,
  OccurrenceStore,
  ReopenableStore,
  ReopenRequest,
  ReopenResult,
  RequeueExpectation,
  RequeueStore,
  Revocation,
  RevokeResult,
} from '../protocol/ports';
import { isRequeueable, STUCK_SINCE_ATTRIBUTE } from '../protocol/requeue-occurrence';
import { fromTableItem, statusShardOf, tableKeyOf } from '../protocol/table-schema';
import { asDependencyError, isConditionalFailure, refusedItem } from './classify-error';
import { EXPIRY_NOT_LATER, runsLaterUnder } from './lease-expiry';
import { DynamoOccurrenceRecorder } from './occurrence-recorder';

// Every attribute goes through a name placeholder: several (status, ttl, ...) are DynamoDB reserved words.
const NAMES = {
  '#jobId': 'jobId',
  '#status': 'status',
  '#statusShard': 'statusShard',
  '#attempt': 'attempt',
  '#deadlineAt': 'deadlineAt',
  '#leaseId': 'leaseId',
  '#leaseOwner': 'leaseOwner',
  '#leaseExpiresAt': 'leaseExpiresAt',
  '#heartbeatAt': 'heartbeatAt',
  '#claimedAt': 'claimedAt',
  '#releasedAt': 'releasedAt',
  '#nextAttemptAt': 'nextAttemptAt',
  '#lastError': 'lastError',
  '#reportKey': 'reportKey',
  '#succeededAt': 'succeededAt',
  '#failedAt': 'failedAt',
  '#notifiedAt': 'notifiedAt',
  '#notificationId': 'notificationId',
  '#createdAt': 'createdAt',
  '#requeuedAt': 'requeuedAt',
  '#requeueCount': 'requeueCount',
  '#history': 'history',
  '#requeueId': 'requeueId',
  '#retryMessageId': 'retryMessageId',
  '#skipReason': 'skipReason',
  '#yieldedTo': 'yieldedTo',
  '#skippedAt': 'skippedAt',
  '#bufferedAt': 'bufferedAt',
  '#cancelledBy': 'cancelledBy',
  '#cancelledAt': 'cancelledAt',
  '#cancelledByOperator': 'cancelledByOperator',
  '#cancelNote': 'cancelNote',
  '#committingLease': 'committingLease',
  '#committingAt': 'committingAt',
} as const;
type Name = keyof typeof NAMES;
const names = (...used: Name[]) => Object.fromEntries(used.map((n) => [n, NAMES[n]]));

const { PENDING, RUNNING, RETRY_WAIT, SUCCEEDED, FAILED, SKIPPED, BUFFERED, CANCELLED } = OccurrenceStatus;
const HELD_BY_LEASE = '#status = :running AND #leaseId = :leaseId';
/**
 * The row's lease has not reached its commit point (occurrence.ts committingLease): the condition of a cancelOther
 * revoke. Past it, the report may be committed, so the holder is left to finish. (An operator's cancel asks more: no
 * lease ever reached it.)
 */
const NOT_COMMITTING = '(attribute_not_exists(#committingLease) OR #committingLease <> #leaseId)';

/** Every write and read of an occurrence row the worker, notifier and reconciler make; the trigger's one is create. */
export class DynamoOccurrenceStore extends DynamoOccurrenceRecorder implements OccurrenceStore, RequeueStore {
  async claim(key: OccurrenceKey, r: ClaimRequest): Promise<ClaimResult> {
    try {
      const out = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tableKeyOf(key),
          UpdateExpression:
            'SET #status = :running, #statusShard = :statusShard, #leaseId = :leaseId, #leaseOwner = :owner, #leaseExpiresAt = :expires, ' +
            '#heartbeatAt = :now, #claimedAt = :now, #attempt = #attempt + :one REMOVE #nextAttemptAt',
          // isClaimable() in protocol/claimability.ts, as one atomic condition.
          ConditionExpression:
            'attribute_exists(#jobId) AND #attempt < :maxAttempts AND #deadlineAt > :now AND (' +
            '#status IN (:pending, :buffered) OR (#status = :retryWait AND #nextAttemptAt <= :now) OR ' +
            '(#status = :running AND #leaseExpiresAt < :now))',
          ExpressionAttributeNames: names(
            '#jobId',
            '#status',
            '#statusShard',
            '#leaseId',
            '#leaseOwner',
            '#leaseExpiresAt',
            '#heartbeatAt',
            '#claimedAt',
            '#attempt',
            '#nextAttemptAt',
            '#deadlineAt',
          ),
          ExpressionAttributeValues: {
            ':running': RUNNING,
            ':statusShard': statusShardOf(key, RUNNING),
            ':pending': PENDING,
            ':buffered': BUFFERED,
            ':retryWait': RETRY_WAIT,
            ':leaseId': r.leaseId,
            ':owner': r.owner,
            ':expires': iso(r.leaseExpiresAt),
            ':now': iso(r.now),
            ':one': 1,
            ':maxAttempts': r.maxAttempts,
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      // ReturnValues ALL_NEW: the row is always there on success.
      return { claimed: true, occurrence: rowOf(out.Attributes) as Occurrence };
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError('claim occurrence', error);
      const current = refusedRow<Occurrence>(error);
      // The SDK retried a claim that had succeeded (its response was lost): the lease in the row is ours.
      if (current?.status === RUNNING && current.leaseId === r.leaseId) return { claimed: true, occurrence: current };
      return { claimed: false, current };
    }
  }

  /** Never moves the expiry back (lease-expiry.ts). */
  async extend(lease: Lease, leaseExpiresAt: number, now: number, signal?: AbortSignal): Promise<void> {
    const expires = iso(leaseExpiresAt);
    await this.fenced(
      'extend lease',
      lease,
      RUNNING,
      {
        UpdateExpression: 'SET #leaseExpiresAt = :expires, #heartbeatAt = :now',
        condition: EXPIRY_NOT_LATER,
        names: ['#leaseExpiresAt', '#heartbeatAt'],
        values: { ':expires': expires, ':now': iso(now) },
        stillHeld: runsLaterUnder(lease, expires),
      },
      signal,
    );
  }

  /** The commit point (cancel-occurrence.ts): one fenced write; `committingLease` is not projected in the index. */
  async markCommitting(lease: Lease, now: number): Promise<void> {
    await this.fenced('reach the commit point', lease, RUNNING, {
      UpdateExpression: 'SET #committingLease = :leaseId, #committingAt = :now',
      names: ['#committingLease', '#committingAt'],
      values: { ':now': iso(now) },
    });
  }

  async complete(lease: Lease, reportKey: string, now: number): Promise<void> {
    await this.fenced('complete occurrence', lease, SUCCEEDED, {
      UpdateExpression: `SET #status = :succeeded, #statusShard = :statusShard, #reportKey = :reportKey, #succeededAt = :now, ${APPEND_HISTORY} REMOVE #leaseExpiresAt, #nextAttemptAt`,
      names: ['#statusShard', '#reportKey', '#succeededAt', '#leaseExpiresAt', '#nextAttemptAt', '#history'],
      values: {
        ':succeeded': SUCCEEDED,
        ':statusShard': statusShardOf(lease.key, SUCCEEDED),
        ':reportKey': reportKey,
        ':now': iso(now),
        ...historyEntry(lease, 'succeeded', now),
      },
    });
  }

  async release(
    lease: Lease,
    nextAttemptAt: number,
    lastError: string,
    now: number,
    retryMessageId: string,
  ): Promise<void> {
    await this.fenced('release occurrence', lease, RETRY_WAIT, {
      UpdateExpression:
        'SET #status = :retryWait, #statusShard = :statusShard, #nextAttemptAt = :next, #lastError = :error, #releasedAt = :now, ' +
        `#retryMessageId = :retryMessageId, ${APPEND_HISTORY} REMOVE #leaseExpiresAt`,
      names: [
        '#statusShard',
        '#nextAttemptAt',
        '#lastError',
        '#releasedAt',
        '#retryMessageId',
        '#leaseExpiresAt',
        '#history',
      ],
      values: {
        ':retryWait': RETRY_WAIT,
        ':statusShard': statusShardOf(lease.key, RETRY_WAIT),
        ':next': iso(nextAttemptAt),
        ':error': lastError,
        ':now': iso(now),
        ':retryMessageId': retryMessageId,
        ...historyEntry(lease, 'retry', now, lastError),
      },
    });
  }

  async fail(lease: Lease, lastError: string, now: number): Promise<void> {
    await this.fenced('fail occurrence', lease, FAILED, {
      UpdateExpression: `SET #status = :failed, #statusShard = :statusShard, #lastError = :error, #failedAt = :now, ${APPEND_HISTORY} REMOVE #leaseExpiresAt, #nextAttemptAt`,
      names: ['#statusShard', '#lastError', '#failedAt', '#leaseExpiresAt', '#nextAttemptAt', '#history'],
      values: {
        ':failed': FAILED,
        ':statusShard': statusShardOf(lease.key, FAILED),
        ':error': lastError,
        ':now': iso(now),
        ...historyEntry(lease, 'failed', now, lastError),
      },
    });
  }

  async skipClaimed(lease: Lease, skip: ClaimedSkip, now: number): Promise<void> {
    const yielded = skip.yieldedTo === undefined ? '' : ', #yieldedTo = :yieldedTo';
    await this.fenced('record occurrence SKIPPED', lease, SKIPPED, {
      UpdateExpression: `SET #status = :skipped, #statusShard = :statusShard, #skipReason = :reason${yielded}, #skippedAt = :now, ${UNDO_CLAIM}`,
      names: [
        '#statusShard',
        '#skipReason',
        '#skippedAt',
        ...UNDO_CLAIM_NAMES,
        ...(yielded ? ['#yieldedTo' as const] : []),
      ],
      values: {
        ':skipped': SKIPPED,
        ':statusShard': statusShardOf(lease.key, SKIPPED),
        ':reason': skip.reason,
        ':now': iso(now),
        ':one': 1,
        ...(skip.yieldedTo === undefined ? {} : { ':yieldedTo': skip.yieldedTo }),
      },
    });
  }

  async bufferClaimed(lease: Lease, now: number): Promise<void> {
    await this.fenced('record occurrence BUFFERED', lease, BUFFERED, {
      UpdateExpression: `SET #status = :buffered, #statusShard = :statusShard, #bufferedAt = :now, ${UNDO_CLAIM}`,
      names: ['#statusShard', '#bufferedAt', ...UNDO_CLAIM_NAMES],
      values: {
        ':buffered': BUFFERED,
        ':statusShard': statusShardOf(lease.key, BUFFERED),
        ':now': iso(now),
        ':one': 1,
      },
    });
  }

  async revoke(key: OccurrenceKey, r: Revocation, now: number): Promise<RevokeResult> {
    try {
      const out = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tableKeyOf(key),
          ...revocationUpdate(key, r, now),
          // The lease expiry as it was: the holder's worker may still run until then (a heartbeat may have moved it).
          ReturnValues: 'ALL_OLD',
        }),
      );
      const before = rowOf(out.Attributes);
      return {
        revoked: true,
        ...(before?.leaseExpiresAt === undefined ? {} : { leaseExpiresAt: before.leaseExpiresAt }),
      };
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError('revoke the slot holder', error);
      // The SDK retried a revocation that had succeeded (its response was lost): the row carries our revocation id.
      return refusedRow<Occurrence>(error)?.leaseId === r.revocationId
        ? { revoked: true, unknown: true }
        : { revoked: false };
    }
  }

  async failUnheld(key: OccurrenceKey, lastError: string, now: number): Promise<boolean> {
    return this.unheld('fail unheld occurrence', key, now, {
      UpdateExpression: `SET #status = :failed, #statusShard = :statusShard, #lastError = :error, #failedAt = :now, ${APPEND_HISTORY} REMOVE #leaseExpiresAt, #nextAttemptAt`,
      names: ['#statusShard', '#lastError', '#failedAt', '#leaseExpiresAt', '#nextAttemptAt', '#history'],
      values: {
        ':failed': FAILED,
        ':statusShard': statusShardOf(key, FAILED),
        ':error': lastError,
        ...historyEntry(undefined, 'failed', now, lastError),
      },
    });
  }

  async completeUnheld(key: OccurrenceKey, reportKey: string, now: number): Promise<boolean> {
    return this.unheld('complete unheld occurrence', key, now, {
      UpdateExpression: `SET #status = :succeeded, #statusShard = :statusShard, #reportKey = :reportKey, #succeededAt = :now, ${APPEND_HISTORY} REMOVE #leaseExpiresAt, #nextAttemptAt`,
      names: ['#statusShard', '#reportKey', '#succeededAt', '#leaseExpiresAt', '#nextAttemptAt', '#history'],
      values: {
        ':succeeded': SUCCEEDED,
        ':statusShard': statusShardOf(key, SUCCEEDED),
        ':reportKey': reportKey,
        ...historyEntry(undefined, 'succeeded', now),
      },
    });
  }

  async markNotified(key: OccurrenceKey, notificationId: string, now: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tableKeyOf(key),
          // An announced success leaves the status index (its key goes, in the same write): nothing is left to do
          // for it, and no reader looks it up by status across jobs (its job's partition still has it).
          UpdateExpression: 'SET #notifiedAt = :now, #notificationId = :id REMOVE #statusShard',
          ConditionExpression: '#status = :succeeded AND attribute_not_exists(#notifiedAt)',
          ExpressionAttributeNames: names('#status', '#notifiedAt', '#notificationId', '#statusShard'),
          ExpressionAttributeValues: { ':succeeded': SUCCEEDED, ':now': iso(now), ':id': notificationId },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw asDependencyError('record notification', error);
    }
  }

  async markRequeued(
    key: OccurrenceKey,
    expected: RequeueExpectation,
    now: number,
    requeueId: string,
  ): Promise<boolean> {
    if (!isRequeueable(expected.status))
      throw new Error(`markRequeued: a ${expected.status} row does not wait for a worker`);
    const since = `#${STUCK_SINCE_ATTRIBUTE[expected.status]}` as Name;
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tableKeyOf(key),
          UpdateExpression:
            'SET #requeuedAt = :now, #requeueId = :requeueId, #requeueCount = if_not_exists(#requeueCount, :zero) + :one',
          // Still as observed: a claim changes the attempt, a heartbeat moves leaseExpiresAt past :before, and a
          // concurrent re-enqueue moves requeuedAt past it.
          ConditionExpression:
            `#status = :status AND #attempt = :attempt AND ${since} < :before AND ` +
            '(attribute_not_exists(#requeuedAt) OR #requeuedAt < :before)',
          ExpressionAttributeNames: names('#status', '#attempt', since, '#requeuedAt', '#requeueCount', '#requeueId'),
          ExpressionAttributeValues: {
            ':status': expected.status,
            ':attempt': expected.attempt,
            ':before': iso(expected.stuckBefore),
            ':now': iso(now),
            ':zero': 0,
            ':one': 1,
            ':requeueId': requeueId,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError('mark occurrence re-enqueued', error);
      // The SDK retried a write that had succeeded (its response was lost): the mark in the row is this call's.
      const current = refusedRow<Occurrence>(error);
      return current?.requeueId === requeueId;
    }
  }

  async get(key: OccurrenceKey): Promise<Occurrence | undefined> {
    try {
      const out = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: tableKeyOf(key), ConsistentRead: true }),
      );
      return rowOf(out.Item);
    } catch (error) {
      throw asDependencyError('read occurrence', error);
    }
  }

  /** An update of a row that is not finished and not under a live lease; false when the condition fails. */
  private async unheld(operation: string, key: OccurrenceKey, now: number, update: Update): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tableKeyOf(key),
          UpdateExpression: update.UpdateExpression,
          ConditionExpression:
            'attribute_exists(#jobId) AND #status IN (:pending, :buffered, :retryWait, :running) AND ' +
            '(#status <> :running OR #leaseExpiresAt < :now)',
          ExpressionAttributeNames: names('#jobId', '#status', '#leaseExpiresAt', ...update.names),
          ExpressionAttributeValues: {
            ':pending': PENDING,
            ':buffered': BUFFERED,
            ':retryWait': RETRY_WAIT,
            ':running': RUNNING,
            ':now': iso(now),
            ...update.values,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw asDependencyError(operation, error);
    }
  }

  /**
   * An update that applies only while the row is RUNNING under this lease; otherwise LeaseLostError, unless the row
   * already shows this very update (`leaves` under our lease id): a retried request whose first response was lost.
   */
  private async fenced(
    operation: string,
    lease: Lease,
    leaves: OccurrenceStatus,
    update: Update,
    signal?: AbortSignal,
  ): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tableKeyOf(lease.key),
          UpdateExpression: update.UpdateExpression,
          ConditionExpression:
            update.condition === undefined ? HELD_BY_LEASE : `${HELD_BY_LEASE} AND ${update.condition}`,
          ExpressionAttributeNames: names('#status', '#leaseId', ...update.names),
          ExpressionAttributeValues: { ':running': RUNNING, ':leaseId': lease.leaseId, ...update.values },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError(operation, error);
      const now = refusedRow<Occurrence>(error);
      if (now?.leaseId === lease.leaseId && now.status === leaves && leaves !== RUNNING) return;
      if (now !== undefined && update.stillHeld?.(now)) return;
      throw new LeaseLostError(
        operation,
        now === undefined
          ? 'the occurrence row is gone'
          : `the row is ${now.status} under lease ${now.leaseId ?? '(none)'} held by ${now.leaseOwner ?? '(nobody)'}, not ours (${lease.leaseId})`,
      );
    }
  }
}

interface Update {
  UpdateExpression: string;
  /** A condition beside the lease's. */
  condition?: string;
  names: Name[];
  values: Record<string, unknown>;
  /** A refused row that still means success (the lease is ours and what the write asked for holds already). */
  stillHeld?: (row: Occurrence) => boolean;
}

/**
 * Undo the claim a SKIPPED or BUFFERED start made: it ran nothing, so it gives its attempt back, and its lease ends
 * (the expiry and owner go; the lease id stays, so that a retried request recognises its own write).
 */
const UNDO_CLAIM = '#attempt = #attempt - :one REMOVE #leaseExpiresAt, #leaseOwner';
const UNDO_CLAIM_NAMES: Name[] = ['#attempt', '#leaseExpiresAt', '#leaseOwner'];

/** The UpdateItem of a revocation (see Revocation): its expression, condition and values. */
function revocationUpdate(key: OccurrenceKey, r: Revocation, now: number) {
  const held =
    r.observed.status === RUNNING
      ? '#status = :running AND #leaseId = :held'
      : '#status = :retryWait AND #attempt = :attempt';
  const observed =
    r.observed.status === RUNNING
      ? { ':running': RUNNING, ':held': r.observed.leaseId }
      : { ':retryWait': RETRY_WAIT, ':attempt': r.observed.attempt };
  const heldNames: Name[] =
    r.observed.status === RUNNING ? ['#status', '#leaseId'] : ['#status', '#attempt', '#leaseId'];
  if (r.mode === 'expired') {
    if (r.observed.status !== RUNNING) throw new Error('revoke: only a RUNNING holder has a lease to expire');
    return {
      UpdateExpression: 'SET #leaseId = :revocation',
      ConditionExpression: `${held} AND #leaseExpiresAt < :now`,
      ExpressionAttributeNames: names(...heldNames, '#leaseExpiresAt'),
      ExpressionAttributeValues: { ...observed, ':revocation': r.revocationId, ':now': iso(now) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    };
  }
  return {
    UpdateExpression:
      'SET #status = :cancelled, #statusShard = :statusShard, #cancelledBy = :by, #cancelledAt = :now, #leaseId = :revocation ' +
      // leaseExpiresAt stays: until then its worker may still be working, and whoever takes the slot waits for it.
      'REMOVE #nextAttemptAt',
    // A RUNNING holder past its commit point is left to finish (job-slot.ts waits for it as for a cancelled one).
    ConditionExpression: r.observed.status === RUNNING ? `${held} AND ${NOT_COMMITTING}` : held,
    ExpressionAttributeNames: names(
      ...heldNames,
      '#statusShard',
      '#cancelledBy',
      '#cancelledAt',
      '#nextAttemptAt',
      ...(r.observed.status === RUNNING ? ['#committingLease' as const] : []),
    ),
    ExpressionAttributeValues: {
      ...observed,
      ':cancelled': CANCELLED,
      ':statusShard': statusShardOf(key, CANCELLED),
      ':by': r.by,
      ':now': iso(now),
      ':revocation': r.revocationId,
    },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

/** One entry appended to the row's attempt history, in the same write that records the outcome. */
const APPEND_HISTORY = '#history = list_append(if_not_exists(#history, :noHistory), :historyEntry)';

function historyEntry(lease: Lease | undefined, outcome: AttemptRecord['outcome'], now: number, error?: string) {
  const entry: AttemptRecord = {
    ...(lease?.attempt === undefined ? {} : { attempt: lease.attempt }),
    outcome,
    at: iso(now),
    ...(lease === undefined ? {} : { leaseId: lease.leaseId }),
    ...(error === undefined ? {} : { error: error.slice(0, ATTEMPT_ERROR_MAX_CHARS) }),
  };
  return { ':noHistory': [], ':historyEntry': [entry] };
}

/**
 * The parts of a reopening that mark it as a bulk run's: the id added to the string set `bulkActions`, and the
 * condition that refuses a row already holding it (the run acted on it before an interruption). Empty without a run.
 */
function bulkMarker(bulkId: string | undefined): {
  add: string;
  condition: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
} {
  if (bulkId === undefined) return { add: '', condition: '', names: {}, values: {} };
  return {
    add: ' ADD #bulkActions :bulkIds',
    condition: ' AND (attribute_not_exists(#bulkActions) OR NOT contains(#bulkActions, :bulkId))',
    names: { '#bulkActions': 'bulkActions' },
    // A Set is written as a DynamoDB string set (SS), which ADD merges.
    values: { ':bulkIds': new Set([bulkId]), ':bulkId': bulkId },
  };
}

/** A row read or returned by a write, as the protocol sees it (its series split into job and schedule key). */
const rowOf = <T extends Occurrence = Occurrence>(item: unknown): T | undefined =>
  item === undefined ? undefined : fromTableItem(item as T);

/** The row a conditional write refused, as the protocol sees it. */
const refusedRow = <T extends Occurrence>(error: unknown): T | undefined => rowOf<T>(refusedItem<T>(error));

/**
 * Additions for the occurrences CLI. A subclass rather than edits to the class above, so that the store the
 * functions use stays exactly as it is; the CLI constructs this one.
 */
export class OperatorOccurrenceStore extends DynamoOccurrenceStore implements ReopenableStore, CancellableStore {
  /** FAILED to PENDING with a fresh attempt budget; see functions/protocol/manual-retry.ts. */
  async reopenFailed(key: OccurrenceKey, request: ReopenRequest): Promise<ReopenResult> {
    const now = iso(request.now);
    const bulk = bulkMarker(request.bulkId);
    const entry: ReopenRecord = {
      outcome: 'reopened',
      at: now,
      ...(request.by === undefined ? {} : { by: request.by }),
      ...(request.bulkId === undefined ? {} : { bulkId: request.bulkId }),
    };
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tableKeyOf(key),
          UpdateExpression:
            'SET #status = :pending, #statusShard = :statusShard, #previousAttempts = if_not_exists(#previousAttempts, :zero) + #attempt, #attempt = :zero, ' +
            '#deadlineAt = :deadline, #ttl = :ttl, #worker = :worker, #manualRetryAt = :now, #manualRetries = if_not_exists(#manualRetries, :zero) + :one, ' +
            // requeuedAt: the reconciler judges a PENDING row stuck from its last enqueue, this one, not from createdAt.
            `#requeuedAt = :now, ${APPEND_HISTORY} REMOVE #failedAt, #nextAttemptAt, #leaseExpiresAt, #retryMessageId${bulk.add}`,
          ConditionExpression: `attribute_exists(#jobId) AND #status = :failed${bulk.condition}`,
          ExpressionAttributeNames: {
            '#jobId': 'jobId',
            '#status': 'status',
            '#statusShard': 'statusShard',
            '#attempt': 'attempt',
            '#deadlineAt': 'deadlineAt',
            '#ttl': 'ttl',
            '#worker': 'worker',
            '#failedAt': 'failedAt',
            '#nextAttemptAt': 'nextAttemptAt',
            '#leaseExpiresAt': 'leaseExpiresAt',
            '#previousAttempts': 'previousAttempts',
            '#manualRetryAt': 'manualRetryAt',
            '#manualRetries': 'manualRetries',
            '#history': 'history',
            '#requeuedAt': 'requeuedAt',
            '#retryMessageId': 'retryMessageId',
            ...bulk.names,
          },
          ExpressionAttributeValues: {
            ':pending': PENDING,
            ':statusShard': statusShardOf(key, PENDING),
            ':failed': FAILED,
            ':zero': 0,
            ':one': 1,
            ':deadline': iso(request.deadlineAt),
            ':ttl': request.ttl,
            ':worker': request.worker,
            ':now': now,
            ':noHistory': [],
            ':historyEntry': [entry],
            ...bulk.values,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { reopened: true };
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError('reopen failed occurrence', error);
      const current = refusedRow<Occurrence & ManualRetryFields>(error);
      // The SDK retried a reopen that had succeeded (its response was lost): the row shows this very reopening.
      if (current?.status === PENDING && current.manualRetryAt === now) return { reopened: true };
      return { reopened: false, current };
    }
  }

  /**
   * An operator's cancel (functions/protocol/cancel-occurrence.ts): CANCELLED with who and why, a history entry, and
   * for a RUNNING row its lease id replaced (its expiry kept: its worker may work until then), only while the row is
   * as observed and no lease of it ever reached its commit point.
   */
  async cancel(key: OccurrenceKey, request: CancelRequest): Promise<CancelWriteResult> {
    const { observed, revocationId, note } = request;
    const now = iso(request.now);
    const lease = observed.leaseId === undefined ? 'attribute_not_exists(#leaseId)' : '#leaseId = :observedLease';
    const entry: AttemptRecord = {
      outcome: 'cancelled',
      at: now,
      by: request.by,
      ...(note === undefined ? {} : { note }),
    };
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tableKeyOf(key),
          UpdateExpression:
            'SET #status = :cancelled, #statusShard = :statusShard, #cancelledAt = :now, #cancelledByOperator = :by' +
            `${note === undefined ? '' : ', #cancelNote = :note'}${revocationId === undefined ? '' : ', #leaseId = :revocation'}, ` +
            `${APPEND_HISTORY} REMOVE #nextAttemptAt`,
          ConditionExpression:
            `attribute_exists(#jobId) AND #status = :observedStatus AND #attempt = :attempt AND ${lease} AND ` +
            // Any lease's commit point, not only the current one's: a put sent then may still land (a frozen worker).
            'attribute_not_exists(#committingLease)',
          ExpressionAttributeNames: names(
            '#jobId',
            '#status',
            '#statusShard',
            '#attempt',
            '#leaseId',
            '#cancelledAt',
            '#cancelledByOperator',
            '#history',
            '#nextAttemptAt',
            '#committingLease',
            ...(note === undefined ? [] : ['#cancelNote' as const]),
          ),
          ExpressionAttributeValues: {
            ':cancelled': CANCELLED,
            ':statusShard': statusShardOf(key, CANCELLED),
            ':now': now,
            ':by': request.by,
            ':observedStatus': observed.status,
            ':attempt': observed.attempt,
            ':noHistory': [],
            ':historyEntry': [entry],
            ...(observed.leaseId === undefined ? {} : { ':observedLease': observed.leaseId }),
            ...(note === undefined ? {} : { ':note': note }),
            ...(revocationId === undefined ? {} : { ':revocation': revocationId }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { cancelled: true };
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError('cancel occurrence', error);
      const current = refusedRow<Occurrence>(error);
      // The SDK retried a cancel that had succeeded (its response was lost): the row shows this very cancel.
      if (current?.status === CANCELLED && current.cancelledAt === now && current.cancelledByOperator === request.by)
        return { cancelled: true };
      return { cancelled: false, current };
    }
  }

  /**
   * Move a row's status index key from `from` to `to` (`undefined`: remove it, the row leaves the index), only while
   * the row still has `from` and, when `announced` is given, still is (true) or is not (false) announced: the
   * target was chosen from an index entry that may lag the row. For `occurrences reindex`. False when the row is not
   * as expected by now: a writer changed it (its new key is already the new rule's), or an earlier run, or a retried
   * request whose first response was lost, moved it.
   */
  async moveIndexKey(
    key: OccurrenceKey,
    move: { readonly from: string; readonly to: string | undefined; readonly announced?: boolean },
  ): Promise<boolean> {
    const announced =
      move.announced === undefined
        ? ''
        : move.announced
          ? ' AND attribute_exists(#notifiedAt)'
          : ' AND attribute_not_exists(#notifiedAt)';
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tableKeyOf(key),
          UpdateExpression: move.to === undefined ? 'REMOVE #statusShard' : 'SET #statusShard = :to',
          ConditionExpression: `#statusShard = :from${announced}`,
          ExpressionAttributeNames: names('#statusShard', ...(announced ? ['#notifiedAt' as const] : [])),
          ExpressionAttributeValues: { ':from': move.from, ...(move.to === undefined ? {} : { ':to': move.to }) },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError('move the status index key', error);
      return false;
    }
  }
}
