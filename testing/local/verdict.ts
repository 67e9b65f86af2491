/**
 * Whether each occurrence of a local run ended as its job's policies dictate. A local run that fires a job's
 * occurrences at once (as Scheduler does after an outage, or a resume) must see `skip` record all but one SKIPPED:
 * that is the policy working, not a failure. So a row is judged against its job's overlap policy and catch-up window,
 * not against SUCCEEDED alone:
 *
 *   SUCCEEDED   expected (and announced, where the stack has a notifier)
 *   SKIPPED     overlap: under skip or bufferOne, yielded to an occurrence of this run; missed: recorded later than
 *               the catch-up window after its time; paused: never (a local run pauses nothing)
 *   CANCELLED   under cancelOther, by an occurrence of this run
 *   FAILED, a row still open when the run ended, or no row at all: never
 *
 * The rule is the same whatever the machine's load: load changes which occurrence wins a race, never whether the
 * outcome is one the policy allows.
 */
import type { JobSettings, OverlapPolicy } from '../../functions/protocol/job-settings';
import { catchupWindowSecondsOf } from '../../functions/protocol/job-settings';
import {
  type Occurrence,
  type OccurrenceKey,
  OccurrenceStatus,
  TERMINAL_STATUSES,
} from '../../functions/protocol/occurrence';
import { statusReason } from '../../functions/protocol/status-reason';

export interface RowVerdict {
  /** The row ended in a state its job's policies allow. */
  readonly expected: boolean;
  /** Why the row is what it is, and, when it is not expected, what was expected instead. */
  readonly why: string;
}

export interface VerdictContext {
  /** Each job's settings, as its worker has them (JOB_SETTINGS); a job without any is judged by the defaults. */
  readonly settings: ReadonlyMap<string, JobSettings>;
  /** The stack announces reports (a notifier on the table's stream): a SUCCEEDED row must be announced. */
  readonly announcing: boolean;
  /** Every occurrence of the run, to check that a skip or cancel names one of them. */
  readonly keys: readonly OccurrenceKey[];
}

/** The verdict on one occurrence of the run; `row` is undefined when the trigger never recorded it. */
export function judgeRow(key: OccurrenceKey, row: Occurrence | undefined, context: VerdictContext): RowVerdict {
  if (row === undefined) return { expected: false, why: 'no row: the trigger did not record it' };
  const settings = context.settings.get(key.jobId);
  const policy: OverlapPolicy = row.overlap ?? settings?.overlap ?? 'skip';
  const reason = statusReason(row);
  const unexpected = (expectation: string) => ({ expected: false, why: `${reason}; expected ${expectation}` });
  if (!TERMINAL_STATUSES.includes(row.status))
    return { expected: false, why: `still ${row.status} when the run ended: ${reason}` };
  switch (row.status) {
    case OccurrenceStatus.SUCCEEDED:
      return context.announcing && row.notifiedAt === undefined
        ? { expected: false, why: 'report committed but never announced' }
        : { expected: true, why: '' };
    case OccurrenceStatus.FAILED:
      return { expected: false, why: reason };
    case OccurrenceStatus.CANCELLED:
      if (policy !== 'cancelOther') return unexpected(`no cancel under overlap ${policy}`);
      return ofThisRun(context, key.jobId, row.cancelledBy)
        ? { expected: true, why: reason }
        : unexpected('a canceller among the occurrences of this run');
    case OccurrenceStatus.SKIPPED:
      return judgeSkip(key, row, policy, settings, reason, context);
  }
  return unexpected('a terminal status');
}

function judgeSkip(
  key: OccurrenceKey,
  row: Occurrence,
  policy: OverlapPolicy,
  settings: JobSettings | undefined,
  reason: string,
  context: VerdictContext,
): RowVerdict {
  const unexpected = (expectation: string) => ({ expected: false, why: `${reason}; expected ${expectation}` });
  if (row.skipReason === 'missed') {
    const windowMs = (settings === undefined ? 6 * 3600 : catchupWindowSecondsOf(settings)) * 1000;
    const lateMs = Date.parse(row.createdAt) - Date.parse(key.scheduledTime);
    return lateMs > windowMs ? { expected: true, why: reason } : unexpected('a run: it was recorded within its window');
  }
  if (row.skipReason === 'overlap') {
    if (policy !== 'skip' && policy !== 'bufferOne') return unexpected(`a run: overlap ${policy} skips nothing`);
    return ofThisRun(context, key.jobId, row.yieldedTo)
      ? { expected: true, why: reason }
      : unexpected('it to yield to an occurrence of this run');
  }
  return unexpected('a run: the local run pauses no job');
}

function ofThisRun(context: VerdictContext, jobId: string, scheduledTime: string | undefined): boolean {
  return context.keys.some((k) => k.jobId === jobId && k.scheduledTime === scheduledTime);
}
