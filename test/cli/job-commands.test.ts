/**
 * pause, resume, run, describe and backfill --overlap against the emulator, through the command line and the real
 * target: the schedules are moto's Scheduler, the job-state row and the occurrences are in its table, and what the
 * commands enqueue is read back from the worker's queue.
 */
import { CreateScheduleCommand, GetScheduleCommand, type GetScheduleCommandOutput } from '@aws-sdk/client-scheduler';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../bin/occurrences/program';
import { JOB_STATE_SORT_KEY } from '../../functions/protocol/job-state';
import { isoSeconds, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { Clock } from '../../functions/protocol/ports';
import type { RegisteredSchedule } from '../../functions/protocol/schedule-registry-ports';
import { scheduleOperationsOver } from '../../operations/schedules';
import { FakeProjection, FakeRegistry, row as keyedRow, template } from '../protocol/drift-fakes';
import {
  cliDeps,
  deployedFlags,
  GROUP,
  HOURLY,
  messagesIn,
  OTHER,
  putRows,
  schedulerClient,
  useCliEmulator,
  WORKER,
} from './support';

const HOUR = 3600_000;
const emulator = useCliEmulator({ deployed: true });

const flags = () => deployedFlags(emulator);

async function cli(args: string[], clock: Clock = { now: () => Date.now() }, extra: object = {}) {
  const deps = { ...cliDeps(clock), env: { USER: 'tester' }, ...extra };
  const code = await runCli([...args, ...flags()], deps);
  return { code, out: deps.captured.out.join('\n'), err: deps.captured.err.join('\n') };
}

async function schedule(jobId: string): Promise<GetScheduleCommandOutput> {
  const scheduler = schedulerClient(emulator.moto.endpoint);
  try {
    return await scheduler.send(new GetScheduleCommand({ GroupName: GROUP, Name: jobId }));
  } finally {
    scheduler.destroy();
  }
}

/** What UpdateSchedule must keep: everything but the state and the timestamps. */
const definition = ({ State, LastModificationDate, CreationDate, $metadata, ...rest }: GetScheduleCommandOutput) =>
  rest;

async function jobState(jobId: string) {
  const out = await emulator.clients.documents.send(
    new GetCommand({ TableName: emulator.resources.tableName, Key: { jobId, scheduledTime: JOB_STATE_SORT_KEY } }),
  );
  return out.Item;
}

async function jobRows(jobId: string): Promise<Occurrence[]> {
  const out = await emulator.clients.documents.send(
    new QueryCommand({
      TableName: emulator.resources.tableName,
      KeyConditionExpression: 'jobId = :j AND scheduledTime > :state',
      ExpressionAttributeValues: { ':j': jobId, ':state': JOB_STATE_SORT_KEY },
    }),
  );
  return (out.Items ?? []) as Occurrence[];
}

const times = (messages: unknown[]) => messages.map((m) => (m as { scheduledTime: string }).scheduledTime);

describe('pause and resume', () => {
  it("switch the schedule's State and keep its definition; the job-state row records who, when and why", async () => {
    const before = await schedule(HOURLY);
    // One instant for both: no fire time falls between the pause and the resume.
    const clock = { now: () => Date.parse('2026-12-01T09:15:00Z') };
    const paused = await cli(['pause', HOURLY, '--note', 'upstream API down', '--by', 'alice'], clock);
    expect(paused.err).toBe('');
    expect(paused.code).toBe(0);
    expect(paused.out).toMatch(
      /^paused hourly-report since \S+Z by alice: upstream API down; its schedule is DISABLED/,
    );
    const off = await schedule(HOURLY);
    expect(off.State).toBe('DISABLED');
    expect(definition(off)).toEqual(definition(before));
    expect(await jobState(HOURLY)).toMatchObject({
      version: 1,
      pausedBy: 'alice',
      pauseNote: 'upstream API down',
      pauseCause: 'operator',
    });

    const resumed = await cli(['resume', HOURLY], clock);
    expect(resumed.code).toBe(0);
    expect(resumed.out).toContain('resumed hourly-report (paused since');
    expect(resumed.out).toContain('inside the catch-up window (1h 00m): 0 fire time(s), 0 recorded and enqueued');
    expect(resumed.out).toContain('older, inside the retention (7 day(s)): 0 fire time(s)');
    const on = await schedule(HOURLY);
    expect(on.State).toBe('ENABLED');
    expect(definition(on)).toEqual(definition(before));
    const state = await jobState(HOURLY);
    expect(state).toMatchObject({ version: 2, consecutiveFailures: 0, resumedBy: expect.stringMatching(/^tester@/) });
    expect(state?.pausedAt).toBeUndefined();
    expect((await schedule(OTHER)).State).toBe('ENABLED');
  });

  it('resume runs the missed times inside the catch-up window and records older ones as missed', async () => {
    const now = Date.now();
    const pausedAt = Math.floor(now / HOUR) * HOUR - 4 * HOUR - 60_000; // just before the fire of 4 hours ago
    expect((await cli(['pause', HOURLY, '--note', 'n'], { now: () => pausedAt })).code).toBe(0);
    const resumed = await cli(['resume', HOURLY, '--json']);
    expect(resumed.code).toBe(0);
    const result = JSON.parse(resumed.out);
    // The job's window is its deadline (1 h): only the fire of this hour is inside it.
    const thisHour = isoSeconds(Math.floor(now / HOUR) * HOUR);
    expect(result.catchUp).toMatchObject({ runTimes: [thisHour], inWindow: { recorded: 1 }, olderThanRetention: 0 });
    expect(result.catchUp.missed).toEqual({ 'recorded-missed': 4 });
    expect(times(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl))).toEqual([thisHour]);
    const rows = await jobRows(HOURLY);
    expect(rows.filter((r) => r.status === OccurrenceStatus.SKIPPED).map((r) => r.skipReason)).toEqual(
      Array(4).fill('missed'),
    );
    expect(rows.find((r) => r.scheduledTime === thisHour)?.status).toBe(OccurrenceStatus.PENDING);
  });

  it('pause needs a note: a usage error, nothing changed (exit 2)', async () => {
    const result = await cli(['pause', HOURLY]);
    expect(result.code).toBe(2);
    expect(result.err).toContain("required option '--note <text>' not specified");
    expect((await schedule(HOURLY)).State).toBe('ENABLED');
  });
});

