import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  ResourceNotFoundException,
  SchedulerClient,
  ThrottlingException,
  UpdateScheduleCommand,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { projectedStartDate, SchedulerProjection } from '../../functions/aws/scheduler-projection';
import { DependencyError } from '../../functions/protocol/errors';
import { newRow, validateScheduleSpec } from '../../functions/protocol/schedule-registry';
import type { RegisteredSchedule, ScheduleSpec } from '../../functions/protocol/schedule-registry-ports';
import { JOB, NOW, template } from '../protocol/schedule-registry-fakes';

const SHARED = 'Jobs-Schedules';
const schedulerMock = mockClient(SchedulerClient);
let projection: SchedulerProjection;
const meta = { $metadata: { httpStatusCode: 400 }, Message: 'refused' };
const TARGET = {
  Arn: 'arn:aws:lambda:eu-central-1:123456789012:function:trigger',
  RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
  RetryPolicy: { MaximumRetryAttempts: 5, MaximumEventAgeInSeconds: 3600 },
  DeadLetterConfig: { Arn: 'arn:aws:sqs:eu-central-1:123456789012:dlq' },
};
const TEMPLATE_EVENT = {
  jobId: JOB,
  scheduledTime: '<aws.scheduler.scheduled-time>',
  worker: 'reports',
  deadlineSeconds: 3600,
  retentionDays: 30,
  catchupWindowSeconds: 600,
};

function rowOf(key: string, spec: ScheduleSpec): RegisteredSchedule {
  return newRow(JOB, key, validateScheduleSpec(JOB, key, spec, NOW), NOW);
}

beforeEach(() => {
  schedulerMock.reset();
  projection = new SchedulerProjection(new SchedulerClient({ region: 'eu-central-1' }), SHARED, { now: () => NOW });
});

describe('SchedulerProjection.template', () => {
  it("reads the job's template from the shared group: its target, window and event without the keyed group", async () => {
    schedulerMock.on(GetScheduleCommand).resolves({
      Name: JOB,
      GroupName: SHARED,
      State: 'DISABLED',
      FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 15 },
      Target: { ...TARGET, Input: JSON.stringify({ ...TEMPLATE_EVENT, keyedScheduleGroup: 'Jobs-weekly-report' }) },
    });
    const t = await projection.template(JOB);
    expect(schedulerMock.commandCalls(GetScheduleCommand)[0].args[0].input).toEqual({ GroupName: SHARED, Name: JOB });
    expect(t).toMatchObject({
      jobId: JOB,
      group: 'Jobs-weekly-report',
      target: TARGET,
      flexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 15 },
    });
    expect(t?.event).toEqual({
      jobId: JOB,
      worker: 'reports',
      deadlineSeconds: 3600,
      retentionDays: 30,
      catchupWindowSeconds: 600,
    });
    expect(t?.templateHash).toMatch(/^[0-9a-f]{16}$/);
  });

  it('has none for a job without a schedule, and none for a job whose schedule is fixed (no keyed group)', async () => {
    schedulerMock.on(GetScheduleCommand).rejects(new ResourceNotFoundException({ message: 'nope', ...meta }));
    expect(await projection.template('unknown')).toBeUndefined();
    schedulerMock.reset();
    schedulerMock.on(GetScheduleCommand).resolves({ Target: { ...TARGET, Input: JSON.stringify(TEMPLATE_EVENT) } });
    expect(await projection.template('fixed')).toBeUndefined();
  });

  it('classifies a throttled read as transient, a denied one as fatal', async () => {
    schedulerMock.on(GetScheduleCommand).rejects(new ThrottlingException({ message: 'slow down', ...meta }));
    const error = await projection.template(JOB).catch((e) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error.kind).toBe('transient');
    schedulerMock.reset();
    schedulerMock
      .on(GetScheduleCommand)
      .rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException', ...meta }));
    expect(await projection.template(JOB).catch((e) => e.kind)).toBe('fatal');
  });
});

