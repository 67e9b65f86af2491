/**
 * The jobs this repository's sample stack deploys (bin/app.ts), each with the entry file of its code.
 */
import { SAMPLE_DIGEST_ENTRY, type SampleJobsStackProps } from '../lib/scheduled-jobs-stack';

export const sampleJobs: SampleJobsStackProps['jobs'] = [
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
    entry: SAMPLE_DIGEST_ENTRY,
  },
];
