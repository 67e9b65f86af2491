/** Names of the environment variables the stack sets on the functions. */
export const ENV = {
  tableName: 'OCCURRENCE_TABLE_NAME',
  /** The worker's own job queue (the worker's retries wait there as hidden messages). */
  queueUrl: 'JOB_QUEUE_URL',
  bucketName: 'REPORT_BUCKET_NAME',
  topicArn: 'REPORT_READY_TOPIC_ARN',
  /** The worker's id (lib/job-worker.ts): the `worker` dimension of its metrics. */
  workerId: 'WORKER_ID',
  /** The worker's jobs: a JSON array of their JobSettings (functions/protocol/job-settings.ts), defaults left out. */
  jobSettings: 'JOB_SETTINGS',
  /**
   * The reconciler's: the shortest stuck threshold of the stack's workers (protocol/worker-routes.ts), which picks the
   * status index's entries worth reading; each row's own route then decides.
   */
  shortestStuckAfterSeconds: 'SHORTEST_STUCK_AFTER_SECONDS',
  /** JSON ReconcileThresholds (functions/protocol/reconcile.ts), for the reconciler. */
  reconcileThresholds: 'RECONCILE_THRESHOLDS',
  /**
   * The Scheduler schedule group of the jobs' schedules: set on a worker that has a job with pauseAfterFailures, which
   * disables its schedule when it pauses itself, and on the trigger and the reconciler, which read a job's route from
   * its schedule when an event or a row carries none (protocol/worker-routes.ts).
   */
  scheduleGroup: 'SCHEDULE_GROUP',
  /**
   * The reconciler's: the name of the schedule registry table (functions/protocol/schedule-registry-ports.ts), set
   * once a job of the stack takes schedules at run time (lib/runtime-schedules.ts); absent, there is none to repair.
   */
  registryTable: 'REGISTRY_TABLE',
  /** The reconciler's: a JSON array of the ids of the jobs that take schedules at run time, audited in turn. */
  registryJobs: 'REGISTRY_JOBS',
  /** The reconciler's: a JSON array of `{ id, worker, maxConcurrency }`, the jobs with a concurrency cap. */
  cappedJobs: 'CAPPED_JOBS',
  /** The reconciler's, optional: K, the audit's slices of every job's group per run (1-65, default 4; audit-slices.ts). */
  scheduleAuditSlicesPerRun: 'SCHEDULE_AUDIT_SLICES_PER_RUN',
  /** The events function's: the EventBridge bus (name or ARN) it puts state-change events on. */
  eventBusName: 'EVENT_BUS_NAME',
  /** The events function's, optional: the address of `occurrences console`, for the events' links. */
  consoleUrl: 'CONSOLE_URL',
  /** Read by Powertools Metrics: the CloudWatch namespace the alarms and dashboard watch. */
  metricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  /**
   * A worker's, optional: `true` writes DETAILED_WORKER_METRICS (Started, Succeeded, JobDuration) with { worker }
   * too (ScheduledJobsProps.detailedMetrics); absent or anything else, they are not.
   */
  detailedMetrics: 'DETAILED_METRICS',
} as const;

export function requireEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new Error(`environment variable ${name} is not set; the stack sets it on every function that needs it`);
  }
  return value;
}
