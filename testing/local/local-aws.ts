/**
 * The AWS side of a local run: SDK clients pointed at the emulator, and the stack's data resources created in it
 * from the same definitions the CDK stack uses (functions/protocol/table-schema.ts and worker-limits.ts), so the
 * schema is written once.
 */
import { CreateTableCommand, DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { QUEUE_RETENTION_SECONDS } from '../../functions/protocol/job-settings';
import { OCCURRENCE_TABLE } from '../../functions/protocol/table-schema';
import type { WorkerLimits } from '../../functions/protocol/worker-limits';
import { ENV } from '../../functions/runtime-env';

/** Region and dummy credentials for the emulator; set only for local runs, never when talking to AWS. */
export const LOCAL_REGION = 'us-east-1';
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * Points the SDK's standard settings at the emulator, so the handlers' own clients (functions/aws/clients.ts) use it
 * exactly as they would use AWS_ENDPOINT_URL in any other environment.
 */
export function useEmulator(endpoint: string, env: NodeJS.ProcessEnv = process.env): void {
  env.AWS_ENDPOINT_URL = endpoint;
  env.AWS_REGION = LOCAL_REGION;
  env.AWS_ACCESS_KEY_ID = LOCAL_CREDENTIALS.accessKeyId;
  env.AWS_SECRET_ACCESS_KEY = LOCAL_CREDENTIALS.secretAccessKey;
  delete env.AWS_SESSION_TOKEN;
  delete env.AWS_PROFILE;
}

/**
 * moto checks a write's condition and applies the write in two steps without a lock, so under concurrent requests
 * two conditional writes of one item can both succeed (measured: 7 extra winners in 300 rounds of 8 concurrent
 * writers on a loaded machine). DynamoDB and S3 make each conditional write atomic. To make the emulator keep that
 * promise, every DynamoDB and S3 request of this process waits for the one before it to be answered.
 */
export function serializeEmulatorRequests(client: { middlewareStack: { add: (...args: never[]) => void } }): void {
  const stack = client.middlewareStack as unknown as {
    add(
      middleware: (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>,
      options: object,
    ): void;
  };
  stack.add(
    (next) => async (args) => {
      const release = await acquireEmulatorLock();
      try {
        return await next(args);
      } finally {
        release();
      }
    },
    { step: 'deserialize', name: 'serializeEmulatorRequests', override: true },
  );
}

let lockTail: Promise<void> = Promise.resolve();
function acquireEmulatorLock(): Promise<() => void> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const acquired = lockTail.then(() => release);
  lockTail = lockTail.then(() => held);
  return acquired;
}

export interface LocalClients {
  readonly dynamo: DynamoDBClient;
  readonly documents: DynamoDBDocumentClient;
  readonly streams: DynamoDBStreamsClient;
  readonly s3: S3Client;
  readonly sqs: SQSClient;
  readonly sns: SNSClient;
  readonly scheduler: SchedulerClient;
}

/** Clients of the driver itself (set-up, event sources, inspection), separate from the handlers' clients. */
export function localClients(endpoint: string): LocalClients {
  const config = { endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const dynamo = new DynamoDBClient(config);
  const s3 = new S3Client({ ...config, forcePathStyle: true });
  serializeEmulatorRequests(dynamo);
  serializeEmulatorRequests(s3);
  return {
    dynamo,
    documents: DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } }),
    streams: new DynamoDBStreamsClient(config),
    s3,
    sqs: new SQSClient(config),
    sns: new SNSClient(config),
    scheduler: new SchedulerClient(config),
  };
}

export interface LocalResources {
  readonly tableName: string;
  readonly streamArn: string;
  readonly jobQueueUrl: string;
  readonly jobQueueArn: string;
  readonly jobDeadLetterQueueUrl: string;
  readonly bucketName: string;
  readonly reportReadyTopicArn: string;
  /** Subscribed to the topic with raw delivery, as in the stack: each message here is one announcement. */
  readonly reportReadyQueueUrl: string;
  /** The queue's settings as created (the visibility may be shortened for tests). */
  readonly limits: WorkerLimits;
}

export interface ResourceOptions {
  readonly limits: WorkerLimits;
  /** Override of the queue's visibility timeout: tests shorten it so that a crash is redelivered in seconds. */
  readonly visibilityTimeoutSeconds?: number;
}

export async function createResources(clients: LocalClients, options: ResourceOptions): Promise<LocalResources> {
  const table = await createOccurrenceTable(clients.dynamo);
  const visibility = options.visibilityTimeoutSeconds ?? options.limits.queueVisibilityTimeoutSeconds;
  const queues = await createJobQueues(clients.sqs, options.limits.maxReceiveCount, visibility);
  const bucketName = 'reports';
  await clients.s3.send(new CreateBucketCommand({ Bucket: bucketName }));
  const reportReady = await createReportReadyTopic(clients);
  return {
    ...table,
    ...queues,
    bucketName,
    ...reportReady,
    limits: { ...options.limits, queueVisibilityTimeoutSeconds: visibility },
  };
}

