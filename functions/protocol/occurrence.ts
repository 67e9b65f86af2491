/**
 * The occurrence: one scheduled run of one job, identified by (jobId, scheduledTime).
 * Its row in the store is the single source of truth about progress.
 */
import { quoteValue } from './quote-value';
import type { JsonValue } from './schedule-key';
import type { OverlapPolicy } from './setting-basics';

/** Where an occurrence is in its life; a row's `status` is one of these. */
export const OccurrenceStatus = {
  /** Written by the trigger; waiting for its first claim. */
  PENDING: 'PENDING',
  /** Claimed by a worker that holds the lease `leaseId` until `leaseExpiresAt`. */
  RUNNING: 'RUNNING',
  /** An attempt failed; the next one may start at `nextAttemptAt`. */
  RETRY_WAIT: 'RETRY_WAIT',
  /** The report is committed at `reportKey`. Terminal. */
  SUCCEEDED: 'SUCCEEDED',
  /** Out of attempts or past the deadline; `lastError` says why. Terminal. */
  FAILED: 'FAILED',
  /**
   * Not run, and never will be: `skipReason` says why (overlap: `yieldedTo` is the occurrence it yielded to; missed:
   * first recorded after the job's catch-up window; paused: delivered while the job was paused). Terminal.
   */
  SKIPPED: 'SKIPPED',
  /** Waiting for the job's running slot (overlap bufferOne or bufferAll); started in scheduled-time order. */
  BUFFERED: 'BUFFERED',
  /**
   * Stopped, and never run again: by a later occurrence under overlap cancelOther (`cancelledBy`), or by an operator
   * (`cancelledByOperator`, `cancelNote`; cancel-occurrence.ts). A running one's lease was revoked. Terminal.
   */
  CANCELLED: 'CANCELLED',
} as const;
/** One of the statuses of the `OccurrenceStatus` object. */
export type OccurrenceStatus = (typeof OccurrenceStatus)[keyof typeof OccurrenceStatus];

export const TERMINAL_STATUSES: readonly OccurrenceStatus[] = [
  OccurrenceStatus.SUCCEEDED,
  OccurrenceStatus.FAILED,
  OccurrenceStatus.SKIPPED,
  OccurrenceStatus.CANCELLED,
];

/**
 * The lease id a resumable job's continuation leaves in its RUNNING row when it gives its lease up between segments
 * (functions/aws/run-state-store.ts): the run goes on in its next segment, under the next claim.
 */
export const CONTINUED_LEASE_PREFIX = 'continued:';

/**
 * The lease id a later occurrence's start writes over an expired lease it takes the job's running slot from
 * (functions/protocol/job-slot.ts), so that the old holder's late extend fails: `revoked-by-<its time>-<its lease>`.
 */
export const REVOKED_LEASE_PREFIX = 'revoked-by-';

/**
 * The lease id an operator's cancel writes over a live lease (cancel-occurrence.ts): `cancelled-by-operator-<uuid>`.
 * The holder's next extend fails, and so does every fenced write of it after that.
 */
export const OPERATOR_CANCEL_LEASE_PREFIX = 'cancelled-by-operator-';

/** A lease another occurrence revoked: nobody holds it, and no holder's message will come back for it. */
export const isRevokedLease = (o: Pick<Occurrence, 'status' | 'leaseId'>): boolean =>
  o.status === OccurrenceStatus.RUNNING && o.leaseId?.startsWith(REVOKED_LEASE_PREFIX) === true;

/** A resumable run between two segments: nobody holds the lease, but the run is not over. */
export const isContinuing = (o: Pick<Occurrence, 'status' | 'leaseId'>): boolean =>
  o.status === OccurrenceStatus.RUNNING && o.leaseId?.startsWith(CONTINUED_LEASE_PREFIX) === true;

/** A RUNNING row whose lease reached its commit point (`committingLease`): its report may be committed already. */
export const isCommitting = (o: Pick<Occurrence, 'status' | 'leaseId' | 'committingLease'>): boolean =>
  o.status === OccurrenceStatus.RUNNING && o.leaseId !== undefined && o.committingLease === o.leaseId;

/** An operator cancelled it (cancel-occurrence.ts), rather than a later occurrence under cancelOther. */
export const isOperatorCancel = (o: Pick<Occurrence, 'status' | 'cancelledByOperator'>): boolean =>
  o.status === OccurrenceStatus.CANCELLED && o.cancelledByOperator !== undefined;

