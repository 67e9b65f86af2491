/**
 * What the trigger does with one schedule event: record the occurrence with an insert that is atomic on its key,
 * then enqueue a message naming it.
 *
 * A doubled trigger (Scheduler delivers at least once) loses the insert and enqueues nothing, unless the row is
 * still PENDING: then the first trigger may have died between the insert and the enqueue, and this one enqueues
 * for it. A second message for the same occurrence is harmless, because claims are conditional.
 */
import { encodeEnvelope } from './envelope';
import { InvalidInputError } from './errors';
import type { OverlapPolicy } from './job-settings';
import { MetricName } from './metric-names';
import { iso, type Occurrence, OccurrenceStatus, SkipReason } from './occurrence';
import type { Clock, Logger, Metrics, OccurrenceRecorder, WorkQueue } from './ports';
import { decodeScheduleEvent, type ScheduleEvent } from './schedule-event';
import type { RouteLookup, WorkerRoute } from './worker-routes';

/** What records and enqueues an occurrence, as the trigger does. */
export interface TriggerDeps {
  /** Inserts the occurrence's row if absent. */
  readonly store: OccurrenceRecorder;
  /**
   * Each worker's job queue, by worker id, when the caller knows them (an operator's run, backfill or resume, from the
   * stack's outputs): they win over the event's queueUrl. The trigger knows none: it sends where the event says.
   */
  readonly queues?: ReadonlyMap<string, WorkQueue>;
  /** The queue at a URL the event (or the route lookup) names; without it, only `queues` are sent to. */
  readonly queueAt?: (queueUrl: string) => WorkQueue;
  /** Where the route of an event that carries none is found (a run-time schedule projected before routes were). */
  readonly routes?: RouteLookup;
  /** What "now" is (for the catch-up window and the deadline). */
  readonly clock: Clock;
  /** Where what was recorded is logged. */
  readonly logger: Logger;
  /** Default: none recorded. */
  readonly metrics?: Metrics;
}

/**
 * What a checked event must pass before anything is written: the trigger's check of a run-time schedule's event
 * against the alias it came through and the registry (runtime-schedule-guard.ts), which may replace its input. An
 * operator's run or backfill (recordOccurrence) names its job and key itself and passes none.
 */
export type AdmitEvent = (event: ScheduleEvent) => Promise<ScheduleEvent>;

/**
 * What recording an occurrence did: `recorded` (a new row, enqueued), `pending-re-enqueued` (a PENDING row, enqueued
 * again), `duplicate-suppressed` (a row past PENDING, left alone) or `recorded-missed` (a new row SKIPPED as missed).
 */
export type TriggerResult = 'recorded' | 'pending-re-enqueued' | 'duplicate-suppressed' | 'recorded-missed';

export interface RecordOptions {
  /**
   * Epoch ms from which the retry deadline and the retention are counted, when it is later than the scheduled time.
   * The trigger leaves it unset (both count from the scheduled time). A backfill sets it to the time it runs: an
   * occurrence recorded days after its scheduled time would otherwise be past its deadline, and its first delivery
   * would record it FAILED without running it, and its TTL could delete the row while it runs.
   */
  readonly countFrom?: number;
  /**
   * Recorded at an operator's request (`occurrences run` or `backfill`): the row says who asked and how, and the
   * catch-up window does not apply (the operator asked for this time now).
   */
  readonly requested?: { readonly by: string; readonly origin: 'run' | 'backfill'; readonly overlap?: OverlapPolicy };
}

/**
 * Throws InvalidInputError (nothing written) for an unknown worker, a malformed time or a bad setting, and what
 * recordAdmittedOccurrence's `admit` throws (ForgedScheduleError) for an event it refuses.
 */
export function recordOccurrence(
  deps: TriggerDeps,
  event: unknown,
  options: RecordOptions = {},
): Promise<TriggerResult> {
  return recordAdmittedOccurrence(deps, event, (decoded) => Promise.resolve(decoded), options);
}

