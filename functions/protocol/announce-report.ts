/**
 * The "report ready" announcement, sent once per SUCCEEDED occurrence.
 *
 * It is driven by the row's transition to SUCCEEDED (the table's stream), not by the worker, so a worker that dies
 * after the commit or after complete cannot lose it or send it twice. What remains is a crash between publishing
 * and recording `notifiedAt`: the stream retries within seconds, and the FIFO topic drops the second publish
 * because it carries the same deduplication id (the occurrence key) inside the topic's five-minute window.
 *
 * Two ways in. The stream notifier announces from the record's image of the transition (announceFromStreamImage):
 * no read of the row on the happy path. The reconciler, a day later, announces the row as it is now
 * (announceReport), as does the notifier for a record too old for its image to be trusted (below).
 */
import { createHash } from 'node:crypto';
import { messageOf } from './errors';
import { type Occurrence, type OccurrenceKey, OccurrenceStatus } from './occurrence';
import type { Announcer, Clock, Logger, OccurrenceStore } from './ports';
import { quoteValue } from './quote-value';
import { type SeriesKey, seriesKeyOf, seriesOf } from './schedule-key';
import { fromTableItem } from './table-schema';

export interface AnnounceDeps {
  readonly store: OccurrenceStore;
  readonly announcer: Announcer;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly bucketName: string;
}

export type AnnounceResult = 'announced' | 'already-announced' | 'not-succeeded' | 'malformed-image';

/** The SNS FIFO topic's deduplication window: a second publish with the same deduplication id within it is dropped. */
export const FIFO_DEDUP_WINDOW_SECONDS = 300;
/**
 * The clock skew the protocol tolerates between two of its functions (the default leaseSafetyMarginSeconds, which
 * bounds the skew between workers; a test holds them equal): here between the worker that wrote `succeededAt` and
 * the notifier's clock. A number rather than an import, to keep zod (job-settings.ts) out of the notifier's bundle.
 */
export const CLOCK_SKEW_SECONDS = 15;
/** The notifier's Lambda timeout (lib/occurrence-functions.ts): a publish can land up to this long after its check. */
export const NOTIFIER_TIMEOUT_SECONDS = 30;
/** Left over for what no clock here sees: the publish's way to the topic and the topic's own clock. */
const FRESH_IMAGE_MARGIN_SECONDS = 15;

/**
 * How long after `succeededAt` the stream image is announced without reading the row: 240 s.
 *
 * The image is the row as the transition wrote it, so it never shows `notifiedAt`: it cannot tell a first delivery
 * of the record from a redelivery after an earlier one had already announced (the stream re-sends a whole batch
 * after a crash or a timeout, and bisects a failing one). Such a second publish is dropped by the FIFO topic only
 * within its deduplication window of the first. Every publish of this record came after the transition, at or after
 * `succeededAt`. This notifier checks the image at most FRESH after `succeededAt` on its own clock, so at most
 * FRESH + skew after it in real time, and its publish lands at most the notifier's timeout after the check. So the
 * second publish follows the first by less than FRESH + skew + timeout, which must stay inside the window:
 * 300 s - 15 s of skew - 30 s of timeout - 15 s of margin = 240 s. An older record (a stream that kept failing, a
 * backlog) reads the row, and `notifiedAt` stops a second announcement, as before.
 */
export const FRESH_IMAGE_MS =
  (FIFO_DEDUP_WINDOW_SECONDS - CLOCK_SKEW_SECONDS - NOTIFIER_TIMEOUT_SECONDS - FRESH_IMAGE_MARGIN_SECONDS) * 1000;

/** Announce the occurrence as the store has it now: the reconciler, and stream records too old for their image. */
export async function announceReport(deps: AnnounceDeps, key: OccurrenceKey): Promise<AnnounceResult> {
  const current = await deps.store.get(key);
  const problem = current === undefined ? 'no row' : announceableProblem(current);
  if (current === undefined || problem !== undefined) {
    deps.logger.warn('not announcing: the occurrence is not SUCCEEDED with a report', {
      jobId: key.jobId,
      scheduledTime: key.scheduledTime,
      status: current?.status,
      problem,
    });
    return 'not-succeeded';
  }
  return announceRow(deps, current);
}

/**
 * Announce from the stream record's image of the change to SUCCEEDED (the image unmarshalled, not yet checked).
 * The image is checked as a row read from the store would be; a malformed one is reported and not announced from:
 * if it names its occurrence, the row is read instead, else the record is skipped (the reconciler announces a
 * SUCCEEDED row that never was).
 */
