/**
 * How work reaches the functions (batch sizes, retries, visibility, receive counts) and the limits derived from the
 * jobs, written once and used by the functions, by the CDK constructs and by local set-up. Plain TypeScript: no CDK
 * or AWS SDK imports. The table's own schema is in table-schema.ts.
 */
import {
  DEFAULT_JOB_SETTINGS,
  DEFAULT_RETRY_POLICY,
  type JobSettings,
  LAMBDA_MAX_TIMEOUT_SECONDS,
  OUTCOME_RESERVE_SECONDS,
  SQS_MAX_VISIBILITY_SECONDS,
} from './job-settings';
import type { ReconcileThresholds } from './reconcile';

/** Messages per worker invocation (the SQS event source's batch size). */
export const WORKER_BATCH_SIZE = 5;
/** Stream records per notifier invocation. */
export const NOTIFIER_BATCH_SIZE = 10;
/** Lambda's own retries of a failed asynchronous (Scheduler) invocation of the trigger, before its DLQ. */
export const TRIGGER_ASYNC_RETRY_ATTEMPTS = 2;

/** SQS and Lambda: the queue hides a message at least six times the function timeout. */
export const VISIBILITY_TO_TIMEOUT_RATIO = 6;
/** Beyond the function timeout plus the lease: SQS's own timing is approximate. */
export const VISIBILITY_SLACK_SECONDS = 30;
/** Where a message that fails this many receives goes to the DLQ; never below the 5 AWS recommends. */
export const MIN_MAX_RECEIVE_COUNT = 5;
/**
 * Receives of one message that are not attempts: an early arrival re-hidden until its retry is due, a duplicate
 * trigger's message, a redelivery after a crash before the claim.
 */
export const SPARE_RECEIVES = 5;
/** A message that cannot be processed (bad JSON, unknown job) is retried this often until it reaches the DLQ. */
export const POISON_MESSAGE_RETRY_SECONDS = 30;

export interface WorkerLimits {
  /** The worker Lambda's timeout: the longest job plus the time to record its outcome. */
  readonly functionTimeoutSeconds: number;
  readonly queueVisibilityTimeoutSeconds: number;
  readonly maxReceiveCount: number;
}

/**
 * A worker's limits from its jobs. Its function timeout is the one given (a worker sized by hand), or its longest
 * job's plus the time to record an outcome. A worker without jobs yet gets the limits of one default job.
 */
export function workerLimits(jobs: readonly JobSettings[], functionTimeout?: number): WorkerLimits {
  // A cancelOther start waits until the lease of the run it cancelled runs out (job-slot.ts), then runs its job.
  const timeouts =
    jobs.length === 0
      ? [DEFAULT_JOB_SETTINGS.timeoutSeconds]
      : jobs.map((j) => j.timeoutSeconds + (j.overlap === 'cancelOther' ? j.leaseSeconds : 0));
  const leases = jobs.length === 0 ? [DEFAULT_JOB_SETTINGS.leaseSeconds] : jobs.map((j) => j.leaseSeconds);
  const attempts = jobs.length === 0 ? [DEFAULT_RETRY_POLICY.maxAttempts] : jobs.map((j) => j.retry.maxAttempts);
  const functionTimeoutSeconds =
    functionTimeout ?? Math.min(Math.max(...timeouts) + OUTCOME_RESERVE_SECONDS, LAMBDA_MAX_TIMEOUT_SECONDS);
  // A message comes back only when its worker is surely gone: after the longest invocation (so never under a live
  // worker) and after the lease a dead worker extended last (so the redelivery can claim, instead of finding a live
  // lease and being dropped as a duplicate). Six times the timeout covers both for every usual lease.
  const longestLease = Math.max(...leases);
  const queueVisibilityTimeoutSeconds = Math.min(
    Math.max(
      functionTimeoutSeconds * VISIBILITY_TO_TIMEOUT_RATIO,
      functionTimeoutSeconds + longestLease + VISIBILITY_SLACK_SECONDS,
    ),
    SQS_MAX_VISIBILITY_SECONDS,
  );
  // Every attempt is one receive of the same message (retries wait as hidden messages), so the redrive limit
  // must exceed the attempts or the DLQ would take a message whose occurrence still has attempts left.
  const maxReceiveCount = Math.max(MIN_MAX_RECEIVE_COUNT, Math.max(...attempts) + SPARE_RECEIVES);
  return { functionTimeoutSeconds, queueVisibilityTimeoutSeconds, maxReceiveCount };
}

/** How often the reconciler runs. */
export const RECONCILE_EVERY_MINUTES = 5;
/** The table stream keeps a record 24 h; the notifier retries it until then. */
export const STREAM_RETENTION_SECONDS = 24 * 60 * 60;

/**
 * How long an occurrence of a worker's jobs may wait before the reconciler re-enqueues it: its queue's visibility
 * timeout plus 5 minutes. A crashed worker's own message comes back within the visibility timeout, and a failed
 * visibility change returns a retry's message no later than that either, so the reconciler never competes with them.
 */
export function stuckAfterSeconds(limits: WorkerLimits): number {
  return limits.queueVisibilityTimeoutSeconds + 300;
}

/**
 * The reconciler's thresholds, derived from every job of the stack so that it never competes with the normal paths:
 * unannounced after the stream's 24 h plus one hour: by then the stream notifier has stopped retrying. It needs no
 * look-back: an unannounced success stays in the open shards of the status index, whatever its age, until announced.
 * The stuck thresholds are each worker's own (stuckAfterSeconds), in the WORKERS the reconciler is given.
 */
export function reconcileThresholds(jobs: readonly JobSettings[]): ReconcileThresholds {
  if (jobs.length === 0) throw new Error('reconcileThresholds: at least one job is needed');
  return { unannouncedAfterSeconds: STREAM_RETENTION_SECONDS + 3_600, maxFixesPerRun: 200 };
}
