/**
 * The construct library (`scheduled-jobs-stack` and `scheduled-jobs-stack/cdk`): what a CDK app imports to deploy
 * scheduled jobs that run once per occurrence. Start with {@link ScheduledJobs}.
 *
 * What a job's or a worker's own file imports is `scheduled-jobs-stack/runtime`; operator actions are in
 * `scheduled-jobs-stack/operations`, test helpers in `scheduled-jobs-stack/testing`.
 *
 * @packageDocumentation
 */
export { ScheduledJobsError, ValidationError } from './errors';
export type { FunctionLogging } from './job-function';
export {
  type JobInSharedWorkerProps,
  type JobOptions,
  type JobProps,
  type JobRetryOptions,
  type JobWithOwnWorkerProps,
  OverlapPolicy,
  type Refused,
  type RenamedJobProps,
  type SchedulerRetryOptions,
} from './job-props';
export { JobWorker, type JobWorkerOptions, type JobWorkerProps } from './job-worker';
export {
  type AlarmThreshold,
  type JobsAlarmsOptions,
  type JobsAlarmThresholds,
  JobsMonitoring,
  type SharedAlarms,
  type WorkerAlarms,
} from './jobs-monitoring';
export { MetricName, type WorkerMetricName } from './metrics';
export { ScheduledJob } from './scheduled-job';
export { ScheduledJobs, type ScheduledJobsProps } from './scheduled-jobs';
export type { StateChangeEventsOptions, StateChangeEventsPiece } from './state-change-events';