export async function announceFromStreamImage(deps: AnnounceDeps, image: unknown): Promise<AnnounceResult> {
  const problem = announceableProblem(image);
  if (problem !== undefined) {
    const key = keyOf(image);
    deps.logger.error('malformed stream image of a change to SUCCEEDED; not announcing from it', {
      problem,
      ...key,
      action: key === undefined ? 'skipped; the reconciler announces the row if it is SUCCEEDED' : 'reading the row',
    });
    return key === undefined ? 'malformed-image' : announceReport(deps, key);
  }
  // The image is the table's item: its jobId attribute is the series.
  const row = fromTableItem(image as Occurrence);
  if (!isFreshImage(row, deps.clock.now())) return announceReport(deps, row);
  return announceRow(deps, row);
}

/** Whether the image is young enough that a second publish of it would still be deduplicated (FRESH_IMAGE_MS). */
export function isFreshImage(image: Occurrence, now: number): boolean {
  const at = image.succeededAt === undefined ? Number.NaN : Date.parse(image.succeededAt);
  return !Number.isNaN(at) && Math.abs(now - at) < FRESH_IMAGE_MS;
}

/**
 * Why this value is not a row that can be announced, or undefined when it is: a SUCCEEDED occurrence with its key,
 * a report key, an attempt, and the times it may carry as strings. The one check for a row read from the store and
 * for a stream image.
 */
export function announceableProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not an object';
  const row = value as Record<string, unknown>;
  if (keyOf(row) === undefined) return 'no jobId or scheduledTime';
  if (row.status !== OccurrenceStatus.SUCCEEDED) return `status ${quoteValue(String(row.status))}, not SUCCEEDED`;
  if (typeof row.reportKey !== 'string' || row.reportKey === '') return 'no reportKey';
  // 0 is a real count: a row adopted without a claim (its first delivery came after the deadline, and it found the
  // report a late put had left) is SUCCEEDED at attempt 0.
  if (typeof row.attempt !== 'number' || !Number.isInteger(row.attempt) || row.attempt < 0) return 'no attempt';
  for (const time of ['succeededAt', 'notifiedAt'] as const) {
    if (row[time] !== undefined && typeof row[time] !== 'string') return `${time} is not a string`;
  }
  return undefined;
}

function keyOf(value: unknown): OccurrenceKey | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { jobId, scheduledTime } = value as Record<string, unknown>;
  if (typeof jobId !== 'string' || jobId === '' || typeof scheduledTime !== 'string' || scheduledTime === '')
    return undefined;
  return { ...seriesKeyOf(jobId), scheduledTime };
}

/**
 * Publish, then record. The record is conditional (`attribute_not_exists(notifiedAt)`), so a second delivery keeps
 * the first notification id; its publish was dropped by the topic (same deduplication id, inside the window).
 */
async function announceRow(deps: AnnounceDeps, row: Occurrence): Promise<AnnounceResult> {
  const fields = {
    jobId: row.jobId,
    ...(row.scheduleKey === undefined ? {} : { scheduleKey: row.scheduleKey }),
    scheduledTime: row.scheduledTime,
  };
  if (row.notifiedAt !== undefined) {
    deps.logger.info('report already announced', { ...fields, notifiedAt: row.notifiedAt });
    return 'already-announced';
  }
  const reportKey = row.reportKey ?? '';
  const messageId = await deps.announcer.publish({
    ...fields,
    reportKey,
    reportUri: `s3://${deps.bucketName}/${reportKey}`,
    attempt: row.attempt,
    succeededAt: row.succeededAt ?? '',
  });
  try {
    const recorded = await deps.store.markNotified(row, messageId, deps.clock.now());
    // recorded false: an earlier delivery of this record announced it first, and the topic dropped this copy.
    // DEBUG: the worker's outcome line is the happy path's one INFO line; the row records notifiedAt.
    deps.logger.debug?.('report announced', { ...fields, messageId, recorded });
  } catch (error) {
    // Published but not recorded: the stream retries, and the topic deduplicates the second publish.
    deps.logger.error('announced, but could not record it', { ...fields, messageId, error: messageOf(error) });
    throw error;
  }
  return 'announced';
}

/**
 * The FIFO deduplication id: the occurrence key, within SNS's 128-character limit. A schedule key can be 128
 * characters itself, so it is represented by its SHA-256 (128 bits of it): a collision would drop a real
 * announcement, so nothing weaker than a cryptographic hash will do.
 */
export function deduplicationIdOf(key: OccurrenceKey): string {
  return `${messageGroupIdOf(key)}#${key.scheduledTime}`;
}

/**
 * The FIFO message group: one per series (a job's fixed schedule, or one schedule of a job that takes them at run
 * time), so each customer's announcements stay in order without one job's 100,000 schedules sharing one group.
 */
export function messageGroupIdOf(key: SeriesKey): string {
  if (key.scheduleKey === undefined) return seriesOf(key);
  return `${key.jobId}#${createHash('sha256').update(key.scheduleKey).digest('hex').slice(0, 32)}`;
}