/** Why an occurrence was SKIPPED. */
export const SkipReason = { overlap: 'overlap', missed: 'missed', paused: 'paused' } as const;
/** One of the reasons of the `SkipReason` object. */
export type SkipReason = (typeof SkipReason)[keyof typeof SkipReason];

/**
 * What identifies an occurrence: its job, its schedule key when the job takes schedules at run time, and its
 * scheduled time. The row's key in the table is its series (`seriesOf`: the job id, or `jobId#scheduleKey`) and its
 * scheduled time (table-schema.ts).
 */
export interface OccurrenceKey {
  /** The job's id, as given to `addJob`. */
  readonly jobId: string;
  /** The schedule key, for an occurrence of a schedule created at run time; absent for a job's fixed schedule. */
  readonly scheduleKey?: string;
  /** UTC, whole seconds: `2026-11-30T06:00:00Z`. */
  readonly scheduledTime: string;
}

/** The row as stored. Timestamps are ISO-8601 UTC with milliseconds, so they sort and compare as strings. */
export interface Occurrence extends OccurrenceKey {
  /** Where the occurrence is in its life. */
  readonly status: OccurrenceStatus;
  /** Claims so far; the attempt that is running or last ran. */
  readonly attempt: number;
  /**
   * The worker (the group of jobs with one function and one job queue) whose queue carries the occurrence: where the
   * reconciler and `occurrences retry` re-enqueue it. Absent on rows recorded before workers existed.
   */
  readonly worker?: string;
  /**
   * The worker's job queue and stuck threshold when the occurrence was recorded (worker-routes.ts): where the
   * reconciler re-sends it. Absent on rows recorded before rows carried their route: the reconciler looks it up.
   */
  readonly queueUrl?: string;
  /** The worker's stuck threshold recorded with `queueUrl`: how long the row may wait before the reconciler re-sends it. */
  readonly stuckAfterSeconds?: number;
  /** The retry deadline: no attempt starts after it (the job's `retry.deadline` after the scheduled time). */
  readonly deadlineAt: string;
  /** When the row was first recorded. */
  readonly createdAt: string;
  /** Set by complete: where the committed report is. */
  readonly reportKey?: string;
  /** The lease of the last claim: the worker that holds it is the only one whose writes the row accepts. */
  readonly leaseId?: string;
  /** Who holds the lease: the worker invocation's log stream and request id. */
  readonly leaseOwner?: string;
  /** When the lease ends unless its holder extends it (the heartbeat). */
  readonly leaseExpiresAt?: string;
  /** When the lease holder last extended its lease. */
  readonly heartbeatAt?: string;
  /** When the last attempt was claimed. */
  readonly claimedAt?: string;
  /** When a failed attempt gave its lease back to wait for a retry. */
  readonly releasedAt?: string;
  /** RETRY_WAIT: when the next attempt may start. */
  readonly nextAttemptAt?: string;
  /** The SQS message that carries the waiting retry (hidden until nextAttemptAt); other copies are dropped. */
  readonly retryMessageId?: string;
  /** The error of the last failed attempt, cut short. */
  readonly lastError?: string;
  /** When it was recorded SUCCEEDED. */
  readonly succeededAt?: string;
  /** When it was recorded FAILED. */
  readonly failedAt?: string;
  /** Set once the "report ready" notification was published. */
  readonly notifiedAt?: string;
  /** The SNS message id of the "report ready" notification. */
  readonly notificationId?: string;
  /**
   * How each attempt ended, oldest first, as recorded by the worker's fenced writes (complete, release, fail) and
   * by the unheld ones. Bounded: at most one entry per attempt (maxAttempts is at most 100) plus the unheld
   * close, with errors cut to ATTEMPT_ERROR_MAX_CHARS. An attempt whose worker died leaves no entry; the next
   * claim's attempt number shows the gap.
   */
  readonly history?: readonly AttemptRecord[];
  /** Set when the reconciler (or an operator) last re-enqueued the occurrence; see requeue-occurrence.ts. */
  readonly requeuedAt?: string;
  /** How often it was re-enqueued. */
  readonly requeueCount?: number;
  /** The id of the last re-enqueue, so that a retried request recognises its own write. */
  readonly requeueId?: string;
  /**
   * The status index's partition key, `${status}#${shard}`, written by the store in every write that sets the
   * status (table-schema.ts); absent on rows written before the index was sharded.
   */
  readonly statusShard?: string;
  /** SKIPPED: why. */
  readonly skipReason?: SkipReason;
  /** SKIPPED for overlap: the scheduled time of the occurrence of the same job it yielded to. */
  readonly yieldedTo?: string;
  /** CANCELLED: the scheduled time of the occurrence that cancelled it (overlap cancelOther). */
  readonly cancelledBy?: string;
  /** CANCELLED by an operator (cancel-occurrence.ts): who, as the operator's identity string. */
  readonly cancelledByOperator?: string;
  /** CANCELLED by an operator: why, as the operator wrote it. */
  readonly cancelNote?: string;
  /**
   * The commit point: the lease that is committing its report (the worker writes it, fenced, just before the S3 put
   * or the multipart complete). An operator's cancel, and a cancelOther revoke, are refused while it names the
   * row's lease: past this point the report may be committed, so the holder is left to finish.
   */
  readonly committingLease?: string;
  /** When the lease `committingLease` reached its commit point. */
  readonly committingAt?: string;
  /** When it was SKIPPED, BUFFERED or CANCELLED. */
  readonly skippedAt?: string;
  /** When it was recorded BUFFERED. */
  readonly bufferedAt?: string;
  /** BUFFERED for its job's maxConcurrency rather than its series' slot: WAITING (concurrency-cap.ts). */
  readonly waitingFor?: 'capacity';
  /** WAITING: the line it waits in (the tenant from its input, or its schedule key). */
  readonly fairnessKey?: string;
  /**
   * When it was last recorded WAITING: equal to bufferedAt while it still waits for capacity; a later BUFFERED for
   * its series' slot (after it took a unit) leaves `waitingFor` behind but writes a newer bufferedAt.
   */
  readonly waitingSince?: string;
  /** When it was recorded CANCELLED. */
  readonly cancelledAt?: string;
  /** Recorded by an operator (`occurrences run` or `backfill`), not by the schedule: who asked. */
  readonly requestedBy?: string;
  /** `run`: an occurrence now at an operator's request; `backfill`: a past time recorded by an operator. */
  readonly origin?: 'run' | 'backfill';
  /** This occurrence's own overlap policy, when an operator gave one (`run --overlap`, `backfill --overlap`). */
  readonly overlap?: OverlapPolicy;
  /** The input of the schedule created at run time that started it, as it was when the schedule fired. */
  readonly input?: JsonValue;
  /**
   * Its job's lateAfter when the schedule recorded it: not started this long after it was due (the scheduled time,
   * or the retry's nextAttemptAt), the reconciler counts it late (reconcile-late.ts). Absent: never judged late.
   */
  readonly lateAfterSeconds?: number;
  /** DynamoDB TTL, epoch seconds. */
  readonly ttl: number;
}

