/**
 * A team's own stack: its data bucket, and two scheduled jobs in two workers of different sizes. Only the exports
 * worker may read the data bucket; the digest runs in a small worker of its own, built from its job's file. Its own
 * alarm watches the weekly export's failures beside the ones the library adds. A per-customer report has one schedule
 * per customer, created by the app at run time.
 */
import * as path from 'node:path';
import { Duration, RemovalPolicy, Stack, type StackProps, TimeZone } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import type { Construct } from 'constructs';
import { OverlapPolicy, ScheduledJobs } from 'scheduled-jobs-stack/cdk';

export class ReportsStack extends Stack {
  readonly jobs: ScheduledJobs;
  readonly dataBucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    this.dataBucket = new s3.Bucket(this, 'DataBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.jobs = new ScheduledJobs(this, 'Jobs', { alarms: { emailAddresses: ['ops@example.com'] } });

    // A big worker for the exports: 2 GB, ten minutes, and the data bucket's name in its environment.
    const exportsWorker = this.jobs.addWorker('exports', {
      entry: path.join(__dirname, '..', 'src', 'workers', 'exports.ts'),
      memorySize: 2048,
      timeout: Duration.minutes(10),
      environment: { DATA_BUCKET: this.dataBucket.bucketName },
    });
    this.dataBucket.grantRead(exportsWorker);
    const weeklyExport = this.jobs.addJob('weekly-export', {
      description: 'Lists the data bucket every Monday at 03:00 Berlin time',
      schedule: ScheduleExpression.cron({ minute: '0', hour: '3', weekDay: 'MON', timeZone: TimeZone.EUROPE_BERLIN }),
      timeout: Duration.minutes(9),
      overlap: OverlapPolicy.BUFFER_ONE,
      worker: exportsWorker,
      // Its own metrics ({ service, jobId }, $0.30 each a month) for the alarm below; other jobs count in their worker's.
      jobMetrics: true,
    });
    new cloudwatch.Alarm(this, 'WeeklyExportFailed', {
      metric: weeklyExport.metricFailed(),
      threshold: 1,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    // A small worker of its own for the digest (256 MB, its timeout + 30 s), from the job's own file.
    this.jobs.addJob('daily-digest', {
      schedule: ScheduleExpression.cron({ minute: '0', hour: '6' }),
      timeout: Duration.seconds(10),
      leaseDuration: Duration.seconds(30),
      heartbeatInterval: Duration.seconds(5),
      entry: path.join(__dirname, '..', 'src', 'jobs', 'daily-digest.ts'),
    });

    // One schedule per customer, created at run time (upsertSchedule); this job's code is its own small worker.
    this.jobs.addJob('customer-report', {
      runtimeSchedules: true,
      timeout: Duration.seconds(10),
      leaseDuration: Duration.seconds(30),
      heartbeatInterval: Duration.seconds(5),
      entry: path.join(__dirname, '..', 'src', 'jobs', 'customer-report.ts'),
    });
  }
}
