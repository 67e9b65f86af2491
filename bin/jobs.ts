/**
 * The jobs this repository's sample stack deploys (bin/app.ts), each with the entry file of its code.
 */
import { SAMPLE_DIGEST_ENTRY, SAMPLE_EXPORT_ENTRY, type SampleJobsStackProps } from '../lib/scheduled-jobs-stack';

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
  {
    id: 'ndjson-export',
    description: 'Weekly 200 MB NDJSON export, streamed to S3 across invocations (a resumable job)',
    // 02:00 UTC every Monday.
    schedule: 'cron(0 2 ? * MON *)',
    flexibleWindowMinutes: 0,
    // One invocation's segment; the run goes on over as many as it needs, up to maxRunSeconds.
    timeoutSeconds: 840,
    maxRunSeconds: 2 * 60 * 60,
    entry: SAMPLE_EXPORT_ENTRY,
  },
];
