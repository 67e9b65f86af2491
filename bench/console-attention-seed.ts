/**
 * A stack for the attention view's measurements on moto (test/console/attention-requests.test.ts counts its requests,
 * bench/console-attention-bench.ts times it): N jobs, each a schedule in one group with a lateAfter and one FAILED
 * occurrence in the last day; the first PAUSED of them paused (schedule DISABLED, job-state row saying who and why),
 * RUNNING of them with a run going on, LATE of them with an occurrence recorded and never started. And the console's
 * attention view on the CLI's real adapters over it, every request counted by command.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateScheduleCommand, CreateScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { attentionView } from '../console/server/attention';
import type { ConsoleDeps } from '../console/server/deps';
import { DynamoJobStateStore } from '../functions/aws/job-state-store';
import { OperatorOccurrenceReader } from '../functions/aws/occurrence-reader';
import { JOB_STATE_SORT_KEY } from '../functions/protocol/job-state';
import { iso, type Occurrence, OccurrenceStatus } from '../functions/protocol/occurrence';
import { expectedStatusShard } from '../functions/protocol/table-schema';
import { SchedulerJobCatalogue } from '../operations';
import { LOCAL_REGION } from '../testing/local/local-aws';

export const ATTENTION_GROUP = 'attention-jobs';
export const PAUSED = 3;
export const RUNNING = 2;
export const LATE = 2;
const LATE_AFTER_SECONDS = 600;

const emulated = (endpoint: string) => ({
  endpoint,
  region: LOCAL_REGION,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

/** The id of the i-th job. */
export const jobIdOf = (i: number) => `job-${String(i).padStart(4, '0')}`;

/** Seeds `jobs` jobs on the emulator at `endpoint` into `table` (see the file's comment). */
export async function seedAttentionStack(endpoint: string, table: string, jobs: number, now: number): Promise<void> {
  const scheduler = new SchedulerClient(emulated(endpoint));
  const dynamo = new DynamoDBClient(emulated(endpoint));
  const documents = DynamoDBDocumentClient.from(dynamo);
  try {
    await scheduler.send(new CreateScheduleGroupCommand({ Name: ATTENTION_GROUP }));
    const hourAgo = (n: number) => `${iso(Math.floor(now / 3_600_000 - n) * 3_600_000).slice(0, 19)}Z`;
    const items: object[] = [];
    for (let i = 0; i < jobs; i++) {
      const jobId = jobIdOf(i);
      const route = {
        worker: 'reports',
        deadlineSeconds: 3600,
        retentionDays: 30,
        lateAfterSeconds: LATE_AFTER_SECONDS,
      };
      await scheduler.send(
        new CreateScheduleCommand({
          GroupName: ATTENTION_GROUP,
          Name: jobId,
          ScheduleExpression: 'rate(1 hour)',
          State: i < PAUSED ? 'DISABLED' : 'ENABLED',
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: {
            Arn: 'arn:aws:lambda:us-east-1:123456789012:function:trigger',
            RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
            Input: JSON.stringify({ jobId, scheduledTime: '<aws.scheduler.scheduled-time>', ...route }),
          },
        }),
      );
      const row = (scheduledTime: string, status: OccurrenceStatus, extra: Partial<Occurrence> = {}) => {
        const occurrence = {
          jobId,
          scheduledTime,
          status,
          attempt: status === OccurrenceStatus.PENDING ? 0 : 1,
          worker: 'reports',
          createdAt: iso(Date.parse(scheduledTime) + 100),
          deadlineAt: iso(now + 86_400_000),
          ...extra,
        } as Occurrence;
        return { ...occurrence, statusShard: expectedStatusShard(occurrence) };
      };
      items.push(row(hourAgo(3), OccurrenceStatus.FAILED, { lastError: 'Error: the upstream said no' }));
      if (i < RUNNING) items.push(row(hourAgo(2), OccurrenceStatus.RUNNING, { claimedAt: iso(now - 600_000) }));
      else if (i < RUNNING + LATE) items.push(row(hourAgo(1), OccurrenceStatus.PENDING));
      if (i < PAUSED) {
        items.push({
          jobId,
          scheduledTime: JOB_STATE_SORT_KEY,
          version: 1,
          pausedAt: iso(now - (4 + i) * 3_600_000),
          pausedBy: 'alice via console',
          pauseNote: 'upstream maintenance',
          pauseCause: 'operator',
        });
      }
    }
    for (let i = 0; i < items.length; i += 25) {
      const batch = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
      await documents.send(new BatchWriteCommand({ RequestItems: { [table]: batch } }));
    }
  } finally {
    scheduler.destroy();
    dynamo.destroy();
  }
}

/** The attention view over the last day on the CLI's adapters, counting each request by command name into `counts`. */
export async function countedAttentionView(
  endpoint: string,
  table: string,
  now: number,
  counts: Map<string, number>,
): Promise<Awaited<ReturnType<typeof attentionView>>> {
  const dynamo = counted(new DynamoDBClient(emulated(endpoint)), counts);
  const scheduler = counted(new SchedulerClient(emulated(endpoint)), counts);
  const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const index = new OperatorOccurrenceReader(documents, table);
  // Only the ports the view reads: the catalogue, the job-state rows, the status index and the clock.
  const deps = {
    clock: { now: () => now },
    jobs: new SchedulerJobCatalogue(scheduler, ATTENTION_GROUP),
    states: new DynamoJobStateStore(documents, table),
    index,
  } as unknown as ConsoleDeps & { readonly index: OperatorOccurrenceReader };
  try {
    return await attentionView(deps, { from: iso(now - 86_400_000), to: iso(now + 1000) });
  } finally {
    dynamo.destroy();
    scheduler.destroy();
  }
}

/** Counts each command a client sends, by name (QueryCommand, ListSchedulesCommand, …). */
export function counted<C extends DynamoDBClient | SchedulerClient>(client: C, counts: Map<string, number>): C {
  const count =
    (next: (args: unknown) => Promise<unknown>, context: { readonly commandName?: string }) => (args: unknown) => {
      const name = String(context.commandName);
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return next(args);
    };
  (client.middlewareStack as unknown as { add(m: unknown, o: object): void }).add(count, {
    step: 'initialize',
    name: 'countRequests',
  });
  return client;
}
