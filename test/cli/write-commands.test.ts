/**
 * retry and backfill against the emulator, with the real trigger logic, worker and notifier of the local pipeline
 * processing what the CLI enqueues: a retried occurrence really runs again, a backfilled one runs once.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../bin/occurrences/program';
import type { ManualRetryFields } from '../../functions/protocol/manual-retry';
import { isoSeconds, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { JobDefinition } from '../../functions/protocol/ports';
import { type MotoServer, startMotoServer } from '../../scripts/local/moto-server';
import { LocalPipeline } from '../../scripts/local/pipeline';
import { indexed } from '../aws/fixtures';
import { cliDeps, HOURLY, OTHER, putRows, row, testJobs } from './support';

const { RUNNING, SUCCEEDED, FAILED } = OccurrenceStatus;
const HOUR = 3600_000;
/** The pipeline's handlers use the real clock, so the CLI's clock is the real one too (read, never asserted on). */
const clock = { now: () => Date.now() };

/** Fails the occurrences listed here, so that one can be FAILED and then retried. */
const failing = new Set<string>();
const hourlyJob: JobDefinition = {
  reportExtension: 'txt',
  async run(occurrence) {
    if (failing.has(occurrence.scheduledTime)) throw new Error(`upstream unavailable for ${occurrence.scheduledTime}`);
    return { body: `report for ${occurrence.scheduledTime}`, contentType: 'text/plain' };
  },
};

let moto: MotoServer;
let pipeline: LocalPipeline;

beforeAll(async () => {
  moto = await startMotoServer();
});
afterAll(async () => moto?.stop());
beforeEach(async () => {
  await moto.reset();
  failing.clear();
  pipeline = await LocalPipeline.create({
    endpoint: moto.endpoint,
    settings: testJobs.settings,
    jobs: { [HOURLY]: hourlyJob, [OTHER]: hourlyJob },
    workers: 1,
    log: () => undefined,
  });
});
afterEach(async () => pipeline.stop());

const flags = () => [
  '--table',
  pipeline.resources.tableName,
  '--queue-url',
  pipeline.resources.jobQueueUrl,
  '--endpoint',
  moto.endpoint,
];

async function cli(...args: string[]) {
  const deps = cliDeps(clock);
  const code = await runCli([...args, ...flags()], deps);
  return { code, out: deps.captured.out.join('\n'), err: deps.captured.err.join('\n') };
}

async function jobRows(jobId: string): Promise<Array<Occurrence & ManualRetryFields>> {
  const out = await pipeline.clients.documents.send(
    new QueryCommand({
      TableName: pipeline.resources.tableName,
      KeyConditionExpression: 'jobId = :j',
      ExpressionAttributeValues: { ':j': jobId },
    }),
  );
  return (out.Items ?? []) as Array<Occurrence & ManualRetryFields>;
}

async function messagesInQueue(): Promise<number> {
  const a = await pipeline.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: pipeline.resources.jobQueueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(a.Attributes?.ApproximateNumberOfMessages) + Number(a.Attributes?.ApproximateNumberOfMessagesNotVisible)
  );
}

