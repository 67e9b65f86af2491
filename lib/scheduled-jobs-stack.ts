/**
 * The stack this repository deploys: the sample job on the public API, as a user's app would build it
 * (bin/app.ts). A user's own stack does the same with their jobs; see the README, "Use it in your app".
 */
import * as path from 'node:path';
import { type RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { quoteValue } from '../functions/protocol/quote-value';
import type { ScheduledJobConfig } from './job-config';
import { ScheduledJobs } from './scheduled-jobs';

export interface SampleJobsStackProps extends StackProps {
  /** The sample's jobs; each runs in a worker of its own built from its entry. */
  readonly jobs: readonly (ScheduledJobConfig & { readonly entry: string })[];
  /** For the occurrences table and the reports bucket. Default RETAIN. */
  readonly removalPolicy?: RemovalPolicy;
  /** Where alarms are e-mailed; default: the CDK context value `alarmEmail` (`cdk deploy -c alarmEmail=you@example.com`). */
  readonly alarmEmail?: string;
}

export class ScheduledJobsStack extends Stack {
  readonly scheduledJobs: ScheduledJobs;

  constructor(scope: Construct, id: string, props: SampleJobsStackProps) {
    super(scope, id, props);
    const jobs = new ScheduledJobs(this, 'ScheduledJobs', {
      removalPolicy: props.removalPolicy,
      alarmEmail: props.alarmEmail ?? contextString(this, 'alarmEmail'),
    });
    for (const job of props.jobs) {
      const { worker } = jobs.addJob(job);
      // The sample digest reads the occurrences of every job.
      jobs.grantReadOccurrences(worker);
    }
    this.scheduledJobs = jobs;
  }
}

/** The sample job's entry in this repository. */
export const SAMPLE_DIGEST_ENTRY = path.join(__dirname, '..', 'examples', 'sample-app', 'jobs', 'digest-job.ts');
/** The sample long job's entry: the NDJSON export, resumable across invocations. */
export const SAMPLE_EXPORT_ENTRY = path.join(__dirname, '..', 'examples', 'sample-app', 'jobs', 'export-job.ts');

function contextString(scope: Construct, key: string): string | undefined {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`context ${key}: must be a string, got ${quoteValue(value)}`);
  return value;
}
