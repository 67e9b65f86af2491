/**
 * The "report ready" announcement, sent once per SUCCEEDED occurrence.
 *
 * It is driven by the row's transition to SUCCEEDED (the table's stream), not by the worker, so a worker that dies
 * after the commit or after complete cannot lose it or send it twice. What remains is a crash between publishing
 * and recording `notifiedAt`: the stream retries within seconds, and the FIFO topic drops the second publish
 * because it carries the same deduplication id (the occurrence key) inside the topic's five-minute window.
 */
import { messageOf } from './errors';
import { type Occurrence, OccurrenceStatus } from './occurrence';
import type { Announcer, Clock, Logger, OccurrenceStore } from './ports';

export interface AnnounceDeps {
  readonly store: OccurrenceStore;
  readonly announcer: Announcer;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly bucketName: string;
}

export type AnnounceResult = 'announced' | 'already-announced' | 'not-succeeded';

export async function announceReport(deps: AnnounceDeps, changed: Occurrence): Promise<AnnounceResult> {
  const fields = { jobId: changed.jobId, scheduledTime: changed.scheduledTime };
  // The stream image is the row as it was at the transition; a retried record needs the row as it is now.
  const current = await deps.store.get(changed);
  if (current === undefined || current.status !== OccurrenceStatus.SUCCEEDED || current.reportKey === undefined) {
    deps.logger.warn('not announcing: the occurrence is not SUCCEEDED with a report', {
      ...fields,
      status: current?.status,
    });
    return 'not-succeeded';
  }
  if (current.notifiedAt !== undefined) {
    deps.logger.info('report already announced', { ...fields, notifiedAt: current.notifiedAt });
    return 'already-announced';
  }
  const messageId = await deps.announcer.publish({
    jobId: current.jobId,
    scheduledTime: current.scheduledTime,
    reportKey: current.reportKey,
    reportUri: `s3://${deps.bucketName}/${current.reportKey}`,
    attempt: current.attempt,
    succeededAt: current.succeededAt ?? '',
  });
  try {
    const recorded = await deps.store.markNotified(current, messageId, deps.clock.now());
    deps.logger.info('report announced', { ...fields, messageId, recorded });
  } catch (error) {
    // Published but not recorded: the stream retries, and the topic deduplicates the second publish.
    deps.logger.error('announced, but could not record it', { ...fields, messageId, error: messageOf(error) });
    throw error;
  }
  return 'announced';
}

/** The FIFO deduplication id: the occurrence key, within SNS's 128-character limit. */
export function deduplicationIdOf(key: { jobId: string; scheduledTime: string }): string {
  return `${key.jobId}#${key.scheduledTime}`;
}
