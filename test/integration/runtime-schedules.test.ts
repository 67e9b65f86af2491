/**
 * The schedules a job takes at run time, on moto: the registry table with its two indexes, the stack's shared
 * schedule group with the job's DISABLED template schedule, and the job's own group, as a deployed ScheduledJobs
 * has them. Each operation through the public entry point, checked against both stores. (A bulk create of 1,000
 * and the drift repair are test/integration/schedule-drift.test.ts's.)
 */
import { type DynamoDBClient, GetItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetScheduleCommand, ListSchedulesCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoScheduleRegistry } from '../../functions/aws/schedule-registry-store';
import { SchedulerProjection } from '../../functions/aws/scheduler-projection';
import {
  auditBucketOf,
  newRow,
  scheduleNameOf,
  validateScheduleSpec,
} from '../../functions/protocol/schedule-registry';
import {
  connectScheduleOperations,
  deleteSchedule,
  getSchedule,
  InvalidScheduleError,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  type ScheduleOperations,
  UnknownScheduleJobError,
  upsertSchedule,
} from '../../operations';
import { templateEvent } from '../protocol/schedule-registry-fakes';
import { useMoto } from './emulator';
import {
  createJobSchedule,
  createRegistryStores,
  registryClients,
  SHARED_GROUP,
  TABLE,
  TRIGGER,
} from './registry-emulator';

const emulator = useMoto();

const JOB = 'weekly-report';
const JOB_GROUP = 'itest-weekly-report';
const FIXED_JOB = 'nightly-export';
const NOW = Date.parse('2026-12-01T09:00:00Z');
const WEEKLY = { expression: 'cron(0 8 ? * MON *)', timeZone: 'Europe/Berlin', input: { plan: 'pro' } };

let dynamo: DynamoDBClient;
let scheduler: SchedulerClient;
let ops: ScheduleOperations;

async function jobGroupSchedules(prefix?: string): Promise<string[]> {
  const out = await scheduler.send(new ListSchedulesCommand({ GroupName: JOB_GROUP, NamePrefix: prefix }));
  return (out.Schedules ?? []).map((s) => s.Name ?? '').sort();
}

async function registryRows(): Promise<Record<string, unknown>[]> {
  return (await dynamo.send(new ScanCommand({ TableName: TABLE }))).Items ?? [];
}

async function keyedSchedule(key: string) {
  return scheduler.send(new GetScheduleCommand({ GroupName: JOB_GROUP, Name: scheduleNameOf(key) }));
}

beforeEach(async () => {
  ({ dynamo, scheduler } = registryClients(emulator));
  await createRegistryStores({ dynamo, scheduler }, JOB, JOB_GROUP);
  await createJobSchedule(scheduler, FIXED_JOB);
  ops = connectScheduleOperations({
    registryTableName: TABLE,
    scheduleGroupName: SHARED_GROUP,
    clients: { dynamoDb: dynamo, scheduler },
    clock: { now: () => NOW },
  });
});

