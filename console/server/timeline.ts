/**
 * What the pages draw of an occurrence row: its bar (scheduled, started, ended, and why it was skipped or cancelled),
 * and the fire times of a job ahead of now.
 */

import type { RunFields } from '../../functions/protocol/checkpoint';
import type { DeployedJob } from '../../functions/protocol/job-control';
import { isoSeconds, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { scheduleTimes } from '../../functions/protocol/schedule-times';
import type { TimelineBar } from '../contract';

/** The attributes of a row the timeline and the jobs page draw (barOf reads no others): the pages' projection. */
export const TIMELINE_ATTRIBUTES = [
  'jobId',
  'scheduledTime',
  'status',
  'attempt',
  'claimedAt',
  'runStartedAt',
  'succeededAt',
  'failedAt',
  'skippedAt',
  'cancelledAt',
  'skipReason',
  'yieldedTo',
  'cancelledBy',
  'origin',
  'segment',
  'progress',
  'lastError',
] as const;

/** The longest last error a bar carries; the occurrence page shows it in full. */
export const BAR_ERROR_CHARS = 200;

type Row = Occurrence & RunFields;

/**
 * A row as a bar. Started: a resumable run's `runStartedAt`, else the claim (`claimedAt` is the latest attempt's,
 * which for a retried run is later than its first: the row keeps no earlier claim). Ended: the time of the terminal
 * status it has.
 */
export function barOf(row: Row): TimelineBar {
  const startedAt = row.runStartedAt ?? row.claimedAt;
  const endedAt = endedAtOf(row);
  return {
    scheduledTime: row.scheduledTime,
    status: row.status,
    attempt: row.attempt ?? 0,
    ...(startedAt === undefined ? {} : { startedAt }),
    ...(endedAt === undefined ? {} : { endedAt }),
    ...(row.skipReason === undefined ? {} : { skipReason: row.skipReason }),
    ...(row.yieldedTo === undefined ? {} : { yieldedTo: row.yieldedTo }),
    ...(row.cancelledBy === undefined ? {} : { cancelledBy: row.cancelledBy }),
    ...(row.origin === undefined ? {} : { origin: row.origin }),
    ...(row.segment === undefined ? {} : { segments: row.segment + 1 }),
    ...(row.progress === undefined
      ? {}
      : {
          progress: {
            done: row.progress.done,
            ...(row.progress.total === undefined ? {} : { total: row.progress.total }),
            at: row.progress.at,
          },
        }),
    ...(row.lastError === undefined ? {} : { lastError: row.lastError.slice(0, BAR_ERROR_CHARS) }),
  };
}

function endedAtOf(row: Row): string | undefined {
  switch (row.status) {
    case OccurrenceStatus.SUCCEEDED:
      return row.succeededAt;
    case OccurrenceStatus.FAILED:
      return row.failedAt;
    case OccurrenceStatus.SKIPPED:
      return row.skippedAt;
    case OccurrenceStatus.CANCELLED:
      return row.cancelledAt ?? row.skippedAt;
    default:
      return undefined;
  }
}

/**
 * A job's fire times after `after` (excluded) up to `until` (included), at most `max`. A `rate(...)` schedule is
 * counted from the newest occurrence its schedule recorded (no `origin`) among `recent`, which fixes its phase as
 * describeJob does; without one, from `after`. Scheduler's daylight-saving rule is schedule-times.ts's.
 */
export function fireTimes(
  job: Pick<DeployedJob, 'schedule' | 'timeZone'>,
  options: { after: number; until?: number; max: number; recent?: readonly Occurrence[] },
): string[] {
  const fired = job.schedule.startsWith('rate(')
    ? options.recent?.find((r) => r.origin === undefined && Date.parse(r.scheduledTime) <= options.after)
    : undefined;
  const anchor = fired === undefined ? options.after : Date.parse(fired.scheduledTime);
  const times: string[] = [];
  if (options.max <= 0) return times;
  for (const t of scheduleTimes(job, new Date(anchor))) {
    const at = t.getTime();
    if (options.until !== undefined && at > options.until) break;
    if (at <= options.after) continue;
    times.push(isoSeconds(at));
    if (times.length >= options.max) break;
  }
  return times;
}
