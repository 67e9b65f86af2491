/**
 * Why an occurrence is in its status, in one line of words: what an operator reads beside the status in a table
 * (`occurrences list`, the local run) so that a SKIPPED, BUFFERED, CANCELLED or FAILED row explains itself without
 * opening the row. Derived only from the row's own fields, so every reader says the same.
 */
import { isCommitting, isContinuing, isRevokedLease, type Occurrence, OccurrenceStatus } from './occurrence';

/** At most this many characters of `lastError` in the one line. */
const ERROR_CHARS = 120;

export function statusReason(o: Occurrence): string {
  switch (o.status) {
    case OccurrenceStatus.SKIPPED:
      return skippedReason(o);
    case OccurrenceStatus.BUFFERED:
      return `waiting for the job's running slot${o.bufferedAt === undefined ? '' : ` since ${o.bufferedAt}`}`;
    case OccurrenceStatus.CANCELLED:
      return cancelledReason(o);
    case OccurrenceStatus.FAILED:
      return o.lastError === undefined ? 'failed' : `failed: ${cut(o.lastError)}`;
    case OccurrenceStatus.RETRY_WAIT:
      return `attempt ${o.attempt} failed; next at ${o.nextAttemptAt ?? 'its backoff'}${
        o.lastError === undefined ? '' : `: ${cut(o.lastError)}`
      }`;
    case OccurrenceStatus.RUNNING:
      if (isContinuing(o)) return 'between two segments of a resumable run';
      if (isRevokedLease(o)) return 'its lease was revoked by a later occurrence';
      if (isCommitting(o)) return `attempt ${o.attempt}, committing its report`;
      return `attempt ${o.attempt}, lease until ${o.leaseExpiresAt ?? '?'}`;
    case OccurrenceStatus.PENDING:
      return 'recorded, not claimed yet';
    case OccurrenceStatus.SUCCEEDED:
      return o.notifiedAt === undefined ? 'report committed, not announced yet' : 'report committed and announced';
  }
}

function cancelledReason(o: Occurrence): string {
  if (o.cancelledByOperator !== undefined)
    return `cancelled by ${o.cancelledByOperator}${o.cancelNote === undefined ? '' : `: ${cut(o.cancelNote)}`}`;
  return o.cancelledBy === undefined ? 'cancelled' : `cancelled by ${o.cancelledBy} (overlap cancelOther)`;
}

function skippedReason(o: Occurrence): string {
  switch (o.skipReason) {
    case 'overlap':
      return o.yieldedTo === undefined ? 'overlap' : `overlap, yielded to ${o.yieldedTo}`;
    case 'missed':
      return `missed: recorded ${lateness(o)} after its time, past the job's catch-up window`;
    case 'paused':
      return 'paused: delivered while the job was paused';
    default:
      return 'skipped';
  }
}

/** How late the row was first written, from its createdAt: `3 h 5 min`, `40 s`. */
function lateness(o: Occurrence): string {
  const seconds = Math.round((Date.parse(o.createdAt) - Date.parse(o.scheduledTime)) / 1000);
  if (!Number.isFinite(seconds)) return 'too long';
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
}

function cut(text: string): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length <= ERROR_CHARS ? line : `${line.slice(0, ERROR_CHARS - 1)}…`;
}