describe('run-time schedules on moto', () => {
  it('upserts twice: one row, one schedule, the same version; the schedule carries the key and input', async () => {
    const first = await upsertSchedule(ops, JOB, 'customer-42', WEEKLY, { by: 'app' });
    const second = await upsertSchedule(ops, JOB, 'customer-42', WEEKLY, { by: 'app' });

    expect(first.outcome).toBe('created');
    expect(second.outcome).toBe('unchanged');
    expect(second.schedule).toEqual(first.schedule);
    expect(first.schedule).toMatchObject({ version: 1, state: 'ENABLED', inSync: true, updatedBy: 'app' });
    expect(await registryRows()).toHaveLength(1);
    expect(await jobGroupSchedules()).toEqual([scheduleNameOf('customer-42')]);

    const schedule = await keyedSchedule('customer-42');
    expect(schedule).toMatchObject({
      State: 'ENABLED',
      ScheduleExpression: 'cron(0 8 ? * MON *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      ActionAfterCompletion: 'NONE',
      Description: `${JOB}/customer-42 v1`,
      Target: { Arn: TRIGGER, RetryPolicy: { MaximumRetryAttempts: 5, MaximumEventAgeInSeconds: 3600 } },
    });
    expect(JSON.parse(schedule.Target?.Input ?? '')).toEqual({
      ...templateEvent(JOB),
      scheduleKey: 'customer-42',
      input: { plan: 'pro' },
    });
    expect(await getSchedule(ops, JOB, 'customer-42')).toEqual(first.schedule);
  });

  it('updates: the next version, the same schedule with the new expression and input', async () => {
    await upsertSchedule(ops, JOB, 'customer-42', WEEKLY);
    const updated = await upsertSchedule(ops, JOB, 'customer-42', {
      ...WEEKLY,
      expression: 'cron(30 7 ? * MON-FRI *)',
      input: { plan: 'enterprise' },
    });

    expect(updated.outcome).toBe('updated');
    expect(updated.schedule).toMatchObject({ version: 2, inSync: true, input: { plan: 'enterprise' } });
    expect(await registryRows()).toHaveLength(1);
    expect(await jobGroupSchedules()).toEqual([scheduleNameOf('customer-42')]);
    const schedule = await keyedSchedule('customer-42');
    expect(schedule.ScheduleExpression).toBe('cron(30 7 ? * MON-FRI *)');
    expect(schedule.Description).toBe(`${JOB}/customer-42 v2`);
    expect(JSON.parse(schedule.Target?.Input ?? '').input).toEqual({ plan: 'enterprise' });
  });

  it('pauses (the schedule DISABLED) and resumes (ENABLED)', async () => {
    await upsertSchedule(ops, JOB, 'customer-42', WEEKLY);
    expect(await pauseSchedule(ops, JOB, 'customer-42', { by: 'alice' })).toMatchObject({
      state: 'PAUSED',
      version: 2,
      updatedBy: 'alice',
    });
    expect((await keyedSchedule('customer-42')).State).toBe('DISABLED');
    expect(await resumeSchedule(ops, JOB, 'customer-42')).toMatchObject({ state: 'ENABLED', version: 3 });
    expect((await keyedSchedule('customer-42')).State).toBe('ENABLED');
  });

  it('deletes: the row and the schedule gone; a second delete finds nothing', async () => {
    await upsertSchedule(ops, JOB, 'customer-42', WEEKLY);
    await upsertSchedule(ops, JOB, 'customer-43', WEEKLY);
    expect(await deleteSchedule(ops, JOB, 'customer-42')).toEqual({ deleted: true });

    const row = await dynamo.send(
      new GetItemCommand({ TableName: TABLE, Key: { jobId: { S: JOB }, scheduleKey: { S: 'customer-42' } } }),
    );
    expect(row.Item).toBeUndefined();
    await expect(keyedSchedule('customer-42')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    expect(await jobGroupSchedules()).toEqual([scheduleNameOf('customer-43')]);
    expect(await getSchedule(ops, JOB, 'customer-42')).toBeUndefined();
    expect(await deleteSchedule(ops, JOB, 'customer-42')).toEqual({ deleted: false });
  });

  it('rejects an unknown job, a job with a fixed schedule and a bad spec, writing nothing anywhere', async () => {
    await expect(upsertSchedule(ops, 'no-such-job', 'customer-42', WEEKLY)).rejects.toBeInstanceOf(
      UnknownScheduleJobError,
    );
    await expect(upsertSchedule(ops, FIXED_JOB, 'customer-42', WEEKLY)).rejects.toThrow(
      /job 'nightly-export' takes no schedules at run time/,
    );
    const bad = await upsertSchedule(ops, JOB, 'customer-42', {
      expression: 'at(2026-11-30T08:00:00)',
      input: { blob: 'x'.repeat(3_000) },
    }).catch((e) => e);
    expect(bad).toBeInstanceOf(InvalidScheduleError);
    expect(bad.problems.map((p: string) => p.split(' ')[0])).toEqual(['expression', 'input']);

    expect(await registryRows()).toEqual([]);
    expect(await jobGroupSchedules()).toEqual([]);
  });

  it('an at() schedule is deleted by Scheduler after it fires (ActionAfterCompletion DELETE)', async () => {
    await upsertSchedule(ops, JOB, 'once', { expression: 'at(2026-12-24T18:00:00)', timeZone: 'Europe/Berlin' });
    expect((await keyedSchedule('once')).ActionAfterCompletion).toBe('DELETE');
  });

  it('lists by key prefix, page by page, in key order', async () => {
    for (const key of ['customer-3', 'customer-1', 'partner-1', 'customer-2']) {
      await upsertSchedule(ops, JOB, key, WEEKLY);
    }
    const first = await listSchedules(ops, JOB, { prefix: 'customer-', limit: 2 });
    expect(first.schedules.map((s) => s.scheduleKey)).toEqual(['customer-1', 'customer-2']);
    const second = await listSchedules(ops, JOB, { prefix: 'customer-', limit: 2, cursor: first.cursor });
    expect(second.schedules.map((s) => s.scheduleKey)).toEqual(['customer-3']);
    expect(second.cursor).toBeUndefined();
    expect((await listSchedules(ops, 'other-job')).schedules).toEqual([]);
  });

  it("moto's indexes and ListSchedules serve the reconciler: rows due, one audit bucket, one bucket's schedules", async () => {
    const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
    const registry = new DynamoScheduleRegistry(documents, TABLE);
    const projection = new SchedulerProjection(scheduler, SHARED_GROUP, { now: () => NOW });
    const keys = Array.from({ length: 12 }, (_, i) => `customer-${i}`);
    for (const key of keys.slice(0, 10)) await upsertSchedule(ops, JOB, key, WEEKLY);
    // Two rows written as a writer that crashed before its projection leaves them.
    for (const key of keys.slice(10)) {
      await registry.put(newRow(JOB, key, validateScheduleSpec(JOB, key, WEEKLY, NOW), NOW), undefined);
    }

    expect(await registry.dueForSync(NOW, 10)).toEqual([]);
    const due = await registry.dueForSync(NOW + 60_000, 10);
    expect(due.map((r) => r.scheduleKey).sort()).toEqual(keys.slice(10));

    const bucket = auditBucketOf('customer-0');
    const inBucket = keys.filter((k) => auditBucketOf(k) === bucket);
    expect((await registry.auditBucket(JOB, bucket)).map((r) => r.scheduleKey).sort()).toEqual(inBucket.sort());

    const template = await projection.template(JOB);
    if (template === undefined) throw new Error('no template');
    // The audit lists a slice of the group by a name's first character (audit-slices.ts), not by bucket.
    const slice = scheduleNameOf('customer-0')[0];
    const page = await projection.listPage(template, slice);
    const projected = keys
      .slice(0, 10)
      .map(scheduleNameOf)
      .filter((name) => name.startsWith(slice));
    expect(page.schedules.map((s) => s.name).sort()).toEqual(projected.sort());
    expect(page.schedules.every((s) => s.state === 'ENABLED' && s.lastModifiedAt !== undefined)).toBe(true);
  });
});