describe('run', () => {
  it('writes a row marked as requested at now (whole seconds) and a message on the worker queue', async () => {
    const now = Date.parse('2026-12-01T09:15:42.731Z');
    const result = await cli(['run', HOURLY, '--overlap', 'allowAll', '--by', 'alice'], { now: () => now });
    expect(result.code).toBe(0);
    expect(result.out).toContain(
      'hourly-report 2026-12-01T09:15:42Z recorded and enqueued (overlap allowAll for this one)',
    );
    expect(await jobRows(HOURLY)).toEqual([
      expect.objectContaining({
        scheduledTime: '2026-12-01T09:15:42Z',
        status: OccurrenceStatus.PENDING,
        requestedBy: 'alice',
        origin: 'run',
        overlap: 'allowAll',
        worker: WORKER,
      }),
    ]);
    expect(times(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl))).toEqual(['2026-12-01T09:15:42Z']);
  });

  it('is refused while the job is paused, and writes nothing (exit 3)', async () => {
    await cli(['pause', HOURLY, '--note', 'quota exceeded']);
    const result = await cli(['run', HOURLY]);
    expect(result.code).toBe(3);
    expect(result.err).toContain('refused to run hourly-report: the job is paused');
    expect(result.err).toContain('quota exceeded');
    expect(await jobRows(HOURLY)).toEqual([]);
  });

  it('refuses an unknown overlap policy, naming --overlap (exit 2)', async () => {
    const result = await cli(['run', HOURLY, '--overlap', 'sometimes']);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/--overlap: must be one of skip, bufferOne, bufferAll, cancelOther, allowAll/);
  });
});

