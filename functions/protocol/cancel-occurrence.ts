/**
 * An operator's cancel of one occurrence (`occurrences cancel`, the console, the library), as a pure function over
 * the store: read the row, decide, and write one conditional update against what was read. A refused write returns
 * the row as it is now, and the decision is made again from it (at most CANCEL_ROUNDS times).
 *
 * - PENDING, RETRY_WAIT, BUFFERED: closed CANCELLED at once. Their message (the trigger's, the hidden retry, the
 *   wake-up of the buffer) finds a finished row and is dropped; a BUFFERED one leaves the job's buffer then.
 * - RUNNING: CANCELLED, and its lease id replaced by `cancelled-by-operator-<uuid>` (its expiry kept, as cancelOther
 *   does). A worker holding the lease fails its next extend: the lease guard aborts the job through its signal
 *   within one heartbeat, and every fenced write of that worker fails after it. An expired, continued or revoked
 *   lease has no holder to stop, and the row is closed the same way.
 * - The commit point: a worker writes `committingLease` (fenced) just before it commits its report. The cancel's
 *   condition refuses a row any of whose leases reached it ("too late"), and the commit point's write fails once the
 *   cancel is recorded: so a cancelled occurrence commits no report after its cancel, and none ends both SUCCEEDED
 *   and CANCELLED. Any lease's, not only the current one's: a worker frozen after its commit point (or a slow put)
 *   may put its report after its lease expired and the occurrence was claimed again (found by the simulation, seed
 *   7250004). The price: an occurrence whose commit failed after its commit point cannot be cancelled any more.
 * - SUCCEEDED, FAILED, SKIPPED, CANCELLED, an unknown key: refused with the reason, and nothing written.
 */
import { InvalidInputError } from './errors';
import {
  isCommitting,
  isContinuing,
  iso,
  isRevokedLease,
  type Occurrence,
  type OccurrenceKey,
  OccurrenceStatus,
  OPERATOR_CANCEL_LEASE_PREFIX,
} from './occurrence';
import type { CancellableStore, Clock } from './ports';
import { quoteValue } from './quote-value';

/** Decisions made (one read, then refused writes' rows) before the cancel gives up as contended. */
export const CANCEL_ROUNDS = 3;
/** The longest note a cancel records, and the longest identity. */
export const CANCEL_NOTE_MAX_CHARS = 500;
export const CANCEL_BY_MAX_CHARS = 300;

/** What cancelOccurrence needs: the store, a clock, and the uuid of a revoked lease. */
export interface CancelDeps {
  /** Reads the row and writes the cancel (OperatorOccurrenceStore on DynamoDB). */
  readonly store: CancellableStore;
  /** What "now" is for the cancel's time. */
  readonly clock: Clock;
  /** A fresh uuid per call (crypto.randomUUID). */
  readonly newId: () => string;
}

/** Who cancels, and why. */
export interface CancelOptions {
  /** The operator's identity string (recorded as `cancelledByOperator` and in the row's history). */
  readonly by: string;
  /** Why (recorded as `cancelNote`). */
  readonly note?: string;
}

/** What cancelOccurrence did. */
export type CancelResult =
  /**
   * CANCELLED; `previous` is the row as it was. `stopsBy`: a RUNNING row's lease expiry, by which its worker (if one
   * is still working) has stopped.
   */
  | { readonly outcome: 'cancelled'; readonly previous: Occurrence; readonly stopsBy?: string }
  | { readonly outcome: 'refused'; readonly reason: string; readonly status?: OccurrenceStatus };

/** The decision for one row as read: cancel it (RUNNING: revoking its lease), or refuse with the reason. */
export type CancelDecision =
  | { readonly action: 'cancel'; readonly revoke: boolean }
  | { readonly action: 'refuse'; readonly reason: string };

/** The rule of the module's comment, for one row. */
export function decideCancel(row: Occurrence | undefined): CancelDecision {
  if (row === undefined) return { action: 'refuse', reason: 'there is no such occurrence' };
  switch (row.status) {
    case OccurrenceStatus.PENDING:
    case OccurrenceStatus.RETRY_WAIT:
    case OccurrenceStatus.BUFFERED:
      return row.committingLease === undefined ? { action: 'cancel', revoke: false } : tooLate(row);
    case OccurrenceStatus.RUNNING:
      return row.committingLease === undefined ? { action: 'cancel', revoke: true } : tooLate(row);
    case OccurrenceStatus.SUCCEEDED:
      return {
        action: 'refuse',
        reason: `it SUCCEEDED${row.reportKey === undefined ? '' : ` and its report is at ${row.reportKey}`}: nothing to cancel`,
      };
    case OccurrenceStatus.FAILED:
      return { action: 'refuse', reason: 'it FAILED: nothing runs or waits to run; nothing to cancel' };
    case OccurrenceStatus.SKIPPED:
      return {
        action: 'refuse',
        reason: `it was SKIPPED (${row.skipReason ?? 'no reason recorded'}): nothing to cancel`,
      };
    case OccurrenceStatus.CANCELLED:
      return { action: 'refuse', reason: `it is CANCELLED already (${cancelledByWhom(row)})` };
    default:
      return { action: 'refuse', reason: `its status ${quoteValue(row.status)} is not one this protocol writes` };
  }
}

