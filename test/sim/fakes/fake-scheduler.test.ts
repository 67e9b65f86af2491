/**
 * The fake EventBridge Scheduler (sim/fakes/fake-scheduler.ts) answers as the service does where the registry's
 * projection and reconciler can tell: refusals by name, whole-schedule updates, paged listing by name prefix, the
 * one-time schedule that deletes itself, and hand edits that move LastModificationDate.
 */
import {
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { classifyAwsError } from '../../../functions/aws/classify-error';
import { FakeScheduler, schedulerFaults } from '../../../sim/fakes/fake-scheduler';

const GROUP = 'jobs-report';
let now = Date.parse('2026-12-01T00:00:00Z');
let fake: FakeScheduler;
const client = new SchedulerClient({ region: 'eu-central-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });

const schedule = (name: string, over: Partial<CreateScheduleCommandInput> = {}): CreateScheduleCommandInput => ({
  Name: name,
  GroupName: GROUP,
  ScheduleExpression: 'cron(0 8 ? * MON *)',
  ScheduleExpressionTimezone: 'Europe/Berlin',
  FlexibleTimeWindow: { Mode: 'OFF' },
  Target: { Arn: 'arn:trigger', RoleArn: 'arn:role', Input: '{"jobId":"report"}' },
  State: 'ENABLED',
  ...over,
});
const nameOf = (error: unknown) => (error as Error).name;
/** 'ok', or the name of the error the call failed with. */
const outcome = async (input: CreateScheduleCommandInput) => {
  try {
    await client.send(new CreateScheduleCommand(input));
    return 'ok';
  } catch (error) {
    return nameOf(error);
  }
};

beforeEach(() => {
  now = Date.parse('2026-12-01T00:00:00Z');
  fake = new FakeScheduler(() => now);
  fake.addGroup(GROUP);
});
afterEach(() => fake.restore());

describe('the fake Scheduler', () => {
  it('creates once: a second CreateSchedule of the name is a ConflictException, and Update replaces the whole schedule', async () => {
    await client.send(new CreateScheduleCommand(schedule('00.a', { Description: 'first' })));
    const again = await client.send(new CreateScheduleCommand(schedule('00.a'))).catch(nameOf);
    expect(again).toBe('ConflictException');
    now += 1_000;
    await client.send(new UpdateScheduleCommand(schedule('00.a', { State: 'DISABLED' })));
    const got = await client.send(new GetScheduleCommand({ Name: '00.a', GroupName: GROUP }));
    expect(got).toMatchObject({ State: 'DISABLED', ScheduleExpressionTimezone: 'Europe/Berlin' });
    // UpdateSchedule is not a patch: the description it left out is gone.
    expect(got.Description).toBeUndefined();
    expect(got.LastModificationDate?.getTime()).toBe(now);
    expect(got.CreationDate?.getTime()).toBe(now - 1_000);
  });

  it('refuses what is not there, and the refusals classify as the adapters must treat them', async () => {
    const errors = await Promise.all([
      client.send(new UpdateScheduleCommand(schedule('00.gone'))).catch((e) => e),
      client.send(new DeleteScheduleCommand({ Name: '00.gone', GroupName: GROUP })).catch((e) => e),
      client.send(new GetScheduleCommand({ Name: '00.gone', GroupName: GROUP })).catch((e) => e),
      client.send(new CreateScheduleCommand(schedule('00.a', { GroupName: 'no-such-group' }))).catch((e) => e),
      client.send(new CreateScheduleCommand(schedule('bad name/with slash'))).catch((e) => e),
    ]);
    expect(errors.map(nameOf)).toEqual([
      'ResourceNotFoundException',
      'ResourceNotFoundException',
      'ResourceNotFoundException',
      'ResourceNotFoundException',
      'ValidationException',
    ]);
    expect(errors.map(classifyAwsError)).toEqual(['fatal', 'fatal', 'fatal', 'fatal', 'fatal']);
    fake.failNext('CreateSchedule', schedulerFaults.throttled);
    const throttled = await client.send(new CreateScheduleCommand(schedule('00.a'))).catch((e) => e);
    expect([nameOf(throttled), classifyAwsError(throttled)]).toEqual(['ThrottlingException', 'transient']);
    expect(fake.schedulesOf(GROUP)).toEqual([]);
  });

  it('lists by name prefix in pages, every schedule once', async () => {
    for (const name of ['00.a', '00.b', '00.c', '01.a', '0a.x'])
      await client.send(new CreateScheduleCommand(schedule(name)));
    fake.pageSize = 2;
    const names: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await client.send(
        new ListSchedulesCommand({ GroupName: GROUP, NamePrefix: '00.', NextToken: token }),
      );
      names.push(...(page.Schedules ?? []).map((s) => String(s.Name)));
      token = page.NextToken;
      pages++;
    } while (token !== undefined);
    expect(names).toEqual(['00.a', '00.b', '00.c']);
    expect(pages).toBe(2);
  });

  it('deletes an ENABLED one-time schedule with ActionAfterCompletion DELETE once its time (in its zone) has come; a DISABLED one stays', async () => {
    const at = {
      ScheduleExpression: 'at(2026-12-01T02:00:00)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      ActionAfterCompletion: 'DELETE' as const,
    };
    await client.send(new CreateScheduleCommand(schedule('00.once', at)));
    await client.send(new CreateScheduleCommand(schedule('00.paused', { ...at, State: 'DISABLED' })));
    now = Date.parse('2026-12-01T00:59:59Z');
    expect(fake.schedulesOf(GROUP).map((s) => s.Name)).toEqual(['00.once', '00.paused']);
    now = Date.parse('2026-12-01T01:00:00Z');
    expect(fake.schedulesOf(GROUP).map((s) => s.Name)).toEqual(['00.paused']);
    expect(fake.changes.at(-1)).toMatchObject({ name: '00.once', what: 'completed', by: 'service' });
  });

  it('hand edits change the schedule and its LastModificationDate, as the console does', async () => {
    await client.send(new CreateScheduleCommand(schedule('00.a')));
    now += 60_000;
    expect(fake.handDisable(GROUP, '00.a')).toBe(true);
    expect(fake.schedule(GROUP, '00.a')).toMatchObject({ State: 'DISABLED', LastModificationDate: new Date(now) });
    expect(fake.handEdit(GROUP, '00.a', 'rate(1 hour)')).toBe(true);
    expect(fake.handCreate(GROUP, '7f.orphan', 'rate(1 day)', fake.schedule(GROUP, '00.a'))).toBe(true);
    expect(fake.handDelete(GROUP, '00.a')).toBe(true);
    expect(fake.handDelete(GROUP, '00.a')).toBe(false);
    expect(fake.schedulesOf(GROUP).map((s) => s.Name)).toEqual(['7f.orphan']);
    expect(fake.changes.filter((c) => c.by === 'hand').map((c) => c.what)).toEqual([
      'updated',
      'updated',
      'created',
      'deleted',
    ]);
  });

  it('throttles above its request rate, per second', async () => {
    fake.rateLimitPerSecond = 2;
    const results = [];
    for (const name of ['00.a', '00.b', '00.c']) results.push(await outcome(schedule(name)));
    expect(results).toEqual(['ok', 'ok', 'ThrottlingException']);
    now += 1_000;
    expect(await outcome(schedule('00.c'))).toBe('ok');
  });
});
