/**
 * What the trigger does with one schedule event: record the occurrence with an insert that is atomic on its key,
 * then enqueue a message naming it.
 *
 * A doubled trigger (Scheduler delivers at least once) loses the insert and enqueues nothing, unless the row is
 * still PENDING: then the first trigger may have died between the insert and the enqueue, and this one enqueues
 * for it. A second message for the same occurrence is harmless, because claims are conditional.
 */
import { decodeScheduleEvent, encodeEnvelope } from './envelope';
import type { JobSettings } from './job-settings';
import { MetricName } from './metric-names';
import { iso, type Occurrence, OccurrenceStatus } from './occurrence';
import type { Clock, Logger, Metrics, OccurrenceStore, WorkQueue } from './ports';

export interface TriggerDeps {
  readonly store: OccurrenceStore;
  readonly queue: WorkQueue;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly jobs: ReadonlyMap<string, JobSettings>;
  /** Default: none recorded. */
  readonly metrics?: Metrics;
}

export type TriggerResult = 'recorded' | 'pending-re-enqueued' | 'duplicate-suppressed';

export interface RecordOptions {
  /**
   * Epoch ms from which the retry deadline and the retention are counted, when it is later than the scheduled time.
   * The trigger leaves it unset (both count from the scheduled time). A backfill sets it to the time it runs: an
   * occurrence recorded days after its scheduled time would otherwise be past its deadline, and its first delivery
   * would record it FAILED without running it, and its TTL could delete the row while it runs.
   */
  readonly countFrom?: number;
}

/** Throws InvalidInputError (nothing written) for an unknown job or a malformed time. */
export async function recordOccurrence(
  deps: TriggerDeps,
  event: unknown,
  options: RecordOptions = {},
): Promise<TriggerResult> {
  const key = decodeScheduleEvent(event, new Set(deps.jobs.keys()));
  const settings = deps.jobs.get(key.jobId);
  // decodeScheduleEvent accepts only the ids of deps.jobs.
  if (settings === undefined)
    throw new Error(`schedule event for ${key.jobId}, which is not one of the trigger's jobs`);
  const now = deps.clock.now();
  const scheduledAt = Date.parse(key.scheduledTime);
  const countFrom = Math.max(scheduledAt, options.countFrom ?? scheduledAt);
  const occurrence: Occurrence = {
    ...key,
    status: OccurrenceStatus.PENDING,
    attempt: 0,
    createdAt: iso(now),
    deadlineAt: iso(countFrom + settings.retry.deadlineSeconds * 1000),
    ttl: Math.floor(countFrom / 1000) + settings.retentionDays * 86_400,
  };
  const created = await deps.store.create(occurrence);
  const fields = { jobId: key.jobId, scheduledTime: key.scheduledTime };
  // Without the old row we cannot tell whether it was claimed; enqueueing again is the harmless choice.
  const existingStatus = created.created ? undefined : created.existing?.status;
  if (existingStatus !== undefined && existingStatus !== OccurrenceStatus.PENDING) {
    deps.logger.info('duplicate trigger suppressed', { ...fields, status: existingStatus });
    deps.metrics?.add(MetricName.DuplicateTriggersSuppressed, 1, key.jobId);
    return 'duplicate-suppressed';
  }
  await deps.queue.send(encodeEnvelope(key));
  if (created.created) {
    deps.logger.info('occurrence recorded and enqueued', fields);
    return 'recorded';
  }
  deps.logger.info(
    'occurrence was already recorded but not claimed yet; enqueued again in case the first trigger died before enqueueing',
    fields,
  );
  return 'pending-re-enqueued';
}
