/**
 * The stack this repository deploys and runs locally (`npm run local`): the sample jobs on the public API, as a
 * user's app builds them (bin/app.ts). A user's own stack does the same with their jobs; see the README.
 */
import * as path from 'node:path';
import { type RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { quoteValue } from '../../functions/protocol/quote-value';
import { type JobWithOwnWorkerProps, ScheduledJobs } from '../../lib';

/** One sample job: its id and its props, with the entry of its own worker. */
export interface SampleJob {
  readonly id: string;
  readonly props: JobWithOwnWorkerProps;
}

export interface SampleJobsStackProps extends StackProps {
  /** The sample's jobs; each runs in a worker of its own built from its entry. */
  readonly jobs: readonly SampleJob[];
  /**
   * For the occurrences table and the reports bucket.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Where alarms are e-mailed.
   *
   * @default the CDK context value `alarmEmail` (`cdk deploy -c alarmEmail=you@example.com`), else nobody
   */
  readonly alarmEmail?: string;
}

export class ScheduledJobsStack extends Stack {
  readonly scheduledJobs: ScheduledJobs;

  constructor(scope: Construct, id: string, props: SampleJobsStackProps) {
    super(scope, id, props);
    const alarmEmail = props.alarmEmail ?? contextString(this, 'alarmEmail');
    const jobs = new ScheduledJobs(this, 'ScheduledJobs', {
      removalPolicy: props.removalPolicy,
      alarms: { emailAddresses: alarmEmail === undefined ? [] : [alarmEmail] },
    });
    for (const job of props.jobs) {
      const { worker } = jobs.addJob(job.id, job.props);
      // The sample digest reads the occurrences of every job.
      jobs.grantReadOccurrences(worker);
    }
    this.scheduledJobs = jobs;
  }
}

/** The sample digest job's entry in this repository. */
export const SAMPLE_DIGEST_ENTRY = path.join(__dirname, 'jobs', 'digest-job.ts');
/** The sample per-customer job's entry: its schedules are created at run time, one per customer. */
export const SAMPLE_CUSTOMER_REPORT_ENTRY = path.join(__dirname, 'jobs', 'customer-report-job.ts');
/** The sample long job's entry: the NDJSON export, resumable across invocations. */
export const SAMPLE_EXPORT_ENTRY = path.join(__dirname, 'jobs', 'export-job.ts');

function contextString(scope: Construct, key: string): string | undefined {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`context ${key}: must be a string, got ${quoteValue(value)}`);
  return value;
}
