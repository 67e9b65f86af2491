/**
 * The console's HTTP API: the JSON its server (console/server/) sends and its page (console/web/) reads. Types only,
 * so that both sides are checked against one definition and the page's bundle holds none of the server's code.
 *
 * Every route is under /api and needs the session (what the printed token was exchanged for, once: in a cookie, or
 * `Authorization: Bearer <session>`). Times are ISO-8601 UTC strings. An error is `{ error }` with a 4xx or 5xx status:
 * 400 a bad parameter (the message names it), 401 no or a wrong session, 403 a foreign Host or Origin, an action in
 * read-only mode or a report key outside the occurrence's own folder, 413 a body over 64 KB, 404 no such job, schedule or occurrence, 409 an action the row's state refuses, 502 AWS failed.
 *
 *   GET  /api/config                                     ConsoleConfig
 *   GET  /api/jobs                                       JobsPage
 *   GET  /api/jobs/:jobId[?key=K]                        JobSummary (one job, or one of its run-time schedules)
 *   GET  /api/jobs/:jobId/schedules[?prefix=P&cursor=C]  SchedulesPage (a job that takes schedules at run time)
 *   GET  /api/timeline?job=J[&key=K]&from=T&to=T[&before=T]   TimelinePage, newest first, one page
 *   GET  /api/occurrence?job=J[&key=K]&time=T             OccurrenceDetail
 *   GET  /api/report?job=J[&key=K]&time=T                 the committed report's bytes (a download)
 *   GET  /api/attention?from=F&to=T[&job=J][&kind=K,…]     AttentionView (through the status index)
 *   GET  /api/timelines?from=F&to=T&buckets=N[&job=J][&cursor=C]  AllTimelines: every job on one time axis, a page
 *   POST /api/actions/{retry|cancel|run|pause|resume|backfill}  ActionResult (BackfillPreview for a dry run)
 */

/** The statuses of an occurrence row (functions/protocol/occurrence.ts). */
export type Status =
  | 'PENDING'
  | 'RUNNING'
  | 'RETRY_WAIT'
  | 'SUCCEEDED'
  | 'FAILED'
  | 'SKIPPED'
  | 'BUFFERED'
  | 'CANCELLED';
/** Why an occurrence was SKIPPED. */
export type SkipReasonName = 'overlap' | 'missed' | 'paused';
/** A job's overlap policy. */
export type OverlapName = 'skip' | 'bufferOne' | 'bufferAll' | 'cancelOther' | 'allowAll';

/** GET /api/config: what the page needs before anything else. */
export interface ConsoleConfig {
  /** Actions are hidden in the page and refused by the server. */
  readonly readOnly: boolean;
  /** What the console is connected to, for the header: `table X at http://127.0.0.1:5000`, or the stack and region. */
  readonly where: string;
  /** Who the actions are recorded as (`by`): the operator's name and AWS identity. */
  readonly operator: string;
  /** The server's clock when it answered. */
  readonly now: string;
  /** Whether a report bucket is known (download links). */
  readonly reports: boolean;
  /** Whether the schedule registry is known (run-time schedules can be listed, paused and resumed). */
  readonly registry: boolean;
}

/** A few of a job's newest occurrences, for the history strip. */
export interface RecentRun {
  readonly scheduledTime: string;
  readonly status: Status;
  readonly skipReason?: SkipReasonName;
}

