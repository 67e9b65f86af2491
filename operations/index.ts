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
 * Many occurrences are retried (or cancelled) at once by job, status and time range, capped, at a bounded rate,
 * each row once even across a resumed run:
 *
 * ```ts
 * const rows = await selectOccurrences(ops.occurrences, job, { jobId: job.id, statuses: ['FAILED'], from, to });
 * await bulkRetry(ops.retryDeps(job), rows, { bulkId: newBulkId(), by: await ops.operator() });
 * ```
 *
 * An operator's cancel of one occurrence (a running one is stopped through its lease, a waiting one closed):
 *
 * ```ts
 * await cancelOccurrence(ops.cancelDeps(), { jobId: 'weekly-export', scheduledTime }, { by: await ops.operator(), note: 'why' });
 * ```
 *
 * A backfill records the fire times a job missed in a past range, as the trigger would have, after a dry run:
 *
 * ```ts
 * const plan = planBackfill(await ops.job('hourly-report'), { from, to, max: 1000 });
 * const { existing } = await previewBackfill(ops.occurrences, plan);
 * ```
 *
 * The schedules a job takes at run time (one per customer, say) are managed the same way:
 *
 * ```ts
 * const schedules = connectScheduleOperations({ registryTableName, scheduleGroupName });
 * await upsertSchedule(schedules, 'weekly-report', 'customer-42', { expression: 'cron(0 8 ? * MON *)' });
 * ```
 *
 * Nothing here runs in a worker: a job's entry file imports `scheduled-jobs-stack/runtime`.
 *
 * @packageDocumentation
 */
export type { JobCatalogue } from '../bin/occurrences/catalogue';
export { SchedulerJobCatalogue } from '../bin/occurrences/catalogue';
export { DynamoJobStateStore } from '../functions/aws/job-state-store';
export type { NewestFirstRange } from '../functions/aws/occurrence-reader';
export { SchedulerScheduleSwitch } from '../functions/aws/schedule-switch';
export { SqsWorkQueue } from '../functions/aws/work-queue';
export type {
  AttemptRecord,
  LogFields,
  Logger,
  Occurrence,
  OccurrenceKey,
  OccurrenceStatus,
  OverlapPolicyValue,
  ScheduledJobsError,
  SkipReason,
} from '../functions/index';
export {
  type CancelDeps,
  type CancelOptions,
  type CancelResult,
  cancelOccurrence,
} from '../functions/protocol/cancel-occurrence';
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
export type { JobState, PauseCause } from '../functions/protocol/job-state';
export {
  ScheduleNotFoundError,
  UnknownScheduleJobError,
  type UpsertOutcome,
} from '../functions/protocol/manage-schedule';
export {
  type ManualRetryDeps,
  type ManualRetryFields,
  type ManualRetryOptions,
  type ManualRetryResult,
  ReopenedNotEnqueuedError,
  type ReopenRecord,
  retryOccurrence,
} from '../functions/protocol/manual-retry';
// The types of the occurrence rows and of the runtime that the signatures above name: the same declarations as
// scheduled-jobs-stack/runtime's, re-exported as types so that an operator's tool can name them from here too.
export type { MetricName } from '../functions/protocol/metric-names';
export type {
  CancellableStore,
  CancelRequest,
  CancelWriteResult,
  Clock,
  CreateResult,
  JobStateChange,
  JobStateFields,
  JobStateWrite,
  Metrics,
  OccurrenceRecorder,
  ReopenableStore,
  ReopenRequest,
  ReopenResult,
  ScheduleSwitch,
  WorkQueue,
} from '../functions/protocol/ports';
export type { TriggerDeps, TriggerResult } from '../functions/protocol/record-occurrence';
export type { JobRoute } from '../functions/protocol/schedule-event';
export type { JsonValue } from '../functions/protocol/schedule-key';
export { InvalidScheduleError } from '../functions/protocol/schedule-registry';
export type { ScheduleSpec } from '../functions/protocol/schedule-registry-ports';
export type { RouteLookup, WorkerRoute } from '../functions/protocol/worker-routes';
export { OperatorOccurrenceReader, OperatorOccurrenceStore } from './adapters';
export {
  BACKFILL_CONCURRENCY,
  BACKFILL_POLL_MS,
  type BackfillDeps,
  type BackfillOptions,
  type BackfillPlan,
  type BackfillPreview,
  type BackfillRangeProblem,
  type BackfillRecording,
  type BackfillRows,
  type BackfillStore,
  backfillRangeProblem,
  planBackfill,
  previewBackfill,
  recordBackfill,
} from './backfill';
export {
  BULK_STATUSES,
  type BulkAction,
  type BulkActor,
  type BulkCancel,
  type BulkFilter,
  type BulkRowProblem,
  type BulkRunOptions,
  type BulkRunProgress,
  type BulkRunResult,
  type BulkSelectionReader,
  bulkCancel,
  bulkRetry,
  checkBulkFilter,
  DEFAULT_BULK_MAX,
  DEFAULT_BULK_OCCURRENCE_RATE,
  newBulkId,
  selectOccurrences,
  TooManyOccurrencesError,
} from './bulk-occurrences';
export {
  type BulkCheckpoint,
  type BulkItemFailure,
  type BulkProgress,
  type BulkScheduleItem,
  type BulkUpsertOptions,
  type BulkUpsertResult,
  upsertSchedules,
} from './bulk-schedules';
export {
  connectJobOperations,
  JobNotFoundError,
  type JobOperations,
  type OperationsClients,
  type OperationsTarget,
} from './job-operations';
export {
  type OperatorIdentity,
  type OperatorIdentitySources,
  operatorName,
  resolveOperatorIdentity,
  stsCallerArn,
} from './operator-identity';
export {
  connectScheduleOperations,
  type DeleteScheduleResult,
  deleteSchedule,
  getSchedule,
  type ListSchedulesOptions,
  listSchedules,
  pauseSchedule,
  type RuntimeSchedule,
  resumeSchedule,
  type ScheduleChangeOptions,
  type ScheduleListPage,
  ScheduleOperations,
  type ScheduleOperationsTarget,
  type UpsertScheduleResult,
  upsertSchedule,
} from './schedules';
