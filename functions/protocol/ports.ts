/**
 * What the protocol needs from the world, and what a job gets from it. The AWS adapters in functions/aws implement
 * these; tests and the simulation plug in their own.
 *
 * This module holds types (and two trivial defaults) only, and imports only the types of the data modules
 * (occurrence, job-state, checkpoint, table-schema, job-settings, metric-names), never a module that does the work: so
 * every module of the protocol can import its ports without an import cycle (test/architecture/layers.test.ts fails
 * on one). The `…Deps` of one use case stay beside it (TriggerDeps in record-occurrence.ts and the like).
 */
import type { Fence, OpenUpload, RunCheckpoint, RunProgress, UploadedPart } from './checkpoint';
import type { CapacityPorts } from './concurrency-ports';
import type { JobSettings } from './job-settings';
import type { JobState, PauseCause } from './job-state';
import type { MetricName } from './metric-names';
import type { Occurrence, OccurrenceKey, OccurrenceStatus, SkipReason } from './occurrence';
import type { IndexedOccurrence } from './table-schema';

/** A source of the current time (a test passes a fixed one). */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Structured fields of a log line, written beside its message. */
export type LogFields = Record<string, unknown>;
/** A structured logger: each line is a message and its fields. */
export interface Logger {
  /**
   * Logs a step of the normal course, written only at the DEBUG log level. Absent (a logger written before there was
   * one): such lines are dropped.
   */
  debug?(message: string, fields?: LogFields): void;
  /** Logs what happened in the normal course: on the happy path, one line per occurrence (the worker's outcome). */
  info(message: string, fields?: LogFields): void;
  /** Logs something unusual that did not stop the work. */
  warn(message: string, fields?: LogFields): void;
  /** Logs a failure. */
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
  /**
   * The commit point: record, fenced, that this lease is about to commit its report (`committingLease`,
   * `committingAt`). From then on an operator's cancel and a cancelOther revoke are refused; once either is recorded,
   * this write fails with LeaseLostError and the report is not put. See cancel-occurrence.ts.
   */
  markCommitting(lease: Lease, now: number): Promise<void>;
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
export interface OccurrenceRecorder {
  /** Insert if absent. */
  create(occurrence: Occurrence): Promise<CreateResult>;
}

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

/** The job-state fields the operator actions write; `version` is the store's. */
/** The fields of a job-state row that a write may set or remove (all but its key and its version). */
export type JobStateFields = Omit<JobState, 'jobId' | 'scheduledTime' | 'version'>;

/** One compare-and-swap write of the job-state row: fields to set and fields to remove. */
export interface JobStateChange {
  /** The fields to set, with their new values. */
  readonly set: Partial<JobStateFields>;
  /** The fields to remove. */
  readonly remove: readonly (keyof JobStateFields)[];
}

/** The row after the write, or the row that refused it (undefined: there is none). */
export type JobStateWrite = { written: true; state: JobState } | { written: false; current: JobState | undefined };

/** The job-state row's reads and compare-and-swap writes (functions/aws/job-state-store.ts on DynamoDB). */
export interface JobStateStore {
  /** A consistent read; undefined when the job has no row yet. */
  read(jobId: string): Promise<JobState | undefined>;
  /**
   * Applies the change and increments `version` if the row's version is still `expected` (undefined: only if the
   * row does not exist).
   */
  write(jobId: string, expected: number | undefined, change: JobStateChange): Promise<JobStateWrite>;
}

/** One job's occurrences, newest first (the CLI's OperatorOccurrenceReader); never the job-state row. */
export interface OccurrenceHistory {
  /** The newest `limit` occurrences of a series (a job, or one schedule of a job: schedule-key.ts), newest first. */
  newestFirst(series: string, limit: number): Promise<Occurrence[]>;
}

/** What a manual retry writes when it reopens a FAILED occurrence. */
export interface ReopenRequest {
  /** The time of the retry, epoch milliseconds. */
  readonly now: number;
  /** The new deadline: no attempt starts after it. */
  readonly deadlineAt: number;
  /** DynamoDB TTL, epoch seconds: the row must outlive the new deadline. */
  readonly ttl: number;
  /** The worker that runs the job now (it may have moved since the occurrence was recorded). */
  readonly worker: string;
  /** Who retries it (operator-identity.ts), recorded in the history entry of the reopening. */
  readonly by?: string;
  /**
   * The bulk run that reopens it (bulk-occurrences.ts): added to the row's `bulkActions` in the same write, whose
   * condition refuses a row that holds it already, so that a resumed run never reopens one occurrence twice.
   */
  readonly bulkId?: string;
}

/** On failure the row that refused the condition (undefined when there is none). */
export type ReopenResult = { reopened: true } | { reopened: false; current: Occurrence | undefined };

/** What a manual retry needs from the store, beyond the OccurrenceStore port. */
export interface ReopenableStore {
  /** The row of this key, or undefined when there is none. */
  get(key: OccurrenceKey): Promise<Occurrence | undefined>;
  /** FAILED to PENDING, attempt 0, the new deadline and TTL; conditional on the row being FAILED. */
  reopenFailed(key: OccurrenceKey, request: ReopenRequest): Promise<ReopenResult>;
}

/** What an operator's cancel writes (cancel-occurrence.ts). */
export interface CancelRequest {
  /** The time of the cancel, epoch milliseconds. */
  readonly now: number;
  /** Who cancels: the operator's identity string. */
  readonly by: string;
  /** Why, as the operator wrote it. */
  readonly note?: string;
  /**
   * The row as it was read: the write applies only while its status, lease id and attempt are still these (and, for
   * a RUNNING row, while its lease has not reached its commit point).
   */
  readonly observed: Pick<Occurrence, 'status' | 'leaseId' | 'attempt'>;
  /** RUNNING: the lease id written over the row's (`cancelled-by-operator-<uuid>`), so that its holder's writes fail. */
  readonly revocationId?: string;
}

/** On refusal the row as it was (undefined when there is none), so that the caller decides again without a read. */
export type CancelWriteResult = { cancelled: true } | { cancelled: false; current: Occurrence | undefined };

/** What an operator's cancel needs from the store (functions/aws/occurrence-store.ts OperatorOccurrenceStore). */
export interface CancellableStore {
  /** The row of this key, read consistently, or undefined when there is none. */
  get(key: OccurrenceKey): Promise<Occurrence | undefined>;
  /** One conditional write: CANCELLED, if the row is still as observed (CancelRequest). */
  cancel(key: OccurrenceKey, request: CancelRequest): Promise<CancelWriteResult>;
}

/**
 * Counts and durations (EMF on Lambda; nothing in tests and local runs unless injected). The adapter decides the
 * dimensions: the function's own (a worker's, the trigger's, the reconciler's), and the job's only where the job
 * opted in to per-job metrics (functions/runtime/powertools-metrics.ts).
 */
export interface Metrics {
  /** Adds `value` to the metric `name`, recorded for the job `jobId`. */
  add(name: MetricName, value: number, jobId: string): void;
  /** Writes what `add` buffered; each handler calls it once at the end of an invocation. Absent: nothing buffers. */
  flush?(): void;
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
  /**
   * The entries under one index partition key (`OPEN#17`) with `from <= scheduledTime < to`, oldest first, one page
   * at a time: a reader that handles each page before asking for the next holds one page, whatever the shard holds.
   */
  shardPages(
    shard: string,
    from: string,
    to: string,
    signal?: AbortSignal,
  ): AsyncIterable<readonly IndexedOccurrence[]>;
  /** The full rows of these keys, in their order; a key whose row is gone is left out. */
  readRows(keys: readonly OccurrenceKey[], signal?: AbortSignal): Promise<Occurrence[]>;
}

/** A job's report, whole: what `run` returns when it does not stream its report. */
export interface ReportBody {
  /** The report's content, written once to S3. */
  readonly body: string | Uint8Array;
  /** The S3 object's Content-Type, such as `text/csv; charset=utf-8`. */
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

/** One worker's job queue. */
export interface WorkQueue {
  /** Sends one message. */
  send(messageBody: string): Promise<void>;
  /** Keep a received message hidden for this many seconds from now (a waiting retry costs no invocation). */
  hide(receiptHandle: string, seconds: number): Promise<void>;
}

export interface ReportAnnouncement {
  readonly jobId: string;
  /** The schedule key, for an occurrence of a schedule created at run time. */
  readonly scheduleKey?: string;
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

/** What a job streams its report through (`context.report`); the writer is report-writer.ts. */
export interface ReportWriter {
  /** Append to the report; await each write before the next (the writer sends a part when enough is buffered). */
  write(chunk: string | Uint8Array): Promise<void>;
  /** The report is complete: return this from `run`, and the worker commits it write-once. */
  end(): Promise<StreamedReport>;
  /** Bytes written so far, over all segments. */
  readonly bytesWritten: number;
}

/** What `report.end()` gives back for `run` to return. */
export interface StreamedReport {
  /** Always true: tells a streamed report from a ReportBody. */
  readonly streamed: true;
  /** How many bytes the report has. */
  readonly bytes: number;
}

/** What a resumable job gets beside its signal and logger (JobContext); resumable-run.ts builds it. */
export interface RunContext {
  /** The state of the run's last recorded checkpoint; undefined on a fresh run. */
  readonly resumeFrom: unknown;
  /**
   * Record `state` (JSON, at most 64 KB) in the row, fenced by the lease; true when recorded. False when the report
   * writer holds bytes that are not yet a part (under 5 MiB): the state would name bytes that no part holds.
   */
  checkpoint(state: unknown): Promise<boolean>;
  /** Shown in the row; sent with the next heartbeat, so it costs no request. `done` never goes back in the row. */
  progress(progress: { done: number; total?: number; note?: string }): void;
  /** Grows with every claim: pass it to downstream writes so they can refuse a stale holder (docs/long-jobs.md). */
  readonly fence: Fence;
  /** Stream a large report (S3 multipart); return `await report.end()` from run. */
  readonly report: ReportWriter;
  /** Which segment this is: 0 for the run's first. */
  readonly segment: number;
}

/** What a job gets: its signal and logger, and for long jobs checkpoint, progress, fence and report (RunContext). */
export interface JobContext extends RunContext {
  /** Aborted when the job must stop (a lost lease, its time limit, a yield); its reason is the error that says why. */
  readonly signal: AbortSignal;
  /** A logger whose lines carry the occurrence's job id and scheduled time. */
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
  /** Runs one attempt of one occurrence and returns its report; a throw fails the attempt, which is retried. */
  run(occurrence: Occurrence, context: JobContext): Promise<Report>;
}

/** Whether a job that takes schedules at run time is paused as a whole (its own job-state row, not a schedule's). */
export interface WholeJobPauses {
  isPaused(jobId: string): Promise<boolean>;
}

/** A job's Scheduler schedule, switched on and off with its definition kept (pause and resume). */
export interface ScheduleSwitch {
  /** `DISABLED` stops the schedule firing; `ENABLED` starts it again. Setting the state it already has is a no-op. */
  setState(jobId: string, state: 'ENABLED' | 'DISABLED'): Promise<void>;
}

// What a resumable run needs beside the ports above: fenced writes of its checkpoint, progress and continuation to the
// occurrence row, and the multipart upload of its report. The AWS adapters are functions/aws/run-state-store.ts and
// functions/aws/multipart-report-store.ts.

/**
 * Fenced writes of a resumable run. Each applies only while the row is RUNNING under the lease, and throws
 * LeaseLostError otherwise; other failures are DependencyError. A retried write that finds its own result succeeds.
 */
export interface RunStateStore {
  /** Record the job's checkpoint (and the upload it covers). */
  checkpoint(lease: Lease, checkpoint: RunCheckpoint, now: number): Promise<void>;
  /** Record the upload this holder opened, or a higher part reservation, before a part above the old one is sent. */
  recordUpload(lease: Lease, upload: OpenUpload, now: number): Promise<void>;
  /** The heartbeat's extend with the job's latest progress in the same write. */
  extendWithProgress(
    lease: Lease,
    leaseExpiresAt: number,
    now: number,
    progress: RunProgress,
    signal?: AbortSignal,
  ): Promise<void>;
  /**
   * End this segment: give the lease up (the row stays RUNNING with an expired lease, so the next delivery claims it
   * at once), count the segment, and take back the attempt the claim counted. `runStartedAt` is kept if recorded;
   * `progress`, the job's latest, goes in the same write, and so does `upload`, the part reservation narrowed to the
   * parts this holder sent (report-writer.ts, settledReservation).
   */
  continueRun(
    lease: Lease,
    runStartedAt: string,
    releasedLeaseExpiresAt: number,
    now: number,
    progress: RunProgress | undefined,
    upload: OpenUpload | undefined,
  ): Promise<void>;
}

export interface PartUploadRequest {
  readonly reportKey: string;
  readonly uploadId: string;
  readonly partNumber: number;
  readonly body: Uint8Array;
}

/** S3 multipart uploads of reports; the commit is write-once like putIfAbsent. */
export interface MultipartUploads {
  /**
   * The smallest part the service takes but the last, and the part size to aim for. Default S3's: 5 MiB and 8 MiB
   * (report-writer.ts); the simulation's fake takes smaller ones, so that thousands of runs stay cheap.
   */
  readonly partBytes?: { readonly min: number; readonly target: number };
  create(
    reportKey: string,
    contentType: string,
    metadata: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<string>;
  uploadPart(request: PartUploadRequest, signal?: AbortSignal): Promise<UploadedPart>;
  /** CompleteMultipartUpload with If-None-Match: *; 'existed' when an object is already at the key (412). */
  complete(
    reportKey: string,
    uploadId: string,
    parts: readonly UploadedPart[],
    signal?: AbortSignal,
  ): Promise<'created' | 'existed'>;
  /** Abort an upload nobody will complete; an upload already gone counts as aborted. */
  abort(reportKey: string, uploadId: string): Promise<void>;
}

/** A job of the worker: its settings and its implementation. */
export interface RegisteredJob {
  readonly settings: JobSettings;
  readonly definition: JobDefinition;
}

/** Everything the worker's delivery of one message (process-delivery.ts) runs on. */
export interface WorkerDeps {
  readonly store: OccurrenceStore;
  /** The job-state rows: the running slot of the overlap policies, the buffer, the failures in a row. */
  readonly slots: JobSlotStore;
  /** Disables a job's schedule when it pauses after failures; absent where no job of the worker has that setting. */
  readonly schedules?: ScheduleSwitch;
  /** Whether a job that takes schedules at run time is paused as a whole; default: its state row read at every start. */
  readonly wholeJobPauses?: WholeJobPauses;
  readonly reports: ReportStore;
  readonly queue: WorkQueue;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly jobs: ReadonlyMap<string, RegisteredJob>;
  /** Who holds the lease, for people reading the row (e.g. the Lambda log stream). */
  readonly owner: string;
  readonly newLeaseId: () => string;
  /** Uniform in [0, 1): the retry jitter. */
  readonly random: () => number;
  /** How long a message that can never be processed stays hidden before its next receive (on its way to the DLQ). */
  readonly poisonRetrySeconds: number;
  /** Default: none recorded. */
  readonly metrics?: Metrics;
  /** Checkpoints, progress and continuations of long jobs (resumable-run.ts); absent: jobs get no run state. */
  readonly runs?: RunStateStore;
  /** Streamed reports; absent: `context.report` refuses writes. */
  readonly uploads?: MultipartUploads;
  /** The capacity row and waiting list of its jobs with maxConcurrency (concurrency-cap.ts); absent without one. */
  readonly capacity?: CapacityPorts;
}

/**
 * A job's fixed schedule found DISABLED in the stack's schedule group, with what the late check needs
 * (reconcile-late.ts): read from the schedule itself (its expression, and the input the stack deployed).
 */
export interface DisabledSchedule {
  readonly jobId: string;
  /** The worker its occurrences go to: the `worker` dimension its lateness is counted under. */
  readonly worker: string;
  /** The Scheduler expression (`cron(...)`, `rate(...)`, `at(...)`) and its time zone. */
  readonly expression: string;
  readonly timeZone: string;
  readonly lateAfterSeconds: number;
  /** When the schedule was created (ISO): no fire time before it is owed. */
  readonly createdAt: string;
}

/** What the reconciler's check for fire times without a row reads (reconcile-late.ts). */
export interface LateCheckSources {
  /**
   * The stack's fixed schedules that are DISABLED, with a lateAfter in their input: the templates of run-time
   * schedules and schedules deployed before lateAfter existed are left out.
   */
  disabledSchedules(signal?: AbortSignal): Promise<DisabledSchedule[]>;
  /** The newest scheduled time with a row in this series before `to` (exclusive), or undefined when none. */
  newestScheduledTime(series: string, to: string, signal?: AbortSignal): Promise<string | undefined>;
}
