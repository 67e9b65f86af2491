/**
 * The construct library (`<package>` and `<package>/cdk`): what a CDK app imports to deploy scheduled jobs.
 *
 *   const jobs = new ScheduledJobs(this, 'Jobs', { alarmEmail: 'ops@example.com' });
 *   const exports = jobs.addWorker('exports', { entry: 'src/workers/exports.ts', memorySize: 2048 });
 *   jobs.addJob({ id: 'weekly-export', schedule: 'cron(0 3 ? * MON *)', worker: exports });
 *
 * The runtime a worker's entry file imports is `<package>/runtime` (functions/index.ts).
 */
export { JobConfigError, LibError } from './errors';
export type { ResolvedJobConfig, ScheduledJobConfig, SchedulerRetryConfig } from './job-config';
export { JobWorker, type JobWorkerOptions, WORKER_ENVIRONMENT_BUDGET_BYTES } from './job-worker';
export { JobsMonitoring } from './jobs-monitoring';
export { type AddedJob, type JobProps, ScheduledJobs, type ScheduledJobsProps } from './scheduled-jobs';
export { STACK_OUTPUTS } from './stack-outputs';