describe('retry', () => {
  it('reopens a FAILED occurrence; the worker runs it again and it SUCCEEDS, announced once', async () => {
    const key = { jobId: HOURLY, scheduledTime: isoSeconds(Math.floor(Date.now() / HOUR) * HOUR) };
    failing.add(key.scheduledTime);
    pipeline.start();
    await pipeline.fire([key]);
    const [failed] = await pipeline.waitUntilSettled([key], 15_000);
    expect(failed).toMatchObject({
      status: FAILED,
      attempt: 1,
      lastError: expect.stringContaining('upstream unavailable'),
    });

    failing.clear();
    // The time in another zone names the same occurrence.
    const berlin = new Date(Date.parse(key.scheduledTime) + HOUR).toISOString().replace('.000Z', '+01:00');
    const retried = await cli('retry', HOURLY, berlin);

    expect(retried).toMatchObject({ code: 0, err: '' });
    expect(retried.out).toContain(`retrying ${HOURLY} ${key.scheduledTime}: it was FAILED after 1 attempt(s)`);
    const [done] = await pipeline.waitUntilSettled([key], 15_000);
    expect(done).toMatchObject({
      status: SUCCEEDED,
      attempt: 1,
      previousAttempts: 1,
      manualRetries: 1,
      reportKey: `reports/${HOURLY}/${key.scheduledTime}.txt`,
    });
    expect(done).not.toHaveProperty('failedAt');
    expect(await pipeline.reportKeys()).toEqual([`reports/${HOURLY}/${key.scheduledTime}.txt`]);
    expect(await pipeline.drainAnnouncements()).toHaveLength(1);
  });

  it('refuses a SUCCEEDED occurrence even with --force, changes nothing and enqueues nothing (exit 3)', async () => {
    const now = Date.now();
    const done = row(HOURLY, '2026-11-30T06:00:00Z', SUCCEEDED, now, {
      reportKey: 'reports/hourly-report/2026-11-30T06:00:00Z.txt',
    });
    await putRows(pipeline.clients, pipeline.resources.tableName, [done]);

    const result = await cli('retry', HOURLY, '2026-11-30T06:00:00Z', '--force');

    expect(result.code).toBe(3);
    expect(result.err).toMatch(
      /^refused to retry hourly-report 2026-11-30T06:00:00Z: it SUCCEEDED and its report is at .*Not even with --force/,
    );
    expect(await jobRows(HOURLY)).toEqual([indexed(done)]);
    expect(await messagesInQueue()).toBe(0);
  });

  it('refuses an occurrence under a live lease even with --force, naming the holder', async () => {
    const now = Date.now();
    const running = row(HOURLY, '2026-11-30T06:00:00Z', RUNNING, now, {
      leaseId: 'l-1',
      leaseOwner: 'worker-7',
      leaseExpiresAt: new Date(now + 60_000).toISOString(),
    });
    await putRows(pipeline.clients, pipeline.resources.tableName, [running]);

    const result = await cli('retry', HOURLY, '2026-11-30T06:00:00Z', '--force');

    expect(result.code).toBe(3);
    expect(result.err).toContain('it is RUNNING: worker-7 holds its lease until');
    expect(await jobRows(HOURLY)).toEqual([indexed(running)]);
    expect(await messagesInQueue()).toBe(0);
  });

  it('with --force enqueues a PENDING occurrence whose message was lost, and the worker runs it', async () => {
    // The row a trigger leaves when its enqueue failed every time: PENDING, and no message.
    const key = { jobId: HOURLY, scheduledTime: isoSeconds(Math.floor(Date.now() / HOUR) * HOUR) };
    const now = Date.now();
    await putRows(pipeline.clients, pipeline.resources.tableName, [
      row(HOURLY, key.scheduledTime, OccurrenceStatus.PENDING, now, { deadlineAt: new Date(now + HOUR).toISOString() }),
    ]);

    const refused = await cli('retry', HOURLY, key.scheduledTime);
    expect(refused.code).toBe(3);
    expect(refused.err).toContain('it is PENDING');
    expect(await messagesInQueue()).toBe(0);

    const forced = await cli('retry', HOURLY, key.scheduledTime, '--force');
    expect(forced).toMatchObject({ code: 0, err: '' });
    expect(forced.out).toContain('enqueued hourly-report');
    pipeline.start();
    const [done] = await pipeline.waitUntilSettled([key], 15_000);
    expect(done).toMatchObject({ status: SUCCEEDED, attempt: 1 });
  });
});