describe('SchedulerProjection.put', () => {
  it("creates the row's schedule in the job's group from the template, with the key and input in its event", async () => {
    schedulerMock.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn' });
    const row = rowOf('customer-42', {
      expression: 'cron(0 8 ? * MON *)',
      timeZone: 'Europe/Berlin',
      input: { plan: 'pro' },
      enabled: false,
      endDate: '2027-06-01T00:00:00Z',
    });
    await projection.put(row, template());
    const input = schedulerMock.commandCalls(CreateScheduleCommand)[0].args[0].input;
    expect(input).toMatchObject({
      Name: row.scheduleName,
      GroupName: `${JOB}-keyed`,
      ScheduleExpression: 'cron(0 8 ? * MON *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      State: 'DISABLED',
      EndDate: new Date('2027-06-01T00:00:00Z'),
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'NONE',
      Description: `${JOB}/customer-42 v1`,
      Target: { Arn: template().target.Arn, RoleArn: 'arn:role' },
    });
    expect(input.StartDate).toBeUndefined();
    expect(JSON.parse(input.Target?.Input ?? '')).toEqual({
      ...template().event,
      scheduledTime: '<aws.scheduler.scheduled-time>',
      scheduleKey: 'customer-42',
      input: { plan: 'pro' },
    });
  });

  it('updates on ConflictException (the schedule exists), with the whole definition', async () => {
    schedulerMock.on(CreateScheduleCommand).rejects(new ConflictException({ message: 'exists', ...meta }));
    schedulerMock.on(UpdateScheduleCommand).resolves({ ScheduleArn: 'arn' });
    const row = rowOf('k', { expression: 'at(2026-12-24T18:00:00)' });
    await projection.put(row, template());
    const create = schedulerMock.commandCalls(CreateScheduleCommand)[0].args[0].input;
    expect(schedulerMock.commandCalls(UpdateScheduleCommand)[0].args[0].input).toEqual(create);
    expect(create.ActionAfterCompletion).toBe('DELETE');
  });

  it('classifies: throttling transient, a refused definition fatal', async () => {
    schedulerMock.on(CreateScheduleCommand).rejects(new ThrottlingException({ message: 'Rate exceeded', ...meta }));
    const error = await projection.put(rowOf('k', { expression: 'rate(1 day)' }), template()).catch((e) => e);
    expect(error).toMatchObject({ name: 'DependencyError', kind: 'transient' });
    expect(error.message).toMatch(/create schedule .* in group weekly-report-keyed/);
    schedulerMock.reset();
    schedulerMock.on(CreateScheduleCommand).rejects(new ValidationException({ message: 'bad', ...meta }));
    expect(await projection.put(rowOf('k', { expression: 'rate(1 day)' }), template()).catch((e) => e.kind)).toBe(
      'fatal',
    );
  });

  it('keeps a start date ahead, drops a cron start already past, and moves a past rate start on by whole periods', () => {
    const ahead = rowOf('a', { expression: 'cron(0 8 * * ? *)', startDate: '2027-01-01T00:00:00Z' });
    expect(projectedStartDate(ahead, NOW)).toBe(Date.parse('2027-01-01T00:00:00Z'));
    const past = { ...ahead, startDate: '2026-11-01T00:00:00.000Z' };
    expect(projectedStartDate(past, NOW)).toBeUndefined();
    const rate = { ...past, expression: 'rate(7 days)', startDate: '2026-11-02T08:00:00.000Z' };
    // 2026-11-02 08:00 plus 5 weeks: the first on or after 2026-12-01 09:00 is 2026-12-07 08:00.
    expect(new Date(projectedStartDate(rate, NOW) ?? 0).toISOString()).toBe('2026-12-07T08:00:00.000Z');
  });
});

describe('SchedulerProjection.remove and listPage', () => {
  it('deletes a schedule, and counts one already gone as deleted', async () => {
    schedulerMock
      .on(DeleteScheduleCommand)
      .resolvesOnce({})
      .rejectsOnce(new ResourceNotFoundException({ message: 'gone', ...meta }));
    await projection.remove(template(), 'aa.k.0123');
    await projection.remove(template(), 'aa.k.0123');
    expect(schedulerMock.commandCalls(DeleteScheduleCommand)[0].args[0].input).toEqual({
      GroupName: `${JOB}-keyed`,
      Name: 'aa.k.0123',
    });
  });

  it('lists one bucket of the group by name prefix, page by page', async () => {
    const modified = new Date('2026-12-01T08:00:00Z');
    schedulerMock.on(ListSchedulesCommand).resolves({
      Schedules: [
        { Name: 'aa.k.1', State: 'DISABLED', LastModificationDate: modified },
        { Name: 'aa.j.2', State: 'ENABLED' },
      ],
      NextToken: 'next',
    });
    const page = await projection.listPage(template(), 'aa.', 'token');
    expect(schedulerMock.commandCalls(ListSchedulesCommand)[0].args[0].input).toEqual({
      GroupName: `${JOB}-keyed`,
      NamePrefix: 'aa.',
      NextToken: 'token',
      MaxResults: 100,
    });
    expect(page).toEqual({
      schedules: [
        { name: 'aa.k.1', state: 'DISABLED', lastModifiedAt: '2026-12-01T08:00:00.000Z' },
        { name: 'aa.j.2', state: 'ENABLED' },
      ],
      nextToken: 'next',
    });
  });
});
