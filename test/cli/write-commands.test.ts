/**
 * retry and backfill against the emulator, through the command line and the real target: the jobs are read from
 * their schedules in the emulator's Scheduler, each worker's queue is named by --worker-queue, and what the CLI
 * writes is checked where a worker would find it (the row, and the message on the job's own worker queue).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../bin/occurrences/program';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import type { ManualRetryFields } from '../../functions/protocol/manual-retry';
import { isoSeconds, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { indexed } from '../aws/fixtures';
import {
  cliDeps,
  deployedFlags,
  GROUP,
  HOURLY,
  messagesIn,
  OTHER,
  OTHER_WORKER,
  putRows,
  row,
  useCliEmulator,
  WORKER,
} from './support';

const { PENDING, RUNNING, SUCCEEDED, FAILED } = OccurrenceStatus;
const HOUR = 3600_000;
/** The rows' times are checked against the real clock, so the CLI's clock is the real one too. */
const clock = { now: () => Date.now() };

const emulator = useCliEmulator({ deployed: true });

const flags = () => deployedFlags(emulator);

async function cli(args: string[], global = flags()) {
  const deps = cliDeps(clock);
  const code = await runCli([...args, ...global], deps);
  return { code, out: deps.captured.out.join('\n'), err: deps.captured.err.join('\n') };
}

async function jobRows(jobId: string): Promise<Array<Occurrence & ManualRetryFields>> {
  const out = await emulator.clients.documents.send(
    new QueryCommand({
      TableName: emulator.resources.tableName,
      KeyConditionExpression: 'jobId = :j',
      ExpressionAttributeValues: { ':j': jobId },
    }),
  );
  return (out.Items ?? []) as Array<Occurrence & ManualRetryFields>;
}

const envelope = (jobId: string, scheduledTime: string) => JSON.parse(encodeEnvelope({ jobId, scheduledTime }));

