/** The deployable stack: the ScheduledJobs construct and the names an operator or a subscriber needs. */
import { CfnOutput, type RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { quoteValue } from '../functions/protocol/quote-value';
import type { ScheduledJobConfig } from './job-config';
import { ScheduledJobs } from './scheduled-jobs';

export interface ScheduledJobsStackProps extends StackProps {
  readonly jobs: readonly ScheduledJobConfig[];
  /** For the occurrences table and the reports bucket. Default RETAIN. */
  readonly removalPolicy?: RemovalPolicy;
  /** The job ids the worker registers; see ScheduledJobsProps. */
  readonly implementedJobIds?: readonly string[];
  /** Where alarms are e-mailed; default: the CDK context value `alarmEmail` (`cdk deploy -c alarmEmail=you@example.com`). */
  readonly alarmEmail?: string;
}

export class ScheduledJobsStack extends Stack {
  readonly scheduledJobs: ScheduledJobs;

  constructor(scope: Construct, id: string, props: ScheduledJobsStackProps) {
    super(scope, id, props);
    const jobs = new ScheduledJobs(this, 'ScheduledJobs', {
      jobs: props.jobs,
      removalPolicy: props.removalPolicy,
      implementedJobIds: props.implementedJobIds,
      alarmEmail: props.alarmEmail ?? contextString(this, 'alarmEmail'),
    });
    this.scheduledJobs = jobs;

    new CfnOutput(this, 'OccurrenceTableName', { value: jobs.table.tableName });
    new CfnOutput(this, 'JobQueueUrl', { value: jobs.jobQueue.queueUrl });
    new CfnOutput(this, 'JobDeadLetterQueueUrl', { value: jobs.jobDeadLetterQueue.queueUrl });
    new CfnOutput(this, 'ReportBucketName', { value: jobs.reportBucket.bucketName });
    new CfnOutput(this, 'ReportReadyTopicArn', { value: jobs.reportReadyTopic.topicArn });
    new CfnOutput(this, 'ReportReadyQueueUrl', { value: jobs.reportReadyQueue.queueUrl });
    new CfnOutput(this, 'AlarmTopicArn', { value: jobs.monitoring.alarmTopic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: jobs.monitoring.dashboard.dashboardName });
  }
}

function contextString(scope: Construct, key: string): string | undefined {
  const value: unknown = scope.node.tryGetContext(key);
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`context ${key}: must be a string, got ${quoteValue(value)}`);
  return value;
}
