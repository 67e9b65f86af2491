/**
 * A deployed job with a long history, on moto, for the console's benchmark: the occurrence table as the stack defines
 * it, one schedule in a schedule group as a ScheduledJobs deploys it (the CLI's catalogue reads jobs from there), and
 * `count` occurrence rows of that job written with the table's own item shape (table-schema.ts toTableItem and the
 * status index key, as the store writes them) by BatchWriteItem. The rows look like a per-minute job's history: most
 * SUCCEEDED after a few seconds, some retried, some FAILED, some SKIPPED for overlap naming the run they yielded to.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateScheduleCommand, CreateScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { iso, isoSeconds, type Occurrence, OccurrenceStatus, SkipReason } from '../functions/protocol/occurrence';
import { OVERLAP_FIELD } from '../functions/protocol/schedule-event';
import { statusShardOf, toTableItem } from '../functions/protocol/table-schema';
import { workerLimits } from '../functions/protocol/worker-limits';
import { createResources, LOCAL_REGION, type LocalClients, localClients } from '../testing/local/local-aws';

export const BENCH_JOB = 'per-minute-export';
export const BENCH_WORKER = 'exports';
const GROUP = 'console-bench';
const MINUTE = 60_000;
/** BatchWriteItem's most items per request. */
const BATCH = 25;

/** Where the seeded job is: what `occurrences --local <file>` reads, and the range its rows cover. */
export interface SeededJob {
  /** A kept-run file (bin/occurrences/local-target.ts's shape) pointing the CLI at `endpoint`. */
  readonly localFile: string;
  readonly tableName: string;
  readonly jobId: string;
  /** The oldest seeded scheduled time. */
  readonly from: string;
  /** One minute after the newest: the range [from, to) holds exactly the seeded rows. */
  readonly to: string;
  /** The seeded scheduled times, oldest first. */
  readonly times: readonly string[];
}

/**
 * Creates the table, queue and schedule on moto at `motoEndpoint`, seeds `count` rows of one per-minute job ending a
 * minute before `now`, and writes a kept-run file whose endpoint is `consoleEndpoint` (a counting proxy in front of
 * moto, or moto itself).
 */
export async function seedJobHistory(
  motoEndpoint: string,
  consoleEndpoint: string,
  count: number,
  now: number,
): Promise<SeededJob> {
  const clients = localClients(motoEndpoint);
  const resources = await createResources(clients, { limits: workerLimits([]) });
  await createJobSchedule(motoEndpoint);
  const last = Math.floor(now / MINUTE) * MINUTE - MINUTE;
  // Scheduled times in whole seconds, as Scheduler's <aws.scheduler.scheduled-time> has them.
  const times = Array.from({ length: count }, (_, i) => isoSeconds(last - (count - 1 - i) * MINUTE));
  await writeRows(clients, resources.tableName, times.map(historyRow(now)));
  const dir = mkdtempSync(path.join(tmpdir(), 'console-bench-'));
  const localFile = path.join(dir, 'local-run.json');
  const run = {
    endpoint: consoleEndpoint,
    region: LOCAL_REGION,
    tableName: resources.tableName,
    bucketName: resources.bucketName,
    scheduleGroupName: GROUP,
    workerQueues: { [BENCH_WORKER]: resources.jobQueueUrl.replace(motoEndpoint, consoleEndpoint) },
  };
  writeFileSync(localFile, `${JSON.stringify(run, null, 2)}\n`);
  return {
    localFile,
    tableName: resources.tableName,
    jobId: BENCH_JOB,
    from: times[0],
    to: isoSeconds(last + MINUTE),
    times,
  };
}

