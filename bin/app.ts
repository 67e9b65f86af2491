/**
 * The CDK app of this repository: the sample stack (examples/sample-app) with its jobs, built with the same public
 * API a user's app uses. A bad job configuration stops the synth with one message that names every wrong property.
 */
import { App } from 'aws-cdk-lib';
import { sampleJobs } from '../examples/sample-app/sample-jobs';
import { ScheduledJobsStack } from '../examples/sample-app/sample-stack';

const app = new App();
new ScheduledJobsStack(app, 'ScheduledJobs', {
  jobs: sampleJobs,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
