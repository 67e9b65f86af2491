/**
 * What the CLI tests share: a job configuration of their own, captured output, a command context with an injected
 * clock, and rows written straight into the emulator's table (the state a test starts from).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { CliDeps, CommandContext } from '../../bin/occurrences/context';
import type { Target } from '../../bin/occurrences/target';
import { OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import type { Occurrence } from '../../functions/protocol/occurrence';
import { iso, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { Clock } from '../../functions/protocol/ports';
import { resolveJobConfigs } from '../../lib/job-config';
import type { LocalClients, LocalResources } from '../../scripts/local/local-aws';
import { indexed } from '../aws/fixtures';

export const HOURLY = 'hourly-report';
export const OTHER = 'other-report';

/**
 * Short timings, so that the local pipeline settles in seconds; one attempt, so that a failing job is FAILED at
 * once.
 */
export const testJobs = resolveJobConfigs([
  {
    id: HOURLY,
    schedule: 'cron(0 * * * ? *)',
    timeoutSeconds: 10,
    leaseSeconds: 30,
    heartbeatSeconds: 5,
    retry: { maxAttempts: 1, baseDelaySeconds: 1, maxDelaySeconds: 1, deadlineSeconds: 3600 },
  },
  { id: OTHER, schedule: 'cron(30 6 * * ? *)', timeZone: 'Europe/Berlin' },
]);

export const reportExtensions = { [HOURLY]: 'txt', [OTHER]: 'md' };

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
  return { io: captured.io, clock, jobs: testJobs.jobs, reportExtensions, captured };
}

export function cliDeps(clock: Clock, captured = capture()): CliDeps & { captured: Captured } {
  return { ...context(clock, captured), env: {}, signal: new AbortController().signal };
}

/** The target the CLI would resolve, over the emulator's resources. */
export function targetOf(clients: LocalClients, resources: LocalResources): Target {
  return {
    tableName: resources.tableName,
    bucketName: resources.bucketName,
    reader: new OperatorOccurrenceReader(clients.documents, resources.tableName),
    store: new OperatorOccurrenceStore(clients.documents, resources.tableName),
    queue: new SqsWorkQueue(clients.sqs, resources.jobQueueUrl),
    queueUrl: resources.jobQueueUrl,
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