/** The occurrence table as the stack defines it (functions/protocol/table-schema.ts), with its index, stream and TTL. */
async function createOccurrenceTable(dynamo: DynamoDBClient) {
  const tableName = 'occurrences';
  const table = await dynamo.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        OCCURRENCE_TABLE.partitionKey,
        OCCURRENCE_TABLE.sortKey,
        OCCURRENCE_TABLE.statusIndex.partitionKey,
      ].map((name) => ({ AttributeName: name, AttributeType: OCCURRENCE_TABLE.keyType })),
      KeySchema: [
        { AttributeName: OCCURRENCE_TABLE.partitionKey, KeyType: 'HASH' },
        { AttributeName: OCCURRENCE_TABLE.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: OCCURRENCE_TABLE.statusIndex.name,
          KeySchema: [
            { AttributeName: OCCURRENCE_TABLE.statusIndex.partitionKey, KeyType: 'HASH' },
            { AttributeName: OCCURRENCE_TABLE.statusIndex.sortKey, KeyType: 'RANGE' },
          ],
          Projection: {
            ProjectionType: 'INCLUDE',
            NonKeyAttributes: [...OCCURRENCE_TABLE.statusIndex.nonKeyAttributes],
          },
        },
      ],
      StreamSpecification: { StreamEnabled: true, StreamViewType: OCCURRENCE_TABLE.streamViewType },
    }),
  );
  await dynamo.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: OCCURRENCE_TABLE.ttlAttribute, Enabled: true },
    }),
  );
  return { tableName, streamArn: required(table.TableDescription?.LatestStreamArn, "the table's stream ARN") };
}

/** The job queue and its DLQ, with the stack's redrive limit and the given visibility timeout. */
async function createJobQueues(sqs: SQSClient, maxReceiveCount: number, visibilitySeconds: number) {
  const dlq = await createQueue(sqs, 'job-dlq', {});
  const jobQueue = await createQueue(sqs, 'jobs', {
    VisibilityTimeout: String(visibilitySeconds),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount }),
  });
  return { jobQueueUrl: jobQueue.url, jobQueueArn: jobQueue.arn, jobDeadLetterQueueUrl: dlq.url };
}

/** The FIFO report-ready topic and the FIFO queue subscribed to it with raw delivery, as in the stack. */
async function createReportReadyTopic(clients: LocalClients) {
  const topic = await clients.sns.send(
    new CreateTopicCommand({
      Name: 'report-ready.fifo',
      Attributes: { FifoTopic: 'true', ContentBasedDeduplication: 'false' },
    }),
  );
  const readyQueue = await createQueue(clients.sqs, 'report-ready.fifo', { FifoQueue: 'true' });
  await clients.sns.send(
    new SubscribeCommand({
      TopicArn: topic.TopicArn,
      Protocol: 'sqs',
      Endpoint: readyQueue.arn,
      Attributes: { RawMessageDelivery: 'true' },
    }),
  );
  return { reportReadyTopicArn: required(topic.TopicArn, 'the topic ARN'), reportReadyQueueUrl: readyQueue.url };
}

/** The environment the deployed functions get from the stack, for the same resources in the emulator. */
/** The local run has one worker, which runs every job: its id, as the schedule events name it. */
export const LOCAL_WORKER = 'local';

/**
 * The variables the stack would set, for the functions of the one-process local run: the worker's (its queue, its
 * jobs' settings), and the reconciler's shortest stuck threshold (the trigger's events name the worker's queue).
 */
export function functionEnv(
  resources: LocalResources,
  jobSettingsJson: string,
  stuckAfterSeconds: number,
): Record<string, string> {
  return {
    [ENV.tableName]: resources.tableName,
    [ENV.queueUrl]: resources.jobQueueUrl,
    [ENV.bucketName]: resources.bucketName,
    [ENV.topicArn]: resources.reportReadyTopicArn,
    [ENV.jobSettings]: jobSettingsJson,
    [ENV.workerId]: LOCAL_WORKER,
    [ENV.shortestStuckAfterSeconds]: String(stuckAfterSeconds),
  };
}

async function createQueue(
  sqs: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<{ url: string; arn: string }> {
  const created = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: { MessageRetentionPeriod: String(QUEUE_RETENTION_SECONDS), ...attributes },
    }),
  );
  const url = required(created.QueueUrl, `the URL of queue ${name}`);
  const described = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return { url, arn: required(described.Attributes?.QueueArn, `the ARN of queue ${name}`) };
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the emulator did not return ${what}`);
  return value;
}
