/**
 * When an occurrence may be claimed, and what a delivery does when its claim is refused.
 * The DynamoDB adapter encodes `isClaimable` as its condition expression; this is the readable statement of it.
 */
import { iso, isRevokedLease, type Occurrence, OccurrenceStatus, TERMINAL_STATUSES } from './occurrence';

export function isClaimable(o: Occurrence, now: number, maxAttempts: number): boolean {
  const at = iso(now);
  if (o.attempt >= maxAttempts || o.deadlineAt <= at) return false;
  switch (o.status) {
    // BUFFERED: its message was acknowledged; it waits for the job's running slot and is started by a new one.
    case OccurrenceStatus.PENDING:
    case OccurrenceStatus.BUFFERED:
      return true;
    // As in DynamoDB, a comparison with a missing attribute is false.
    case OccurrenceStatus.RETRY_WAIT:
      return o.nextAttemptAt !== undefined && o.nextAttemptAt <= at;
    case OccurrenceStatus.RUNNING:
      return o.leaseExpiresAt !== undefined && o.leaseExpiresAt < at;
    default:
      return false;
  }
}

export type RefusedClaim =
  /** No row: the message names an occurrence that was never recorded (or was deleted). */
  | { action: 'missing' }
  /** SUCCEEDED, FAILED, SKIPPED or CANCELLED (TERMINAL_STATUSES): nothing to do. */
  | { action: 'finished' }
  /** A live lease elsewhere; that worker's own message comes back if it dies, so this one can go. */
  | { action: 'held-elsewhere' }
  /**
   * A lease revoked by another occurrence's start (overlap policies) that has not run out on this worker's clock. No
   * holder's message will come back for it (the message in hand is the one the revoker sent): keep it, hidden until
   * the lease has run out.
   */
  | { action: 'revoked'; dueAt: number }
  /** A retry that is not due yet: hide this message until it is. */
  | { action: 'not-due'; dueAt: number }
  /** Nobody holds it, but attempts or time are used up: record FAILED. */
  | { action: 'exhausted'; reason: string }
  /** A row the claim condition can never accept; the message goes the way of a poison message. */
  | { action: 'unclaimable'; reason: string };

export function whyRefused(current: Occurrence | undefined, now: number, maxAttempts: number): RefusedClaim {
  if (current === undefined) return { action: 'missing' };
  if (TERMINAL_STATUSES.includes(current.status)) return { action: 'finished' };
  const at = iso(now);
  if (
    current.status === OccurrenceStatus.RUNNING &&
    current.leaseExpiresAt !== undefined &&
    current.leaseExpiresAt >= at
  ) {
    if (isRevokedLease(current)) return { action: 'revoked', dueAt: Date.parse(current.leaseExpiresAt) };
    return { action: 'held-elsewhere' };
  }
  if (current.deadlineAt <= at) {
    return {
      action: 'exhausted',
      reason: `deadline ${current.deadlineAt} passed before attempt ${current.attempt + 1} could start`,
    };
  }
  if (current.attempt >= maxAttempts) {
    // Only reachable when the last attempt's worker died without recording its outcome.
    return {
      action: 'exhausted',
      reason: `all ${maxAttempts} attempts used; the last one ended without recording an outcome`,
    };
  }
  if (
    current.status === OccurrenceStatus.RETRY_WAIT &&
    current.nextAttemptAt !== undefined &&
    current.nextAttemptAt > at
  ) {
    return { action: 'not-due', dueAt: Date.parse(current.nextAttemptAt) };
  }
  if (isClaimable(current, now, maxAttempts)) {
    // The row changed between the refused condition and the image it returned (clock edge). Try again shortly.
    return { action: 'not-due', dueAt: now };
  }
  // Not a row this protocol writes (e.g. RUNNING without a lease expiry, edited by hand): nothing can claim it.
  return { action: 'unclaimable', reason: `a ${current.status} row that cannot be claimed; check its fields` };
}
