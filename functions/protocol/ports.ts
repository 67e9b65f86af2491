/**
 * What the protocol needs from the world. The AWS adapters in functions/aws implement these; tests and the
 * simulation plug in their own.
 */
import type { JobState, PauseCause } from './job-state';
import type { MetricName } from './metric-names';
import type { Occurrence, OccurrenceKey, OccurrenceStatus, SkipReason } from './occurrence';
import type { StreamedReport } from './report-writer';
import type { RunContext } from './resumable-run';
import type { IndexedOccurrence } from './table-schema';

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export type LogFields = Record<string, unknown>;
export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** `existing` is the row that refused the insert; undefined if the store did not return it. */
export type CreateResult = { created: true } | { created: false; existing: Occurrence | undefined };

export interface ClaimRequest {
  readonly leaseId: string;
  readonly owner: string;
  readonly now: number;
  readonly leaseExpiresAt: number;
  readonly maxAttempts: number;
}

/** On success the row after the claim; otherwise the row that refused it (undefined when there is none). */
export type ClaimResult =
  | { claimed: true; occurrence: Occurrence }
  | { claimed: false; current: Occurrence | undefined };

export interface Lease {
  readonly key: OccurrenceKey;
  readonly leaseId: string;
  /** The attempt the lease was claimed for; recorded in the row's attempt history by the fenced writes. */
  readonly attempt?: number;
}

/**
 * The two primitives (atomic insert, lease extended by key and lease id) and the fenced transitions.
 * Methods that take a Lease throw LeaseLostError when the row is no longer RUNNING under that lease id;
 * other failures are thrown as DependencyError.
 *
 * Writes are idempotent for their caller: when a response is lost and the retried request finds the row already
 * as this very call left it (its own claim, its own release), it succeeds rather than reporting a lost lease.
 */
export interface OccurrenceStore {
  /** Insert if absent. */
  create(occurrence: Occurrence): Promise<CreateResult>;
  /** One conditional write; succeeds only for a claimable occurrence (see claimability.ts). */
  claim(key: OccurrenceKey, request: ClaimRequest): Promise<ClaimResult>;
  extend(lease: Lease, leaseExpiresAt: number, now: number, signal?: AbortSignal): Promise<void>;
  complete(lease: Lease, reportKey: string, now: number): Promise<void>;
  /** `retryMessageId`: the message that will carry the retry (the worker hides it until nextAttemptAt). */
  release(lease: Lease, nextAttemptAt: number, lastError: string, now: number, retryMessageId: string): Promise<void>;
  fail(lease: Lease, lastError: string, now: number): Promise<void>;
  /** FAILED for a row that nobody holds (attempts or deadline used up between runs). False if it changed meanwhile. */
  failUnheld(key: OccurrenceKey, lastError: string, now: number): Promise<boolean>;
  /** SUCCEEDED for a row that nobody holds, whose report an earlier attempt committed. False if it changed meanwhile. */
  completeUnheld(key: OccurrenceKey, reportKey: string, now: number): Promise<boolean>;
  /**
   * SKIPPED (or BUFFERED) instead of running: the overlap policy refused the start this lease claimed. Fenced by the
   * lease; the claim is undone (attempt back to its value before it, the lease's expiry and owner removed), so a
   * BUFFERED occurrence later starts at the attempt it would have had. See job-slot.ts.
   */
  skipClaimed(lease: Lease, skip: ClaimedSkip, now: number): Promise<void>;
  bufferClaimed(lease: Lease, now: number): Promise<void>;
  /**
   * Take the lease away from another occurrence of the job (the slot's holder), as observed; `revoked: false` when the
   * row is no longer as observed. See job-slot.ts.
   */
  revoke(key: OccurrenceKey, revocation: Revocation, now: number): Promise<RevokeResult>;
  /** Record the announcement once; false when it was already recorded. */
  markNotified(key: OccurrenceKey, notificationId: string, now: number): Promise<boolean>;
  get(key: OccurrenceKey): Promise<Occurrence | undefined>;
}

/** What the trigger (and whatever records occurrences as it does: backfill, run, resume) needs of the store. */
export type OccurrenceRecorder = Pick<OccurrenceStore, 'create'>;