describe('retry', () => {
  it("reopens a FAILED occurrence with its schedule's deadline and enqueues it on its worker's queue", async () => {
    const now = Date.now();
    const failed = row(HOURLY, '2026-11-30T06:00:00Z', FAILED, now, {
      lastError: 'Error: upstream unavailable',
      failedAt: '2026-11-30T06:00:04.000Z',
    });
    await putRows(emulator.clients, emulator.resources.tableName, [failed]);

    // The time in another zone names the same occurrence.
    const result = await cli(['retry', HOURLY, '2026-11-30T07:00:00+01:00']);

    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain(
      `retrying ${HOURLY} 2026-11-30T06:00:00Z: it was FAILED after 1 attempt(s) (Error: upstream unavailable)`,
    );
    const [reopened] = await jobRows(HOURLY);
    expect(reopened).toMatchObject({
      status: PENDING,
      attempt: 0,
      previousAttempts: 1,
      manualRetries: 1,
      worker: WORKER,
    });
    expect(reopened).not.toHaveProperty('failedAt');
    // deadlineSeconds 3600 and retentionDays 7 of the schedule's input, counted from the retry.
    expect(Date.parse(reopened.deadlineAt)).toBeGreaterThanOrEqual(now + HOUR);
    expect(Date.parse(reopened.deadlineAt)).toBeLessThan(Date.now() + HOUR + 1000);
    expect(reopened.ttl).toBeGreaterThanOrEqual(Math.floor(now / 1000) + 7 * 86_400);
    expect(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)).toEqual([
      envelope(HOURLY, '2026-11-30T06:00:00Z'),
    ]);
    expect(await messagesIn(emulator.clients, emulator.otherQueueUrl)).toEqual([]);
  });

  it("sends another job's retry to that job's own worker queue", async () => {
    const now = Date.now();
    await putRows(emulator.clients, emulator.resources.tableName, [row(OTHER, '2026-11-30T05:30:00Z', FAILED, now)]);

    const result = await cli(['retry', OTHER, '2026-11-30T05:30:00Z']);

    expect(result.code).toBe(0);
    const [reopened] = await jobRows(OTHER);
    expect(reopened).toMatchObject({ status: PENDING, worker: OTHER_WORKER });
    expect(Date.parse(reopened.deadlineAt)).toBeGreaterThanOrEqual(now + 6 * HOUR);
    expect(await messagesIn(emulator.clients, emulator.otherQueueUrl)).toEqual([
      envelope(OTHER, '2026-11-30T05:30:00Z'),
    ]);
    expect(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)).toEqual([]);
  });

  it('refuses a SUCCEEDED occurrence even with --force, changes nothing and enqueues nothing (exit 3)', async () => {
    const done = row(HOURLY, '2026-11-30T06:00:00Z', SUCCEEDED, Date.now(), {
      reportKey: 'reports/hourly-report/2026-11-30T06:00:00Z.txt',
    });
    await putRows(emulator.clients, emulator.resources.tableName, [done]);

    const result = await cli(['retry', HOURLY, '2026-11-30T06:00:00Z', '--force']);

    expect(result.code).toBe(3);
    expect(result.err).toMatch(
      /^refused to retry hourly-report 2026-11-30T06:00:00Z: it SUCCEEDED and its report is at .*Not even with --force/,
    );
    expect(await jobRows(HOURLY)).toEqual([indexed(done)]);
    expect(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)).toEqual([]);
  });

  it('refuses an occurrence under a live lease even with --force, naming the holder', async () => {
    const now = Date.now();
    const running = row(HOURLY, '2026-11-30T06:00:00Z', RUNNING, now, {
      leaseId: 'l-1',
      leaseOwner: 'worker-7',
      leaseExpiresAt: new Date(now + 60_000).toISOString(),
    });
    await putRows(emulator.clients, emulator.resources.tableName, [running]);

    const result = await cli(['retry', HOURLY, '2026-11-30T06:00:00Z', '--force']);

    expect(result.code).toBe(3);
    expect(result.err).toContain('it is RUNNING: worker-7 holds its lease until');
    expect(await jobRows(HOURLY)).toEqual([indexed(running)]);
    expect(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)).toEqual([]);
  });

  it('with --force enqueues a PENDING occurrence whose message was lost, leaving its row as it was', async () => {
    const scheduledTime = isoSeconds(Math.floor(Date.now() / HOUR) * HOUR);
    const now = Date.now();
    const pending = row(HOURLY, scheduledTime, PENDING, now, { deadlineAt: new Date(now + HOUR).toISOString() });
    await putRows(emulator.clients, emulator.resources.tableName, [pending]);

    const refused = await cli(['retry', HOURLY, scheduledTime]);
    expect(refused.code).toBe(3);
    expect(refused.err).toContain('it is PENDING');
    expect(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)).toEqual([]);

    const forced = await cli(['retry', HOURLY, scheduledTime, '--force']);
    expect(forced).toMatchObject({ code: 0, err: '' });
    expect(forced.out).toContain('enqueued hourly-report');
    expect(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)).toEqual([
      envelope(HOURLY, scheduledTime),
    ]);
    expect(await jobRows(HOURLY)).toEqual([indexed(pending)]);
  });

  it('refuses a job without a schedule (disabled or not deployed), naming the jobs the group has (exit 3)', async () => {
    await putRows(emulator.clients, emulator.resources.tableName, [
      row('retired-report', '2026-11-30T06:00:00Z', FAILED, Date.now()),
    ]);

    const result = await cli(['retry', 'retired-report', '2026-11-30T06:00:00Z']);

    expect(result.code).toBe(3);
    expect(result.err).toBe(
      'refused to retry retired-report 2026-11-30T06:00:00Z: job "retired-report" has no schedule in group ' +
        `${GROUP}: it is disabled or not deployed (the group has schedules for: ${HOURLY}, ${OTHER})`,
    );
    expect((await jobRows('retired-report'))[0]).toMatchObject({ status: FAILED });
  });

  it("refuses, as a usage error, when the job's worker queue is not named; nothing is written", async () => {
    const failed = row(OTHER, '2026-11-30T05:30:00Z', FAILED, Date.now());
    await putRows(emulator.clients, emulator.resources.tableName, [failed]);
    const onlyHourly = flags().filter((f) => !f.startsWith(`${OTHER_WORKER}=`));
    onlyHourly.splice(onlyHourly.lastIndexOf('--worker-queue'), 1);

    const result = await cli(['retry', OTHER, '2026-11-30T05:30:00Z'], onlyHourly);

    expect(result.code).toBe(2);
    expect(result.err).toMatch(
      /^error: the queue of worker "other-report", which runs job "other-report", is unknown \(queues known from --worker-queue: reports\); pass --worker-queue other-report=<queue URL>\nUsage: occurrences retry/,
    );
    expect(await jobRows(OTHER)).toEqual([indexed(failed)]);
  });
});

