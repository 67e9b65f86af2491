/**
 * What the protocol needs from the world. The AWS adapters in functions/aws implement these; tests and the
 * simulation plug in their own.
 */
import type { MetricName } from './metric-names';
import type { Occurrence, OccurrenceKey, OccurrenceStatus } from './occurrence';
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
  /** Record the announcement once; false when it was already recorded. */
  markNotified(key: OccurrenceKey, notificationId: string, now: number): Promise<boolean>;
  get(key: OccurrenceKey): Promise<Occurrence | undefined>;
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
