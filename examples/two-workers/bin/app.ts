import { App } from 'aws-cdk-lib';
import { ReportsStack } from '../lib/reports-stack';

const app = new App();
new ReportsStack(app, 'TwoWorkersExample', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