describe('backfill', () => {
  it('backfills [--from, --to): a fire time exactly at --to is left out, and the output says so', async () => {
    const lastHour = Math.floor(Date.now() / HOUR) * HOUR;
    const [from, to] = [lastHour - 3 * HOUR, lastHour - HOUR].map(isoSeconds);

    const dry = await cli(['backfill', '--job', HOURLY, '--from', from, '--to', to, '--dry-run']);

    expect(dry.code).toBe(0);
    expect(dry.out).toContain(`fires 2 time(s) from ${from} up to ${to} (excluded);`);
    expect(dry.out).toContain(`  ${from}\n  ${isoSeconds(lastHour - 2 * HOUR)}\nnothing was written.`);
    expect(dry.out).not.toContain(`  ${to}`);

    const done = await cli(['backfill', '--job', HOURLY, '--from', from, '--to', to]);
    expect(done.out).toContain(`backfilled ${HOURLY} from ${from} up to ${to} (excluded): 2 occurrence(s)`);
    expect((await jobRows(HOURLY)).map((r) => r.scheduledTime)).toEqual([from, isoSeconds(lastHour - 2 * HOUR)]);
  });

  it('says in its help that --from is included and --to excluded', async () => {
    const help = (await cli(['backfill', '--help'], [])).out.replace(/\s+/g, ' ');
    expect(help).toContain('--from <time> start of the range, included');
    expect(help).toContain('the range is [--from, --to)');
    expect(help).toContain('--to <time> end of the range, excluded: a time exactly at --to is not backfilled');
  });

  it('records the missed hours once, with deadlines counted from the backfill; running it again changes nothing', async () => {
    const now = Date.now();
    const from = Math.floor(now / HOUR) * HOUR - 4 * HOUR; // five hourly occurrences, the oldest four hours old
    const to = Math.floor(now / HOUR) * HOUR + 1000;
    const expectedTimes = [4, 3, 2, 1, 0].map((h) => isoSeconds(Math.floor(now / HOUR) * HOUR - h * HOUR));
    const range = ['--job', HOURLY, '--from', new Date(from).toISOString(), '--to', new Date(to).toISOString()];

    const dry = await cli(['backfill', ...range, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('dry run: cron(0 * * * ? *) (UTC) fires 5 time(s)');
    expect(dry.out).toContain('0 of them already recorded, 5 would be recorded and enqueued');
    expect(dry.out).toContain('nothing was written');
    expect(await jobRows(HOURLY)).toEqual([]);

    const first = await cli(['backfill', ...range, '--json']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out)).toEqual({ dryRun: false, jobId: HOURLY, planned: 5, results: { recorded: 5 } });
    const recorded = await jobRows(HOURLY);
    expect(recorded.map((r) => r.scheduledTime)).toEqual(expectedTimes);
    for (const r of recorded) {
      expect(r).toMatchObject({ status: PENDING, attempt: 0, worker: WORKER });
      // Counted from the backfill, not from the scheduled time (which would be past for the older ones).
      expect(Date.parse(r.deadlineAt)).toBeGreaterThanOrEqual(now + HOUR);
      expect(r.ttl).toBeGreaterThanOrEqual(Math.floor(now / 1000) + 7 * 86_400);
    }
    const enqueued = expectedTimes.map((t) => envelope(HOURLY, t));
    expect(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)).toEqual(
      expect.arrayContaining(enqueued),
    );
    expect(await messagesIn(emulator.clients, emulator.otherQueueUrl)).toEqual([]);

    // Again, before any worker ran: no row is written again; the PENDING ones are enqueued again (harmless).
    const second = await cli(['backfill', ...range, '--json']);
    expect(JSON.parse(second.out).results).toEqual({ 'pending-re-enqueued': 5 });
    expect(await jobRows(HOURLY)).toEqual(recorded);

    // And once they ran: nothing to do at all.
    await putRows(
      emulator.clients,
      emulator.resources.tableName,
      recorded.map((r) => ({ ...r, status: SUCCEEDED, attempt: 1 })),
    );
    const third = await cli(['backfill', ...range, '--json']);
    expect(JSON.parse(third.out).results).toEqual({ 'duplicate-suppressed': 5 });
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

  it('a dry run needs no worker queue', async () => {
    const withoutQueues = [
      '--table',
      emulator.resources.tableName,
      '--schedule-group',
      GROUP,
      '--endpoint',
      emulator.moto.endpoint,
    ];

    const result = await cli(
      ['backfill', '--job', OTHER, '--from', '2026-11-01', '--to', '2026-11-03', '--dry-run'],
      withoutQueues,
    );

    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain('dry run: cron(30 6 * * ? *) (Europe/Berlin) fires 2 time(s)');
    expect(result.out).toContain('  2026-11-01T05:30:00Z\n  2026-11-02T05:30:00Z');
  });

  it('refuses a job without a schedule, naming the jobs the group has (exit 2)', async () => {
    const result = await cli(['backfill', '--job', 'nope', '--from', '1d']);

    expect(result.code).toBe(2);
    expect(result.err).toMatch(
      /^error: --job: job "nope" has no schedule in group test-jobs: it is disabled or not deployed \(the group has schedules for: hourly-report, other-report\)\nUsage: occurrences backfill/,
    );
  });

  it('refuses a range that reaches into the future before connecting, writing nothing (exit 2)', async () => {
    const deps = {
      ...cliDeps(clock),
      connect: () => Promise.reject(new Error('a range in the future must be refused before connecting')),
    };
    const future = new Date(Date.now() + 2 * HOUR).toISOString();

    const code = await runCli(['backfill', '--job', HOURLY, '--from', '2h', '--to', future], deps);

    expect(code).toBe(2);
    expect(deps.captured.err.join('\n')).toMatch(
      /--to \(.*\) is in the future: the Scheduler fires those occurrences itself.*\nUsage: occurrences backfill \[options\]/s,
    );
  });

  it('refuses a range with more occurrences than --max, naming the schedule', async () => {
    const result = await cli(['backfill', '--job', HOURLY, '--from', '2d', '--max', '10']);

    expect(result.code).toBe(2);
    expect(result.err).toContain('schedule "cron(0 * * * ? *)" fires more than 10 times');
    expect(await jobRows(HOURLY)).toEqual([]);
  });
});
