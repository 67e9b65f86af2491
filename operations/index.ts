/**
 * The operator actions (`scheduled-jobs-stack/operations`): pause, resume, run now, describe and retry, the same
 * functions the occurrences CLI runs, with every adapter they need. connectJobOperations builds the adapters from
 * the stack's outputs; the AWS SDK clients are the only other import an operator's tool needs.
 *
 * ```ts
 * const ops = connectJobOperations({ tableName, scheduleGroupName, workerQueueUrls });
 * await pauseJob(ops, 'weekly-export', { note: 'database migration', by: 'alice' });
 * await resumeJob(ops, await ops.job('weekly-export'), { by: 'alice' });
 * ```
 *
 * Nothing here runs in a worker: a job's entry file imports `scheduled-jobs-stack/runtime`.
 *
 * @packageDocumentation
 */
export type { JobCatalogue } from '../bin/occurrences/catalogue';
export { SchedulerJobCatalogue } from '../bin/occurrences/catalogue';
export { DynamoJobStateStore } from '../functions/aws/job-state-store';
export { OperatorOccurrenceReader } from '../functions/aws/occurrence-reader';
export { OperatorOccurrenceStore } from '../functions/aws/occurrence-store';
export { SchedulerScheduleSwitch } from '../functions/aws/schedule-switch';
export { SqsWorkQueue } from '../functions/aws/work-queue';
export {
  type CatchUp,
  type DeployedJob,
  describeJob,
  type JobControlDeps,
  type JobDescription,
  type JobStateStore,
  type OccurrenceCounts,
  type OccurrenceHistory,
  type PauseResult,
  pauseJob,
  type ResumeDeps,
  type ResumeResult,
  type RunResult,
  resumeJob,
  runJobNow,
} from '../functions/protocol/job-control';
export type { JobState } from '../functions/protocol/job-state';
export {
  type ManualRetryDeps,
  type ManualRetryResult,
  ReopenedNotEnqueuedError,
  retryOccurrence,
} from '../functions/protocol/manual-retry';
export type { Clock, ReopenableStore, ScheduleSwitch, WorkQueue } from '../functions/protocol/ports';
export type { TriggerDeps, TriggerResult } from '../functions/protocol/record-occurrence';
export type { JobRoute } from '../functions/protocol/schedule-event';
export {
  connectJobOperations,
  JobNotFoundError,
  type JobOperations,
  type OperationsClients,
  type OperationsTarget,
} from './job-operations';