export interface ClaimedSkip {
  readonly reason: SkipReason;
  /** overlap: the scheduled time of the occurrence it yielded to. */
  readonly yieldedTo?: string;
}

/**
 * `expired`: the holder is RUNNING under an expired lease; only its lease id is replaced, so its late extend or
 * complete fails, and it stays claimable. `cancel`: the holder is RUNNING (any lease expiry) or RETRY_WAIT, and ends
 * CANCELLED by `by`.
 */
export interface Revocation {
  readonly mode: 'expired' | 'cancel';
  /** The status and lease id (RUNNING) or attempt (RETRY_WAIT) the holder's row was read with. */
  readonly observed: Pick<Occurrence, 'status' | 'leaseId' | 'attempt'>;
  /** The lease id written in place of the holder's: names the revoking occurrence and its lease. */
  readonly revocationId: string;
  /** cancel: the scheduled time of the occurrence that cancels it. */
  readonly by: string;
}

/**
 * `leaseExpiresAt`: the holder's lease expiry just before the revocation (its worker may run until then), when the
 * row had one; `unknown`: written by an earlier try of this very request whose response was lost.
 */
export type RevokeResult =
  | { readonly revoked: false }
  | { readonly revoked: true; readonly leaseExpiresAt?: string; readonly unknown?: true };

/** The change a start decision makes to the job-state row (besides version + 1). */
export interface SlotWrite {
  /** The new holder of the slot; absent: the slot is left as it is. */
  readonly slot?: { readonly slotTime: string; readonly slotLeaseId: string };
  /** The buffer as it must be after the write (empty: removed). */
  readonly buffer: readonly string[];
}

export interface SelfPause {
  readonly pausedAt: number;
  readonly pausedBy: string;
  readonly pauseCause: PauseCause;
  readonly pauseNote: string;
}

/** Refused writes return the row as it was (ALL_OLD), so the caller decides again without another read. */
export type SlotWriteResult = { written: true } | { written: false; state: JobState | undefined };

/**
 * The worker's writes of the job-state row (job-state.ts): the running slot, the buffer, the run of failures and
 * the pause after failures. Failures other than a refused condition are thrown as DependencyError.
 */
export interface JobSlotStore {
  /**
   * The fast path: one write that takes the slot for `slotTime` under `slotLeaseId` when it is free in the row (or
   * already names slotTime), the job is not paused and nothing is buffered.
   */
  tryTake(jobId: string, slotTime: string, slotLeaseId: string): Promise<SlotWriteResult>;
  /** A compare-and-swap on `version` (undefined: the row must not exist yet). */
  writeIfVersion(jobId: string, version: number | undefined, write: SlotWrite): Promise<SlotWriteResult>;
  /**
   * Free the slot held under `slotLeaseId`, and count the run's end in the same write when `failures` says so
   * (`failed`: +1, `succeeded`: back to 0). The row after the write, or `{ released: false }` with the row as it was
   * when the slot is no longer held under that lease. A counting release whose response was lost, refused on the
   * SDK's retry by its own write, is released (the row names it as the lease counted last).
   */
  release(
    jobId: string,
    slotLeaseId: string,
    failures: 'failed' | 'succeeded' | undefined,
  ): Promise<{ released: true; state: JobState } | { released: false; state: JobState | undefined }>;
  /**
   * allowAll's count of the run end of `leaseId`, without a slot: the row after the write. Counting the same lease
   * again (the SDK's retry of a write whose response was lost) changes nothing and returns the row as it is.
   */
  countFailures(jobId: string, outcome: 'failed' | 'succeeded', leaseId: string): Promise<JobState>;
  /**
   * Set the paused fields if the row is still at `version` and not paused; refused: the row as it was (after a lost
   * response, the SDK's retry is refused by the write itself, and the row returned shows that pause).
   */
  pauseIfVersion(jobId: string, version: number, pause: SelfPause): Promise<SlotWriteResult>;
  /** `consistent: false` for allowAll's one look at whether the job is paused. */
  read(jobId: string, consistent: boolean): Promise<JobState | undefined>;
}

/** Counts and durations per job (EMF on Lambda; nothing in tests and local runs unless injected). */
export interface Metrics {
  add(name: MetricName, value: number, jobId: string): void;
}