/** recordOccurrence, with the checked event passed through `admit` first (the trigger's; throws to refuse it). */
export async function recordAdmittedOccurrence(
  deps: TriggerDeps,
  event: unknown,
  admit: AdmitEvent,
  options: RecordOptions = {},
): Promise<TriggerResult> {
  const known = deps.queueAt === undefined ? new Set(deps.queues?.keys()) : undefined;
  const admitted = await admit(decodeScheduleEvent(event, known));
  const { worker, deadlineSeconds, retentionDays, catchupWindowSeconds, lateAfterSeconds, input, ...rest } = admitted;
  const { queueUrl, stuckAfterSeconds, ...key } = rest;
  const route: WorkerRoute | undefined =
    queueUrl !== undefined && stuckAfterSeconds !== undefined
      ? { queueUrl, stuckAfterSeconds }
      : await deps.routes?.routeOf(key.jobId, worker);
  const queue = deps.queues?.get(worker) ?? (route === undefined ? undefined : deps.queueAt?.(route.queueUrl));
  // Nothing is written for an occurrence that has nowhere to go: the event fails, and waits in the DLQ.
  if (queue === undefined)
    throw new InvalidInputError('schedule event', [
      `worker ${worker}: the event names no queueUrl and no route of job ${key.jobId} was found (its schedule is gone, or names another worker)`,
    ]);
  const now = deps.clock.now();
  const scheduledAt = Date.parse(key.scheduledTime);
  const countFrom = Math.max(scheduledAt, options.countFrom ?? scheduledAt);
  const { requested } = options;
  // A Scheduler retry after an outage, or a delivery held back for longer than the job allows: record why it did not
  // run instead of running it late. The window counts from the scheduled time, as Scheduler's own retries do.
  const missed = requested === undefined && now - scheduledAt > (catchupWindowSeconds ?? deadlineSeconds) * 1000;
  const occurrence: Occurrence = {
    ...key,
    status: missed ? OccurrenceStatus.SKIPPED : OccurrenceStatus.PENDING,
    attempt: 0,
    worker,
    // Where the reconciler re-sends it, should it get stuck: no function needs every worker's route.
    ...(route === undefined ? {} : { queueUrl: route.queueUrl, stuckAfterSeconds: route.stuckAfterSeconds }),
    createdAt: iso(now),
    deadlineAt: iso(countFrom + deadlineSeconds * 1000),
    ttl: Math.floor(countFrom / 1000) + retentionDays * 86_400,
    ...(input === undefined ? {} : { input }),
    // An operator's run or backfill is not due at its scheduled time: only a schedule's occurrence can be late.
    ...(lateAfterSeconds === undefined || requested !== undefined ? {} : { lateAfterSeconds }),
    ...(missed ? { skipReason: SkipReason.missed, skippedAt: iso(now) } : {}),
    ...(requested === undefined
      ? {}
      : {
          requestedBy: requested.by,
          origin: requested.origin,
          ...(requested.overlap === undefined ? {} : { overlap: requested.overlap }),
        }),
  };
  const created = await deps.store.create(occurrence);
  const fields = {
    jobId: key.jobId,
    ...(key.scheduleKey === undefined ? {} : { scheduleKey: key.scheduleKey }),
    scheduledTime: key.scheduledTime,
  };
  if (missed && created.created) {
    deps.logger.warn('occurrence recorded as SKIPPED: first recorded after its catch-up window', {
      ...fields,
      lateSeconds: Math.round((now - scheduledAt) / 1000),
      catchupWindowSeconds: catchupWindowSeconds ?? deadlineSeconds,
    });
    deps.metrics?.add(MetricName.OccurrencesMissed, 1, key.jobId);
    return 'recorded-missed';
  }
  // Without the old row we cannot tell whether it was claimed; enqueueing again is the harmless choice.
  const existingStatus = created.created ? undefined : created.existing?.status;
  if (existingStatus !== undefined && existingStatus !== OccurrenceStatus.PENDING) {
    deps.logger.info('duplicate trigger suppressed', { ...fields, status: existingStatus });
    deps.metrics?.add(MetricName.DuplicateTriggersSuppressed, 1, key.jobId);
    return 'duplicate-suppressed';
  }
  await queue.send(encodeEnvelope(key));
  if (created.created) {
    // DEBUG: the happy path's one INFO line is the worker's outcome; the row records this step.
    deps.logger.debug?.('occurrence recorded and enqueued', fields);
    return 'recorded';
  }
  deps.logger.info(
    'occurrence was already recorded but not claimed yet; enqueued again in case the first trigger died before enqueueing',
    fields,
  );
  return 'pending-re-enqueued';
}