/** One job (or one run-time schedule of a job) at a glance: a row of the jobs page, the header of its timeline. */
export interface JobSummary {
  readonly jobId: string;
  /** Set for one run-time schedule of a job. */
  readonly scheduleKey?: string;
  /** `cron(0 6 * * ? *)`, `rate(1 hour)`, `at(...)`. */
  readonly schedule: string;
  /** The schedule in words: `At 06:00 AM, every day`. */
  readonly scheduleInWords: string;
  readonly timeZone: string;
  /** The schedule's state in Scheduler: ENABLED or DISABLED. */
  readonly schedulerState: string;
  /** The job takes its schedules at run time (its own schedule is a disabled template; see its schedules). */
  readonly runtimeSchedules: boolean;
  readonly worker: string;
  /**
   * The job's overlap policy, as its deployed schedule's input names it; absent from a schedule deployed before the
   * input named it (the page then shows it as unknown rather than a guess).
   */
  readonly overlap?: OverlapName;
  readonly paused: boolean;
  /** Who paused it, when, why; set when paused. */
  readonly pause?: {
    readonly at: string;
    readonly by: string;
    readonly note: string;
    readonly cause: 'operator' | 'failures';
  };
  /** Failed occurrences in a row (the job-state row's count). */
  readonly failuresInARow: number;
  /** The newest occurrence that started: its status and how long it took (absent while it runs). */
  readonly lastRun?: {
    readonly scheduledTime: string;
    readonly status: Status;
    readonly startedAt?: string;
    readonly endedAt?: string;
    readonly durationMs?: number;
  };
  /** The next fire times from now, at most 5 (none while paused or for a template). */
  readonly next: readonly string[];
  /** The newest occurrences, newest first, at most 20. */
  readonly recent: readonly RecentRun[];
}

/** GET /api/jobs. */
export interface JobsPage {
  readonly jobs: readonly JobSummary[];
  /** DynamoDB read capacity units this answer consumed (the console's own cost). */
  readonly readUnits: number;
}

/** One run-time schedule of a job, as its registry row has it. */
export interface ScheduleSummary {
  readonly jobId: string;
  readonly scheduleKey: string;
  readonly expression: string;
  readonly timeZone: string;
  readonly state: 'ENABLED' | 'DISABLED';
  readonly updatedAt?: string;
}

/** GET /api/jobs/:jobId/schedules: one page, by key. */
export interface SchedulesPage {
  readonly schedules: readonly ScheduleSummary[];
  /** Pass as `cursor` for the next page; absent on the last. */
  readonly cursor?: string;
}

/** One occurrence as the timeline draws it: a bar from scheduled to started to finished. */
export interface TimelineBar {
  readonly scheduledTime: string;
  readonly status: Status;
  /** Attempts so far (claims). More than one: it retried. */
  readonly attempt: number;
  /** The first claim (a resumable run's `runStartedAt`, else the first attempt's claim). */
  readonly startedAt?: string;
  /** When it ended: succeeded, failed, skipped, cancelled. Absent while it runs or waits. */
  readonly endedAt?: string;
  readonly skipReason?: SkipReasonName;
  /** SKIPPED for overlap: the scheduled time it yielded to. */
  readonly yieldedTo?: string;
  /** CANCELLED: the scheduled time that cancelled it. */
  readonly cancelledBy?: string;
  /** `run` or `backfill`: recorded by an operator. */
  readonly origin?: 'run' | 'backfill';
  /** A resumable run's segments so far. */
  readonly segments?: number;
  /** A resumable run's progress. */
  readonly progress?: { readonly done: number; readonly total?: number; readonly at: string };
  /** The last attempt's error, cut short. */
  readonly lastError?: string;
}

/** GET /api/timeline: one page of a range, newest first. */
export interface TimelinePage {
  readonly jobId: string;
  readonly scheduleKey?: string;
  readonly from: string;
  readonly to: string;
  readonly bars: readonly TimelineBar[];
  /** More rows in the range: ask again with `before` = this (the oldest scheduled time of this page). */
  readonly before?: string;
  /** The job's fire times in (now, to], at most 100: drawn ahead of now. */
  readonly next: readonly string[];
  readonly readUnits: number;
}

/** A page of the timeline holds at most this many bars; the page stops loading at MAX_TIMELINE_BARS. */
export const TIMELINE_PAGE_BARS = 1000;
/** The most bars the timeline loads for one range; more: it says so and asks for a narrower range. */
export const MAX_TIMELINE_BARS = 10_000;

/** GET /api/occurrence: the row in full, and what the page derives from it. */
export interface OccurrenceDetail {
  /** The row as stored, every attribute. */
  readonly row: Readonly<Record<string, unknown>>;
  readonly summary: TimelineBar;
  /** The report's S3 key and a link to download it through the console; absent until committed. */
  readonly report?: { readonly key: string; readonly href: string };
  /** The "report ready" notification: published (when, message id) or not yet. */
  readonly notification: { readonly publishedAt?: string; readonly messageId?: string };
  /** A resumable run's checkpoint: its age and what it covers. */
  readonly checkpoint?: {
    readonly at?: string;
    readonly ageMs?: number;
    readonly bytes?: number;
    readonly parts?: number;
  };
  /** Whether the row can still change (the page polls it every 2 s while true). */
  readonly live: boolean;
  /**
   * Whether `occurrences retry` (and the console's retry) would reopen it now, by the library's own rule
   * (decideManualRetry): true for a FAILED row only; otherwise why not, as the refusal would say it.
   */
  readonly retry: { readonly offered: true } | { readonly offered: false; readonly reason: string };
  readonly readUnits: number;
}

