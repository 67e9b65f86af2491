/**
 * An operator's retry of one occurrence (the `occurrences retry` command), as a pure function over the store and
 * the queue.
 *
 * A FAILED occurrence is reopened with one conditional write (FAILED -> PENDING, a fresh attempt budget, a deadline
 * counted from now) and then enqueued; the worker claims it like any new occurrence. The condition makes two
 * operators retrying at once safe: one reopens, the other is told the row changed.
 *
 * Every other status is refused by default, and `force` changes the row of none of them:
 * - SUCCEEDED: refused even when forced. Its report key is write-once (If-None-Match: *): a new attempt would find
 *   the report, adopt it without running the job, and announce the occurrence a second time. Nothing would be redone.
 * - RUNNING under a live lease: refused even when forced. A worker is running the job; if it dies, its own message
 *   comes back and another worker takes over once the lease expires. Nothing an operator writes may race that lease.
 * - RUNNING with an expired lease, RETRY_WAIT, PENDING: a message normally exists for them (the crashed worker's
 *   message reappears after the visibility timeout; a retry waits hidden until nextAttemptAt; a PENDING row was
 *   enqueued by the trigger). Forcing sends one more message and leaves the row alone. That is the fix for a message
 *   that was lost (the trigger's enqueue failed three times, or the message reached the job DLQ), and harmless if it
 *   was not: claims are conditional, so a second message is dropped, or waits until the retry is due.
 */
import { encodeEnvelope } from './envelope';
import { messageOf, ScheduledJobsError } from './errors';
import { type AttemptRecord, iso, type Occurrence, type OccurrenceKey, OccurrenceStatus } from './occurrence';
import type { Clock, ReopenableStore, WorkQueue } from './ports';
import { quoteValue } from './quote-value';
import type { JobRoute } from './schedule-event';

/** Attributes a manual retry adds to the row, so that a reader can tell a reopened occurrence from a fresh one. */
export interface ManualRetryFields {
  /** How many times an operator reopened this occurrence. */
  readonly manualRetries?: number;
  /** When it was last reopened. */
  readonly manualRetryAt?: string;
  /** Attempts used before the reopenings (the attempt counter restarts at 0 on each). */
  readonly previousAttempts?: number;
  /**
   * The bulk runs that acted on this occurrence (`bulk-<time>-<random>` ids; in the table a string set, read back
   * sorted): each run's write adds its id and is refused where the id is already present, so a resumed run acts on
   * a row once.
   */
  readonly bulkActions?: readonly string[];
}

/** The history entry of a reopening: who asked, and the bulk run it was part of (if any). */
export interface ReopenRecord extends AttemptRecord {
  /** The operator who retried it (operator-identity.ts). */
  readonly by?: string;
  /** The bulk run that retried it. */
  readonly bulkId?: string;
}

/** What retryOccurrence needs: the store, the worker queues, a clock and the deployed jobs' routes. */
export interface ManualRetryDeps {
  /** Reads the row and reopens a FAILED one. */
  readonly store: ReopenableStore;
  /** Each worker's job queue, by worker id. */
  readonly queues: ReadonlyMap<string, Pick<WorkQueue, 'send'>>;
  /** What "now" is for the new deadline. */
  readonly clock: Clock;
  /** The deployed jobs, by job id: the worker that runs each, its deadline and its retention. */
  readonly jobs: ReadonlyMap<string, JobRoute>;
}

/** The row was reopened as PENDING but the message could not be sent: nothing will claim it until one is. */
export class ReopenedNotEnqueuedError extends ScheduledJobsError {
  /** Always `'ReopenedNotEnqueuedError'`. */
  override readonly name = 'ReopenedNotEnqueuedError';

  constructor(
    /** The occurrence that was reopened. */
    readonly key: OccurrenceKey,
    /** The error of the failed enqueue. */
    override readonly cause: unknown,
  ) {
    super(
      `the occurrence was reopened as PENDING, but enqueueing it failed (${messageOf(cause)}); ` +
        'run the retry again with --force to enqueue it',
    );
  }
}

