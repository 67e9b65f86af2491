/**
 * Re-enqueue an occurrence that has no message in flight, safely against a live worker.
 *
 * Two steps. First a conditional write records the re-enqueue (`requeuedAt`, `requeueCount`) only if the row is
 * still as it was observed: same status, same attempt counter (every claim increments it), and still stuck since
 * before `stuckBefore` (for RUNNING: its lease expired before then, so a heartbeat in between refuses the write).
 * Then a message naming the occurrence goes to the job queue. A worker that claimed the occurrence between the
 * read and the write makes the write fail, and nothing is sent. A worker that claims it after the write finds one
 * more message than it needs, which the claim protocol already makes harmless (the loser sees a live lease or a
 * finished row and drops it).
 *
 * If the send fails after the write, the error is thrown; the row carries `requeuedAt`, so the next attempt to
 * repair it waits one more stuck period. Nothing is lost: the row stays non-terminal and visible in the index.
 *
 * Used by the reconciler (the occurrences CLI's `retry` of a FAILED row is protocol/manual-retry.ts): no AWS SDK
 * here, only the ports.
 */
import { randomUUID } from 'node:crypto';
import { encodeEnvelope } from './envelope';
import { type Occurrence, OccurrenceStatus } from './occurrence';
import type { Clock, RequeueStore, WorkQueue } from './ports';

export interface RequeueDeps {
  readonly store: RequeueStore;
  readonly queue: WorkQueue;
  readonly clock: Clock;
  /** A unique id per re-enqueue (default: a random UUID), so that a retried write recognises its own success. */
  readonly newRequeueId?: () => string;
}

const requeueIdOf = (deps: RequeueDeps): string => (deps.newRequeueId ?? randomUUID)();

/** The statuses a re-enqueue can help: a message lets a worker claim (or, when exhausted, close) the occurrence. */
export const REQUEUEABLE_STATUSES = [
  OccurrenceStatus.PENDING,
  OccurrenceStatus.RUNNING,
  OccurrenceStatus.RETRY_WAIT,
  // Waiting for its job's running slot: the reconciler sends it only when the slot is free (reconcile.ts).
  OccurrenceStatus.BUFFERED,
] as const;
export type RequeueableStatus = (typeof REQUEUEABLE_STATUSES)[number];

/** The attribute that says since when a row in this status has waited for a worker. */
export const STUCK_SINCE_ATTRIBUTE = {
  PENDING: 'createdAt',
  RUNNING: 'leaseExpiresAt',
  RETRY_WAIT: 'nextAttemptAt',
  BUFFERED: 'bufferedAt',
} as const satisfies Record<RequeueableStatus, keyof Occurrence>;

export const isRequeueable = (status: OccurrenceStatus): status is RequeueableStatus =>
  (REQUEUEABLE_STATUSES as readonly OccurrenceStatus[]).includes(status);

/**
 * Epoch ms since when the row has waited with nothing known to be in flight: its status's reference time, or the
 * last re-enqueue if that was later. Undefined when the row lacks the reference time (not a row this protocol
 * writes, e.g. RUNNING without a lease expiry) or is not in a re-enqueueable status.
 */
export function stuckSince(o: Occurrence): number | undefined {
  if (!isRequeueable(o.status)) return undefined;
  const reference = o[STUCK_SINCE_ATTRIBUTE[o.status]];
  if (typeof reference !== 'string') return undefined;
  const since = Date.parse(reference);
  if (Number.isNaN(since)) return undefined;
  const requeued = o.requeuedAt === undefined ? Number.NaN : Date.parse(o.requeuedAt);
  return Number.isNaN(requeued) ? since : Math.max(since, requeued);
}

export type RequeueResult = 'requeued' | 'changed-meanwhile';

/**
 * @param observed the row as read (e.g. from the status index)
 * @param stuckBefore epoch ms: the row must have been stuck since before this, or nothing is done
 */
export async function requeueOccurrence(
  deps: RequeueDeps,
  observed: Occurrence,
  stuckBefore: number,
): Promise<RequeueResult> {
  if (!isRequeueable(observed.status)) {
    throw new Error(
      `cannot re-enqueue a ${observed.status} occurrence (${observed.jobId} ${observed.scheduledTime}): ` +
        `only ${REQUEUEABLE_STATUSES.join(', ')} rows wait for a worker`,
    );
  }
  const marked = await deps.store.markRequeued(
    observed,
    {
      status: observed.status,
      attempt: observed.attempt,
      stuckBefore,
    },
    deps.clock.now(),
    requeueIdOf(deps),
  );
  if (!marked) return 'changed-meanwhile';
  await deps.queue.send(encodeEnvelope(observed));
  return 'requeued';
}