/**
 * A lease of the row reached its commit point: its report may be committed, or (its worker frozen or its put slow)
 * still land, at any time; a cancel now could be followed by a report. The row ends SUCCEEDED (this or the next
 * attempt adopts the report) or FAILED.
 */
function tooLate(row: Occurrence): CancelDecision {
  const at = row.committingAt ?? '?';
  return {
    action: 'refuse',
    reason: isCommitting(row)
      ? `too late: it is committing its report (lease ${row.committingLease} reached its commit point at ${at}); it ends SUCCEEDED unless the commit fails`
      : `too late: an earlier attempt reached its commit point (lease ${row.committingLease} at ${at}), so its report may be committed or still landing; the next attempt adopts it`,
  };
}

/** Who cancelled a CANCELLED row, in words. */
export function cancelledByWhom(row: Occurrence): string {
  if (row.cancelledByOperator !== undefined)
    return `by ${row.cancelledByOperator}${row.cancelledAt ? ` at ${row.cancelledAt}` : ''}`;
  if (row.cancelledBy !== undefined) return `by the occurrence at ${row.cancelledBy} (overlap cancelOther)`;
  return 'by an unrecorded cause';
}

/**
 * Cancel one occurrence as an operator: see the module's comment for what each status gets.
 *
 * @throws InvalidInputError when `by` is empty or the note or identity is too long (nothing is written).
 */
export async function cancelOccurrence(
  deps: CancelDeps,
  key: OccurrenceKey,
  options: CancelOptions,
): Promise<CancelResult> {
  const { by, note } = checkedOptions(options);
  let row = await deps.store.get(key);
  for (let round = 1; round <= CANCEL_ROUNDS; round++) {
    const decision = decideCancel(row);
    if (decision.action === 'refuse') return { outcome: 'refused', reason: decision.reason, status: row?.status };
    // decideCancel refuses an absent row.
    const current = row as Occurrence;
    const revocationId = decision.revoke ? `${OPERATOR_CANCEL_LEASE_PREFIX}${deps.newId()}` : undefined;
    const written = await deps.store.cancel(key, {
      now: deps.clock.now(),
      by,
      ...(note === undefined ? {} : { note }),
      observed: { status: current.status, leaseId: current.leaseId, attempt: current.attempt },
      ...(revocationId === undefined ? {} : { revocationId }),
    });
    if (written.cancelled) return { outcome: 'cancelled', previous: current, ...stopsBy(current, deps.clock.now()) };
    row = written.current;
  }
  return {
    outcome: 'refused',
    status: row?.status,
    reason: `it changed under ${CANCEL_ROUNDS} tries in a row (it is ${row?.status ?? 'gone'} now); run cancel again`,
  };
}

/** A RUNNING row under a live lease: its worker may work until the lease's expiry (its next heartbeat stops it). */
function stopsBy(row: Occurrence, now: number): { stopsBy?: string } {
  const live =
    row.status === OccurrenceStatus.RUNNING &&
    !isContinuing(row) &&
    !isRevokedLease(row) &&
    row.leaseExpiresAt !== undefined &&
    row.leaseExpiresAt >= iso(now);
  return live ? { stopsBy: row.leaseExpiresAt } : {};
}

const WHERE = 'cancel options';

function checkedOptions(options: CancelOptions): { by: string; note?: string } {
  const by = typeof options?.by === 'string' ? options.by.trim() : '';
  if (by === '') throw new InvalidInputError(WHERE, [`by must name who cancels, got ${quoteValue(options?.by)}`]);
  if (by.length > CANCEL_BY_MAX_CHARS)
    throw new InvalidInputError(WHERE, [`by must be at most ${CANCEL_BY_MAX_CHARS} characters, got ${by.length}`]);
  if (options.note === undefined) return { by };
  if (typeof options.note !== 'string')
    throw new InvalidInputError(WHERE, [`note must be a string, got ${quoteValue(options.note)}`]);
  const note = options.note.trim();
  if (note.length > CANCEL_NOTE_MAX_CHARS)
    throw new InvalidInputError(WHERE, [
      `note must be at most ${CANCEL_NOTE_MAX_CHARS} characters, got ${note.length}`,
    ]);
  return note === '' ? { by } : { by, note };
}