/** What retryOccurrence did: reopened and enqueued, enqueued once more (forced), or refused, with the reason. */
export type ManualRetryResult =
  /** FAILED, reopened as PENDING and enqueued. */
  | { readonly outcome: 'reopened'; readonly previous: Occurrence; readonly deadlineAt: string }
  /** Forced: one more message for a row that was left as it was. */
  | { readonly outcome: 'enqueued'; readonly status: OccurrenceStatus; readonly note: string }
  | {
      readonly outcome: 'refused';
      readonly reason: string;
      readonly status?: OccurrenceStatus;
      readonly forceWouldEnqueue: boolean;
      /** The bulk run `options.bulkId` reopened it before (it was interrupted, then resumed): nothing was written. */
      readonly alreadyInBulk?: true;
    };

/** How retryOccurrence acts: forced or not, for whom, and as part of which bulk run. */
export interface ManualRetryOptions {
  /** Enqueue one more message for a stuck PENDING, RETRY_WAIT or expired RUNNING row (the module comment). */
  readonly force: boolean;
  /** Who retries it, recorded in the reopening's history entry (operator-identity.ts). */
  readonly by?: string;
  /** The bulk run this retry is part of: a row that holds it in `bulkActions` is not reopened again. */
  readonly bulkId?: string;
}

export type RetryDecision =
  | { readonly action: 'reopen' }
  | { readonly action: 'enqueue'; readonly note: string }
  | { readonly action: 'refuse'; readonly reason: string; readonly forceWouldEnqueue: boolean };

/** The rule above, for one row as read at `now`. */
export function decideManualRetry(row: Occurrence, now: number, force: boolean): RetryDecision {
  const at = iso(now);
  const whenLost =
    'Use --force to enqueue one more message (the row is left as it is; a second message is harmless because claims are conditional).';
  const pastDeadline =
    row.deadlineAt <= at
      ? ` Its deadline ${row.deadlineAt} has passed, so the worker will record it FAILED (or adopt a committed report); then retry it as FAILED.`
      : '';
  const refuseOrEnqueue = (reason: string, note: string): RetryDecision =>
    force
      ? { action: 'enqueue', note: note + pastDeadline }
      : { action: 'refuse', reason: `${reason} ${whenLost}`, forceWouldEnqueue: true };
  switch (row.status) {
    case OccurrenceStatus.FAILED:
      return { action: 'reopen' };
    case OccurrenceStatus.SUCCEEDED:
      return {
        action: 'refuse',
        forceWouldEnqueue: false,
        reason:
          `it SUCCEEDED${row.reportKey ? ` and its report is at ${row.reportKey}` : ''}. Not even with --force: the report ` +
          'is write-once, so a new attempt would adopt it instead of running the job, and announce the occurrence again.',
      };
    case OccurrenceStatus.RUNNING:
      if (row.leaseExpiresAt === undefined || row.leaseExpiresAt >= at) {
        return {
          action: 'refuse',
          forceWouldEnqueue: false,
          reason:
            `it is RUNNING: ${row.leaseOwner ?? 'a worker'} holds its lease until ${row.leaseExpiresAt ?? '(no expiry recorded)'}. ` +
            'Not even with --force: if that worker dies, its message comes back and another worker takes over when the lease expires.',
        };
      }
      return refuseOrEnqueue(
        `it is RUNNING but its lease expired at ${row.leaseExpiresAt}: the worker died, and its message normally comes back after the queue's visibility timeout.`,
        `the lease expired at ${row.leaseExpiresAt}; the next worker to receive the message takes it over.`,
      );
    case OccurrenceStatus.RETRY_WAIT:
      if (row.nextAttemptAt !== undefined && row.nextAttemptAt > at) {
        // A message sent now would arrive before the retry is due and be dropped as a copy of the waiting retry's
        // own message (process-delivery, retryMessageId): it could not help, even if that message was lost.
        return {
          action: 'refuse',
          forceWouldEnqueue: false,
          reason:
            `it is RETRY_WAIT: attempt ${row.attempt} failed and the next one is due at ${row.nextAttemptAt}; its message waits ` +
            'hidden in the queue until then. Not even with --force before then: a second message would be dropped as a copy of it. ' +
            'If that message was lost, retry --force once the retry is due, or let the reconciler re-enqueue it.',
        };
      }
      return refuseOrEnqueue(
        `it is RETRY_WAIT: attempt ${row.attempt} failed and the next one is due at ${row.nextAttemptAt ?? '(not recorded)'}; its message waits hidden in the queue until then.`,
        `it will be claimed once its retry is due (${row.nextAttemptAt ?? 'not recorded'}).`,
      );
    case OccurrenceStatus.PENDING:
      return refuseOrEnqueue(
        "it is PENDING: recorded and enqueued, not claimed yet. If the trigger could not enqueue it (its event is in the trigger's DLQ), the row stays PENDING.",
        'the first worker to receive a message for it claims it.',
      );
    default:
      return {
        action: 'refuse',
        forceWouldEnqueue: false,
        reason: `its status ${quoteValue(row.status)} is not one this protocol writes`,
      };
  }
}

