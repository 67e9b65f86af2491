/**
 * What the CLI tests share: the deployed jobs of their own (as the catalogue gives them, and as schedules in the
 * emulator), captured output, a command context with an injected clock, and rows written straight into the
 * emulator's table (the state a test starts from).
 */
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { CreateScheduleCommand, CreateScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { DeployedJob, JobCatalogue } from '../../bin/occurrences/catalogue';
import type { CliDeps, CommandContext } from '../../bin/occurrences/context';
import type { Target, WorkerQueues } from '../../bin/occurrences/target';
import { DynamoJobStateStore } from '../../functions/aws/job-state-store';
import { OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import type { Occurrence } from '../../functions/protocol/occurrence';
import { iso, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { Clock } from '../../functions/protocol/ports';
import { workerLimits } from '../../functions/protocol/worker-limits';
import {
  createResources,
  LOCAL_REGION,
  type LocalClients,
  type LocalResources,
  localClients,
} from '../../testing/local/local-aws';
import { type MotoServer, startMotoServer } from '../../testing/local/moto-server';
import { indexed } from '../aws/fixtures';

export const HOURLY = 'hourly-report';
export const OTHER = 'other-report';
/** The worker that runs HOURLY; OTHER has a worker of its own. */
export const WORKER = 'reports';
export const OTHER_WORKER = 'other-report';
export const GROUP = 'test-jobs';

export const hourlyJob: DeployedJob = {
  id: HOURLY,
  schedule: 'cron(0 * * * ? *)',
  timeZone: 'UTC',
  state: 'ENABLED',
  route: { worker: WORKER, deadlineSeconds: 3600, retentionDays: 7 },
};

export const otherJob: DeployedJob = {
  id: OTHER,
  schedule: 'cron(30 6 * * ? *)',
  timeZone: 'Europe/Berlin',
  state: 'ENABLED',
  route: { worker: OTHER_WORKER, deadlineSeconds: 6 * 3600, retentionDays: 90 },
};

export const testJobs: readonly DeployedJob[] = [hourlyJob, otherJob];

/** The catalogue of a schedule group holding `jobs`, without Scheduler. */
export function memoryCatalogue(jobs: readonly DeployedJob[] = testJobs, group = GROUP): JobCatalogue {
  return {
    group,
    job: async (jobId) => jobs.find((j) => j.id === jobId),
    jobIds: async () => jobs.map((j) => j.id).sort(),
  };
}

export interface Captured {
  readonly out: string[];
  readonly err: string[];
  readonly io: CommandContext['io'];
  text(): string;
}

export function capture(): Captured {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t) => out.push(t), err: (t) => err.push(t) }, text: () => out.join('\n') };
}

export function context(clock: Clock, captured = capture()): CommandContext & { captured: Captured } {
  return { io: captured.io, clock, captured };
}

export function cliDeps(clock: Clock, captured = capture()): CliDeps & { captured: Captured } {
  return { ...context(clock, captured), env: {}, signal: new AbortController().signal };
}

/** The target the CLI would resolve, over the emulator's resources; the job queue is HOURLY's worker's. */
export function targetOf(clients: LocalClients, resources: LocalResources): Target {
  const queues: WorkerQueues = {
    byWorker: new Map([[WORKER, new SqsWorkQueue(clients.sqs, resources.jobQueueUrl)]]),
    source: '--worker-queue',
  };
  return {
    tableName: resources.tableName,
    bucketName: resources.bucketName,
    reader: new OperatorOccurrenceReader(clients.documents, resources.tableName),
    store: new OperatorOccurrenceStore(clients.documents, resources.tableName),
    states: new DynamoJobStateStore(clients.documents, resources.tableName),
    jobs: memoryCatalogue(),
    queues,
    where: `table ${resources.tableName}`,
  };
}

export function row(
  jobId: string,
  scheduledTime: string,
  status: OccurrenceStatus,
  now: number,
  extra: Partial<Occurrence> = {},
): Occurrence {
  return {
    jobId,
    scheduledTime,
    status,
    attempt: status === OccurrenceStatus.PENDING ? 0 : 1,
    createdAt: iso(Date.parse(scheduledTime) + 100),
    deadlineAt: iso(Date.parse(scheduledTime) + 3600_000),
    ttl: Math.floor(now / 1000) + 86_400,
    ...extra,
  };
}

/** Put rows as the store writes them: with the status index key that matches their status. */
export async function putRows(clients: LocalClients, tableName: string, rows: readonly object[]): Promise<void> {
  for (const item of rows) await clients.documents.send(new PutCommand({ TableName: tableName, Item: indexed(item) }));
}

const EMULATOR = { region: LOCAL_REGION, credentials: { accessKeyId: 'l', secretAccessKey: 'l' } };

