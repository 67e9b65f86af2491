/**
 * One segment of a run: what the job gets (checkpoint, progress, fence, report writer, resumeFrom), when it is asked
 * to yield, and what the worker records when it does.
 *
 *   claim ─▶ segment: job(signal, checkpoint, progress, report) ∥ heartbeat(extend + progress)
 *     time nearly spent ─▶ signal aborts with YieldRequestedError ─▶ job checkpoints and returns (rejects)
 *     ─▶ continueRun (RUNNING, lease given up, segment + 1, attempt - 1) ─▶ a new message ─▶ next claim resumes
 *   job ends ─▶ report.end() ─▶ CompleteMultipartUpload(If-None-Match: *) ─▶ complete, as for a returned body
 *
 * A segment is not an attempt: only a failure costs one. `maxRunSeconds` bounds the run from its first claim.
 */
import { setMaxListeners } from 'node:events';
import {
  checkedProgress,
  encodeCheckpointState,
  fenceOf,
  type ResumableOccurrence,
  type RunProgress,
  resumeStateOf,
} from './checkpoint';
import { CheckpointRejectedError, YieldRequestedError } from './errors';
import type { JobSettings } from './job-settings';
import { JOB_SIGNAL_MAX_LISTENERS } from './lease-guard';
import { iso, type Occurrence } from './occurrence';
import type {
  Clock,
  Lease,
  Logger,
  MultipartUploads,
  ReportBody,
  RunContext,
  RunStateStore,
  StreamedReport,
} from './ports';
import { isStreamedReport, MultipartReportWriter } from './report-writer';
import { withTransientRetries } from './transient-retry';

/** The most a job is given to checkpoint after it is asked to yield. */
export const YIELD_GRACE_MAX_MS = 20_000;

export interface SegmentPlan {
  /** When the guard aborts the job whatever it does: the segment's end, or the run's. */
  readonly deadlineAt: number;
  /** When the job is asked to yield; undefined when this segment is not to be continued. */
  readonly yieldAt: number | undefined;
  readonly runStartedAt: string;
  /** maxRunSeconds after runStartedAt. */
  readonly runDeadlineAt: number;
}

/**
 * The segment's times. A job that is not resumable keeps today's single deadline. A resumable one is asked to yield
 * a grace before the segment ends (a quarter of the segment, at most YIELD_GRACE_MAX_MS), unless the run's own
 * limit comes first: then that limit is the deadline, and no continuation follows.
 */
export function planSegment(
  row: ResumableOccurrence,
  settings: JobSettings,
  timing: {
    readonly mustFinishBy: number;
    /** The job starts no earlier than this (a cancelOther start waits for the run it cancelled, job-slot.ts). */
    readonly notBefore?: number;
    readonly resumable: boolean;
  },
): SegmentPlan {
  const { mustFinishBy, resumable } = timing;
  const claimedAt = Math.max(Date.parse(row.claimedAt ?? ''), timing.notBefore ?? 0);
  const runStartedAt = row.runStartedAt ?? (row.claimedAt as string);
  const runDeadlineAt = Date.parse(runStartedAt) + settings.maxRunSeconds * 1000;
  const segmentEnd = Math.min(claimedAt + settings.timeoutSeconds * 1000, mustFinishBy);
  if (!resumable) return { deadlineAt: segmentEnd, yieldAt: undefined, runStartedAt, runDeadlineAt };
  if (runDeadlineAt <= segmentEnd)
    return { deadlineAt: runDeadlineAt, yieldAt: undefined, runStartedAt, runDeadlineAt };
  const grace = Math.min(YIELD_GRACE_MAX_MS, Math.floor((segmentEnd - claimedAt) / 4));
  return { deadlineAt: segmentEnd, yieldAt: segmentEnd - grace, runStartedAt, runDeadlineAt };
}

export interface SegmentDeps {
  readonly runs: RunStateStore;
  readonly uploads: MultipartUploads;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** What the job's run came to. */
export type SegmentEnd =
  | { readonly kind: 'body'; readonly report: ReportBody }
  | { readonly kind: 'streamed'; readonly writer: MultipartReportWriter }
  | { readonly kind: 'yielded' };

/** The per-segment state the job's context and the heartbeat share. */
export class Segment {
  readonly controller = new AbortController();
  readonly writer: MultipartReportWriter;
  private latest: RunProgress | undefined;
  /** When the run's last checkpoint was recorded (by this segment or an earlier one); undefined: none yet. */
  private checkpointAt: string | undefined;
  private sent: RunProgress | undefined;
  private yieldTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly deps: SegmentDeps,
    private readonly row: ResumableOccurrence,
    private readonly lease: Lease,
    private readonly plan: SegmentPlan,
    /** The guard's: a lost lease stops the job, its uploads and its writes; a yield request stops only the job. */
    private readonly guardSignal: AbortSignal,
    report: { reportKey: string; contentType: string; metadata: Record<string, string>; partBytes?: number },
  ) {
    this.writer = new MultipartReportWriter(
      { ...report, uploads: deps.uploads, runs: deps.runs, lease, signal: guardSignal, now: () => deps.clock.now() },
      row,
    );
    this.latest = row.progress;
    this.sent = row.progress;
    this.checkpointAt = row.checkpoint?.at;
    // The job's signal now: it goes to as many requests as the guard's did (lease-guard.ts).
    setMaxListeners(JOB_SIGNAL_MAX_LISTENERS, this.controller.signal);
  }