/** POST /api/actions/retry: reopen a FAILED occurrence (or, with force, enqueue it again). */
export interface RetryRequest {
  readonly jobId: string;
  readonly scheduleKey?: string;
  readonly scheduledTime: string;
  readonly force?: boolean;
}
/** POST /api/actions/cancel: an operator's cancel of one occurrence, with why (optional). */
export interface CancelOccurrenceRequest {
  readonly jobId: string;
  readonly scheduleKey?: string;
  readonly scheduledTime: string;
  readonly note?: string;
}
/** POST /api/actions/run: an occurrence now. */
export interface RunRequest {
  readonly jobId: string;
  readonly scheduleKey?: string;
  /** This occurrence's own overlap policy; default: the job's. */
  readonly overlap?: OverlapName;
}
/** POST /api/actions/pause. */
export interface PauseRequest {
  readonly jobId: string;
  readonly scheduleKey?: string;
  readonly note: string;
}
/** POST /api/actions/resume. */
export interface ResumeRequest {
  readonly jobId: string;
  readonly scheduleKey?: string;
}
/** POST /api/actions/backfill: record the job's fire times in [from, to) that have no row; dryRun writes nothing. */
export interface BackfillRequest {
  readonly jobId: string;
  readonly from: string;
  readonly to: string;
  /** Default bufferAll. */
  readonly overlap?: OverlapName;
  readonly dryRun: boolean;
}

/** What an action did. */
export interface ActionResult {
  /** The library function's outcome: `paused`, `already-paused`, `resumed`, `recorded`, `reopened`, `refused`, ... */
  readonly outcome: string;
  /** One sentence for the operator: what happened. */
  readonly message: string;
  /** Who it was recorded as. */
  readonly by: string;
  /**
   * A refused retry that `force` would enqueue (retryOccurrence's `forceWouldEnqueue`): the page then offers
   * "retry with force". Also accepted on a 409 `{ error, forceWouldEnqueue }` body.
   */
  readonly forceWouldEnqueue?: boolean;
}

/** A backfill's dry run: what it would record. */
export interface BackfillPreview extends ActionResult {
  readonly outcome: 'dry-run';
  readonly planned: number;
  /** Of those, already recorded, by status. */
  readonly existing: Readonly<Partial<Record<Status, number>>>;
  /** The first 100 of the times it would record. */
  readonly times: readonly string[];
}

/** What needs an operator, most urgent first: a FAILED run, a late start, a run going on, a buffered one. */
export type AttentionKind = 'failed' | 'late' | 'running' | 'buffered' | 'paused';
/** Every kind, most urgent first: what `kind=` takes. */
export const ATTENTION_KINDS: readonly AttentionKind[] = ['failed', 'late', 'running', 'buffered', 'paused'];
/**
 * A job without a lateAfter: a PENDING occurrence not started this long after its scheduled time is late. A worker
 * claims a recorded occurrence within seconds (it is enqueued as it is recorded), so five minutes is a stuck queue or
 * a failing worker, not a busy one.
 */
export const EXPECTED_START_SECONDS = 300;

/** One occurrence that needs attention, with what says how urgent it is. */
export interface AttentionItem {
  readonly kind: Exclude<AttentionKind, 'paused'>;
  readonly jobId: string;
  readonly scheduleKey?: string;
  readonly scheduledTime: string;
  readonly status: Status;
  /** FAILED: the first line of its last error. */
  readonly error?: string;
  /** Late: how long past its job's lateAfter (or, without one, its expected start) it still has not started. */
  readonly lateByMs?: number;
  /** Late: what it is late against: the job's lateAfter, or EXPECTED_START_SECONDS for a job without one. */
  readonly lateAgainst?: 'lateAfter' | 'expectedStart';
  /** RUNNING: its progress, how long since it was claimed, how long since its last heartbeat. */
  readonly progress?: { readonly done: number; readonly total?: number; readonly at: string };
  readonly leaseAgeMs?: number;
  readonly heartbeatAgeMs?: number;
}