describe('describe', () => {
  it("prints the next fire times across Berlin's spring-forward, and the pause with its note", async () => {
    const clock = { now: () => Date.parse('2027-03-25T12:00:00Z') };
    await cli(['pause', OTHER, '--note', 'release freeze', '--by', 'alice'], clock);
    const result = await cli(['describe', OTHER], clock);
    expect(result.code).toBe(0);
    expect(result.out).toContain('cron(30 6 * * ? *) in Europe/Berlin (Scheduler: DISABLED)');
    expect(result.out).toContain('PAUSED since 2027-03-25T12:00:00.000Z by alice: release freeze');
    // 06:30 in Berlin: 05:30Z in CET, 04:30Z from 28 March (CEST).
    expect(result.out).toMatch(/2027-03-27T05:30:00Z\s*│\s*2027-03-27 06:30 GMT\+1/);
    expect(result.out).toMatch(/2027-03-28T04:30:00Z\s*│\s*2027-03-28 06:30 GMT\+2/);
    const json = JSON.parse((await cli(['describe', OTHER, '--json'], clock)).out);
    expect(json.next.slice(0, 4)).toEqual([
      '2027-03-26T05:30:00Z',
      '2027-03-27T05:30:00Z',
      '2027-03-28T04:30:00Z',
      '2027-03-29T04:30:00Z',
    ]);
  });

  it('names the argument and the jobs the group has when the job has no schedule (exit 2)', async () => {
    const result = await cli(['describe', 'nope']);
    expect(result.code).toBe(2);
    expect(result.err).toContain(`<jobId>: job "nope" has no schedule in group ${GROUP}`);
    expect(result.err).toContain('schedules for: hourly-report, other-report');
  });

  it('lists the newest occurrences and counts skipped-for-overlap, missed and failed among them', async () => {
    const now = Date.parse('2026-12-01T12:00:00Z');
    const base = {
      jobId: HOURLY,
      attempt: 1,
      createdAt: '2026-12-01T00:00:00.000Z',
      deadlineAt: '2026-12-02T00:00:00.000Z',
      ttl: 2e9,
    };
    await putRows(emulator.clients, emulator.resources.tableName, [
      { ...base, scheduledTime: '2026-12-01T08:00:00Z', status: 'FAILED', lastError: 'boom' },
      {
        ...base,
        scheduledTime: '2026-12-01T09:00:00Z',
        status: 'SKIPPED',
        skipReason: 'overlap',
        yieldedTo: '2026-12-01T08:00:00Z',
      },
      { ...base, scheduledTime: '2026-12-01T10:00:00Z', status: 'SKIPPED', skipReason: 'missed' },
      {
        ...base,
        scheduledTime: '2026-12-01T11:00:00Z',
        status: 'SUCCEEDED',
        claimedAt: '2026-12-01T11:00:01.000Z',
        succeededAt: '2026-12-01T11:00:09.000Z',
      },
    ]);
    const result = await cli(['describe', HOURLY], { now: () => now });
    expect(result.code).toBe(0);
    expect(result.out).toContain('not paused');
    expect(result.out).toMatch(
      /2026-12-01T11:00:00Z\s*│\s*2026-12-01T11:00:01.000Z\s*│\s*2026-12-01T11:00:09.000Z\s*│\s*SUCCEEDED/,
    );
    expect(result.out).toContain('overlap, yielded to 2026-12-01T08:00:00Z');
    expect(result.out).toContain('among the newest 4 occurrence(s): 1 skipped for overlap, 1 missed, 1 failed');
  });
});

describe('backfill --overlap', () => {
  const range = (now: number) => [
    '--job',
    HOURLY,
    '--from',
    new Date(Math.floor(now / HOUR) * HOUR - 3 * HOUR).toISOString(),
    '--to',
    'now',
  ];

  it('bufferAll (the default) writes the policy and who asked on each row and enqueues them in order', async () => {
    const now = Date.now();
    const result = await cli(['backfill', ...range(now), '--by', 'alice']);
    expect(result.code).toBe(0);
    expect(result.out).toContain('the new ones have overlap bufferAll: the worker starts them one at a time');
    const expected = [3, 2, 1, 0].map((h) => isoSeconds(Math.floor(now / HOUR) * HOUR - h * HOUR));
    const rows = await jobRows(HOURLY);
    expect(rows.map((r) => r.scheduledTime)).toEqual(expected);
    for (const r of rows) expect(r).toMatchObject({ overlap: 'bufferAll', origin: 'backfill', requestedBy: 'alice' });
    expect(times(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl))).toEqual(expected);
  });

  it('allowAll keeps at most --concurrency of them unfinished at once', async () => {
    const now = Date.now();
    let mostUnfinished = 0;
    // Each wait of the backfill: count the unfinished rows, then let the oldest one finish, as a worker would.
    const sleep = async () => {
      const unfinished = (await jobRows(HOURLY)).filter((r) => r.status === OccurrenceStatus.PENDING);
      mostUnfinished = Math.max(mostUnfinished, unfinished.length);
      const [oldest] = unfinished.sort((a, b) => a.scheduledTime.localeCompare(b.scheduledTime));
      await putRows(emulator.clients, emulator.resources.tableName, [
        { ...oldest, status: OccurrenceStatus.SUCCEEDED },
      ]);
    };
    const result = await cli(['backfill', ...range(now), '--overlap', 'allowAll', '--concurrency', '2'], undefined, {
      sleep,
    });
    expect(result.code).toBe(0);
    expect(mostUnfinished).toBe(2);
    expect((await jobRows(HOURLY)).map((r) => r.overlap)).toEqual(Array(4).fill('allowAll'));
  });

  it('refuses --concurrency with any policy but allowAll (exit 2), before writing', async () => {
    const result = await cli(['backfill', ...range(Date.now()), '--concurrency', '4']);
    expect(result.code).toBe(2);
    expect(result.err).toContain('--concurrency: applies to --overlap allowAll only');
    expect(await jobRows(HOURLY)).toEqual([]);
  });
});

