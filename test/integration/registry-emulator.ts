/**
 * The run-time schedules' stores on moto, as a deployed ScheduledJobs has them: the registry table (both keys, both
 * indexes, TTL), the stack's shared schedule group with a job's template schedule, and the job's own group. Shared
 * by the moto tests of run-time schedules so that each sets up the same stores the stack defines.
 */
import { CreateTableCommand, DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateScheduleCommand, CreateScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { REGISTRY_TABLE } from '../../functions/protocol/schedule-registry';
import { LOCAL_REGION } from '../../testing/local/local-aws';
import { templateEvent } from '../protocol/schedule-registry-fakes';
import type { Emulator } from './emulator';

export const TABLE = 'schedule-registry';
export const SHARED_GROUP = 'itest-schedules';
export const TRIGGER = 'arn:aws:lambda:us-east-1:123456789012:function:trigger';

/** DynamoDB and Scheduler clients on the test file's moto. */
export function registryClients(emulator: Emulator): { dynamo: DynamoDBClient; scheduler: SchedulerClient } {
  const config = {
    endpoint: emulator.moto.endpoint,
    region: LOCAL_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  };
  return { dynamo: new DynamoDBClient(config), scheduler: new SchedulerClient(config) };
}

/** The registry table as the stack defines it (REGISTRY_TABLE): both keys, both indexes, TTL. */
export async function createRegistryTable(dynamo: DynamoDBClient): Promise<void> {
  const { syncIndex, auditIndex } = REGISTRY_TABLE;
  await dynamo.send(
    new CreateTableCommand({
      TableName: TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        REGISTRY_TABLE.partitionKey,
        REGISTRY_TABLE.sortKey,
        syncIndex.partitionKey,
        syncIndex.sortKey,
        auditIndex.partitionKey,
        auditIndex.sortKey,
      ].map((name) => ({ AttributeName: name, AttributeType: REGISTRY_TABLE.keyType })),
      KeySchema: [
        { AttributeName: REGISTRY_TABLE.partitionKey, KeyType: 'HASH' },
        { AttributeName: REGISTRY_TABLE.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [syncIndex, auditIndex].map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  );
  await dynamo.send(
    new UpdateTimeToLiveCommand({
      TableName: TABLE,
      TimeToLiveSpecification: { AttributeName: REGISTRY_TABLE.ttlAttribute, Enabled: true },
    }),
  );
}

/**
 * A job's schedule in the shared group. With a keyed group it is the job's template as lib/ deploys it (DISABLED,
 * never firing, naming the keyed group); without one, an ordinary fixed schedule.
 */
export async function createJobSchedule(
  scheduler: SchedulerClient,
  jobId: string,
  keyedScheduleGroup?: string,
): Promise<void> {
  const event = { ...templateEvent(jobId), ...(keyedScheduleGroup === undefined ? {} : { keyedScheduleGroup }) };
  await scheduler.send(
    new CreateScheduleCommand({
      Name: jobId,
      GroupName: SHARED_GROUP,
      ScheduleExpression: keyedScheduleGroup === undefined ? 'cron(0 2 * * ? *)' : 'cron(0 0 1 1 ? 2199)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: keyedScheduleGroup === undefined ? 'ENABLED' : 'DISABLED',
      Target: {
        Arn: TRIGGER,
        RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
        RetryPolicy: { MaximumRetryAttempts: 5, MaximumEventAgeInSeconds: 3600 },
        Input: JSON.stringify(event),
      },
    }),
  );
}

/** The registry table, the shared group and the job's keyed group with the job's template in the shared group. */
export async function createRegistryStores(
  clients: { dynamo: DynamoDBClient; scheduler: SchedulerClient },
  jobId: string,
  jobGroup: string,
): Promise<void> {
  await createRegistryTable(clients.dynamo);
  await clients.scheduler.send(new CreateScheduleGroupCommand({ Name: SHARED_GROUP }));
  await clients.scheduler.send(new CreateScheduleGroupCommand({ Name: jobGroup }));
  await createJobSchedule(clients.scheduler, jobId, jobGroup);
}