describe('backfill', () => {
  it('records the missed hours once, with deadlines counted from the backfill; running it again changes nothing', async () => {
    const now = Date.now();
    const from = Math.floor(now / HOUR) * HOUR - 4 * HOUR; // five hourly occurrences, the oldest four hours old
    const to = Math.floor(now / HOUR) * HOUR + 1000;
    const expectedTimes = [4, 3, 2, 1, 0].map((h) => isoSeconds(Math.floor(now / HOUR) * HOUR - h * HOUR));
    const range = ['--job', HOURLY, '--from', new Date(from).toISOString(), '--to', new Date(to).toISOString()];

    const dry = await cli('backfill', ...range, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('fires 5 time(s)');
    expect(dry.out).toContain('0 of them already recorded, 5 would be recorded and enqueued');
    expect(dry.out).toContain('nothing was written');
    expect(await jobRows(HOURLY)).toEqual([]);

    const first = await cli('backfill', ...range, '--json');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out)).toEqual({ dryRun: false, jobId: HOURLY, planned: 5, results: { recorded: 5 } });
    const recorded = await jobRows(HOURLY);
    expect(recorded.map((r) => r.scheduledTime)).toEqual(expectedTimes);
    for (const r of recorded) {
      // Counted from the backfill, not from the scheduled time (which would be past for the older ones).
      expect(Date.parse(r.deadlineAt)).toBeGreaterThanOrEqual(now + 3600_000);
    }

    // Again, before any worker ran: no row is written again; the PENDING ones are enqueued again (harmless).
    const second = await cli('backfill', ...range, '--json');
    expect(JSON.parse(second.out).results).toEqual({ 'pending-re-enqueued': 5 });
    expect(await jobRows(HOURLY)).toEqual(recorded);

    pipeline.start();
    const keys = expectedTimes.map((scheduledTime) => ({ jobId: HOURLY, scheduledTime }));
    const settled = await pipeline.waitUntilSettled(keys, 20_000);
    expect(settled.map((r) => [r?.status, r?.attempt])).toEqual(expectedTimes.map(() => [SUCCEEDED, 1]));
    expect(await pipeline.reportKeys()).toHaveLength(5);
    expect(await pipeline.drainAnnouncements()).toHaveLength(5);

    // And after they ran: nothing to do at all.
    const third = await cli('backfill', ...range, '--json');
    expect(JSON.parse(third.out).results).toEqual({ 'duplicate-suppressed': 5 });
    expect((await jobRows(HOURLY)).map((r) => [r.status, r.attempt])).toEqual(expectedTimes.map(() => [SUCCEEDED, 1]));
  });

  it('reports progress once per occurrence', async () => {
    const increments: number[] = [];
    let stopped = 0;
    const deps = {
      ...cliDeps(clock),
      progress: (total: number) => ({
        increment: () => increments.push(total),
        stop: () => {
          stopped++;
        },
      }),
    };

    const code = await runCli(['backfill', '--job', HOURLY, '--from', '3h', ...flags()], deps);

    expect(code).toBe(0);
    const planned = (await jobRows(HOURLY)).length;
    expect(planned).toBeGreaterThanOrEqual(3);
    expect(increments).toEqual(Array(planned).fill(planned));
    expect(stopped).toBe(1);
  });

  it('refuses a range that reaches into the future, writing nothing (exit 2)', async () => {
    const result = await cli(
      'backfill',
      '--job',
      HOURLY,
      '--from',
      '2h',
      '--to',
      new Date(Date.now() + 2 * HOUR).toISOString(),
    );

    expect(result.code).toBe(2);
    expect(result.err).toMatch(
      /--to \(.*\) is in the future: the Scheduler fires those occurrences itself.*\nUsage: occurrences backfill \[options\]/s,
    );
    expect(await jobRows(HOURLY)).toEqual([]);
  });

  it('refuses a range with more occurrences than --max, naming the schedule', async () => {
    const result = await cli('backfill', '--job', HOURLY, '--from', '2d', '--max', '10');

    expect(result.code).toBe(2);
    expect(result.err).toContain('schedule "cron(0 * * * ? *)" fires more than 10 times');
    expect(await jobRows(HOURLY)).toEqual([]);
  });
});
