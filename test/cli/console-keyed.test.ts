/**
 * `occurrences console` over a job that takes schedules at run time, against the emulator: the real command on the
 * real adapters (moto's DynamoDB, Scheduler, SQS and STS), with the schedule registry named by --registry-table and
 * the stores a deployed ScheduledJobs has (the registry table, the job's DISABLED template in the stack's schedule
 * group, the job's own group; test/integration/registry-emulator.ts). One schedule, customer-42, is upserted through
 * upsertSchedule, as an app does; then the console is driven over HTTP as the page drives it: the jobs page, the
 * job's schedules, a pause and a resume of that one schedule (its registry row, its Scheduler schedule in the job's
 * group, one audit line each) and that schedule's timeline, which reads its own series (`job#customer-42`) only.
 * Every request is sent one at a time: moto's conditional writes are not atomic under concurrency.
 */

import { GetScheduleCommand } from '@aws-sdk/client-scheduler';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import type { ActionResult, JobSummary, JobsPage, SchedulesPage, TimelinePage } from '../../console/contract';
import { DynamoOccurrenceRecorder } from '../../functions/aws/occurrence-recorder';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import { scheduleNameOf } from '../../functions/protocol/schedule-registry';
import { connectScheduleOperations, upsertSchedule } from '../../operations/schedules';
import { createRegistryStores, SHARED_GROUP, TABLE } from '../integration/registry-emulator';
import { type RunningConsole, signIn, startConsoleCommand } from './console-command';
import { row, useCliEmulator, WORKER } from './support';

const emulator = useCliEmulator();

/** A job with `runtimeSchedules: true`: its template in SHARED_GROUP, its schedules in JOB_GROUP. */
const JOB = 'weekly-report';
const JOB_GROUP = 'itest-weekly-report';
const KEY = 'customer-42';
const WEEKLY = { expression: 'cron(0 8 ? * MON *)', timeZone: 'Europe/Berlin', input: { plan: 'pro' } };
const BY = 'tester via console (arn:aws:sts::123456789012:user/moto)';

let running: RunningConsole | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** The command on the emulator's table, queue, stack group and registry. */
function startCommand(): Promise<RunningConsole> {
  return startConsoleCommand([
    '--registry-table',
    TABLE,
    '--table',
    emulator.resources.tableName,
    '--schedule-group',
    SHARED_GROUP,
    '--worker-queue',
    `${WORKER}=${emulator.resources.jobQueueUrl}`,
    '--endpoint',
    emulator.moto.endpoint,
  ]);
}

async function registryRow(key: string) {
  const out = await emulator.clients.documents.send(
    new GetCommand({ TableName: TABLE, Key: { jobId: JOB, scheduleKey: key } }),
  );
  return out.Item;
}

/** The State of the key's own Scheduler schedule, in the job's group. */
async function keyedSchedulerState(key: string): Promise<string | undefined> {
  const out = await emulator.clients.scheduler.send(
    new GetScheduleCommand({ GroupName: JOB_GROUP, Name: scheduleNameOf(key) }),
  );
  return out.State;
}

