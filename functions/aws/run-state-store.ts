/**
 * The fenced writes of a resumable run on DynamoDB: each is conditioned on the row being RUNNING under the lease, as
 * every write of the worker after its claim. A class beside DynamoOccurrenceStore rather than more of its methods,
 * so that the claim protocol's store stays as it is; it writes only the run's own attributes (checkpoint.ts) and,
 * for a continuation, the lease fields.
 */

import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { OpenUpload, RunCheckpoint, RunProgress } from '../protocol/checkpoint';
import { LeaseLostError } from '../protocol/errors';
import { CONTINUED_LEASE_PREFIX, iso, type Occurrence, OccurrenceStatus } from '../protocol/occurrence';
import type { Lease, RunStateStore } from '../protocol/ports';
import { fromTableItem, tableKeyOf } from '../protocol/table-schema';
import { asDependencyError, isConditionalFailure, refusedItem } from './classify-error';
import { EXPIRY_NOT_LATER, runsLaterUnder } from './lease-expiry';

const HELD_BY_LEASE = '#status = :running AND #leaseId = :leaseId';

/** The lease id a continuation leaves in the row: no holder's, and it names the segment's lease for a retried write. */
export const continuedLeaseId = (leaseId: string): string => `${CONTINUED_LEASE_PREFIX}${leaseId}`;

interface Update {
  readonly expression: string;
  /** A condition beside the lease's. */
  readonly condition?: string;
  readonly names: Record<string, string>;
  readonly values: Record<string, unknown>;
}

export class DynamoRunStateStore implements RunStateStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async checkpoint(lease: Lease, checkpoint: RunCheckpoint, _now: number): Promise<void> {
    await this.fenced('record checkpoint', lease, {
      expression: 'SET #checkpoint = :checkpoint',
      names: { '#checkpoint': 'checkpoint' },
      values: { ':checkpoint': checkpoint },
    });
  }

  async recordUpload(lease: Lease, upload: OpenUpload, _now: number): Promise<void> {
    await this.fenced('record report upload', lease, {
      expression: 'SET #openUpload = :upload',
      names: { '#openUpload': 'openUpload' },
      values: { ':upload': upload },
    });
  }

  /** Never moves the expiry back (lease-expiry.ts). */
  async extendWithProgress(
    lease: Lease,
    leaseExpiresAt: number,
    now: number,
    progress: RunProgress,
    signal?: AbortSignal,
  ): Promise<void> {
    const expires = iso(leaseExpiresAt);
    await this.fenced(
      'extend lease',
      lease,
      {
        expression: 'SET #leaseExpiresAt = :expires, #heartbeatAt = :now, #progress = :progress',
        condition: EXPIRY_NOT_LATER,
        names: { '#leaseExpiresAt': 'leaseExpiresAt', '#heartbeatAt': 'heartbeatAt', '#progress': 'progress' },
        values: { ':expires': expires, ':now': iso(now), ':progress': progress },
      },
      signal,
      runsLaterUnder(lease, expires),
    );
  }

  async continueRun(
    lease: Lease,
    runStartedAt: string,
    releasedLeaseExpiresAt: number,
    now: number,
    progress: RunProgress | undefined,
    upload: OpenUpload | undefined,
  ): Promise<void> {
    const released = continuedLeaseId(lease.leaseId);
    const withProgress = progress === undefined ? '' : ', #progress = :progress';
    const withUpload = upload === undefined ? '' : ', #openUpload = :upload';
    await this.fenced(
      'record continuation',
      lease,
      {
        // RUNNING with a lease that expired: the claim condition takes it at once, and the reconciler re-enqueues
        // it if the new message is lost. The attempt the claim counted is taken back: a segment is not an attempt.
        expression:
          'SET #leaseId = :released, #leaseExpiresAt = :expired, #continuedAt = :now, #attempt = #attempt - :one, ' +
          `#segment = if_not_exists(#segment, :zero) + :one, #runStartedAt = if_not_exists(#runStartedAt, :runStartedAt)${withProgress}${withUpload}`,
        names: {
          '#leaseExpiresAt': 'leaseExpiresAt',
          '#continuedAt': 'continuedAt',
          '#attempt': 'attempt',
          '#segment': 'segment',
          '#runStartedAt': 'runStartedAt',
          ...(progress === undefined ? {} : { '#progress': 'progress' }),
          ...(upload === undefined ? {} : { '#openUpload': 'openUpload' }),
        },
        values: {
          ':released': released,
          ':expired': iso(releasedLeaseExpiresAt),
          ':now': iso(now),
          ':one': 1,
          ':zero': 0,
          ':runStartedAt': runStartedAt,
          ...(progress === undefined ? {} : { ':progress': progress }),
          ...(upload === undefined ? {} : { ':upload': upload }),
        },
      },
      undefined,
      // A retried request whose first response was lost finds the row released by this very lease.
      (row) => row.status === OccurrenceStatus.RUNNING && row.leaseId === released,
    );
  }

  private async fenced(
    operation: string,
    lease: Lease,
    update: Update,
    signal?: AbortSignal,
    alreadyApplied?: (row: Occurrence) => boolean,
  ): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tableKeyOf(lease.key),
          UpdateExpression: update.expression,
          ConditionExpression:
            update.condition === undefined ? HELD_BY_LEASE : `${HELD_BY_LEASE} AND ${update.condition}`,
          ExpressionAttributeNames: { '#status': 'status', '#leaseId': 'leaseId', ...update.names },
          ExpressionAttributeValues: {
            ':running': OccurrenceStatus.RUNNING,
            ':leaseId': lease.leaseId,
            ...update.values,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError(operation, error);
      const refused = refusedItem<Occurrence>(error);
      const row = refused === undefined ? undefined : fromTableItem(refused);
      if (row !== undefined && alreadyApplied?.(row)) return;
      throw new LeaseLostError(
        operation,
        row === undefined
          ? 'the occurrence row is gone'
          : `the row is ${row.status} under lease ${row.leaseId ?? '(none)'}, not ours (${lease.leaseId})`,
      );
    }
  }
}
