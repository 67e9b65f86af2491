/**
 * What each action will do, in one sentence, for the confirmation dialog: the operator reads what happens before
 * it happens. Pure.
 */
import type { OverlapName, Status } from '../contract';
import { formatUtc } from './format';

/** The target of an action: a job, or one run-time schedule of it. */
export interface ActionTarget {
  readonly jobId: string;
  readonly scheduleKey?: string;
  /** A job that takes schedules at run time, without a key yet: run now and backfill ask for one. */
  readonly asksKey?: boolean;
}

/** `weekly-export` or `reports (schedule customer-42)`. */
export function targetName(target: ActionTarget): string {
  return target.scheduleKey === undefined ? target.jobId : `${target.jobId} (schedule ${target.scheduleKey})`;
}

/** The overlap policies in words. */
export const OVERLAP_TEXT: Readonly<Record<OverlapName, string>> = {
  skip: 'skip it while a run is going',
  bufferOne: 'buffer one run behind the one going',
  bufferAll: 'buffer every run behind the one going',
  cancelOther: 'cancel the run going and start this one',
  allowAll: 'run alongside any run going',
};

/** The overlap policies, in the order the choices list them. */
export const OVERLAPS: readonly OverlapName[] = ['skip', 'bufferOne', 'bufferAll', 'cancelOther', 'allowAll'];

/** Pause: the schedule stops. */
export function pauseSentence(target: ActionTarget, note: string): string {
  const noteText = note.trim() === '' ? ' A note is required.' : ` Note: “${note.trim()}”.`;
  return `Pause ${targetName(target)}: its schedule is disabled and runs stop until resumed.${noteText}`;
}

/** Resume: the schedule starts again, and the fire times the pause missed are caught up (resumeJob). */
export function resumeSentence(target: ActionTarget): string {
  return (
    `Resume ${targetName(target)}: its schedule is enabled again; the fire times missed while paused run now if ` +
    'still inside the catch-up window, older ones are recorded as skipped (missed).'
  );
}

/** Run now: one occurrence now, with an overlap choice. */
export function runSentence(target: ActionTarget, overlap: OverlapName | undefined, jobOverlap?: OverlapName): string {
  const policy = overlap ?? jobOverlap;
  const how =
    policy === undefined
      ? "with the job's overlap policy"
      : `with overlap ${policy}${overlap === undefined ? " (the job's)" : ''}: ${OVERLAP_TEXT[policy]}`;
  return `Run ${targetName(target)} now: one occurrence is recorded for the current time and started ${how}.`;
}

/** Retry: reopen a failed occurrence, or with force enqueue it once more. */
export function retrySentence(target: ActionTarget, scheduledTime: string, status: Status, force: boolean): string {
  const which = `${targetName(target)} at ${formatUtc(scheduledTime)}`;
  if (force) {
    return `Retry ${which} with force: one more message is enqueued for this ${status} occurrence; its row is left as it is.`;
  }
  if (status === 'FAILED') return `Retry ${which}: the FAILED occurrence is reopened and enqueued to run again.`;
  return (
    `Retry ${which}: only a FAILED occurrence is reopened; for this ${status} one the server answers whether a ` +
    'forced retry would enqueue it.'
  );
}

/** The statuses an operator's cancel acts on (cancel-occurrence.ts); the others are finished. */
export const CANCELLABLE: readonly Status[] = ['PENDING', 'RETRY_WAIT', 'BUFFERED', 'RUNNING'];

/** Cancel: a waiting occurrence is closed, a running one stopped through its lease. */
export function cancelSentence(target: ActionTarget, scheduledTime: string, status: Status): string {
  const which = `${targetName(target)} at ${formatUtc(scheduledTime)}`;
  if (status === 'RUNNING') {
    return (
      `Cancel ${which}: its lease is taken, so its worker stops at its next heartbeat and commits no report; it ends ` +
      'CANCELLED. Refused if it is already committing its report.'
    );
  }
  if (CANCELLABLE.includes(status))
    return `Cancel ${which}: this ${status} occurrence is closed as CANCELLED and never runs.`;
  return `Cancel ${which}: a ${status} occurrence is finished; the server refuses to cancel it.`;
}

/** Backfill: record the fire times that have no row; the dry run's count when known. */
export function backfillSentence(
  target: ActionTarget,
  from: number,
  to: number,
  overlap: OverlapName,
  planned?: number,
): string {
  const count =
    planned === undefined
      ? 'the fire times'
      : `${planned.toLocaleString('en-US')} fire time${planned === 1 ? '' : 's'}`;
  return (
    `Backfill ${targetName(target)} from ${formatUtc(from)} to ${formatUtc(to)}: records ${count} ` +
    `without a row yet and runs them with overlap ${overlap} (${OVERLAP_TEXT[overlap]}).`
  );
}
