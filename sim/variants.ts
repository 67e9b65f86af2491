/**
 * The protocols the simulation can run: ours, the original design's worker as its commentary describes it, and deliberately
 * broken variants that the invariants must catch. A variant is job settings plus, at most, a subclass of the real
 * DynamoDB adapter: nothing in functions/ is edited to build one.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoOccurrenceStore } from '../functions/aws/occurrence-store';
import {
  type JobSettingsInput,
  QUEUE_RETENTION_SECONDS,
  SQS_MAX_VISIBILITY_SECONDS,
} from '../functions/protocol/job-settings';
import { iso, type OccurrenceKey } from '../functions/protocol/occurrence';
import type { ClaimRequest, ClaimResult, Lease, OccurrenceStore } from '../functions/protocol/ports';
import { statusShardOf } from '../functions/protocol/table-schema';

export interface ProtocolVariant {
  readonly name: string;
  readonly settings: Omit<JobSettingsInput, 'id'>;
  /** The occurrence store the worker uses; the trigger and notifier always get the real adapter. */
  readonly workerStore?: (client: DynamoDBDocumentClient, table: string) => OccurrenceStore;
}

/** Our defaults: lease 120 s, heartbeat 40 s, margin 15 s, backoff 4 s doubling to 30 min with 20 % jitter. */
export const OURS: ProtocolVariant = { name: 'ours (defaults)', settings: {} };

/** Ours with the original design's lease and ticker (120 s, 45 s). */
export const OURS_AT_ORIGINAL_TIMING: ProtocolVariant = {
  name: 'ours at the original lease',
  settings: { leaseSeconds: 120, heartbeatSeconds: 45, leaseSafetyMarginSeconds: 15 },
};

/**
 * The heartbeat of the original design: `_ = Extend(...)`. Every extend is sent, and whatever it answers (a failed
 * condition, an error, a timeout) the ticker carries on as if it had worked, so nothing aborts the job.
 */
class ExtendResultIgnored extends DynamoOccurrenceStore {
  override async extend(lease: Lease, leaseExpiresAt: number, now: number, signal?: AbortSignal): Promise<void> {
    try {
      await super.extend(lease, leaseExpiresAt, now, signal);
    } catch {
      // dropped, as in the original design
    }
  }
}

/**
 * The original design's worker as its commentary describes it: a 120 s lease, a 45 s ticker whose extend result is dropped,
 * Complete conditional on the lease (so loss surfaces there), write-once commit, and `1 << min(attempt, 6)` s
 * between attempts with no jitter, attempt limit or deadline of its own (the largest our settings allow).
 */
export const ORIGINAL: ProtocolVariant = {
  name: 'original design',
  settings: {
    leaseSeconds: 120,
    heartbeatSeconds: 45,
    // The original design hid a retry for its backoff alone, with no allowance for clock skew: the smallest margin our settings
    // allow (it also sets nothing else here: the original design's extend results are dropped, so no margin abort can happen).
    leaseSafetyMarginSeconds: 1,
    // 2 * 2^(attempt-1) s capped at 64 s is exactly 1 << min(attempt, 6) s.
    retry: {
      baseDelaySeconds: 2,
      maxDelaySeconds: 64,
      jitter: 0,
      maxAttempts: 100,
      deadlineSeconds: QUEUE_RETENTION_SECONDS - SQS_MAX_VISIBILITY_SECONDS,
    },
  },
  workerStore: (client, table) => new ExtendResultIgnored(client, table),
};

/** Broken on purpose: our worker, but its heartbeat ignores the extend result (the original design's bug at our timing). */
export const BROKEN_IGNORED_EXTEND: ProtocolVariant = {
  name: 'broken: extend result ignored',
  settings: {},
  workerStore: (client, table) => new ExtendResultIgnored(client, table),
};

/** Broken on purpose: complete without the lease condition; a worker that lost its lease can still finish the row. */
class UnconditionalComplete extends DynamoOccurrenceStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName_: string,
  ) {
    super(doc, tableName_);
  }

  override async complete(lease: Lease, reportKey: string, now: number): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName_,
        Key: { jobId: lease.key.jobId, scheduledTime: lease.key.scheduledTime },
        UpdateExpression:
          // Broken only in its missing fence: it writes the status index key as the real complete does.
          'SET #status = :succeeded, #statusShard = :statusShard, #reportKey = :reportKey, #succeededAt = :now, #leaseId = :leaseId REMOVE #leaseExpiresAt',
        ExpressionAttributeNames: {
          '#status': 'status',
          '#statusShard': 'statusShard',
          '#reportKey': 'reportKey',
          '#succeededAt': 'succeededAt',
          '#leaseId': 'leaseId',
          '#leaseExpiresAt': 'leaseExpiresAt',
        },
        ExpressionAttributeValues: {
          ':succeeded': 'SUCCEEDED',
          ':statusShard': statusShardOf(lease.key, 'SUCCEEDED'),
          ':reportKey': reportKey,
          ':now': iso(now),
          ':leaseId': lease.leaseId,
        },
      }),
    );
  }
}

export const BROKEN_UNCONDITIONAL_COMPLETE: ProtocolVariant = {
  name: 'broken: unconditional complete',
  settings: {},
  workerStore: (client, table) => new UnconditionalComplete(client, table),
};

/**
 * Broken on purpose: the claim tells the worker every attempt is its first, so the worker never looks for a
 * committed report before running the job (as if the look-up were skipped on the message rather than the row). The
 * write-once put still keeps one report; what breaks is a job run again after commit-then-die.
 */
class ClaimSaysFirstAttempt extends DynamoOccurrenceStore {
  override async claim(key: OccurrenceKey, request: ClaimRequest): Promise<ClaimResult> {
    const result = await super.claim(key, request);
    return result.claimed ? { claimed: true, occurrence: { ...result.occurrence, attempt: 1 } } : result;
  }
}

export const BROKEN_NEVER_LOOKS: ProtocolVariant = {
  name: 'broken: never looks for a committed report',
  settings: {},
  workerStore: (client, table) => new ClaimSaysFirstAttempt(client, table),
};

export const VARIANTS: Readonly<Record<string, ProtocolVariant>> = {
  ours: OURS,
  'ours-original-timing': OURS_AT_ORIGINAL_TIMING,
  original: ORIGINAL,
  'broken-ignored-extend': BROKEN_IGNORED_EXTEND,
  'broken-unconditional-complete': BROKEN_UNCONDITIONAL_COMPLETE,
  'broken-never-looks': BROKEN_NEVER_LOOKS,
};
