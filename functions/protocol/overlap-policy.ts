/**
 * Whether a claimed occurrence may start, under its job's overlap policy: a pure function of the job-state row, the
 * row of the occurrence the slot names (when it names another), the occurrence, the policy and the time. The worker
 * (job-slot.ts) reads what it needs, asks `decideStart`, and writes the decision with a compare-and-swap; the
 * semantics are in docs/schedule-policies.md.
 *
 *   paused ─────────────────────────────────────────▶ skip (paused)
 *   slot names this occurrence (its earlier attempt) ─▶ take (the retry is the same run)
 *   slot live, held by H ─▶ skip: skip (overlap, yieldedTo H) · bufferOne/bufferAll: buffer · cancelOther: take + cancel H
 *   slot free ─▶ nothing buffered before it: take (+ revoke H's expired lease) · else buffer or skip, and wake the head
 */

import type { JobState } from './job-state';
import { isContinuing, iso, type Occurrence, type OccurrenceKey, OccurrenceStatus } from './occurrence';
import { type SeriesKey, seriesKeyOf, seriesOf } from './schedule-key';
import type { OverlapPolicy } from './setting-basics';

/** An occurrence's own policy (given by an operator) wins over its job's. */
export const effectivePolicyOf = (occurrence: Pick<Occurrence, 'overlap'>, jobPolicy: OverlapPolicy): OverlapPolicy =>
  occurrence.overlap ?? jobPolicy;

/** The occurrence whose row decides whether the slot is live: the one the slot names, unless that is `scheduledTime`. */
export function holderToRead(state: JobState | undefined, scheduledTime: string): OccurrenceKey | undefined {
  if (state?.slotTime === undefined || state.slotTime === scheduledTime) return undefined;
  // The state row's partition is its series: the holder is an occurrence of the same schedule. The row may come as
  // stored (jobId is the series) or as read through the occurrence reader (jobId and scheduleKey apart).
  return { ...seriesKeyOf(seriesOf(state as JobState & SeriesKey)), scheduledTime: state.slotTime };
}

/**
 * Whether the holder's row still runs the slot: RUNNING with a lease that has not expired, or RETRY_WAIT before its
 * deadline (a failed attempt keeps the slot across its retries: the retry is the same run), or a resumable run between
 * segments (RUNNING, its lease given up as `continued:…`) before its deadline. Any lease id counts, not
 * only the slot's: a holder whose retry was just claimed under a new lease is about to take its slot back.
 */
export function isHolderLive(holder: Occurrence | undefined, now: number): boolean {
  if (holder === undefined) return false;
  const at = iso(now);
  // A resumable run between segments gave its lease up, but its next segment is the same run (like a retry).
  if (isContinuing(holder)) return holder.deadlineAt > at;
  if (holder.status === OccurrenceStatus.RUNNING)
    return holder.leaseExpiresAt !== undefined && holder.leaseExpiresAt >= at;
  if (holder.status === OccurrenceStatus.RETRY_WAIT) return holder.deadlineAt > at;
  return false;
}

export interface StartInput {
  readonly state: JobState | undefined;
  /** The row of holderToRead(state, scheduledTime), read consistently; undefined when there is none or none to read. */
  readonly holder: Occurrence | undefined;
  readonly scheduledTime: string;
  readonly policy: Exclude<OverlapPolicy, 'allowAll'>;
  readonly now: number;
}

export type StartDecision =
  /** Not run: recorded SKIPPED. `wake`: the buffer's head, enqueued again in case its message was lost. */
  | { readonly action: 'skip'; readonly reason: 'paused' }
  | { readonly action: 'skip'; readonly reason: 'overlap'; readonly yieldedTo: string; readonly wake?: string }
  /** Recorded BUFFERED; `buffer` is the buffer with it (written only when it changed). */
  | { readonly action: 'buffer'; readonly buffer: readonly string[]; readonly wake?: string }
  /**
   * Take the slot and run; `buffer` is the buffer without it. `revoke`: first take the lease from the occurrence the
   * slot names (expired: its lease has run out but its row still says RUNNING; cancel: cancelOther).
   */
  | { readonly action: 'take'; readonly buffer: readonly string[]; readonly revoke?: 'expired' | 'cancel' };

export function decideStart(input: StartInput): StartDecision {
  const { state, scheduledTime, policy } = input;
  if (state?.pausedAt !== undefined) return { action: 'skip', reason: 'paused' };
  const buffer = state?.buffer ?? [];
  const others = buffer.filter((t) => t !== scheduledTime);
  // Its own earlier attempt holds the slot (it failed and waited for its retry, or its worker died): the same run.
  if (state?.slotTime === scheduledTime) return { action: 'take', buffer: others };
  const holder = state?.slotTime;
  if (holder !== undefined && isHolderLive(input.holder, input.now))
    return whileHeld(policy, holder, buffer, scheduledTime);
  const revoke = holdsExpiredLease(input.holder, input.now) ? ('expired' as const) : undefined;
  const head = others[0];
  if (head === undefined || scheduledTime < head) return { action: 'take', buffer: others, ...(revoke && { revoke }) };
  // Free, but an earlier occurrence waits for it: that one goes first (wake it, in case its message was lost).
  if (policy === 'bufferAll') return { action: 'buffer', buffer: inTimeOrder(buffer, scheduledTime), wake: head };
  if (policy === 'bufferOne' && buffer.includes(scheduledTime)) return { action: 'buffer', buffer, wake: head };
  return { action: 'skip', reason: 'overlap', yieldedTo: head, wake: head };
}

/** The slot is live and held by another occurrence. */
function whileHeld(
  policy: StartInput['policy'],
  holder: string,
  buffer: readonly string[],
  scheduledTime: string,
): StartDecision {
  switch (policy) {
    case 'skip':
      return { action: 'skip', reason: 'overlap', yieldedTo: holder };
    case 'bufferOne': {
      const waiting = buffer[0];
      if (waiting === undefined || waiting === scheduledTime) return { action: 'buffer', buffer: [scheduledTime] };
      return { action: 'skip', reason: 'overlap', yieldedTo: waiting };
    }
    case 'bufferAll':
      return { action: 'buffer', buffer: inTimeOrder(buffer, scheduledTime) };
    case 'cancelOther':
      return { action: 'take', buffer: buffer.filter((t) => t !== scheduledTime), revoke: 'cancel' };
  }
}

/** RUNNING with a lease that has run out: its worker may still be alive and extend it (extend checks the id only). */
function holdsExpiredLease(holder: Occurrence | undefined, now: number): boolean {
  return (
    holder?.status === OccurrenceStatus.RUNNING &&
    holder.leaseId !== undefined &&
    !isContinuing(holder) &&
    (holder.leaseExpiresAt === undefined || holder.leaseExpiresAt < iso(now))
  );
}

/** The buffer with `scheduledTime` in it once, in time order (keys sort as strings in time order). */
export function inTimeOrder(buffer: readonly string[], scheduledTime: string): readonly string[] {
  return buffer.includes(scheduledTime) ? buffer : [...buffer, scheduledTime].sort();
}
