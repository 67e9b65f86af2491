/**
 * The attention view's requests on moto at 10, 100 and 1,000 jobs (console/server/attention.ts, on the CLI's real
 * adapters): the DynamoDB and Scheduler requests one view makes, counted by command on the clients, do not grow with
 * the number of jobs. Each stack has one FAILED occurrence per job, plus the same few RUNNING, late and paused ones.
 * Counts, never times: the times are bench/console-bench.ts's.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { SchedulerJobCatalogue } from '../../bin/occurrences/catalogue';
import { attentionView } from '../../console/server/attention';
import type { ConsoleDeps } from '../../console/server/deps';
import { DynamoJobStateStore } from '../../functions/aws/job-state-store';
import { OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';
import type { DeployedJob } from '../../functions/protocol/job-control';
import { JOB_STATE_SORT_KEY } from '../../functions/protocol/job-state';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import { STATUS_INDEX_SHARDS } from '../../functions/protocol/table-schema';
import { LOCAL_REGION } from '../../testing/local/local-aws';
import { createSchedules, GROUP, hourlyJob, putRows, row, useCliEmulator } from '../cli/support';

const emulator = useCliEmulator();

/** Counts each command a client sends, by name (QueryCommand, ListSchedulesCommand, …). */
function counted<C extends DynamoDBClient | SchedulerClient>(client: C, counts: Map<string, number>): C {
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

const PAUSED = 3;
const RUNNING = 2;
const LATE = 2;

/** N jobs on moto: N schedules (PAUSED of them DISABLED, with a paused job-state row), one FAILED row per job. */
async function seed(jobs: number, now: number): Promise<void> {
  const deployed: DeployedJob[] = Array.from({ length: jobs }, (_, i) => ({
    ...hourlyJob,
    id: `job-${String(i).padStart(4, '0')}`,
    state: i < PAUSED ? 'DISABLED' : 'ENABLED',
    route: { ...hourlyJob.route, lateAfterSeconds: 600 },
  }));
  await createSchedules(emulator.moto.endpoint, deployed);
  const hourAgo = (n: number) => `${new Date(Math.floor(now / 3_600_000 - n) * 3_600_000).toISOString().slice(0, 19)}Z`;
  const rows = deployed.flatMap((job, i) => [
    row(job.id, hourAgo(3), OccurrenceStatus.FAILED, now, { lastError: 'Error: no' }),
    ...(i < RUNNING ? [row(job.id, hourAgo(2), OccurrenceStatus.RUNNING, now, { claimedAt: hourAgo(2) })] : []),
    ...(i >= RUNNING && i < RUNNING + LATE ? [row(job.id, hourAgo(1), OccurrenceStatus.PENDING, now)] : []),
  ]);
  await putRows(emulator.clients, emulator.resources.tableName, rows);
  for (const job of deployed.slice(0, PAUSED)) {
    await emulator.clients.documents.send(
      new PutCommand({
        TableName: emulator.resources.tableName,
        Item: {
          jobId: job.id,
          scheduledTime: JOB_STATE_SORT_KEY,
          version: 1,
          pausedAt: hourAgo(4).replace('Z', '.000Z'),
          pausedBy: 'alice',
          pauseNote: 'maintenance',
          pauseCause: 'operator',
        },
      }),
    );
  }
}

describe('the attention view on moto', () => {
  it.each([10, 100, 1_000])('makes the same DynamoDB and Scheduler requests at %i jobs', async (jobs) => {
    const now = Date.now();
    await seed(jobs, now);
    const counts = new Map<string, number>();
    const emulated = {
      endpoint: emulator.moto.endpoint,
      region: LOCAL_REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    };
    const dynamo = counted(new DynamoDBClient(emulated), counts);
    const scheduler = counted(new SchedulerClient(emulated), counts);
    const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
    const table = emulator.resources.tableName;
    const deps = {
      clock: { now: () => now },
      jobs: new SchedulerJobCatalogue(scheduler, GROUP),
      states: new DynamoJobStateStore(documents, table),
      index: new OperatorOccurrenceReader(documents, table),
    } as unknown as ConsoleDeps & { index: OperatorOccurrenceReader };
    try {
      const view = await attentionView(deps, {
        from: new Date(now - 86_400_000).toISOString(),
        to: new Date(now + 1000).toISOString(),
      });
      expect(view.total).toEqual({ FAILED: jobs, RUNNING: RUNNING, PENDING: LATE });
      expect(view.paused).toHaveLength(PAUSED);
      // FAILED first: at 1,000 jobs they fill the list, and the counts still cover every one.
      expect(view.items.filter((i) => i.kind === 'late')).toHaveLength(jobs < 200 ? LATE : 0);
      expect(view.truncated).toBe(jobs + RUNNING + LATE > 200);
      const byName = Object.fromEntries(counts);
      // Every OPEN and FAILED shard once; no shard holds a second page (1,000 FAILED over 128 shards).
      expect(byName.QueryCommand).toBe(2 * STATUS_INDEX_SHARDS);
      // The FAILED and RUNNING rows listed (at most 200 FAILED): up to 100 keys a request.
      expect(byName.BatchGetItemCommand).toBe(Math.ceil((Math.min(jobs, 200) + RUNNING) / 100));
      // The paused jobs: ListSchedules of the DISABLED schedules only (one page here), their job-state rows.
      expect(byName.ListSchedulesCommand).toBe(1);
      expect(byName.GetItemCommand).toBe(PAUSED);
      // The lateAfter of the jobs with a waiting occurrence only.
      expect(byName.GetScheduleCommand).toBe(LATE);
      console.log(`attention view on moto at ${jobs} jobs: ${JSON.stringify(byName)}`);
    } finally {
      dynamo.destroy();
      scheduler.destroy();
    }
  });
});
