/**
 * An extend never moves a lease's expiry back: an extend the worker gave up on (aborted as too slow) may still reach
 * the table after its next one, and would shorten the lease the worker believes it has, which a revoker waits out.
 * Shared by the two extends (DynamoOccurrenceStore.extend, DynamoRunStateStore.extendWithProgress).
 */
import { type Occurrence, OccurrenceStatus } from '../protocol/occurrence';
import type { Lease } from '../protocol/ports';

/** The condition beside the lease's; `:expires` is the new expiry, `#leaseExpiresAt` its attribute. */
export const EXPIRY_NOT_LATER = '(attribute_not_exists(#leaseExpiresAt) OR #leaseExpiresAt <= :expires)';

/** Refused only because our own lease already runs later than `expires`: the extend did what it had to. */
export const runsLaterUnder =
  (lease: Lease, expires: string) =>
  (row: Occurrence): boolean =>
    row.status === OccurrenceStatus.RUNNING && row.leaseId === lease.leaseId && (row.leaseExpiresAt ?? '') > expires;
