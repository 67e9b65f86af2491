/**
 * GET /api/occurrence: one row in full (one consistent GetItem) and what the page derives from it: its bar, the
 * report's key and download link, the notification, a resumable run's checkpoint, and whether it can still change.
 */
import type { RunFields } from '../../functions/protocol/checkpoint';
import { decideManualRetry } from '../../functions/protocol/manual-retry';
import { type Occurrence, type OccurrenceKey, TERMINAL_STATUSES } from '../../functions/protocol/occurrence';
import type { OccurrenceDetail } from '../contract';
import type { ConsoleDeps } from './deps';
import { HttpError } from './http-errors';
import { barOf } from './timeline';

/** The query string that names an occurrence, for the routes that take one (the report's link). */
export function occurrenceQuery(key: OccurrenceKey): string {
  const params = new URLSearchParams({ job: key.jobId });
  if (key.scheduleKey !== undefined) params.set('key', key.scheduleKey);
  params.set('time', key.scheduledTime);
  return params.toString();
}

/** The row of `key`; a 404 when there is none. */
export async function rowOf(deps: ConsoleDeps, key: OccurrenceKey): Promise<Readonly<Record<string, unknown>>> {
  const row = await deps.occurrences.get(key);
  if (row === undefined) {
    const of = key.scheduleKey === undefined ? key.jobId : `${key.jobId} schedule ${key.scheduleKey}`;
    throw new HttpError(404, `there is no occurrence of ${of} at ${key.scheduledTime}`);
  }
  return row;
}

export async function occurrenceDetail(
  deps: ConsoleDeps,
  key: OccurrenceKey,
): Promise<Omit<OccurrenceDetail, 'readUnits'>> {
  const row = await rowOf(deps, key);
  const occurrence = row as unknown as Occurrence & RunFields;
  const now = deps.clock.now();
  const checkpoint = occurrence.checkpoint;
  return {
    row,
    summary: barOf(occurrence),
    ...(occurrence.reportKey === undefined
      ? {}
      : { report: { key: occurrence.reportKey, href: `/api/report?${occurrenceQuery(key)}` } }),
    notification: {
      ...(occurrence.notifiedAt === undefined ? {} : { publishedAt: occurrence.notifiedAt }),
      ...(occurrence.notificationId === undefined ? {} : { messageId: occurrence.notificationId }),
    },
    ...(checkpoint === undefined
      ? {}
      : {
          checkpoint: {
            at: checkpoint.at,
            ageMs: Math.max(0, now - Date.parse(checkpoint.at)),
            ...(checkpoint.upload === undefined
              ? {}
              : { bytes: checkpoint.upload.bytes, parts: checkpoint.upload.parts.length }),
          },
        }),
    live: !TERMINAL_STATUSES.includes(occurrence.status),
    retry: retryOffer(occurrence, now),
  };
}

/** The retry the page offers: the library's decision for a plain (not forced) retry of the row as read. */
function retryOffer(row: Occurrence, now: number): OccurrenceDetail['retry'] {
  const decision = decideManualRetry(row, now, false);
  if (decision.action === 'reopen') return { offered: true };
  return { offered: false, reason: decision.action === 'refuse' ? decision.reason : decision.note };
}
