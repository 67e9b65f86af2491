import { App } from 'aws-cdk-lib';
import { ScheduledJobsStack } from '../lib/scheduled-jobs-stack';
import { sampleJobs } from './jobs';

const app = new App();
new ScheduledJobsStack(app, 'ScheduledJobs', {
  jobs: sampleJobs,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
