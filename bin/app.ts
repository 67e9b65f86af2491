/**
 * The CDK app: the sample stack with the jobs of bin/jobs.ts, built with the same public API a user's app uses. A bad
 * job configuration stops the synth with one message that names every wrong field, and no stack trace.
 */
import { App } from 'aws-cdk-lib';
import { JobConfigError } from '../lib/errors';
import { ScheduledJobsStack } from '../lib/scheduled-jobs-stack';
import { sampleJobs } from './jobs';

const app = new App();
try {
  new ScheduledJobsStack(app, 'ScheduledJobs', {
    jobs: sampleJobs,
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
} catch (error) {
  if (!(error instanceof JobConfigError)) throw error;
  console.error(`bin/jobs.ts: ${error.message}`);
  process.exit(1);
}
