/**
 * The occurrence row's known attributes, in the order an operator reads them, with labels; the page lists the
 * ones present as a definition list (the raw JSON follows it). Pure.
 */
import { formatDuration, formatRelative, formatUtc } from './format';

/** How a field's value is written. */
type Kind = 'time' | 'text' | 'number';

const KNOWN: ReadonlyArray<readonly [string, string, Kind]> = [
  ['status', 'Status', 'text'],
  ['scheduledTime', 'Scheduled', 'time'],
  ['scheduleKey', 'Schedule key', 'text'],
  ['attempt', 'Attempts', 'number'],
  ['origin', 'Recorded by an operator', 'text'],
  ['requestedBy', 'Requested by', 'text'],
  ['overlap', 'Overlap policy', 'text'],
  ['worker', 'Worker', 'text'],
  ['createdAt', 'Recorded', 'time'],
  ['claimedAt', 'Claimed', 'time'],
  ['runStartedAt', 'Run started', 'time'],
  ['segments', 'Segments', 'number'],
  ['heartbeatAt', 'Last heartbeat', 'time'],
  ['leaseOwner', 'Lease owner', 'text'],
  ['leaseId', 'Lease', 'text'],
  ['leaseExpiresAt', 'Lease expires', 'time'],
  ['releasedAt', 'Released', 'time'],
  ['nextAttemptAt', 'Next attempt', 'time'],
  ['deadlineAt', 'Deadline', 'time'],
  ['succeededAt', 'Succeeded', 'time'],
  ['failedAt', 'Failed', 'time'],
  ['skippedAt', 'Skipped', 'time'],
  ['skipReason', 'Skip reason', 'text'],
  ['yieldedTo', 'Yielded to', 'time'],
  ['bufferedAt', 'Buffered', 'time'],
  ['cancelledAt', 'Cancelled', 'time'],
  ['cancelledByOperator', 'Cancelled by', 'text'],
  ['cancelNote', 'Why cancelled', 'text'],
  ['cancelledBy', 'Cancelled by the occurrence of', 'time'],
  ['requeuedAt', 'Requeued', 'time'],
  ['requeueCount', 'Requeues', 'number'],
  ['lastError', 'Last error', 'text'],
  ['reportKey', 'Report key', 'text'],
  ['notifiedAt', 'Notified', 'time'],
  ['notificationId', 'Notification id', 'text'],
];

/** A field as the page lists it. */
export interface FieldLine {
  readonly name: string;
  readonly label: string;
  readonly value: string;
}

/** The row's known fields that are present, written for reading: times in UTC with how long ago. */
export function knownFields(row: Readonly<Record<string, unknown>>, now: number): FieldLine[] {
  const lines: FieldLine[] = [];
  for (const [name, label, kind] of KNOWN) {
    const value = row[name];
    if (value === undefined || value === null || value === '') continue;
    lines.push({ name, label, value: written(value, kind, now) });
  }
  return lines;
}

function written(value: unknown, kind: Kind, now: number): string {
  if (kind === 'time' && typeof value === 'string' && !Number.isNaN(Date.parse(value))) {
    return `${formatUtc(value)} (${formatRelative(Date.parse(value), now)})`;
  }
  return typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value);
}

/** One attempt of the row's history. */
export interface AttemptLine {
  readonly attempt?: number;
  readonly outcome: string;
  readonly at: string;
  readonly error?: string;
}

/** The row's attempt history (`history`), oldest first; entries that are not records are left out. */
export function attemptHistory(row: Readonly<Record<string, unknown>>): AttemptLine[] {
  const history = row.history;
  if (!Array.isArray(history)) return [];
  return history.flatMap((entry): AttemptLine[] => {
    if (typeof entry !== 'object' || entry === null) return [];
    const record = entry as Record<string, unknown>;
    if (typeof record.outcome !== 'string' || typeof record.at !== 'string') return [];
    return [
      {
        outcome: record.outcome,
        at: record.at,
        ...(typeof record.attempt === 'number' ? { attempt: record.attempt } : {}),
        ...(typeof record.error === 'string' ? { error: record.error } : {}),
      },
    ];
  });
}

/**
 * The lease: who holds it, how old its last sign of life is, and when it expires; undefined when nobody holds one.
 * Only a RUNNING row has a holder: a row that waits for a retry or has ended keeps its last lease's fields, which
 * name who held it, not who holds it.
 */
export function leaseState(
  row: Readonly<Record<string, unknown>>,
  now: number,
): { readonly owner?: string; readonly age?: string; readonly expires?: string } | undefined {
  if (row.status !== 'RUNNING') return undefined;
  const expires = typeof row.leaseExpiresAt === 'string' ? Date.parse(row.leaseExpiresAt) : Number.NaN;
  const lastSign = [row.heartbeatAt, row.claimedAt].find((v): v is string => typeof v === 'string');
  if (Number.isNaN(expires) && row.leaseId === undefined) return undefined;
  return {
    ...(typeof row.leaseOwner === 'string' ? { owner: row.leaseOwner } : {}),
    ...(lastSign === undefined ? {} : { age: formatDuration(now - Date.parse(lastSign)) }),
    ...(Number.isNaN(expires)
      ? {}
      : {
          expires:
            expires > now ? `expires ${formatRelative(expires, now)}` : `expired ${formatRelative(expires, now)}`,
        }),
  };
}

/** Who cancelled an occurrence and why: an operator (with the note), or another occurrence (cancelOther). */
export interface Cancellation {
  readonly at?: string;
  /** The operator's `by` (cancelledByOperator). */
  readonly by?: string;
  readonly note?: string;
  /** The scheduled time of the occurrence whose start cancelled it (cancelledBy). */
  readonly byOccurrence?: string;
}

/** The cancellation of a CANCELLED row, from its own fields; undefined for any other status. */
export function cancellation(row: Readonly<Record<string, unknown>>): Cancellation | undefined {
  if (row.status !== 'CANCELLED') return undefined;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const at = text(row.cancelledAt);
  const by = text(row.cancelledByOperator);
  const note = text(row.cancelNote);
  const byOccurrence = text(row.cancelledBy);
  return {
    ...(at === undefined ? {} : { at }),
    ...(by === undefined ? {} : { by }),
    ...(note === undefined ? {} : { note }),
    ...(byOccurrence === undefined ? {} : { byOccurrence }),
  };
}