  /** The job's context: the guard's signal and a yield request both reach the job through one signal. */
  context(): RunContext & { signal: AbortSignal } {
    const { guardSignal } = this;
    guardSignal.addEventListener('abort', () => this.controller.abort(guardSignal.reason), { once: true });
    if (this.plan.yieldAt !== undefined) {
      const continueBy = iso(this.plan.deadlineAt);
      this.yieldTimer = setTimeout(
        () => this.controller.abort(new YieldRequestedError(continueBy)),
        Math.max(0, this.plan.yieldAt - this.deps.clock.now()),
      );
    }
    return {
      signal: this.controller.signal,
      resumeFrom: resumeStateOf(this.row),
      checkpoint: (state) => this.checkpoint(state),
      progress: (p) => this.progress(p),
      fence: fenceOf(this.row, this.lease.leaseId),
      report: this.writer,
      segment: this.row.segment ?? 0,
    };
  }

  /** Whether the job was asked to yield (and nothing else stopped it first). */
  get yieldRequested(): boolean {
    return this.controller.signal.reason instanceof YieldRequestedError;
  }

  stop(): void {
    clearTimeout(this.yieldTimer);
  }

  /** When the checkpoint a continuation now would resume from was recorded; undefined: the run has none yet. */
  get lastCheckpointAt(): string | undefined {
    return this.checkpointAt;
  }

  /** The progress to send with the next extend, if it changed since the last one sent. */
  takeProgress(): RunProgress | undefined {
    if (this.latest === undefined || this.latest === this.sent) return undefined;
    this.sent = this.latest;
    return this.latest;
  }

  /** Put back progress whose extend failed, so the next heartbeat sends it. */
  untakeProgress(progress: RunProgress): void {
    if (this.sent === progress) this.sent = undefined;
  }

  private progress(input: { done: number; total?: number; note?: string }): void {
    const next = checkedProgress(input, iso(this.deps.clock.now()));
    // A resumed job may count again from its checkpoint, behind what the row shows: the row keeps the higher count.
    if (this.latest !== undefined && next.done < this.latest.done) return;
    this.latest = next;
  }

  private async checkpoint(state: unknown): Promise<boolean> {
    const encoded = encodeCheckpointState(state);
    const boundary = await this.writer.boundary();
    if (boundary === undefined) {
      this.deps.logger.info('checkpoint not recorded: the report buffers less than a part since its last one', {
        bytesWritten: this.writer.bytesWritten,
      });
      return false;
    }
    const at = iso(this.deps.clock.now());
    const checkpoint = { state: encoded, at, ...(boundary.upload === undefined ? {} : { upload: boundary.upload }) };
    await withTransientRetries(() => this.deps.runs.checkpoint(this.lease, checkpoint, this.deps.clock.now()), {
      attempts: 3,
      firstDelayMs: 200,
      signal: this.guardSignal,
    });
    this.checkpointAt = at;
    return true;
  }
}

/**
 * Run the job for one segment and say how it ended. A job asked to yield ends by rejecting (with the signal's
 * reason, say) or by returning after its checkpoint; a job that returns a report when asked to yield has finished.
 */
export async function runSegmentJob(
  segment: Segment,
  run: (context: RunContext & { signal: AbortSignal }) => Promise<ReportBody | StreamedReport>,
  guardSignal: AbortSignal,
): Promise<SegmentEnd> {
  try {
    const result = await run(segment.context());
    guardSignal.throwIfAborted();
    if (isStreamedReport(result)) return { kind: 'streamed', writer: segment.writer };
    if (segment.yieldRequested && result === undefined) return { kind: 'yielded' };
    if (result === undefined || result === null) {
      throw new CheckpointRejectedError('report', 'run returned nothing: return a report body or `await report.end()`');
    }
    return { kind: 'body', report: result };
  } catch (error) {
    if (segment.yieldRequested && !guardSignal.aborted && !(error instanceof CheckpointRejectedError)) {
      return { kind: 'yielded' };
    }
    throw error;
  } finally {
    segment.stop();
  }
}

/** Whether a resumable run is past its maxRunSeconds: its failure is final, a retry would stop at once. */
export const runTimeUsedUp = (plan: SegmentPlan | undefined, now: number): boolean =>
  plan !== undefined && now >= plan.runDeadlineAt;

/** The claimed row's run fields: whether an earlier segment of this run may have committed a report. */
export const isResumedRun = (row: Occurrence): boolean => {
  const run = row as ResumableOccurrence;
  return (run.segment ?? 0) > 0 || run.checkpoint !== undefined || run.openUpload !== undefined;
};

/**
 * A context for running a job outside a worker (the testing kit): nothing is recorded, checkpoints answer false,
 * and the report writer refuses, since there is no upload to stream to.
 */
export function detachedRunContext(leaseId = 'detached'): RunContext {
  const refuse = async (): Promise<never> => {
    throw new Error('report.write needs a worker: run the job through the local pipeline to stream a report');
  };
  return {
    resumeFrom: undefined,
    checkpoint: async (state) => {
      encodeCheckpointState(state);
      return false;
    },
    progress: (p) => void checkedProgress(p, new Date(0).toISOString()),
    fence: { sequence: 1, leaseId, token: `${'1'.padStart(10, '0')}:${leaseId}` },
    report: { write: refuse, end: refuse, bytesWritten: 0 },
    segment: 0,
  };
}
