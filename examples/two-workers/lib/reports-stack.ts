/**
 * A team's own stack: its data bucket, and two scheduled jobs in two workers of different sizes. Only the exports
 * worker may read the data bucket; the digest runs in a small worker of its own, built from its job's file.
 */
import * as path from 'node:path';
import { Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { ScheduledJobs } from 'scheduled-jobs-stack/cdk';

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

    this.jobs = new ScheduledJobs(this, 'Jobs', { alarmEmail: 'ops@example.com' });

    // A big worker for the exports: 2 GB, ten minutes, and the data bucket's name in its environment.
    const exportsWorker = this.jobs.addWorker('exports', {
      entry: path.join(__dirname, '..', 'src', 'workers', 'exports.ts'),
      memorySize: 2048,
      timeout: Duration.minutes(10),
      environment: { DATA_BUCKET: this.dataBucket.bucketName },
    });
    this.dataBucket.grantRead(exportsWorker);
    this.jobs.addJob({
      id: 'weekly-export',
      description: 'Lists the data bucket every Monday at 03:00 Berlin time',
      schedule: 'cron(0 3 ? * MON *)',
      timeZone: 'Europe/Berlin',
      timeoutSeconds: 540,
      worker: exportsWorker,
    });

    // A small worker of its own for the digest (256 MB, its timeout + 30 s), from the job's own file.
    this.jobs.addJob({
      id: 'daily-digest',
      schedule: 'cron(0 6 * * ? *)',
      timeoutSeconds: 10,
      leaseSeconds: 30,
      heartbeatSeconds: 5,
      entry: path.join(__dirname, '..', 'src', 'jobs', 'daily-digest.ts'),
    });
  }
}
