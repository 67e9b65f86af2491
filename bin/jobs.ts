/**
 * The jobs this app deploys: the one typed place to add, change or pause a job.
 * Each job's code lives in functions/jobs/ under the same id.
 */
import type { ScheduledJobConfig } from '../lib/job-config';

export const sampleJobs: ScheduledJobConfig[] = [
  {
    id: 'occurrence-digest',
    description: "Daily digest of yesterday's occurrences, by status",
    // 06:00 every day, Berlin time; Scheduler handles the daylight-saving shifts.
    schedule: 'cron(0 6 * * ? *)',
    timeZone: 'Europe/Berlin',
    flexibleWindowMinutes: 0,
    timeoutSeconds: 120,
    leaseSeconds: 120,
    heartbeatSeconds: 40,
  },
];