/** The job's schedule as lib/job-schedules.ts deploys it: named by the job, its route and overlap policy in Target.Input. */
async function createJobSchedule(endpoint: string): Promise<void> {
  const scheduler = new SchedulerClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    await scheduler.send(new CreateScheduleGroupCommand({ Name: GROUP }));
    const input = {
      jobId: BENCH_JOB,
      scheduledTime: '<aws.scheduler.scheduled-time>',
      worker: BENCH_WORKER,
      deadlineSeconds: 3_600,
      retentionDays: 400,
      catchupWindowSeconds: 3_600,
      [OVERLAP_FIELD]: 'skip',
    };
    await scheduler.send(
      new CreateScheduleCommand({
        GroupName: GROUP,
        Name: BENCH_JOB,
        ScheduleExpression: 'rate(1 minute)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        State: 'ENABLED',
        Target: {
          Arn: `arn:aws:lambda:${LOCAL_REGION}:123456789012:function:trigger`,
          RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
          Input: JSON.stringify(input),
        },
      }),
    );
  } finally {
    scheduler.destroy();
  }
}

/** The i-th row of the history: what the trigger and the worker leave in the table for such a run. */
function historyRow(now: number) {
  return (scheduledTime: string, i: number): Occurrence => {
    const at = Date.parse(scheduledTime);
    const base = {
      jobId: BENCH_JOB,
      scheduledTime,
      worker: BENCH_WORKER,
      createdAt: iso(at + 80),
      deadlineAt: iso(at + 3_600_000),
      ttl: Math.floor(now / 1000) + 400 * 86_400,
    };
    if (i % 50 === 7) {
      // Yielded to the run before it, which was still running (overlap `skip`).
      return {
        ...base,
        status: OccurrenceStatus.SKIPPED,
        attempt: 1,
        skipReason: SkipReason.overlap,
        yieldedTo: isoSeconds(at - MINUTE),
        skippedAt: iso(at + 150),
      } as Occurrence;
    }
    const retried = i % 40 === 3;
    const failed = i % 200 === 11;
    const attempt = retried || failed ? 3 : 1;
    const claimedAt = iso(at + 120);
    const endedAt = iso(at + 4_000 + (i % 17) * 1_000);
    const error = 'Error: upstream answered 503';
    const history = Array.from({ length: attempt }, (_, a) => {
      const last = a + 1 === attempt;
      const outcome = !last ? 'retry' : failed ? 'failed' : 'succeeded';
      return {
        attempt: a + 1,
        outcome,
        at: endedAt,
        leaseId: `lease-${i}-${a + 1}`,
        ...(outcome === 'succeeded' ? {} : { error }),
      };
    });
    return {
      ...base,
      attempt,
      claimedAt,
      heartbeatAt: claimedAt,
      leaseId: `lease-${i}-${attempt}`,
      leaseOwner: `2026/12/01/[$LATEST]bench ${i}`,
      history,
      ...(failed
        ? { status: OccurrenceStatus.FAILED, failedAt: endedAt, lastError: error }
        : {
            status: OccurrenceStatus.SUCCEEDED,
            succeededAt: endedAt,
            reportKey: `reports/${BENCH_JOB}/${scheduledTime}.json`,
            notifiedAt: iso(Date.parse(endedAt) + 300),
            notificationId: `message-${i}`,
          }),
    } as Occurrence;
  };
}

/** BatchWriteItem, 25 rows a request, retrying what DynamoDB (moto) hands back unprocessed. */
async function writeRows(clients: LocalClients, tableName: string, rows: readonly Occurrence[]): Promise<void> {
  for (let start = 0; start < rows.length; start += BATCH) {
    let requests = rows.slice(start, start + BATCH).map((row) => ({
      PutRequest: { Item: { ...toTableItem(row), statusShard: statusShardOf(row, row.status) } },
    }));
    for (let round = 0; requests.length > 0; round++) {
      if (round === 5) throw new Error(`BatchWriteItem left ${requests.length} rows unprocessed five times`);
      const out = await clients.documents.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = (out.UnprocessedItems?.[tableName] ?? []) as typeof requests;
    }
  }
}