export function schedulerClient(endpoint: string): SchedulerClient {
  return new SchedulerClient({ endpoint, ...EMULATOR });
}

/**
 * The schedules a ScheduledJobs deploys for `jobs` (lib/job-schedules.ts): one per job in `group`, named by the job
 * id, whose input is the schedule event with Scheduler's scheduled-time placeholder. `input` replaces a job's input.
 */
export async function createSchedules(
  endpoint: string,
  jobs: readonly DeployedJob[],
  options: { group?: string; input?: Readonly<Record<string, string>> } = {},
): Promise<void> {
  const scheduler = schedulerClient(endpoint);
  const group = options.group ?? GROUP;
  await scheduler.send(new CreateScheduleGroupCommand({ Name: group }));
  for (const job of jobs) {
    const event = { jobId: job.id, scheduledTime: '<aws.scheduler.scheduled-time>', ...job.route };
    await scheduler.send(
      new CreateScheduleCommand({
        GroupName: group,
        Name: job.id,
        ScheduleExpression: job.schedule,
        ScheduleExpressionTimezone: job.timeZone || undefined,
        State: job.state === 'DISABLED' ? 'DISABLED' : 'ENABLED',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: {
          Arn: 'arn:aws:lambda:us-east-1:123456789012:function:trigger',
          RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
          Input: options.input?.[job.id] ?? JSON.stringify(event),
        },
      }),
    );
  }
  scheduler.destroy();
}

/** A stack whose only content is `outputs` (key: value, or value and description), as a ScheduledJobs adds them. */
export async function createStack(
  endpoint: string,
  name: string,
  outputs: Readonly<Record<string, string | { value: string; description: string }>>,
): Promise<void> {
  const cfn = new CloudFormationClient({ endpoint, ...EMULATOR });
  await cfn.send(
    new CreateStackCommand({
      StackName: name,
      TemplateBody: JSON.stringify({
        Resources: { Placeholder: { Type: 'AWS::CloudFormation::WaitConditionHandle' } },
        Outputs: Object.fromEntries(
          Object.entries(outputs).map(([key, o]) => [
            key,
            typeof o === 'string' ? { Value: o } : { Value: o.value, Description: o.description },
          ]),
        ),
      }),
    }),
  );
  cfn.destroy();
}

/** A second worker's job queue, as the stack creates one per worker. */
export async function createWorkerQueue(clients: LocalClients, name: string): Promise<string> {
  const created = await clients.sqs.send(new CreateQueueCommand({ QueueName: name }));
  if (created.QueueUrl === undefined) throw new Error(`the emulator created no queue ${name}`);
  return created.QueueUrl;
}

/** The bodies of every message in a queue, parsed (each stays in flight for a minute: read once per test). */
export async function messagesIn(clients: LocalClients, queueUrl: string): Promise<unknown[]> {
  const bodies: unknown[] = [];
  for (;;) {
    const out = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60 }),
    );
    if (!out.Messages?.length) return bodies;
    bodies.push(...out.Messages.map((m) => JSON.parse(m.Body ?? 'null')));
  }
}

/** The emulator of a CLI test file, as its hooks leave it before each test. */
export interface CliEmulator {
  moto: MotoServer;
  clients: LocalClients;
  resources: LocalResources;
  /** With `deployed`: OTHER_WORKER's queue (WORKER's is resources.jobQueueUrl). */
  otherQueueUrl: string;
}

/**
 * Starts moto once for the file and resets it before each test, with the table, queues, bucket and topic. With
 * `deployed`, also OTHER_WORKER's queue and testJobs' schedules, as a deployed stack has them.
 */
export function useCliEmulator(options: { deployed?: boolean } = {}): CliEmulator {
  const emulator = {} as CliEmulator;
  beforeAll(async () => {
    emulator.moto = await startMotoServer();
    emulator.clients = localClients(emulator.moto.endpoint);
  });
  afterAll(async () => emulator.moto?.stop());
  beforeEach(async () => {
    await emulator.moto.reset();
    emulator.resources = await createResources(emulator.clients, { limits: workerLimits([]) });
    if (options.deployed) {
      emulator.otherQueueUrl = await createWorkerQueue(emulator.clients, 'other-report-jobs');
      await createSchedules(emulator.moto.endpoint, testJobs);
    }
  });
  return emulator;
}

/** The global options that point the CLI at a `deployed` emulator: its table, schedule group, both workers' queues. */
export function deployedFlags(emulator: CliEmulator): string[] {
  return [
    '--table',
    emulator.resources.tableName,
    '--schedule-group',
    GROUP,
    '--worker-queue',
    `${WORKER}=${emulator.resources.jobQueueUrl}`,
    '--worker-queue',
    `${OTHER_WORKER}=${emulator.otherQueueUrl}`,
    '--endpoint',
    emulator.moto.endpoint,
  ];
}