describe('describe --key (one schedule of a job that takes schedules at run time)', () => {
  const KEYED = 'keyed-report';

  /** The job's template in the stack group (DISABLED), a registry of fakes holding `rows`, and the CLI over both. */
  async function keyedWorld(rows: RegisteredSchedule[]) {
    const route = { worker: WORKER, deadlineSeconds: 3600, retentionDays: 30, keyedScheduleGroup: 'keyed-group' };
    const scheduler = schedulerClient(emulator.moto.endpoint);
    try {
      await scheduler.send(
        new CreateScheduleCommand({
          GroupName: GROUP,
          Name: KEYED,
          ScheduleExpression: 'cron(0 0 1 1 ? 2199)',
          State: 'DISABLED',
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: {
            Arn: 'arn:aws:lambda:us-east-1:123456789012:function:trigger',
            RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
            Input: JSON.stringify({ jobId: KEYED, scheduledTime: '<aws.scheduler.scheduled-time>', ...route }),
          },
        }),
      );
    } catch (error) {
      if ((error as Error).name !== 'ConflictException') throw error; // an earlier test made it
    } finally {
      scheduler.destroy();
    }
    const registry = new FakeRegistry();
    registry.add(...rows);
    const projection = new FakeProjection(() => Date.now());
    projection.templates.set(KEYED, template(KEYED));
    const connectSchedules = async () => ({
      ops: scheduleOperationsOver({ registry, projection, clock: { now: () => Date.now() } }),
      where: 'registry fake',
    });
    return (args: string[], clock: Clock) => cli(args, clock, { connectSchedules });
  }

  it("describes that schedule's expression, next times, pause after failures and newest occurrences", async () => {
    const now = Date.parse('2026-12-01T12:00:00Z');
    const clock = { now: () => now };
    const cliOf = await keyedWorld([keyedRow(KEYED, 'cust-42', 0, now, { expression: 'cron(0 8 ? * MON *)' })]);
    await putRows(emulator.clients, emulator.resources.tableName, [
      {
        jobId: `${KEYED}#cust-42`,
        scheduleKey: 'cust-42',
        scheduledTime: '2026-11-30T07:00:00Z',
        status: 'FAILED',
        attempt: 1,
        lastError: 'no data',
        createdAt: '2026-11-30T07:00:00.000Z',
        deadlineAt: '2026-11-30T08:00:00.000Z',
        ttl: 2e9,
      } as Occurrence,
    ]);
    await emulator.clients.documents.send(
      new PutCommand({
        TableName: emulator.resources.tableName,
        Item: {
          jobId: `${KEYED}#cust-42`,
          scheduledTime: JOB_STATE_SORT_KEY,
          version: 1,
          pausedAt: '2026-11-30T07:01:00.000Z',
          pausedBy: 'pauseAfterFailures',
          pauseCause: 'failures',
          pauseNote: 'paused after 1 FAILED occurrences in a row; last: no data',
        },
      }),
    );

    const json = JSON.parse((await cliOf(['describe', KEYED, '--key', 'cust-42', '--json'], clock)).out);

    expect(json.job).toMatchObject({ id: KEYED, scheduleKey: 'cust-42', schedule: 'cron(0 8 ? * MON *)' });
    expect(json.next[0]).toBe('2026-12-07T07:00:00Z'); // Monday 08:00 in Paris
    expect(json.paused).toBe(true);
    expect(json.state.pauseCause).toBe('failures');
    expect(json.recent.map((o: Occurrence) => `${o.scheduleKey} ${o.status}`)).toEqual(['cust-42 FAILED']);
  });

  it('names --key when the key has no schedule, or the job has a fixed one (exit 2)', async () => {
    const clock = { now: () => Date.now() };
    const cliOf = await keyedWorld([]);
    const missing = await cliOf(['describe', KEYED, '--key', 'nobody'], clock);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(`--key: job ${KEYED} has no schedule nobody`);
    const fixed = await cli(['describe', HOURLY, '--key', 'cust-1'], clock);
    expect(fixed.code).toBe(2);
    expect(fixed.err).toContain(`--key: job ${HOURLY} has a fixed schedule`);
  });
});
