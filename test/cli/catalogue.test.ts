/**
 * The job catalogue (bin/occurrences/catalogue.ts): the deployed jobs read from their schedules in the emulator's
 * Scheduler, as lib/job-schedules.ts creates them; a schedule whose input is not a schedule event, a missing group,
 * and a failing Scheduler (mocked) each get their own clear message.
 */
import {
  GetScheduleCommand,
  ListSchedulesCommand,
  SchedulerClient,
  ThrottlingException,
} from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DeployedJob, SchedulerJobCatalogue, unknownJobMessage } from '../../bin/occurrences/catalogue';
import { ScheduleInputError, UsageError } from '../../bin/occurrences/errors';
import { runCli } from '../../bin/occurrences/program';
import type { Target } from '../../bin/occurrences/target';
import { DependencyError } from '../../functions/protocol/errors';
import { DEADLINE_SECONDS_RANGE } from '../../functions/protocol/job-settings';
import { type MotoServer, startMotoServer } from '../../testing/local/moto-server';
import {
  cliDeps,
  createSchedules,
  GROUP,
  HOURLY,
  hourlyJob,
  memoryCatalogue,
  OTHER,
  otherJob,
  schedulerClient,
  testJobs,
} from './support';

const MAX_DEADLINE = DEADLINE_SECONDS_RANGE.max;
let moto: MotoServer;
let catalogue: SchedulerJobCatalogue;

beforeAll(async () => {
  moto = await startMotoServer();
});
afterAll(async () => moto?.stop());
beforeEach(async () => {
  await moto.reset();
  catalogue = new SchedulerJobCatalogue(schedulerClient(moto.endpoint), GROUP);
});

const input = (fields: Record<string, unknown>) =>
  JSON.stringify({ jobId: HOURLY, scheduledTime: '<aws.scheduler.scheduled-time>', ...fields });

