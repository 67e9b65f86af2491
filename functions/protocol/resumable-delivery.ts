/**
 * The worker's side of a resumable run, called from process-delivery.ts: open the segment (the job's context and
 * the heartbeat's progress), run the job in it, and record a yield as a continuation.
 *
 *   yielded ─▶ continueRun (fenced) ─▶ send a new message ─▶ ack this one     (the next claim resumes at once)
 *                                        └─ send failed ─▶ make this one visible now, do not ack
 *
 * A new message rather than this one made visible again: every receive counts towards the queue's redrive limit
 * (maxAttempts + 5), and a run of many segments would otherwise reach the DLQ although no attempt failed.
 *
 * A job asked to yield that has not stopped when the segment ends (a late yield: a slow part upload, a starved CPU)
 * is stopped by the guard and the segment is continued all the same, from the last checkpoint the row holds: only the
 * work since that checkpoint is lost, no attempt. The guard's stop has closed the report writer and every fenced write
 * of the old lease fails once the continuation is recorded, so the job, still running in this process, can add
 * nothing to the row or the report after it.
 */
import type { ResumableOccurrence } from './checkpoint';
import type { Delivery, DeliveryResult } from './delivery';
import { JobTimeoutError, messageOf } from './errors';
import { iso, type Occurrence } from './occurrence';
import type { JobDefinition, Lease, Logger, MultipartUploads, RunStateStore, WorkerDeps } from './ports';
import { runSegmentJob, Segment, type SegmentEnd, type SegmentPlan } from './resumable-run';
import { withTransientRetries } from './transient-retry';

/** A segment and how the heartbeat extends under it: with the job's progress when it has news, else plainly. */
export interface OpenSegment {
  readonly segment: Segment;
  /** Undefined: nothing new to show, the plain extend does. */
  extend(expiresAt: number, now: number, signal: AbortSignal): Promise<void> | undefined;
}

export function openSegment(
  deps: WorkerDeps,
  occurrence: Occurrence,
  lease: Lease,
  plan: SegmentPlan,
  reportKey: string,
  definition: JobDefinition,
  guardSignal: AbortSignal,
  log: Logger,
): OpenSegment {
  const runs = deps.runs ?? absentRunState;
  const segment = new Segment(
    { runs, uploads: deps.uploads ?? absentUploads, clock: deps.clock, logger: log },
    occurrence as ResumableOccurrence,
    lease,
    plan,
    guardSignal,
    { reportKey, contentType: contentTypeOf(definition.reportExtension), metadata: metadataOf(lease) },
  );
  return {
    segment,
    extend: (expiresAt, now, signal) => {
      const progress = deps.runs === undefined ? undefined : segment.takeProgress();
      if (progress === undefined) return undefined;
      return runs.extendWithProgress(lease, expiresAt, now, progress, signal).catch((error: unknown) => {
        segment.untakeProgress(progress);
        throw error;
      });
    },
  };
}

/** Run the job in its segment; an upload an earlier holder abandoned is aborted first. */
export async function runResumableSegment(
  open: OpenSegment,
  definition: JobDefinition,
  occurrence: Occurrence,
  guardSignal: AbortSignal,
  log: Logger,
): Promise<SegmentEnd> {
  const abandoned = await open.segment.writer.abortAbandoned().catch((error: unknown) => {
    // The bucket's lifecycle rule aborts it later; nothing of it is part of the report.
    log.warn('could not abort an abandoned report upload', { error: messageOf(error) });
    return undefined;
  });
  if (abandoned !== undefined) log.info('aborted the report upload an earlier holder left', { uploadId: abandoned });
  return runSegmentJob(open.segment, (context) => definition.run(occurrence, { ...context, logger: log }), guardSignal);
}

/**
 * Whether the guard stopped a segment that was to be continued at its end because that end came (`error` is its
 * deadline): a late yield. The job was asked to yield and had not stopped, or the segment's time ran out before the
 * job was even asked (its start was slow); either way no failure of the job was seen, and the segment is continued
 * from the last recorded checkpoint. Anything else (a lost lease, a failure, the run's own limit, which plans no
 * yield) ends the attempt as before.
 */
export const isLateYield = (plan: SegmentPlan, error: unknown): boolean =>
  plan.yieldAt !== undefined && error instanceof JobTimeoutError;

/** Record the continuation and hand the occurrence to a fresh invocation. */
export async function continueSegment(
  deps: WorkerDeps,
  delivery: Delivery,
  lease: Lease,
  plan: SegmentPlan,
  open: OpenSegment | undefined,
  log: Logger,
  /** The guard stopped the segment at its end (isLateYield): the job may still be running. */
  late = false,
): Promise<DeliveryResult> {
  const progress = open?.segment.takeProgress();
  const upload = open?.segment.writer.settledReservation();
  const now = deps.clock.now();
  if (late) {
    log.warn('the job did not stop within its yield grace: the segment continues from its last recorded checkpoint', {
      checkpointAt: open?.segment.lastCheckpointAt,
      segmentEndedAt: iso(plan.deadlineAt),
    });
  }
  // Given up into the past by the clock skew the protocol tolerates, so that no worker sees it live.
  const released = now - 1000 * safetyMarginSecondsOf(deps, lease);
  try {
    await withTransientRetries(
      () =>
        (deps.runs ?? absentRunState).continueRun(
          lease,
          plan.runStartedAt,
          released,
          deps.clock.now(),
          progress,
          upload,
        ),
      { attempts: 3, firstDelayMs: 200 },
    );
  } catch (error) {
    // LeaseLostError: the next holder resumes from the checkpoint; otherwise the lease expires and the message
    // returns at its visibility timeout. Either way the checkpoint is what the next segment starts from.
    log.warn('could not record the continuation', { error: messageOf(error) });
    return 'lease-lost';
  }
  try {
    await deps.queue.send(delivery.body);
  } catch (error) {
    log.warn('continuation recorded, but no new message: making this one visible again', {
      error: messageOf(error),
    });
    await deps.queue.hide(delivery.receiptHandle, 0).catch(() => undefined);
    return 'outcome-not-recorded';
  }
  log.info('segment yielded; the occurrence continues in a fresh invocation', { continuedAt: iso(now) });
  return 'continued';
}

const safetyMarginSecondsOf = (deps: WorkerDeps, lease: Lease): number =>
  deps.jobs.get(lease.key.jobId)?.settings.leaseSafetyMarginSeconds ?? 0;

const CONTENT_TYPES: Record<string, string> = {
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  csv: 'text/csv',
  md: 'text/markdown',
  txt: 'text/plain',
};
const contentTypeOf = (extension: string): string => CONTENT_TYPES[extension] ?? 'application/octet-stream';

const metadataOf = (lease: Lease): Record<string, string> => ({
  'job-id': lease.key.jobId,
  'scheduled-time': lease.key.scheduledTime,
  attempt: String(lease.attempt),
  'lease-id': lease.leaseId,
});

const unavailable = (what: string) => async (): Promise<never> => {
  throw new Error(`${what} is not available: the worker was built without it (WorkerDeps.runs / uploads)`);
};
const absentRunState: RunStateStore = {
  checkpoint: unavailable('checkpoint'),
  recordUpload: unavailable('a streamed report'),
  extendWithProgress: unavailable('progress'),
  continueRun: unavailable('continuing a run'),
};
const absentUploads: MultipartUploads = {
  create: unavailable('a streamed report'),
  uploadPart: unavailable('a streamed report'),
  complete: unavailable('a streamed report'),
  abort: async () => {},
};
