/**
 * ScheduledJobs: everything one set of scheduled jobs needs, with least-privilege wiring.
 *
 *   Scheduler ─▶ trigger ─▶ occurrence row (PENDING) + job queue ─▶ worker ─▶ report in S3, row SUCCEEDED
 *   table stream (transition to SUCCEEDED only) ─▶ notifier ─▶ SNS FIFO "report ready" ─▶ ReportReadyQueue
 *   every 5 min: reconciler ─▶ re-enqueue stuck rows (byStatus index), announce reports never announced
 *   alarms (SNS topic) and a dashboard over all of it (jobs-monitoring.ts)
 *
 * Every grant is an explicit action list: no `grantReadWriteData`-style helpers, whose action wildcards would let a
 * function do things the protocol never asks of it.
 */
import * as path from 'node:path';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { OccurrenceAttributes, OccurrenceStatus, REPORT_KEY_PREFIX } from '../functions/protocol/occurrence';
import { OCCURRENCE_TABLE } from '../functions/protocol/table-schema';
import {
  NOTIFIER_BATCH_SIZE,
  RECONCILE_EVERY_MINUTES,
  reconcileThresholds,
  TRIGGER_ASYNC_RETRY_ATTEMPTS,
  WORKER_BATCH_SIZE,
} from '../functions/protocol/worker-limits';
import { ENV } from '../functions/runtime-env';
import { type ResolvedJobs, resolveJobConfigs, type ScheduledJobConfig } from './job-config';
import { jobFunction } from './job-function';
import { JobSchedules } from './job-schedules';
import { JobsMonitoring } from './jobs-monitoring';
import { acknowledgeNagFindings } from './nag-acknowledgements';
import { secureQueue } from './secure-queue';

export const TRIGGER_TIMEOUT_SECONDS = 10;
export const WORKER_MEMORY_MB = 512;
export const NOTIFIER_TIMEOUT_SECONDS = 30;
/** Up to maxFixesPerRun (200) re-enqueues and announcements at two or three requests each, with room to spare. */
export const RECONCILER_TIMEOUT_SECONDS = 120;

const FUNCTIONS_DIR = path.join(__dirname, '..', 'functions');

export interface ScheduledJobsProps {
  readonly jobs: readonly ScheduledJobConfig[];
  /** For the occurrences table and the reports bucket. Default RETAIN: deleting the stack keeps the history. */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * The worker's entry file; it must export `handler`. Point it at your own file that registers your jobs.
   * Default: functions/worker.ts of this project.
   */
  readonly workerEntry?: string;
  /**
   * The job ids the worker entry registers. When given, synth fails for a scheduled job without an implementation,
   * instead of the worker failing on its first message after the deployment.
   */
  readonly implementedJobIds?: readonly string[];
  /** Where alarms are e-mailed (the app reads it from `-c alarmEmail=...`); without it, subscribe to alarmTopic yourself. */
  readonly alarmEmail?: string;
}

export class ScheduledJobs extends Construct {
  /** The jobs as validated at synth, with their defaults applied, and the worker limits derived from them. */
  readonly resolvedJobs: ResolvedJobs;
  readonly table: dynamodb.Table;
  readonly jobQueue: sqs.Queue;
  readonly jobDeadLetterQueue: sqs.Queue;
  readonly reportBucket: s3.Bucket;
  readonly reportReadyTopic: sns.Topic;
  /** Subscribed to the topic with raw delivery, so announcements are kept even before anyone else subscribes. */
  readonly reportReadyQueue: sqs.Queue;
  readonly triggerFunction: nodejs.NodejsFunction;
  /** Scheduler invocations the trigger failed after its async retries. */
  readonly triggerDeadLetterQueue: sqs.Queue;
  readonly workerFunction: nodejs.NodejsFunction;
  readonly notifierFunction: nodejs.NodejsFunction;
  /** Where the stream event source puts descriptions of batches the notifier failed for good. */
  readonly notifierFailureQueue: sqs.Queue;
  readonly schedules: JobSchedules;
  /** Re-enqueues stuck occurrences and announces unannounced reports, every RECONCILE_EVERY_MINUTES. */
  readonly reconcilerFunction: nodejs.NodejsFunction;
  readonly reconcilerRule: events.Rule;
  /** The CloudWatch namespace of the functions' metrics (POWERTOOLS_METRICS_NAMESPACE). */
  readonly metricsNamespace: string;
  /** Alarms, their SNS topic, and the dashboard. */
  readonly monitoring: JobsMonitoring;