/** How one attempt of an occurrence ended, as kept in its `history`. */
export interface AttemptRecord {
  /** Absent for an unheld close (no attempt ran: attempts or deadline were used up between runs). */
  readonly attempt?: number;
  /**
   * `reopened`: an operator retried the FAILED occurrence (requeue-occurrence.ts); attempts count afresh after it.
   * `cancelled`: an operator cancelled it (cancel-occurrence.ts); `by` and `note` say who and why.
   */
  readonly outcome: 'succeeded' | 'retry' | 'failed' | 'reopened' | 'cancelled';
  /** When the attempt ended. */
  readonly at: string;
  /** The lease the attempt held, if it held one. */
  readonly leaseId?: string;
  /** The attempt's error, cut to a few hundred characters. */
  readonly error?: string;
  /** An operator's action (`cancelled`): who, as the operator's identity string. */
  readonly by?: string;
  /** An operator's action (`cancelled`): why, as the operator wrote it. */
  readonly note?: string;
}

export const ATTEMPT_ERROR_MAX_CHARS = 300;

/** Attribute names the table and its index are defined on (shared with the CDK stack). */
export const OccurrenceAttributes = {
  /** The partition key: the occurrence's series (schedule-key.ts), which is the job id unless the job takes keys. */
  jobId: 'jobId',
  scheduledTime: 'scheduledTime',
  status: 'status',
  /** The status index's partition key, `${status}#${shard}` (table-schema.ts). */
  statusShard: 'statusShard',
  ttl: 'ttl',
} as const;

