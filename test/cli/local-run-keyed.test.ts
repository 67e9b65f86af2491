/**
 * Run-time schedules through a kept local run: the run creates the registry and the job's own schedule
 * group under names the template's input agrees with, upserts the schedules it is given and fires them as Scheduler
 * would, and, kept, fires the schedules created later, by the `occurrences --local … schedules` commands or by a
 * user's own `upsertSchedule` code. `run --key` and `backfill --key` record occurrences of one schedule with its key
 * and input; a key the registry does not hold is refused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GetScheduleCommand, GetScheduleGroupCommand } from '@aws-sdk/client-scheduler';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../bin/occurrences/program';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { runJobNow } from '../../functions/protocol/job-control';
import {
  isoSeconds,
  type Occurrence,
  type OccurrenceKey,
  TERMINAL_STATUSES,
} from '../../functions/protocol/occurrence';
import { seriesOf } from '../../functions/protocol/schedule-key';
import { connectJobOperations, connectScheduleOperations, upsertSchedule } from '../../operations';
import { type KeptLocalRun, type LocalFire, runLocally } from '../../testing';
import { writeLocalRunFile } from '../../testing/local/keep';
import { localClients } from '../../testing/local/local-aws';
import { KEYED_JOB, synthKeyedApp } from '../testing/fixtures/keyed-app';
import { cliDeps } from './support';

const assemblyDir = mkdtempSync(path.join(tmpdir(), 'keyed-cdk-out-'));
const file = path.join(assemblyDir, 'local-run.json');
const fires: LocalFire[] = [];
let run: KeptLocalRun;

beforeAll(async () => {
  synthKeyedApp(assemblyDir);
  run = await runLocally({
    assemblyDir,
    copies: 1,
    keep: true,
    runtimeSchedules: [
      { jobId: KEYED_JOB, scheduleKey: 'customer-1', expression: 'cron(0 8 ? * MON *)', input: { plan: 'pro' } },
    ],
    onFire: (fire) => fires.push(fire),
  });
  writeLocalRunFile(run, file);
});
afterAll(async () => {
  await run?.stop();
  rmSync(assemblyDir, { recursive: true, force: true });
});

async function cli(...args: string[]) {
  const deps = { ...cliDeps({ now: () => Date.now() }), env: { USER: 'tester' } };
  const code = await runCli(['--local', file, ...args], deps);
  return { code, out: deps.captured.out.join('\n'), err: deps.captured.err.join('\n') };
}

const clients = () => localClients(run.resources.endpoint);

/** Reads the row until it is terminal (the kept worker runs it), at most 60 s. */
async function settled(key: OccurrenceKey): Promise<Occurrence | undefined> {
  const store = new DynamoOccurrenceStore(clients().documents, run.resources.tableName);
  for (let i = 0; i < 240; i++) {
    const row = await store.get(key);
    if (row !== undefined && TERMINAL_STATUSES.includes(row.status)) return row;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return undefined;
}

/** The first later fire of the key, waiting for the kept run to see its schedule (at most 30 s). */
async function laterFire(scheduleKey: string): Promise<LocalFire | undefined> {
  for (let i = 0; i < 120; i++) {
    const fire = fires.find((f) => f.scheduleKey === scheduleKey);
    if (fire !== undefined) return fire;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return undefined;
}

async function report(row: Occurrence | undefined): Promise<unknown> {
  const object = await clients().s3.send(
    new GetObjectCommand({ Bucket: run.resources.bucketName, Key: row?.reportKey as string }),
  );
  return JSON.parse((await object.Body?.transformToString()) ?? '');
}

describe('a kept local run of a job that takes schedules at run time', () => {
  it('fires the schedule it upserted: the occurrence carries the key and the input, its report is under the key', async () => {
    expect(run.ok).toBe(true);
    const [row] = run.rows;
    expect(row).toMatchObject({ jobId: KEYED_JOB, scheduleKey: 'customer-1', status: 'SUCCEEDED', expected: true });
    expect(row.reportKey).toMatch(new RegExp(`^reports/${KEYED_JOB}/customer-1/`));
    expect(JSON.parse(row.report ?? '')).toEqual({ scheduleKey: 'customer-1', input: { plan: 'pro' } });
    expect(run.resources.registryTableName).toBeDefined();
  });

  it("the template's input names the job's group by the name the run created it under", async () => {
    const scheduler = clients().scheduler;
    const template = await scheduler.send(
      new GetScheduleCommand({ GroupName: run.resources.scheduleGroupName, Name: KEYED_JOB }),
    );
    const group = (JSON.parse(template.Target?.Input ?? '{}') as { keyedScheduleGroup?: string }).keyedScheduleGroup;
    expect(group).toMatch(/-[0-9a-f]{6}$/); // the run's suffix
    expect((await scheduler.send(new GetScheduleGroupCommand({ Name: group }))).State).toBe('ACTIVE');
  });

  it('schedules upsert through --local creates the schedule, and the kept run fires it', async () => {
    const upsert = await cli(
      'schedules',
      'upsert',
      KEYED_JOB,
      'customer-2',
      '--expression',
      'rate(1 day)',
      '--input',
      '{"plan":"free"}',
    );
    expect(upsert.err).toBe('');
    expect(upsert.code).toBe(0);
    expect(upsert.out).toMatch(/^created weekly-digest\/customer-2: rate\(1 day\)/);
    expect((await cli('schedules', 'list', KEYED_JOB)).out).toContain('customer-2');
    const fire = await laterFire('customer-2');
    expect(fire?.outcome).toBe('recorded');
    const row = await settled(fire as LocalFire);
    expect(row?.status).toBe('SUCCEEDED');
    expect(await report(row)).toEqual({ scheduleKey: 'customer-2', input: { plan: 'free' } });
  });

  it("a user's own upsertSchedule at the local endpoints is fired too", async () => {
    const ops = connectScheduleOperations({
      registryTableName: run.resources.registryTableName as string,
      scheduleGroupName: run.resources.scheduleGroupName as string,
      clients: { dynamoDb: clients().dynamo, scheduler: clients().scheduler },
    });
    await upsertSchedule(ops, KEYED_JOB, 'customer-3', { expression: 'cron(0 9 * * ? *)', input: { n: 3 } });
    const fire = await laterFire('customer-3');
    expect((await settled(fire as LocalFire))?.input).toEqual({ n: 3 });
  });

  it('run --key records an occurrence of that schedule now, with its input, and the kept worker runs it', async () => {
    const { code, out, err } = await cli('run', KEYED_JOB, '--key', 'customer-1', '--json');
    expect(err).toBe('');
    expect(code).toBe(0);
    const { scheduledTime } = JSON.parse(out) as { scheduledTime: string };
    const row = await settled({ jobId: KEYED_JOB, scheduleKey: 'customer-1', scheduledTime });
    expect(row).toMatchObject({ status: 'SUCCEEDED', origin: 'run', input: { plan: 'pro' } });
  });

  it("show --key and cancel --key reach one schedule's occurrence; without the key it is not found", async () => {
    const ran = await cli('run', KEYED_JOB, '--key', 'customer-1', '--json');
    const { scheduledTime } = JSON.parse(ran.out) as { scheduledTime: string };
    await settled({ jobId: KEYED_JOB, scheduleKey: 'customer-1', scheduledTime });
    const shown = await cli('show', KEYED_JOB, scheduledTime, '--key', 'customer-1', '--json');
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.out)).toMatchObject({ scheduleKey: 'customer-1', status: 'SUCCEEDED' });
    expect((await cli('show', KEYED_JOB, scheduledTime)).code).not.toBe(0);
    const cancelled = await cli('cancel', KEYED_JOB, scheduledTime, '--key', 'customer-1');
    // A finished occurrence is refused by name: the command found it under its key.
    expect(cancelled.code).toBe(3);
    expect(`${cancelled.out}${cancelled.err}`).toMatch(/SUCCEEDED/);
  });

  it('retry --key reopens a FAILED occurrence of one schedule, which the kept worker finishes; without the key it is not found', async () => {
    const ran = await cli('run', KEYED_JOB, '--key', 'customer-1', '--json');
    const { scheduledTime } = JSON.parse(ran.out) as { scheduledTime: string };
    const key = { jobId: KEYED_JOB, scheduleKey: 'customer-1', scheduledTime };
    expect((await settled(key))?.status).toBe('SUCCEEDED');
    // As if its attempts had run out: the report stays, so the reopened occurrence adopts it.
    await clients().documents.send(
      new UpdateCommand({
        TableName: run.resources.tableName,
        Key: { jobId: seriesOf(key), scheduledTime },
        UpdateExpression: 'SET #status = :failed, lastError = :why',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':failed': 'FAILED', ':why': 'made FAILED by the test' },
      }),
    );
    const keyless = await cli('retry', KEYED_JOB, scheduledTime);
    expect(keyless.code).toBe(3);
    expect(keyless.err).toContain('there is no such occurrence');
    const retried = await cli('retry', KEYED_JOB, scheduledTime, '--key', 'customer-1', '--by', 'alice');
    expect(retried.err).toBe('');
    expect(retried.code).toBe(0);
    expect(retried.out).toContain(`retrying ${KEYED_JOB} schedule customer-1 ${scheduledTime}: it was FAILED`);
    const row = await settled(key);
    expect(row).toMatchObject({ status: 'SUCCEEDED', scheduleKey: 'customer-1', manualRetries: 1 });
  });

  it('run refuses a key the registry does not hold, and a run-time-schedule job without --key, writing nothing', async () => {
    const unknown = await cli('run', KEYED_JOB, '--key', 'nobody');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('--key: job weekly-digest has no schedule nobody in registry');
    const keyless = await cli('run', KEYED_JOB);
    expect(keyless.code).toBe(2);
    expect(keyless.err).toContain('takes schedules at run time: run one of its schedules with --key <scheduleKey>');
  });

  it('backfill --key records the past times of that schedule with its key and input', async () => {
    const from = isoSeconds(Date.now() - 3 * 86_400_000);
    const { code, err, out } = await cli(
      'backfill',
      '--job',
      KEYED_JOB,
      '--key',
      'customer-2',
      '--from',
      from,
      '--to',
      isoSeconds(Date.parse(from) + 86_400_000),
    );
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('backfilled weekly-digest schedule customer-2');
    const list = await cli('list', '--job', KEYED_JOB, '--key', 'customer-2', '--from', '7d', '--json');
    const origins = (JSON.parse(list.out) as Occurrence[]).map((o) => o.origin);
    expect(origins).toContain('backfill');
  });

  it('the library runs one schedule by its key: ops.job(jobId, scheduleKey), then runJobNow', async () => {
    const ops = connectJobOperations({
      tableName: run.resources.tableName,
      scheduleGroupName: run.resources.scheduleGroupName as string,
      registryTableName: run.resources.registryTableName,
      workerQueueUrls: run.resources.workerQueues,
      clients: { dynamoDb: clients().dynamo, scheduler: clients().scheduler, sqs: clients().sqs },
    });
    await expect(ops.job(KEYED_JOB, 'nobody')).rejects.toThrow("job 'weekly-digest' has no schedule with key 'nobody'");
    const job = await ops.job(KEYED_JOB, 'customer-3');
    const result = await runJobNow(ops, job, { by: 'tester' });
    if (result.outcome !== 'recorded') expect.fail(`runJobNow: ${result.outcome}`);
    const row = await settled({ jobId: KEYED_JOB, scheduleKey: 'customer-3', scheduledTime: result.scheduledTime });
    expect(row).toMatchObject({ status: 'SUCCEEDED', input: { n: 3 } });
  });

  it('describe of the job counts its schedules instead of showing the template expression', async () => {
    const { code, out } = await cli('describe', KEYED_JOB);
    expect(code).toBe(0);
    expect(out).toContain('one per schedule key, created at run time: 3 in the registry');
    expect(out).not.toContain('2199');
  });
});