  constructor(scope: Construct, id: string, props: ScheduledJobsProps) {
    super(scope, id);
    const resolved = resolveJobConfigs(props.jobs, props.implementedJobIds);
    this.resolvedJobs = resolved;
    const { limits } = resolved;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    this.table = new dynamodb.Table(this, 'OccurrenceTable', {
      partitionKey: { name: OCCURRENCE_TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: OCCURRENCE_TABLE.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: OCCURRENCE_TABLE.ttlAttribute,
      stream: dynamodb.StreamViewType[OCCURRENCE_TABLE.streamViewType],
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: OCCURRENCE_TABLE.statusIndex.name,
      partitionKey: { name: OCCURRENCE_TABLE.statusIndex.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: OCCURRENCE_TABLE.statusIndex.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });
    const tableArns = [this.table.tableArn];
    const statusIndexArn = `${this.table.tableArn}/index/${OCCURRENCE_TABLE.statusIndex.name}`;
    const tableAndIndexArns = [...tableArns, statusIndexArn];

    this.jobDeadLetterQueue = secureQueue(this, 'JobDeadLetterQueue');
    this.jobQueue = secureQueue(this, 'JobQueue', {
      visibilityTimeout: Duration.seconds(limits.queueVisibilityTimeoutSeconds),
      deadLetterQueue: { queue: this.jobDeadLetterQueue, maxReceiveCount: limits.maxReceiveCount },
    });

    this.reportBucket = new s3.Bucket(this, 'ReportBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy,
    });

    // FIFO so that subscribers see each occurrence's announcement once (the notifier passes a deduplication id)
    // and in order per message group; a FIFO topic delivers only to SQS queues, hence the queue below.
    this.reportReadyTopic = new sns.Topic(this, 'ReportReadyTopic', {
      fifo: true,
      contentBasedDeduplication: false,
      enforceSSL: true,
    });
    this.reportReadyQueue = secureQueue(this, 'ReportReadyQueue', { fifo: true });
    this.reportReadyTopic.addSubscription(new SqsSubscription(this.reportReadyQueue, { rawMessageDelivery: true }));

    const jobSettingsJson = JSON.stringify(resolved.settings);
    // One namespace per stack, so that two deployments in one account do not add up each other's counts.
    this.metricsNamespace = `ScheduledJobs/${Stack.of(this).stackName}`;
    const metricsEnv = { [ENV.metricsNamespace]: this.metricsNamespace };

    this.triggerDeadLetterQueue = secureQueue(this, 'TriggerDeadLetterQueue');
    this.triggerFunction = jobFunction(this, 'Trigger', {
      entry: path.join(FUNCTIONS_DIR, 'trigger.ts'),
      description: 'Records one occurrence per scheduled time and enqueues it for the worker',
      timeoutSeconds: TRIGGER_TIMEOUT_SECONDS,
      retryAttempts: TRIGGER_ASYNC_RETRY_ATTEMPTS,
      deadLetterQueue: this.triggerDeadLetterQueue,
      environment: {
        [ENV.tableName]: this.table.tableName,
        [ENV.queueUrl]: this.jobQueue.queueUrl,
        [ENV.jobSettings]: jobSettingsJson,
        ...metricsEnv,
      },
    });
    allow(this.triggerFunction, ['dynamodb:PutItem'], tableArns);
    allow(this.triggerFunction, ['sqs:SendMessage'], [this.jobQueue.queueArn]);

    this.workerFunction = jobFunction(this, 'Worker', {
      entry: props.workerEntry ?? path.join(FUNCTIONS_DIR, 'worker.ts'),
      description: 'Leases an occurrence, runs its job and commits the report once',
      timeoutSeconds: limits.functionTimeoutSeconds,
      memorySize: WORKER_MEMORY_MB,
      environment: {
        [ENV.tableName]: this.table.tableName,
        [ENV.queueUrl]: this.jobQueue.queueUrl,
        [ENV.bucketName]: this.reportBucket.bucketName,
        [ENV.jobSettings]: jobSettingsJson,
        ...metricsEnv,
      },
    });
    allow(this.workerFunction, ['dynamodb:UpdateItem', 'dynamodb:Query'], tableAndIndexArns);
    allow(
      this.workerFunction,
      ['s3:GetObject', 's3:PutObject'],
      [this.reportBucket.arnForObjects(`${REPORT_KEY_PREFIX}*`)],
    );
    // Without ListBucket, HeadObject/GetObject of a missing key answers 403 instead of 404.
    allow(this.workerFunction, ['s3:ListBucket'], [this.reportBucket.bucketArn]);
    // Grants exactly the consume actions, ChangeMessageVisibility included (retries wait as hidden messages).
    this.workerFunction.addEventSource(
      new SqsEventSource(this.jobQueue, {
        batchSize: WORKER_BATCH_SIZE,
        reportBatchItemFailures: true,
      }),
    );

    this.notifierFailureQueue = secureQueue(this, 'NotifierFailureQueue');
    this.notifierFunction = jobFunction(this, 'Notifier', {
      entry: path.join(FUNCTIONS_DIR, 'notifier.ts'),
      description: 'Announces each report once when its occurrence becomes SUCCEEDED',
      timeoutSeconds: NOTIFIER_TIMEOUT_SECONDS,
      environment: {
        [ENV.tableName]: this.table.tableName,
        [ENV.topicArn]: this.reportReadyTopic.topicArn,
        [ENV.bucketName]: this.reportBucket.bucketName,
        ...metricsEnv,
      },
    });
    // GetItem: a retried stream record must see the row as it is now, not as it was at the transition.
    allow(this.notifierFunction, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], tableArns);
    allow(this.notifierFunction, ['sns:Publish'], [this.reportReadyTopic.topicArn]);
    this.notifierFunction.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: NOTIFIER_BATCH_SIZE,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        // No retryAttempts: retry until the record ages out of the stream (24 h). A bounded count would drop the
        // announcement during any SNS or DynamoDB outage longer than those retries.
        onFailure: new SqsDlq(this.notifierFailureQueue),
        filters: [succeededTransitionFilter()],
      }),
    );

    this.schedules = new JobSchedules(this, 'Schedules', { jobs: resolved.jobs, trigger: this.triggerFunction });

    this.reconcilerFunction = jobFunction(this, 'Reconciler', {
      entry: path.join(FUNCTIONS_DIR, 'reconciler.ts'),
      description: 'Re-enqueues occurrences that fell through the cracks and announces reports never announced',
      timeoutSeconds: RECONCILER_TIMEOUT_SECONDS,
      // The next scheduled run is the retry; Lambda's async retries would only run the same sweep twice more.
      retryAttempts: 0,
      environment: {
        [ENV.tableName]: this.table.tableName,
        [ENV.queueUrl]: this.jobQueue.queueUrl,
        [ENV.topicArn]: this.reportReadyTopic.topicArn,
        [ENV.bucketName]: this.reportBucket.bucketName,
        [ENV.jobSettings]: jobSettingsJson,
        [ENV.reconcileThresholds]: JSON.stringify(reconcileThresholds(resolved.settings)),
        ...metricsEnv,
      },
    });
    // Query: the byStatus index. UpdateItem: the conditional re-enqueue mark and notifiedAt. GetItem: the
    // announcement re-reads the row. SendMessage: the re-enqueue. Publish: the announcement.
    allow(this.reconcilerFunction, ['dynamodb:Query'], [statusIndexArn]);
    allow(this.reconcilerFunction, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], tableArns);
    allow(this.reconcilerFunction, ['sqs:SendMessage'], [this.jobQueue.queueArn]);
    allow(this.reconcilerFunction, ['sns:Publish'], [this.reportReadyTopic.topicArn]);
    this.reconcilerRule = new events.Rule(this, 'ReconcilerSchedule', {
      description: `Runs the reconciler every ${RECONCILE_EVERY_MINUTES} minutes`,
      schedule: events.Schedule.rate(Duration.minutes(RECONCILE_EVERY_MINUTES)),
      targets: [new eventTargets.LambdaFunction(this.reconcilerFunction, { retryAttempts: 0 })],
    });

    this.monitoring = new JobsMonitoring(this, 'Monitoring', {
      jobIds: resolved.settings.map((s) => s.id),
      metricsNamespace: this.metricsNamespace,
      worker: this.workerFunction,
      reconciler: this.reconcilerFunction,
      deadLetterQueues: {
        JobDeadLetterQueue: this.jobDeadLetterQueue,
        TriggerDeadLetterQueue: this.triggerDeadLetterQueue,
        SchedulerDeadLetterQueue: this.schedules.deadLetterQueue,
        NotifierFailureQueue: this.notifierFailureQueue,
      },
      alarmEmail: props.alarmEmail,
    });
    acknowledgeNagFindings(this);
  }
}

/**
 * Only the write that makes an occurrence SUCCEEDED reaches the notifier: not inserts, not heartbeats, and not the
 * notifier's own `notifiedAt` update (SUCCEEDED to SUCCEEDED), so it is never invoked by itself.
 */
export function succeededTransitionFilter(): Record<string, unknown> {
  const status = OccurrenceAttributes.status;
  return lambda.FilterCriteria.filter({
    eventName: lambda.FilterRule.isEqual('MODIFY'),
    dynamodb: {
      NewImage: { [status]: { S: lambda.FilterRule.isEqual(OccurrenceStatus.SUCCEEDED) } },
      OldImage: { [status]: { S: lambda.FilterRule.notEquals(OccurrenceStatus.SUCCEEDED) } },
    },
  });
}

function allow(fn: lambda.IFunction, actions: string[], resources: string[]): void {
  fn.addToRolePolicy(new iam.PolicyStatement({ actions, resources }));
}
