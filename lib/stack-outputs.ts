/**
 * The keys of the stack outputs a ScheduledJobs adds to its stack: what `occurrences` (the CLI) reads to find the
 * table, the bucket, the schedules and each worker's queue of a deployed stack. Plain data, shared with the CLI.
 */
export const STACK_OUTPUTS = {
  table: 'OccurrenceTableName',
  bucket: 'ReportBucketName',
  scheduleGroup: 'ScheduleGroupName',
  /** Only when a job takes run-time schedules: the schedule registry table (lib/runtime-schedules.ts). */
  scheduleRegistryTable: 'ScheduleRegistryTableName',
  reportReadyTopic: 'ReportReadyTopicArn',
  reportReadyQueue: 'ReportReadyQueueUrl',
  alarmTopic: 'AlarmTopicArn',
  dashboard: 'DashboardName',
  /** `WorkerQueue1`, `WorkerQueue2`, ...: the value is the queue URL, the description the worker id. */
  workerQueuePrefix: 'WorkerQueue',
} as const;
