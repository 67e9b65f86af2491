/**
 * Bulk creation of one job's run-time schedules on moto (issue 22), timed: schedules per second, and the ratio to an
 * anchor measured in the same run on the same moto.
 *
 * - **anchor**: the least a registry can do per schedule: one conditional PutItem of the row and one CreateSchedule,
 *   nothing read, nothing marked synced (raw SDK calls, `concurrency` at once).
 * - **registry**: the same schedules through the public operation (operations/schedules.ts `upsertSchedule` on
 *   `connectScheduleOperations`: a consistent read, the conditional put, CreateSchedule, markSynced; the job's
 *   template read once and remembered), `concurrency` at once.
 *
 * moto answers each request in milliseconds of Python on a shared machine: the ratio is the figure, not the rate;
 * deployed, the rate is bounded by Scheduler's CreateSchedule quota and the registry's partition
 * (bench/registry-model.ts).
 */
import {
  CreateTableCommand,
  type DynamoDBClient,
  PutItemCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { CreateScheduleCommand, CreateScheduleGroupCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { TEMPLATE_GROUP_FIELD } from '../functions/protocol/schedule-event';
import {
  auditBucketKey,
  auditBucketOf,
  REGISTRY_TABLE,
  scheduleNameOf,
  syncShardOf,
} from '../functions/protocol/schedule-registry';
import { connectScheduleOperations, upsertSchedule } from '../operations/schedules';

/** The registry table as lib/ makes it, from REGISTRY_TABLE (on demand, both indexes projecting ALL). */
export async function createRegistryTable(dynamo: DynamoDBClient, tableName: string): Promise<void> {
  const t = REGISTRY_TABLE;
  const s = (name: string) => ({ AttributeName: name, AttributeType: 'S' as const });
  const index = (name: string, hash: string, range: string) => ({
    IndexName: name,
    KeySchema: [
      { AttributeName: hash, KeyType: 'HASH' as const },
      { AttributeName: range, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'ALL' as const },
  });
  await dynamo.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        s(t.partitionKey),
        s(t.sortKey),
        s(t.syncIndex.partitionKey),
        s(t.syncIndex.sortKey),
        s(t.auditIndex.partitionKey),
        s(t.auditIndex.sortKey),
      ],
      KeySchema: [
        { AttributeName: t.partitionKey, KeyType: 'HASH' },
        { AttributeName: t.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        index(t.syncIndex.name, t.syncIndex.partitionKey, t.syncIndex.sortKey),
        index(t.auditIndex.name, t.auditIndex.partitionKey, t.auditIndex.sortKey),
      ],
    }),
  );
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 30 }, { TableName: tableName });
}

/** The key of the i-th customer. */
export const customerKey = (i: number): string => `customer-${String(i).padStart(7, '0')}`;

/** The row the registry would write, named as the registry names it (no read, nothing marked synced). */
function anchorRow(jobId: string, key: string, input: string, now: string) {
  const name = scheduleNameOf(key);
  return {
    name,
    item: {
      jobId: { S: jobId },
      scheduleKey: { S: key },
      expression: { S: 'cron(0 8 ? * MON *)' },
      timeZone: { S: 'Europe/Amsterdam' },
      state: { S: 'ENABLED' },
      version: { N: '1' },
      scheduleName: { S: name },
      createdAt: { S: now },
      updatedAt: { S: now },
      syncDueAt: { S: now },
      syncShard: { S: syncShardOf(jobId, key) },
      auditBucket: { S: auditBucketKey(jobId, auditBucketOf(key)) },
      input: { S: input },
    },
  };
}

export interface BulkCreateRun {
  readonly what: string;
  readonly schedules: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly perSecond: number;
}

/** Runs `work(i)` for i in [0, n), `concurrency` at once; the seconds it took. */
export async function timed(n: number, concurrency: number, work: (i: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < n) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, lane));
  return (performance.now() - started) / 1000;
}

export interface AnchorSetup {
  readonly dynamo: DynamoDBClient;
  readonly scheduler: SchedulerClient;
  readonly tableName: string;
  readonly groupName: string;
  readonly jobId: string;
  /** The trigger's ARN and the role Scheduler assumes: moto checks neither. */
  readonly targetArn: string;
  readonly roleArn: string;
  readonly inputBytes: number;
}

/** The anchor: `n` raw PutItem + CreateSchedule pairs (the table and group must exist). */
export async function runAnchor(setup: AnchorSetup, n: number, concurrency: number): Promise<BulkCreateRun> {
  const now = new Date().toISOString();
  const input = 'x'.repeat(setup.inputBytes);
  const seconds = await timed(n, concurrency, async (i) => {
    const key = customerKey(i);
    const { name, item } = anchorRow(setup.jobId, key, input, now);
    await setup.dynamo.send(
      new PutItemCommand({
        TableName: setup.tableName,
        Item: item,
        ConditionExpression: 'attribute_not_exists(jobId)',
      }),
    );
    await setup.scheduler.send(
      new CreateScheduleCommand({
        Name: name,
        GroupName: setup.groupName,
        ScheduleExpression: EXPRESSION,
        ScheduleExpressionTimezone: TIME_ZONE,
        State: 'ENABLED',
        FlexibleTimeWindow: { Mode: 'OFF' },
        ActionAfterCompletion: 'NONE',
        Target: {
          Arn: setup.targetArn,
          RoleArn: setup.roleArn,
          Input: JSON.stringify({ jobId: setup.jobId, scheduleKey: key, input }),
        },
      }),
    );
  });
  return { what: 'anchor: PutItem + CreateSchedule', schedules: n, concurrency, seconds, perSecond: n / seconds };
}