/** The stores with customer-42 upserted as an app does, and the console on them, signed in. */
async function keyedConsole() {
  await createRegistryStores(emulator.clients, JOB, JOB_GROUP);
  const ops = connectScheduleOperations({
    registryTableName: TABLE,
    scheduleGroupName: SHARED_GROUP,
    occurrenceTableName: emulator.resources.tableName,
    clients: { dynamoDb: emulator.clients.dynamo, scheduler: emulator.clients.scheduler },
  });
  expect((await upsertSchedule(ops, JOB, KEY, WEEKLY, { by: 'app' })).outcome).toBe('created');
  expect(await keyedSchedulerState(KEY)).toBe('ENABLED');
  const console_ = await startCommand();
  running = console_;
  const cookie = await signIn(console_);
  return {
    console_,
    get: (path: string) => fetch(`${console_.base}${path}`, { headers: { cookie } }),
    action: (name: string, body: object) =>
      fetch(`${console_.base}/api/actions/${name}`, {
        method: 'POST',
        headers: { cookie, origin: console_.base, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
  };
}

describe('occurrences console over run-time schedules', () => {
  it('lists the keyed job with runtimeSchedules and, from the registry, its schedule customer-42 with its expression', async () => {
    const { get } = await keyedConsole();

    // The jobs page: the job's template, which takes schedules at run time and never fires itself.
    const jobs = await get('/api/jobs');
    expect(jobs.status).toBe(200);
    const page = (await jobs.json()) as JobsPage;
    expect(page.jobs.map((j) => j.jobId)).toEqual([JOB]);
    expect(page.jobs[0]).toMatchObject({ runtimeSchedules: true, worker: WORKER, paused: false, next: [] });

    const schedules = await get(`/api/jobs/${JOB}/schedules`);
    expect(schedules.status).toBe(200);
    expect(((await schedules.json()) as SchedulesPage).schedules).toEqual([
      {
        jobId: JOB,
        scheduleKey: KEY,
        expression: WEEKLY.expression,
        timeZone: WEEKLY.timeZone,
        state: 'ENABLED',
        updatedAt: expect.any(String),
      },
    ]);
  });

  it('pauses and resumes one schedule: its registry row and its own Scheduler schedule change, one audit line each', async () => {
    const { console_, get, action } = await keyedConsole();

    const paused = await action('pause', { jobId: JOB, scheduleKey: KEY, note: 'customer on hold' });
    expect(paused.status).toBe(200);
    expect((await paused.json()) as ActionResult).toMatchObject({ outcome: 'paused', by: BY });
    expect(await registryRow(KEY)).toMatchObject({ state: 'PAUSED', updatedBy: BY });
    expect(await keyedSchedulerState(KEY)).toBe('DISABLED');
    const pausedSummary = (await (await get(`/api/jobs/${JOB}?key=${KEY}`)).json()) as JobSummary;
    expect(pausedSummary).toMatchObject({ scheduleKey: KEY, paused: true, pause: { by: BY }, next: [] });

    const resumed = await action('resume', { jobId: JOB, scheduleKey: KEY });
    expect(resumed.status).toBe(200);
    expect((await resumed.json()) as ActionResult).toMatchObject({ outcome: 'resumed', by: BY });
    expect(await registryRow(KEY)).toMatchObject({ state: 'ENABLED', updatedBy: BY });
    expect(await keyedSchedulerState(KEY)).toBe('ENABLED');

    // The note of a schedule's pause has no field in the registry: the audit line is where it is kept.
    const audit = console_.out.slice(1).map((l) => JSON.parse(l));
    expect(audit.map((a) => [a.action, a.by, a.request, a.outcome])).toEqual([
      ['pause', BY, { jobId: JOB, scheduleKey: KEY, note: 'customer on hold' }, 'paused'],
      ['resume', BY, { jobId: JOB, scheduleKey: KEY }, 'resumed'],
    ]);
    expect(await console_.stop()).toBe(0);
  });

  it("draws one schedule's timeline from its own series job#customer-42 only, with its fire times ahead", async () => {
    // One occurrence of customer-42 and one of another key of the same job, written as the trigger writes them.
    const now = Date.now();
    const at = (hoursAgo: number) =>
      new Date(Math.floor(now / 3600_000) * 3600_000 - hoursAgo * 3600_000).toISOString().replace('.000Z', 'Z');
    const recorder = new DynamoOccurrenceRecorder(emulator.clients.documents, emulator.resources.tableName);
    const { get } = await keyedConsole();
    const ended = { claimedAt: at(2), succeededAt: at(1) };
    for (const occurrence of [
      row(JOB, at(2), OccurrenceStatus.SUCCEEDED, now, { scheduleKey: KEY, ...ended }),
      row(JOB, at(3), OccurrenceStatus.SUCCEEDED, now, { scheduleKey: 'customer-43' }),
    ])
      expect(await recorder.create(occurrence)).toEqual({ created: true });

    const from = new Date(now - 86_400_000).toISOString();
    const to = new Date(now + 7 * 86_400_000).toISOString();
    const timeline = await get(`/api/timeline?job=${JOB}&key=${KEY}&from=${from}&to=${to}`);
    expect(timeline.status).toBe(200);
    const page = (await timeline.json()) as TimelinePage;
    expect(page).toMatchObject({ jobId: JOB, scheduleKey: KEY });
    expect(page.bars).toEqual([
      expect.objectContaining({ scheduledTime: at(2), status: 'SUCCEEDED', startedAt: at(2), endedAt: at(1) }),
    ]);
    // The schedule's own expression and time zone, not the template's: Mondays at 08:00 in Berlin.
    const berlin = new Intl.DateTimeFormat('en-GB', {
      timeZone: WEEKLY.timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    expect(page.next.length).toBeGreaterThan(0);
    expect(page.next.map((t) => berlin.format(new Date(t)))).toEqual(page.next.map(() => 'Mon 08:00'));
  });
});
