/**
 * Bulk creation of one job's run-time schedules on moto (issue 22), timed: schedules per second, and the ratio to an
 * anchor measured in the same run on the same moto.
 *
 * - **anchor**: the least a registry can do per schedule: one conditional PutItem of the row and one CreateSchedule,
 *   nothing read, nothing marked synced (raw SDK calls, `concurrency` at once).
 * - **registry**: the same schedules through the registry's own bulk upsert (operations/schedules.ts
 *   `upsertSchedules`: read, conditional put, project, markSynced), when the registry is in this tree; see
 *   `measureRegistry` in bench/run.ts.
 *
 * moto answers each request in milliseconds of Python on a shared machine: the ratio is the figure, not the rate;
 * deployed, the rate is bounded by Scheduler's CreateSchedule quota and the registry's partition
 * (bench/registry-model.ts).
 */
import { createHash } from 'node:crypto';
import {
  CreateTableCommand,
  type DynamoDBClient,
  PutItemCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { CreateScheduleCommand, CreateScheduleGroupCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { AUDIT_BUCKETS, SYNC_INDEX_SHARDS } from './registry-model';

/** The registry table as the brief describes it (TODO(issue 22): the registry's own table constants). */
export async function createRegistryTable(dynamo: DynamoDBClient, tableName: string): Promise<void> {
  const s = (name: string) => ({ AttributeName: name, AttributeType: 'S' as const });
  await dynamo.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        s('jobId'),
        s('scheduleKey'),
        s('syncShard'),
        s('syncDueAt'),
        s('auditBucket'),
        s('scheduleName'),
      ],
      KeySchema: [
        { AttributeName: 'jobId', KeyType: 'HASH' },
        { AttributeName: 'scheduleKey', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'bySyncDue',
          KeySchema: [
            { AttributeName: 'syncShard', KeyType: 'HASH' },
            { AttributeName: 'syncDueAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'byAuditBucket',
          KeySchema: [
            { AttributeName: 'auditBucket', KeyType: 'HASH' },
            { AttributeName: 'scheduleName', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 30 }, { TableName: tableName });
}

/** The key of the i-th customer. */
export const customerKey = (i: number): string => `customer-${String(i).padStart(7, '0')}`;

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** A row and schedule name as the brief derives them (TODO(issue 22): the registry's scheduleNameOf). */
function anchorRow(jobId: string, key: string, input: string, now: string) {
  const digest = sha256(key);
  const bucket = digest[0] ?? 0;
  const name = `${bucket.toString(16).padStart(2, '0')}.${key.slice(0, 40).replace(/[^A-Za-z0-9_.-]/g, '_')}.${digest.toString('hex').slice(0, 16)}`;
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
      syncShard: { S: String(digest[1] % SYNC_INDEX_SHARDS) },
      auditBucket: { S: `${jobId}#${bucket % AUDIT_BUCKETS}` },
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
        ScheduleExpression: 'cron(0 8 ? * MON *)',
        ScheduleExpressionTimezone: 'Europe/Amsterdam',
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
  /** The registry's own bulk upsert, when the registry is in this tree; its ratio is its seconds over the anchor's. */
  readonly registry?: BulkCreateRun & { readonly ratioToAnchor: number };
  readonly note?: string;
}

export interface BulkCreateOptions {
  readonly schedules: number;
  readonly concurrency: number;
  readonly inputBytes: number;
}

const JOB_ID = 'weekly-report';
const TARGET_ARN = 'arn:aws:lambda:us-east-1:123456789012:function:trigger';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/scheduler';

/** The anchor on a fresh moto (`reset` first): a registry table, the job's group, then the raw pairs. */
export async function measureAnchor(
  clients: { readonly dynamo: DynamoDBClient; readonly scheduler: SchedulerClient },
  reset: () => Promise<void>,
  options: BulkCreateOptions,
): Promise<BulkCreateRun> {
  await reset();
  const tableName = 'bench-registry';
  await createRegistryTable(clients.dynamo, tableName);
  await createGroup(clients.scheduler, JOB_ID);
  const setup: AnchorSetup = {
    ...clients,
    tableName,
    groupName: JOB_ID,
    jobId: JOB_ID,
    targetArn: TARGET_ARN,
    roleArn: ROLE_ARN,
    inputBytes: options.inputBytes,
  };
  return runAnchor(setup, options.schedules, options.concurrency);
}

/** A plain-text line per run. */
export function formatBulkCreate(figures: BulkCreateFigures): string {
  const line = (r: BulkCreateRun, ratio?: number) =>
    `${r.what}: ${r.schedules} schedules, ${r.concurrency} at once, ${r.seconds.toFixed(1)} s, ` +
    `${r.perSecond.toFixed(1)} schedules/s${ratio === undefined ? ' (the anchor)' : `, ${ratio.toFixed(2)} × the anchor's time`}`;
  return [
    line(figures.anchor),
    ...(figures.registry ? [line(figures.registry, figures.registry.ratioToAnchor)] : []),
    ...(figures.note ? [figures.note] : []),
  ].join('\n');
}

/**
 * The bulk creation figure: the anchor, then the registry's bulk upsert of the same schedules on a fresh moto.
 * TODO(issue 22): the registry path, once operations/schedules.ts is merged into this branch.
 */
export async function measureBulkCreate(
  clients: { readonly dynamo: DynamoDBClient; readonly scheduler: SchedulerClient },
  reset: () => Promise<void>,
  options: BulkCreateOptions,
): Promise<BulkCreateFigures> {
  const anchor = await measureAnchor(clients, reset, options);
  return { anchor, note: 'the registry path is not measured: operations/schedules.ts is not in this tree' };
}
