/**
 * The job-state row: one per job, in the occurrence table beside the job's occurrences, at the sort key
 * JOB_STATE_SORT_KEY. It holds what is true of a job rather than of one occurrence: the running slot the overlap
 * policies are built on, the occurrences waiting for it, whether the job is paused and why, and its run of failures.
 *
 * Why in the occurrence table: the worker's role may already write its own jobs' rows (dynamodb:LeadingKeys on the
 * job id), the CLI already reads the table, and no new table, stream or permission is needed. The row has no status,
 * no status-index key and no TTL: the status index, the reconciler and the notifier's stream filter never see it,
 * and queries of a job's occurrences (scheduledTime BETWEEN two times) never return it, because '#' sorts before
 * every scheduled time.
 *
 * Every write of the row increments `version` and, unless it is one of the single-condition writes on the slot,
 * is conditioned on the version it read (compare and swap).
 */
import type { OccurrenceKey } from './occurrence';

/** The sort key of the job-state row. */
export const JOB_STATE_SORT_KEY = '#job';

export const isJobStateKey = (key: { readonly scheduledTime: string }): boolean =>
  key.scheduledTime === JOB_STATE_SORT_KEY;

export const jobStateKeyOf = (jobId: string): OccurrenceKey => ({ jobId, scheduledTime: JOB_STATE_SORT_KEY });

/** Who paused a job: an operator (`occurrences pause`), or the job itself after `pauseAfterFailures` failures. */
export type PauseCause = 'operator' | 'failures';

/** The row as stored. Timestamps are ISO-8601 UTC with milliseconds, like the occurrence rows'. */
export interface JobState {
  /** The job's id: the row's partition key. */
  readonly jobId: string;
  /**
   * The row's sort key, always JOB_STATE_SORT_KEY: a storage detail, left out of the published declarations.
   *
   * @internal
   */
  readonly scheduledTime: typeof JOB_STATE_SORT_KEY;
  /** Incremented by every write: the compare-and-swap token. */
  readonly version: number;
  /**
   * The running slot: the scheduled time of the occurrence that holds it, and the lease id it was taken under. The
   * slot is free when absent, and also when that occurrence no longer runs under that lease (docs/schedule-policies.md).
   */
  readonly slotTime?: string;
  /** The lease id the running slot was taken under (see `slotTime`). */
  readonly slotLeaseId?: string;
  /** Scheduled times of the job's BUFFERED occurrences, oldest first. */
  readonly buffer?: readonly string[];
  /** FAILED occurrences since the last SUCCEEDED one (pauseAfterFailures). */
  readonly consecutiveFailures?: number;
  /**
   * The lease whose run end was counted last: the count's write is conditioned on it, so that the SDK's retry of a
   * count whose response was lost neither counts twice nor reads as refused.
   */
  readonly countedLeaseId?: string;
  /** Set while the job is paused. */
  readonly pausedAt?: string;
  /** Who paused the job: the operator's `by`, or the job itself after its failures. */
  readonly pausedBy?: string;
  /** The pause's note: why, for the next person. */
  readonly pauseNote?: string;
  /** Whether an operator or the job's failures paused it. */
  readonly pauseCause?: PauseCause;
  /** The last resume, kept after it. */
  readonly resumedAt?: string;
  /** Who resumed the job last. */
  readonly resumedBy?: string;
}