/** The group of the job's schedules. */
export async function createGroup(scheduler: SchedulerClient, name: string): Promise<void> {
  await scheduler.send(new CreateScheduleGroupCommand({ Name: name }));
}

export interface BulkCreateFigures {
  readonly anchor: BulkCreateRun;
  /** The registry's own upsert of the same schedules; its ratio is its seconds over the anchor's. */
  readonly registry: BulkCreateRun & { readonly ratioToAnchor: number };
}

export interface BulkCreateOptions {
  readonly schedules: number;
  readonly concurrency: number;
  readonly inputBytes: number;
}

export interface BenchClients {
  readonly dynamo: DynamoDBClient;
  readonly scheduler: SchedulerClient;
}

const JOB_ID = 'weekly-report';
const STACK_GROUP = 'bench-stack';
const TABLE_NAME = 'bench-registry';
const TARGET_ARN = 'arn:aws:lambda:us-east-1:123456789012:function:trigger';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/scheduler';
const EXPRESSION = 'cron(0 8 ? * MON *)';
const TIME_ZONE = 'Europe/Amsterdam';

/** A fresh moto with the registry table, the job's group and, in the stack's group, the job's template schedule. */
async function setUp(clients: BenchClients, reset: () => Promise<void>): Promise<void> {
  await reset();
  await createRegistryTable(clients.dynamo, TABLE_NAME);
  await createGroup(clients.scheduler, JOB_ID);
  await createGroup(clients.scheduler, STACK_GROUP);
  // The template as lib/ makes it: DISABLED, never due, its input the job's schedule event and the keyed group.
  await clients.scheduler.send(
    new CreateScheduleCommand({
      Name: JOB_ID,
      GroupName: STACK_GROUP,
      ScheduleExpression: 'cron(0 0 1 1 ? 2199)',
      State: 'DISABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: TARGET_ARN,
        RoleArn: ROLE_ARN,
        Input: JSON.stringify({
          jobId: JOB_ID,
          scheduledTime: '<aws.scheduler.scheduled-time>',
          worker: 'local',
          deadlineSeconds: 21_600,
          retentionDays: 90,
          catchupWindowSeconds: 3_600,
          [TEMPLATE_GROUP_FIELD]: JOB_ID,
        }),
      },
    }),
  );
}

/** The anchor on a fresh moto: `schedules` raw PutItem + CreateSchedule pairs. */
export async function measureAnchor(
  clients: BenchClients,
  reset: () => Promise<void>,
  options: BulkCreateOptions,
): Promise<BulkCreateRun> {
  await setUp(clients, reset);
  const setup: AnchorSetup = {
    ...clients,
    tableName: TABLE_NAME,
    groupName: JOB_ID,
    jobId: JOB_ID,
    targetArn: TARGET_ARN,
    roleArn: ROLE_ARN,
    inputBytes: options.inputBytes,
  };
  return runAnchor(setup, options.schedules, options.concurrency);
}

/** The same schedules through the public `upsertSchedule` on a fresh moto (it remembers the job's template). */
export async function measureRegistry(
  clients: BenchClients,
  reset: () => Promise<void>,
  options: BulkCreateOptions,
): Promise<BulkCreateRun> {
  await setUp(clients, reset);
  const ops = connectScheduleOperations({
    registryTableName: TABLE_NAME,
    scheduleGroupName: STACK_GROUP,
    clients: { dynamoDb: clients.dynamo, scheduler: clients.scheduler },
  });
  // {"report":"xxx..."}: the JSON is inputBytes long.
  const input = { report: 'x'.repeat(Math.max(0, options.inputBytes - 13)) };
  const spec = { expression: EXPRESSION, timeZone: TIME_ZONE, input };
  const seconds = await timed(options.schedules, options.concurrency, async (i) => {
    await upsertSchedule(ops, JOB_ID, customerKey(i), spec, { by: 'bench' });
  });
  return {
    what: 'registry: upsertSchedule (read, put, CreateSchedule, markSynced)',
    schedules: options.schedules,
    concurrency: options.concurrency,
    seconds,
    perSecond: options.schedules / seconds,
  };
}

/** The bulk creation figure: the anchor, then the registry's upsert of the same schedules, each on a fresh moto. */
export async function measureBulkCreate(
  clients: BenchClients,
  reset: () => Promise<void>,
  options: BulkCreateOptions,
): Promise<BulkCreateFigures> {
  const anchor = await measureAnchor(clients, reset, options);
  const registry = await measureRegistry(clients, reset, options);
  return { anchor, registry: { ...registry, ratioToAnchor: registry.seconds / anchor.seconds } };
}

/** A plain-text line per run. */
export function formatBulkCreate(figures: BulkCreateFigures): string {
  const line = (r: BulkCreateRun, ratio?: number) =>
    `${r.what}: ${r.schedules} schedules, ${r.concurrency} at once, ${r.seconds.toFixed(1)} s, ` +
    `${r.perSecond.toFixed(1)} schedules/s${ratio === undefined ? ' (the anchor)' : `, ${ratio.toFixed(2)} × the anchor's time`}`;
  return [line(figures.anchor), line(figures.registry, figures.registry.ratioToAnchor)].join('\n');
}
