/**
 * Every job command of the `occurrences` CLI against a kept local run (runLocally with keep, as `npm run local --
 * --keep` leaves it): the schedules are in moto's Scheduler as the template defines them, the workers still poll, and
 * the CLI is pointed at it with the options the run prints (resources.cliOptions), nothing else.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../bin/occurrences/program';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { isoSeconds, type Occurrence, TERMINAL_STATUSES } from '../../functions/protocol/occurrence';
import { type KeptLocalRun, runLocally } from '../../testing';
import { keptRunCommands, writeLocalRunFile } from '../../testing/local/keep';
import { localClients } from '../../testing/local/local-aws';
import { FAILING_JOB, POLICY_JOBS, synthPoliciesApp } from '../testing/fixtures/policies-app';
import { cliDeps } from './support';

const JOB = POLICY_JOBS.allowAll;
const HOUR = 3600_000;
const assemblyDir = mkdtempSync(path.join(tmpdir(), 'kept-cdk-out-'));
let run: KeptLocalRun;

beforeAll(async () => {
  synthPoliciesApp(assemblyDir);
  run = await runLocally({ assemblyDir, jobs: [JOB, FAILING_JOB], copies: 1, keep: true });
});
afterAll(async () => {
  await run?.stop();
  rmSync(assemblyDir, { recursive: true, force: true });
});

async function cli(...args: string[]) {
  const deps = { ...cliDeps({ now: () => Date.now() }), env: { USER: 'tester' } };
  const code = await runCli([...run.resources.cliOptions, ...args], deps);
  return { code, out: deps.captured.out.join('\n'), err: deps.captured.err.join('\n') };
}

async function scheduleState(jobId: string): Promise<string | undefined> {
  const scheduler = new SchedulerClient({
    endpoint: run.resources.endpoint,
    region: run.resources.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const out = await scheduler.send(
      new GetScheduleCommand({ GroupName: run.resources.scheduleGroupName, Name: jobId }),
    );
    return out.State;
  } finally {
    scheduler.destroy();
  }
}

/** Reads the row until it is terminal (the kept workers run it), at most 60 s. */
async function settled(jobId: string, scheduledTime: string): Promise<Occurrence | undefined> {
  const store = new DynamoOccurrenceStore(localClients(run.resources.endpoint).documents, run.resources.tableName);
  for (let i = 0; i < 240; i++) {
    const row = await store.get({ jobId, scheduledTime });
    if (row !== undefined && TERMINAL_STATUSES.includes(row.status)) return row;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return undefined;
}

describe('the occurrences CLI against a kept local run', () => {
  it('describe shows the schedule the template defines and the runs of the local run', async () => {
    const { code, out, err } = await cli('describe', JOB);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('cron(0 * * * ? *)');
    expect(out).toContain(run.rows.find((r) => r.jobId === JOB)?.scheduledTime as string);
  });

  it("pause disables the job's schedule in the emulator, resume enables it", async () => {
    expect((await cli('pause', JOB, '--note', 'local check')).code).toBe(0);
    expect(await scheduleState(JOB)).toBe('DISABLED');
    expect((await cli('resume', JOB)).code).toBe(0);
    expect(await scheduleState(JOB)).toBe('ENABLED');
  });

  it('run records an occurrence now, and the kept worker runs it', async () => {
    const { code, out } = await cli('run', JOB, '--json');
    expect(code).toBe(0);
    const { scheduledTime } = JSON.parse(out) as { scheduledTime: string };
    expect((await settled(JOB, scheduledTime))?.status).toBe('SUCCEEDED');
  });

  it('backfill records past times through the trigger path, and the kept worker runs them', async () => {
    const from = isoSeconds(Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR);
    const to = isoSeconds(Date.parse(from) + 2 * HOUR);
    const { code, err } = await cli('backfill', '--job', JOB, '--from', from, '--to', to, '--overlap', 'allowAll');
    expect(err).toBe('');
    expect(code).toBe(0);
    expect((await settled(JOB, from))?.status).toBe('SUCCEEDED');
    expect((await settled(JOB, isoSeconds(Date.parse(from) + HOUR)))?.status).toBe('SUCCEEDED');
  });

  it('retry reopens the FAILED occurrence of the local run and the kept worker runs it again', async () => {
    const failed = run.rows.find((r) => r.jobId === FAILING_JOB);
    expect(failed?.status).toBe('FAILED');
    const { code, err } = await cli('retry', FAILING_JOB, failed?.scheduledTime as string);
    expect(err).toBe('');
    expect(code).toBe(0);
    for (let i = 0; i < 240; i++) {
      const row = await settled(FAILING_JOB, failed?.scheduledTime as string);
      if (row?.history?.some((h) => h.outcome === 'reopened') && row.status === 'FAILED') {
        expect(row.history.map((h) => h.outcome)).toEqual(['failed', 'reopened', 'failed']);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect.fail('the retried occurrence did not run again');
  });

  it('--local reads the file a kept run writes, and the commands it prints use it', async () => {
    const file = path.join(assemblyDir, 'local-run.json');
    writeLocalRunFile(run, file);
    const deps = { ...cliDeps({ now: () => Date.now() }), env: { USER: 'tester' } };
    expect(await runCli(['--local', file, 'describe', JOB], deps)).toBe(0);
    expect(deps.captured.out.join('\n')).toContain('cron(0 * * * ? *)');
    // The commands that enqueue find the worker queues in the file too.
    const runNow = { ...cliDeps({ now: () => Date.now() }), env: { USER: 'tester' } };
    expect(await runCli(['--local', file, 'run', JOB, '--json', '--overlap', 'allowAll'], runNow)).toBe(0);
    const { scheduledTime } = JSON.parse(runNow.captured.out.join('\n')) as { scheduledTime: string };
    expect((await settled(JOB, scheduledTime))?.status).toBe('SUCCEEDED');
    expect(keptRunCommands(run, 'npx occurrences')[0]).toBe('npx occurrences --local .local/local-run.json list');
  });

  it('--local without a kept run says how to start one', async () => {
    const deps = { ...cliDeps({ now: () => Date.now() }), env: {} };
    expect(await runCli(['--local', path.join(assemblyDir, 'none.json'), 'list'], deps)).toBe(2);
    expect(deps.captured.err.join('\n')).toMatch(
      /--local: no kept local run at .*none\.json; start one with `npm run local -- --keep`/,
    );
  });

  it('list shows the rows of the kept run', async () => {
    const { code, out } = await cli('list', '--job', JOB, '--from', '30d');
    expect(code).toBe(0);
    expect(out).toContain(JOB);
  });
});
