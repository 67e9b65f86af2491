/**
 * Forged schedules, on moto through a kept local run of a user's app with two run-time-schedule jobs: a
 * holder of job A's grant can create any schedule in A's group with A's target (A's alias of the trigger, A's role),
 * since that is what creating A's schedules takes. The played Scheduler invokes the alias the schedule's target names,
 * as Scheduler does; the trigger refuses what the registry does not hold, and nothing runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { CreateScheduleCommand, GetScheduleCommand, type Target } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { type KeptLocalRun, type LocalFire, runLocally } from '../../testing';
import { localClients } from '../../testing/local/local-aws';
import { KEYED_JOB, OTHER_KEYED_JOB, synthKeyedApp } from '../testing/fixtures/keyed-app';

const assemblyDir = mkdtempSync(path.join(tmpdir(), 'forged-cdk-out-'));
const fires: LocalFire[] = [];
let run: KeptLocalRun;

beforeAll(async () => {
  synthKeyedApp(assemblyDir, { second: true });
  run = await runLocally({
    assemblyDir,
    copies: 1,
    keep: true,
    runtimeSchedules: [
      { jobId: KEYED_JOB, scheduleKey: 'acme', expression: 'cron(0 8 ? * MON *)', input: { plan: 'pro' } },
      { jobId: OTHER_KEYED_JOB, scheduleKey: 'acme', expression: 'cron(0 9 1 * ? *)', input: { bill: 'real' } },
    ],
    onFire: (fire) => fires.push(fire),
  });
});
afterAll(async () => {
  await run?.stop();
  rmSync(assemblyDir, { recursive: true, force: true });
});

const clients = () => localClients(run.resources.endpoint);

/** Job A's template, as a holder of A's grant reads it (GetSchedule on the template is in the grant). */
async function templateOf(jobId: string) {
  const template = await clients().scheduler.send(
    new GetScheduleCommand({ GroupName: run.resources.scheduleGroupName, Name: jobId }),
  );
  const event = JSON.parse(template.Target?.Input ?? '{}') as Record<string, unknown>;
  return { template, group: event.keyedScheduleGroup as string, event };
}

/** A schedule made by hand in job A's group with A's target, whatever its input says. */
async function forge(name: string, input: Record<string, unknown>): Promise<void> {
  const { template, group, event } = await templateOf(KEYED_JOB);
  const { keyedScheduleGroup: _group, ...rest } = event;
  await clients().scheduler.send(
    new CreateScheduleCommand({
      Name: name,
      GroupName: group,
      ScheduleExpression: 'rate(1 day)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { ...(template.Target as Target), Input: JSON.stringify({ ...rest, ...input }) },
    }),
  );
}

/** The fire of a forged schedule, once the kept run saw it (at most 30 s). */
async function fireOf(scheduleKey: string): Promise<LocalFire | undefined> {
  for (let i = 0; i < 120; i++) {
    const fire = fires.find((f) => f.scheduleKey === scheduleKey);
    if (fire !== undefined) return fire;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return undefined;
}

async function occurrenceRows(): Promise<Record<string, unknown>[]> {
  const out = await clients().dynamo.send(new ScanCommand({ TableName: run.resources.tableName }));
  return out.Items ?? [];
}

/** The partition keys of every occurrence row that names the key. */
async function rowsNaming(scheduleKey: string): Promise<string[]> {
  return (await occurrenceRows())
    .filter((item) => (item.scheduleKey as { S?: string } | undefined)?.S === scheduleKey)
    .map((item) => String((item.jobId as { S?: string }).S));
}

describe('a forged schedule in a job group', () => {
  it("targets job A's own alias of the trigger (the template's target, which every key's schedule copies)", async () => {
    const { template } = await templateOf(KEYED_JOB);
    expect(template.Target?.Arn).toMatch(new RegExp(`:function:[^:]+:job-${KEYED_JOB}$`));
    const other = await templateOf(OTHER_KEYED_JOB);
    expect(other.template.Target?.Arn).toMatch(new RegExp(`:job-${OTHER_KEYED_JOB}$`));
  });

  it('naming job B (a key B holds) is refused: B does not run, nothing is written', async () => {
    const before = await occurrenceRows();
    await forge('forged-other-job', { jobId: OTHER_KEYED_JOB, scheduleKey: 'forged-b', input: { bill: 'forged' } });
    const fire = await fireOf('forged-b');
    expect(fire?.outcome).toMatch(
      new RegExp(`trigger failed: .*jobId ${OTHER_KEYED_JOB} arrived through the trigger's alias of job ${KEYED_JOB}`),
    );
    expect(await rowsNaming('forged-b')).toEqual([]);
    expect((await occurrenceRows()).length).toBe(before.length);
  });

  it('naming job A with a key the registry does not hold is refused, nothing written', async () => {
    await forge('forged-unknown-key', { jobId: KEYED_JOB, scheduleKey: 'nobody' });
    const fire = await fireOf('nobody');
    expect(fire?.outcome).toMatch(/trigger failed: .*schedule weekly-digest\/nobody is not in the schedule registry/);
    expect(await rowsNaming('nobody')).toEqual([]);
  });

  it("naming job A with a held key and a forged input runs with the registry's input, not the forged one", async () => {
    const ofAcme = () => fires.filter((f) => f.jobId === KEYED_JOB && f.scheduleKey === 'acme');
    const before = ofAcme().length;
    await forge('forged-input', { jobId: KEYED_JOB, scheduleKey: 'acme', input: { plan: 'free-forever' } });
    expect(await waitFor(() => ofAcme().length > before)).toBe(true);
    const forged = ofAcme()[before];
    expect(forged.outcome).toBe('recorded');
    const store = new DynamoOccurrenceStore(clients().documents, run.resources.tableName);
    expect((await store.get(forged))?.input).toEqual({ plan: 'pro' });
  });
});

async function waitFor(condition: () => boolean): Promise<boolean> {
  for (let i = 0; i < 120; i++) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}