/**
 * An operator's retry of one occurrence (the `occurrences retry` command): a FAILED one is reopened as PENDING and
 * enqueued; with `force`, a row stuck without a message gets one more message; anything else is refused (the
 * module's comment gives the rule for each status).
 *
 * @throws ReopenedNotEnqueuedError when the row was reopened but its message could not be sent.
 */
export async function retryOccurrence(
  deps: ManualRetryDeps,
  key: OccurrenceKey,
  options: ManualRetryOptions,
): Promise<ManualRetryResult> {
  const job = deps.jobs.get(key.jobId);
  const queue = job === undefined ? undefined : deps.queues.get(job.worker);
  if (job === undefined || queue === undefined) {
    return {
      outcome: 'refused',
      forceWouldEnqueue: false,
      reason:
        job === undefined
          ? `job ${quoteValue(key.jobId)} is not one of the deployed jobs (${[...deps.jobs.keys()].join(', ')})`
          : `the queue of worker ${quoteValue(job.worker)}, which runs job ${quoteValue(key.jobId)}, is unknown`,
    };
  }
  const row = await deps.store.get(key);
  if (row === undefined) return { outcome: 'refused', forceWouldEnqueue: false, reason: 'there is no such occurrence' };
  if (options.bulkId !== undefined && heldBy(row, options.bulkId)) return alreadyInBulk(row, options.bulkId);
  const now = deps.clock.now();
  const decision = decideManualRetry(row, now, options.force);
  if (decision.action === 'refuse') {
    return {
      outcome: 'refused',
      reason: decision.reason,
      status: row.status,
      forceWouldEnqueue: decision.forceWouldEnqueue,
    };
  }
  if (decision.action === 'enqueue') {
    await queue.send(encodeEnvelope(key));
    return { outcome: 'enqueued', status: row.status, note: decision.note };
  }
  const deadlineAt = now + job.deadlineSeconds * 1000;
  // Retention counts from the reopening, as a backfill's does from the backfill: never shorter than it was.
  const ttl = Math.max(row.ttl, Math.floor(now / 1000) + job.retentionDays * 86_400);
  const reopened = await deps.store.reopenFailed(key, {
    now,
    deadlineAt,
    ttl,
    worker: job.worker,
    ...(options.by === undefined ? {} : { by: options.by }),
    ...(options.bulkId === undefined ? {} : { bulkId: options.bulkId }),
  });
  if (!reopened.reopened) {
    if (options.bulkId !== undefined && reopened.current && heldBy(reopened.current, options.bulkId))
      return alreadyInBulk(reopened.current, options.bulkId);
    return {
      outcome: 'refused',
      forceWouldEnqueue: false,
      status: reopened.current?.status,
      reason: `it changed while being retried: it is ${reopened.current?.status ?? 'gone'} now (someone else retried it?). Run retry again to see what it needs.`,
    };
  }
  try {
    await queue.send(encodeEnvelope(key));
  } catch (error) {
    throw new ReopenedNotEnqueuedError(key, error);
  }
  return { outcome: 'reopened', previous: row, deadlineAt: iso(deadlineAt) };
}

/** Whether the bulk run `bulkId` acted on the row already (its id is in `bulkActions`). */
function heldBy(row: Occurrence & ManualRetryFields, bulkId: string): boolean {
  return row.bulkActions?.includes(bulkId) === true;
}

function alreadyInBulk(row: Occurrence, bulkId: string): ManualRetryResult {
  return {
    outcome: 'refused',
    forceWouldEnqueue: false,
    status: row.status,
    alreadyInBulk: true,
    reason: `the bulk run ${bulkId} retried it already (it is ${row.status} now)`,
  };
}