/** The error `job(HOURLY)` throws when HOURLY's schedule has `raw` as its input. */
async function inputError(raw: string): Promise<unknown> {
  await createSchedules(moto.endpoint, [hourlyJob], { input: { [HOURLY]: raw } });
  return catalogue.job(HOURLY).then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('Class: SchedulerJobCatalogue', () => {
  describe('Method: job', () => {
    it("reads a job's expression, time zone and route from its schedule", async () => {
      await createSchedules(moto.endpoint, testJobs);

      expect(await catalogue.job(HOURLY)).toEqual(hourlyJob);
      expect(await catalogue.job(OTHER)).toEqual(otherJob);
    });

    it("reads the job's overlap policy from its schedule's input; one deployed without it has none", async () => {
      const raw = input({ worker: 'reports', deadlineSeconds: 3600, retentionDays: 7, overlap: 'bufferAll' });
      await createSchedules(moto.endpoint, [hourlyJob], { input: { [HOURLY]: raw } });

      expect((await catalogue.job(HOURLY))?.overlap).toBe('bufferAll');
      await createSchedules(moto.endpoint, [hourlyJob], {
        input: { [HOURLY]: input({ worker: 'reports', deadlineSeconds: 3600, retentionDays: 7 }) },
      });
      expect(await catalogue.job(HOURLY)).not.toHaveProperty('overlap');
    });

    it('keeps a schedule disabled in Scheduler as a job, with its state; without a time zone it is UTC', async () => {
      const paused: DeployedJob = { ...otherJob, state: 'DISABLED', timeZone: '' };
      await createSchedules(moto.endpoint, [paused]);

      expect(await catalogue.job(OTHER)).toEqual({ ...otherJob, state: 'DISABLED', timeZone: 'UTC' });
    });

    it('gives undefined for a job without a schedule: disabled in the app, or not deployed', async () => {
      await createSchedules(moto.endpoint, testJobs);

      expect(await catalogue.job('retired-report')).toBeUndefined();
      expect(await unknownJobMessage(catalogue, 'retired-report')).toBe(
        `job "retired-report" has no schedule in group ${GROUP}: it is disabled or not deployed ` +
          `(the group has schedules for: ${HOURLY}, ${OTHER})`,
      );
    });

    it('says the schedule group does not exist, as a usage error', async () => {
      const error = await catalogue.job(HOURLY).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe(
        `schedule group ${GROUP} does not exist in this account and region; ` +
          'pass --schedule-group <name>, or --stack with the stack that deploys the jobs',
      );
    });

    it.each<[string, string, string]>([
      [
        'every wrong route field at once',
        input({ worker: 'my worker', deadlineSeconds: 10, retentionDays: '7' }),
        'worker must be a job or worker id, got "my worker"; ' +
          `deadlineSeconds must be a whole number from 60 to ${MAX_DEADLINE}, got 10; ` +
          'retentionDays must be a whole number from 1 to 3650, got "7"',
      ],
      [
        'missing fields',
        JSON.stringify({ jobId: HOURLY }),
        'worker must be a job or worker id, got nothing; ' +
          `deadlineSeconds must be a whole number from 60 to ${MAX_DEADLINE}, got nothing; ` +
          'retentionDays must be a whole number from 1 to 3650, got nothing',
      ],
      ['an input that is not JSON', '{"jobId": ', 'it is not JSON: "{\\"jobId\\": "'],
      ['an input that is not an object', '[1, 2]', 'it must be a JSON object, got an array'],
      [
        'another job id than the schedule name',
        input({ jobId: OTHER, worker: 'reports', deadlineSeconds: 3600, retentionDays: 7 }),
        `jobId "${OTHER}" is not the schedule's name "${HOURLY}"`,
      ],
      [
        'an overlap policy that is not one',
        input({ worker: 'reports', deadlineSeconds: 3600, retentionDays: 7, overlap: 'queue' }),
        'overlap must be one of skip, bufferOne, bufferAll, cancelOther, allowAll',
      ],
      [
        'a retention that does not outlive the deadline',
        input({ worker: 'reports', deadlineSeconds: 172_800, retentionDays: 2 }),
        'retentionDays (2) must outlive deadlineSeconds (172800)',
      ],
    ])('refuses a schedule whose input is not a schedule event: %s', async (_, raw, problems) => {
      const error = await inputError(raw);

      expect(error).toBeInstanceOf(ScheduleInputError);
      expect((error as Error).message).toBe(
        `schedule ${HOURLY} in group ${GROUP}: Target.Input is not a schedule event: ${problems}`,
      );
    });

    it('a command that meets such a schedule ends with its message and exit code 1', async () => {
      await createSchedules(moto.endpoint, [hourlyJob], { input: { [HOURLY]: input({ worker: 'reports' }) } });
      const deps = cliDeps({ now: () => Date.parse('2026-11-30T12:00:00Z') });
      const flags = ['--table', 'occurrences', '--schedule-group', GROUP, '--endpoint', moto.endpoint];

      const code = await runCli(['backfill', '--job', HOURLY, '--from', '3h', '--dry-run', ...flags], deps);

      expect(code).toBe(1);
      expect(deps.captured.err).toEqual([
        `error: ScheduleInputError: schedule ${HOURLY} in group ${GROUP}: Target.Input is not a schedule event: ` +
          `deadlineSeconds must be a whole number from 60 to ${MAX_DEADLINE}, got nothing; ` +
          'retentionDays must be a whole number from 1 to 3650, got nothing',
      ]);
    });
  });

  describe('Method: jobIds', () => {
    it("lists the group's schedules, sorted", async () => {
      await createSchedules(moto.endpoint, [otherJob, hourlyJob]);

      expect(await catalogue.jobIds()).toEqual([HOURLY, OTHER]);
    });

    it('says when the group has none', async () => {
      await createSchedules(moto.endpoint, []);

      expect(await unknownJobMessage(catalogue, HOURLY)).toBe(
        `job "${HOURLY}" has no schedule in group ${GROUP}: it is disabled or not deployed (the group has no schedules)`,
      );
    });
  });
});

describe('a failing Scheduler (mocked)', () => {
  const client = new SchedulerClient({ region: 'eu-west-1' });
  const scheduler = mockClient(client);
  const mocked = new SchedulerJobCatalogue(client, GROUP);
  const throttled = () =>
    new ThrottlingException({ message: 'Rate exceeded', Message: 'Rate exceeded', $metadata: { httpStatusCode: 429 } });

  beforeEach(() => {
    scheduler.reset();
  });

  it('classifies a failed GetSchedule and names the call', async () => {
    scheduler.on(GetScheduleCommand).rejects(throttled());

    const error = await mocked.job(HOURLY).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'transient' });
    expect((error as Error).message).toBe(
      `read schedule ${HOURLY} in group ${GROUP} failed (transient): ThrottlingException: Rate exceeded`,
    );
  });

  it('reads every page of ListSchedules, and classifies a failed one', async () => {
    scheduler
      .on(ListSchedulesCommand)
      .resolvesOnce({ Schedules: [{ Name: OTHER }], NextToken: 'page-2' })
      .resolvesOnce({ Schedules: [{ Name: HOURLY }] });

    expect(await mocked.jobIds()).toEqual([HOURLY, OTHER]);
    expect(scheduler).toHaveReceivedCommandWith(ListSchedulesCommand, { GroupName: GROUP, NextToken: 'page-2' });

    scheduler.on(ListSchedulesCommand).rejects(throttled());
    await expect(mocked.jobIds()).rejects.toThrow(
      `list the schedules of group ${GROUP} failed (transient): ThrottlingException: Rate exceeded`,
    );
  });

  it('ends a command with exit code 1 and says that running it again may succeed', async () => {
    scheduler.on(GetScheduleCommand).rejects(throttled());
    const deps = {
      ...cliDeps({ now: () => Date.parse('2026-11-30T12:00:00Z') }),
      connect: async () => ({ where: 'table t', store: {}, jobs: mocked }) as unknown as Target,
    };

    const code = await runCli(['backfill', '--job', HOURLY, '--from', '3h', '--dry-run'], deps);

    expect(code).toBe(1);
    expect(deps.captured.err).toEqual([
      `error: read schedule ${HOURLY} in group ${GROUP} failed (transient): ThrottlingException: Rate exceeded`,
      '(a transient failure: running the command again may succeed)',
    ]);
  });

  it('the in-memory catalogue the other tests use answers as the Scheduler one does', async () => {
    expect(await memoryCatalogue().job(HOURLY)).toEqual(hourlyJob);
    expect(await memoryCatalogue().job('nope')).toBeUndefined();
    expect(await memoryCatalogue().jobIds()).toEqual([HOURLY, OTHER]);
  });
});
