/**
 * The jobs this repository's sample stack deploys (bin/app.ts), each with the entry file of its code.
 */
import { Duration, TimeZone } from 'aws-cdk-lib';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { SAMPLE_CUSTOMER_REPORT_ENTRY, SAMPLE_DIGEST_ENTRY, SAMPLE_EXPORT_ENTRY, type SampleJob } from './sample-stack';

export const sampleJobs: readonly SampleJob[] = [
  {
    id: 'occurrence-digest',
    props: {
      description: "Daily digest of yesterday's occurrences, by status",
      // 06:00 every day, Berlin time; Scheduler handles the daylight-saving shifts.
      schedule: ScheduleExpression.cron({ minute: '0', hour: '6', timeZone: TimeZone.EUROPE_BERLIN }),
      timeout: Duration.minutes(2),
      leaseDuration: Duration.minutes(2),
      heartbeatInterval: Duration.seconds(40),
      entry: SAMPLE_DIGEST_ENTRY,
    },
  },
  {
    id: 'ndjson-export',
    props: {
      description: 'Weekly 200 MB NDJSON export, streamed to S3 across invocations (a resumable job)',
      // 02:00 UTC every Monday.
      schedule: ScheduleExpression.cron({ minute: '0', hour: '2', weekDay: 'MON' }),
      // One invocation's segment; the run goes on over as many as it needs, up to maxRunTime.
      timeout: Duration.minutes(14),
      maxRunTime: Duration.hours(2),
      entry: SAMPLE_EXPORT_ENTRY,
    },
  },
  {
    id: 'customer-report',
    props: {
      description: 'Weekly report per customer: one schedule per customer, created at run time',
      // No schedule here: the app upserts one per customer (`npm run local` upserts two and fires them).
      runtimeSchedules: true,
      timeout: Duration.minutes(1),
      entry: SAMPLE_CUSTOMER_REPORT_ENTRY,
    },
  },
];