/** The key of an occurrence (or of any row or message that carries one), without its other fields. */
export function occurrenceKeyOf(o: OccurrenceKey): OccurrenceKey {
  return {
    jobId: o.jobId,
    ...(o.scheduleKey === undefined ? {} : { scheduleKey: o.scheduleKey }),
    scheduledTime: o.scheduledTime,
  };
}

const SCHEDULED_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The scheduled times an occurrence may have, in UTC: EventBridge Scheduler's cron years, 1970-2199. Inside them a
 * key has four-digit years, so keys, and times derived from them (a deadline at most 13.5 days later), sort as
 * strings in time order. The schedule evaluator (schedule-times.ts) yields no time outside them either.
 */
export const SCHEDULED_TIME_RANGE = {
  earliest: '1970-01-01T00:00:00Z',
  latest: '2199-12-31T23:59:59Z',
} as const;
const EARLIEST_MS = Date.parse(SCHEDULED_TIME_RANGE.earliest);
const LATEST_MS = Date.parse(SCHEDULED_TIME_RANGE.latest);

/**
 * Normalise a scheduled time to the key format: UTC, whole seconds, `Z`. The one rule for what a scheduled time
 * may be: the trigger (schedule event), the worker (queue message) and the CLI all check with it, so a key one of
 * them writes is one the others accept (a key normalises to itself).
 * Returns a message instead when the input is not an ISO-8601 timestamp with a zone, or its UTC form is outside
 * SCHEDULED_TIME_RANGE, so callers can report it.
 */
export function normaliseScheduledTime(input: unknown): { ok: true; value: string } | { ok: false; error: string } {
  if (typeof input !== 'string') return { ok: false, error: `scheduledTime must be a string, got ${describe(input)}` };
  const match = SCHEDULED_TIME.exec(input);
  if (!match) {
    return {
      ok: false,
      error: `scheduledTime must be ISO-8601 with a zone, like 2026-11-30T06:00:00Z, got ${quoteValue(input)}`,
    };
  }
  const fraction = match[7];
  if (fraction && !/^\.0+$/.test(fraction)) {
    // Two different sub-second times would map to one key; the Scheduler never sends them.
    return { ok: false, error: `scheduledTime must be whole seconds, got ${quoteValue(input)}` };
  }
  const ms = Date.parse(input);
  const [, y, mo, d, h, mi, s] = match.map(Number);
  const calendarOk = mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && s <= 59;
  if (Number.isNaN(ms) || !calendarOk || new Date(Date.UTC(y, mo - 1, d)).getUTCDate() !== d) {
    return { ok: false, error: `scheduledTime is not a real date and time: ${quoteValue(input)}` };
  }
  // Checked on the UTC form: an offset can move a time written inside the range out of it (and out of the format).
  if (ms < EARLIEST_MS || ms > LATEST_MS) {
    return {
      ok: false,
      error:
        `scheduledTime must be from ${SCHEDULED_TIME_RANGE.earliest} to ${SCHEDULED_TIME_RANGE.latest} in UTC, ` +
        `got ${quoteValue(input)} (${isoSeconds(ms)} in UTC)`,
    };
  }
  return { ok: true, value: isoSeconds(ms) };
}

/** Every report lives under this prefix; the worker's S3 permissions are limited to it. */
export const REPORT_KEY_PREFIX = 'reports/';

/**
 * Where the report of an occurrence is committed: `reports/{jobId}/{scheduledTime}.{ext}`, or
 * `reports/{jobId}/{scheduleKey}/{scheduledTime}.{ext}` for a schedule created at run time (a job has one form or
 * the other, and a schedule key has no '/', so one customer's reports list under one prefix).
 */
export function reportKeyOf(key: OccurrenceKey, extension: string): string {
  const series = key.scheduleKey === undefined ? key.jobId : `${key.jobId}/${key.scheduleKey}`;
  return `${REPORT_KEY_PREFIX}${series}/${key.scheduledTime}.${extension}`;
}

export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? quoteValue(value) : typeof value;
}

export const iso = (epochMs: number): string => new Date(epochMs).toISOString();

/** The scheduled-time format: UTC, whole seconds (`2026-11-30T06:00:00Z`); milliseconds are dropped. */
export const isoSeconds = (epochMs: number): string => iso(epochMs).replace(/\.\d{3}Z$/, 'Z');