/** A paused job: who paused it, when and why (its job-state row). */
export interface PausedJob {
  readonly jobId: string;
  readonly at: string;
  readonly by: string;
  readonly note: string;
  /** An operator's pause, or the job's own after its failures in a row (pauseAfterFailures). */
  readonly cause: 'operator' | 'failures';
}

/**
 * GET /api/attention: the occurrences scheduled in [from, to) that need an operator, across every job, read through
 * the status index (its OPEN and FAILED keys: a fixed number of Queries whatever the number of jobs), and counts by
 * status per job. An announced success has left the index, so SUCCEEDED is not counted.
 */
export interface AttentionView {
  readonly from: string;
  readonly to: string;
  readonly total: Readonly<Partial<Record<Status, number>>>;
  readonly jobs: readonly {
    readonly jobId: string;
    readonly scheduleKey?: string;
    readonly counts: Readonly<Partial<Record<Status, number>>>;
  }[];
  /** Most urgent first; at most ATTENTION_ITEMS. */
  readonly items: readonly AttentionItem[];
  /** The paused jobs (whatever the window), the longest paused first. */
  readonly paused: readonly PausedJob[];
  /** The filters applied: one job, some kinds (absent: every job, every kind). */
  readonly job?: string;
  readonly kinds?: readonly AttentionKind[];
  /** More occurrences needed attention than items holds. */
  readonly truncated: boolean;
  readonly readUnits: number;
}

/** The most items GET /api/attention lists (the counts cover every one). */
export const ATTENTION_ITEMS = 200;

/**
 * GET /api/timelines: every job on one time axis, a page of rows at a time. A row is a job (fixed schedule), a job
 * that takes its schedules at run time (its first keys aggregated), or, with `job=J`, one key of that job. Each row
 * carries counts by status per bucket ([from, to) cut into `buckets` equal spans), and its bars when it has few.
 */
export interface AllTimelines {
  readonly from: string;
  readonly to: string;
  /** The span of one bucket, in milliseconds: (to - from) / buckets. */
  readonly bucketMs: number;
  /** Set when the rows are one job's keys (`job=J`). */
  readonly job?: string;
  readonly rows: readonly TimelineRow[];
  /** More rows: ask again with `cursor` = this. */
  readonly cursor?: string;
  /** How many jobs are deployed (absent for one job's keys: the registry is read a page at a time). */
  readonly jobCount?: number;
  readonly readUnits: number;
}

/** One row of the all-jobs timeline. */
export interface TimelineRow {
  readonly jobId: string;
  /** One key of a job (rows of `job=J`). */
  readonly scheduleKey?: string;
  /** The job takes its schedules at run time: this row adds up `keys.read` of its keys. */
  readonly aggregated?: { readonly keys: number; readonly moreKeys: boolean };
  /** Its schedule is disabled (paused, or a key paused in the registry): no fire times ahead. */
  readonly paused: boolean;
  /** Counts by status for each bucket that has any: `[bucket index, counts]`, in index order. */
  readonly buckets: ReadonlyArray<readonly [number, Readonly<Partial<Record<Status, number>>>]>;
  /** Every occurrence in the range as a bar, when they are at most TIMELINE_ROW_BARS (else only the buckets). */
  readonly bars?: readonly TimelineBar[];
  /**
   * The row read at most TIMELINE_ROW_READ rows of a series, newest first: older ones in the range were not read,
   * and the buckets before this time undercount. Absent: every row in the range was read.
   */
  readonly readFrom?: string;
  /** The fire times in (now, to], at most 100. */
  readonly next: readonly string[];
}

/** A row carries its bars when it has at most this many in the range. */
export const TIMELINE_ROW_BARS = 200;
/** The most occurrences a row reads of one series (one Query page), newest first. */
export const TIMELINE_ROW_READ = 1000;
/** The most buckets a page asks for. */
export const MAX_TIMELINE_BUCKETS = 600;