export const noMetrics: Metrics = { add: () => {} };

/** What a re-enqueue expects the row still to be; the store writes only if it is. See requeue-occurrence.ts. */
export interface RequeueExpectation {
  readonly status: OccurrenceStatus;
  /** The attempt counter as observed: any claim in between changes it. */
  readonly attempt: number;
  /**
   * The row's stuck-since time (createdAt, leaseExpiresAt or nextAttemptAt for PENDING, RUNNING, RETRY_WAIT), and
   * any earlier re-enqueue, must be before this instant (epoch ms).
   */
  readonly stuckBefore: number;
}

/** The write the reconciler needs beside OccurrenceStore. */
export interface RequeueStore {
  /**
   * Record a re-enqueue (`requeuedAt`, `requeueCount`, `requeueId`) if the row is still as expected; false if it
   * changed. `requeueId` is unique per call: a retried request that finds its own id in the row succeeded.
   */
  markRequeued(key: OccurrenceKey, expected: RequeueExpectation, now: number, requeueId: string): Promise<boolean>;
}

/**
 * Occurrences by status through the status index, which projects only what a heartbeat does not change
 * (table-schema.ts): the reconciler picks candidates from the entries and reads the full rows of those it may act on.
 */
export interface OccurrenceIndex {
  /** Index entries with this status and `from <= scheduledTime < to`, oldest first. */
  listIndexed(status: OccurrenceStatus, from: string, to: string, signal?: AbortSignal): Promise<IndexedOccurrence[]>;
  /** The full rows of these keys, in their order; a key whose row is gone is left out. */
  readRows(keys: readonly OccurrenceKey[], signal?: AbortSignal): Promise<Occurrence[]>;
}

export interface ReportBody {
  readonly body: string | Uint8Array;
  readonly contentType: string;
}

export interface ReportStore {
  /**
   * Whether a report is at the key. The worker asks only where one may exist (mayHaveCommittedReport in
   * process-delivery.ts), to avoid running a job again; one report per key is putIfAbsent's guarantee, not this one's.
   */
  exists(reportKey: string): Promise<boolean>;
  /** Write once: 'existed' when an object is already at the key (If-None-Match: * answered 412). */
  putIfAbsent(
    reportKey: string,
    report: ReportBody,
    metadata: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<'created' | 'existed'>;
}

export interface WorkQueue {
  send(messageBody: string): Promise<void>;
  /** Keep a received message hidden for this many seconds from now (a waiting retry costs no invocation). */
  hide(receiptHandle: string, seconds: number): Promise<void>;
}

export interface ReportAnnouncement {
  readonly jobId: string;
  readonly scheduledTime: string;
  readonly reportKey: string;
  readonly reportUri: string;
  readonly attempt: number;
  readonly succeededAt: string;
}

export interface Announcer {
  /** Publish with a deduplication id derived from the occurrence key; returns the message id. */
  publish(announcement: ReportAnnouncement): Promise<string>;
}

/** What a job gets: its signal and logger, and for long jobs checkpoint, progress, fence and report (RunContext). */
export interface JobContext extends RunContext {
  readonly signal: AbortSignal;
  readonly logger: Logger;
}

/**
 * A job: gets its occurrence, returns the report (a body, or `await context.report.end()` for a streamed one). It
 * should stop when `signal` aborts.
 */
export interface JobDefinition<Report extends ReportBody | StreamedReport = ReportBody | StreamedReport> {
  /** File extension of the report, e.g. 'md' or 'json'; fixes the report key before the job runs. */
  readonly reportExtension: string;
  /**
   * True: the job may run over several invocations. Near the end of one the worker aborts its signal with a
   * YieldRequestedError; the job checkpoints and stops, and the next invocation resumes it (docs/long-jobs.md).
   */
  readonly resumable?: boolean;
  run(occurrence: Occurrence, context: JobContext): Promise<Report>;
}

/** A job's Scheduler schedule, switched on and off with its definition kept (pause and resume). */
export interface ScheduleSwitch {
  /** `DISABLED` stops the schedule firing; `ENABLED` starts it again. Setting the state it already has is a no-op. */
  setState(jobId: string, state: 'ENABLED' | 'DISABLED'): Promise<void>;
}
