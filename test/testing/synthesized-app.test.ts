/**
 * The local runner on this repository's own synthesized sample app: what it reads from the template, and the
 * sample's occurrence-digest run end to end on moto from the bundled handlers. The app is synthesized once, into a
 * temporary folder, as a user's `cdk synth` would write cdk.out.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseJobSettingsList } from '../../functions/protocol/job-settings';
import { ENV } from '../../functions/runtime-env';
import { AssemblyError, type LocalRun, runLocally } from '../../testing';
import { type LocalApp, readLocalApp } from '../../testing/local/app-model';
import { formatLocalRun } from '../../testing/local/format';
import {
  ensureMotoServer,
  type MotoCommand,
  type MotoServer,
  MotoUnavailableError,
  startMotoServer,
} from '../../testing/local/moto-server';
import { fireTimes, scheduleInput } from '../../testing/local/run-locally';
import { main } from '../../testing/run-local';

const ROOT = path.resolve(__dirname, '..', '..');
const assemblyDir = mkdtempSync(path.join(tmpdir(), 'sample-cdk-out-'));
let app: LocalApp;

beforeAll(async () => {
  await promisify(execFile)('npx', ['cdk', 'synth', '--quiet', '-o', assemblyDir], {
    cwd: ROOT,
    env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
  });
  app = readLocalApp(assemblyDir);
});
afterAll(() => rmSync(assemblyDir, { recursive: true, force: true }));

describe('Function: readLocalApp (the synthesized sample)', () => {
  it("finds the sample's two schedules and the per-customer job's template, their trigger, a worker and queue for each, and the notifier on the table stream", () => {
    expect(app.stack.stackName).toBe('ScheduledJobs');
    expect(app.schedules.map((s) => s.jobId).sort()).toEqual(['customer-report', 'ndjson-export', 'occurrence-digest']);
    // The template of the per-customer job names its own group, and never fires.
    const template = app.schedules.find((s) => s.jobId === 'customer-report');
    expect(template).toMatchObject({ enabled: false, keyedGroup: expect.stringMatching(/Keyedcustomerreport/) });
    const schedule = digestSchedule();
    expect(schedule).toMatchObject({
      jobId: 'occurrence-digest',
      name: 'occurrence-digest',
      expression: 'cron(0 6 * * ? *)',
      timeZone: 'Europe/Berlin',
      enabled: true,
    });
    expect(app.workers.map((w) => w.workerId).sort()).toEqual([
      'customer-report',
      'ndjson-export',
      'occurrence-digest',
    ]);
    const worker = digestWorker();
    expect(worker).toMatchObject({ workerId: 'occurrence-digest', batchSize: 5, reportBatchItemFailures: true });
    expect(app.queues.find((q) => q.logicalId === worker.queue)?.attributes.VisibilityTimeout).toBe('900');
    expect(app.streamSources).toHaveLength(1);
    const [stream] = app.streamSources;
    // The occurrences table (its stream feeds the notifier) and the schedule registry.
    expect(app.tables.map((t) => t.logicalId)).toEqual([stream.table, expect.stringMatching(/ScheduleRegistry/)]);
    expect(stream.filters).toHaveLength(1);
    const exportWorker = app.workers.find((w) => w.workerId === 'ndjson-export');
    const customerWorker = app.workers.find((w) => w.workerId === 'customer-report');
    expect(new Set(app.schedules.map((s) => s.target)).size).toBe(1); // one trigger for all
    const fns = [schedule.target, worker.function, exportWorker?.function, customerWorker?.function, stream.function];
    expect(new Set(fns).size).toBe(5);
    expect([...app.functions.keys()].sort()).toEqual(fns.sort());
  });

  it("reads each function's bundle, timeout and environment as the template gives them", () => {
    const trigger = app.functions.get(digestSchedule().target);
    const worker = app.functions.get(digestWorker().function);
    expect(existsSync(trigger?.bundleFile ?? '')).toBe(true);
    expect(trigger).toMatchObject({ exportName: 'handler', timeoutSeconds: 10, asyncRetryAttempts: 2 });
    expect(Object.keys(trigger?.environment ?? {})).toEqual(expect.arrayContaining([ENV.tableName, ENV.scheduleGroup]));
    expect(worker?.timeoutSeconds).toBe(150);
    const settings = parseJobSettingsList(worker?.environment[ENV.jobSettings] as string, ENV.jobSettings);
    expect([...settings.keys()]).toEqual(['occurrence-digest']);
  });

  it('leaves out the reconciler, which runs on an EventBridge rule, and says so', () => {
    expect(app.notRun.map((n) => n.why)).toEqual([expect.stringMatching(/EventBridge rule .*rate\(5 minutes\)/)]);
  });

  it("fires the schedule's next times in its time zone, with the input Scheduler would send", () => {
    const schedule = digestSchedule();
    // 06:00 in Berlin: 05:00Z in winter, 04:00Z in summer (the clocks go forward on 29 March 2026).
    expect(fireTimes(schedule, new Date('2026-03-28T00:00:00Z'), 3)).toEqual([
      '2026-03-28T05:00:00Z',
      '2026-03-29T04:00:00Z',
      '2026-03-30T04:00:00Z',
    ]);
    expect(scheduleInput(schedule, '2026-03-28T05:00:00Z')).toEqual({
      jobId: 'occurrence-digest',
      scheduledTime: '2026-03-28T05:00:00Z',
      worker: 'occurrence-digest',
      // The worker's route: its queue's Ref is left empty in the model, and resolved against the emulator's queue
      // when runLocally fires it (the runs below).
      queueUrl: '',
      stuckAfterSeconds: expect.any(Number),
      deadlineSeconds: 21_600,
      retentionDays: 90,
      // Not configured: the retry deadline (job-settings.ts, catchupWindowSecondsOf).
      catchupWindowSeconds: 21_600,
      // Not configured, no time window: 5 minutes (lateAfterSecondsOf), recorded on the row for the late check.
      lateAfterSeconds: 300,
      // The job's overlap policy, for operators to read; the trigger ignores it.
      overlap: 'skip',
    });
  });

  it('names the stack to pick when it is not there, and a job without a schedule', async () => {
    expect(() => readLocalApp(assemblyDir, 'Nope')).toThrow(
      new AssemblyError(assemblyDir, ['no stack Nope; the stacks are: ScheduledJobs']),
    );
    await expect(runLocally({ assemblyDir, jobs: ['nightly'], endpoint: 'http://127.0.0.1:9' })).rejects.toThrow(
      /no schedule for job\(s\) nightly \(a disabled job has none\); the scheduled jobs are: .*occurrence-digest/,
    );
  });
});

const moto = motoOrSkip();

describe.skipIf(moto === undefined)('Function: runLocally (the sample on moto)', () => {
  let server: MotoServer;
  let run: LocalRun;
  beforeAll(async () => {
    server = await startMotoServer();
    // The occurrences must still be inside their retry deadline when the bundled worker (on the real clock) claims them.
    // The digest only: the sample export writes 200 MB (scripts/long-export.ts runs it on moto).
    run = await runLocally({
      assemblyDir,
      endpoint: server.endpoint,
      from: new Date(),
      count: 2,
      timeoutSeconds: 90,
      jobs: ['occurrence-digest'],
    });
  });
  afterAll(() => server?.stop());

  it('runs two occurrences of occurrence-digest to SUCCEEDED from the bundles, each announced once', () => {
    expect(run.rows.map((r) => [r.jobId, r.status, r.attempt, r.announced])).toEqual([
      ['occurrence-digest', 'SUCCEEDED', 1, true],
      ['occurrence-digest', 'SUCCEEDED', 1, true],
    ]);
    expect(run.ok).toBe(true);
    expect(run.rows[0].report).toMatch(/^# Occurrence digest\n/);
    // The second digest's day covers the first occurrence, which had been recorded by then.
    expect(run.rows[1].report).toContain('| occurrence-digest |');
    expect(run.announcements).toHaveLength(2);
    expect(run.deadLetters).toEqual({ 'customer-report': 0, 'occurrence-digest': 0, 'ndjson-export': 0 });
  });

  it('delivered each occurrence twice to the trigger, and the second found it recorded', () => {
    expect(run.fires).toHaveLength(4);
    const outcomes = run.fires.map((f) => f.outcome).sort();
    expect(outcomes.filter((o) => o === 'recorded')).toHaveLength(2);
    expect(outcomes.every((o) => ['recorded', 'pending-re-enqueued', 'duplicate-suppressed'].includes(o))).toBe(true);
  });

  it("kept each function's log lines apart, and counted its invocations and requests", () => {
    const byFn = new Set(run.logs.map((l) => l.fn));
    // The notifier's announcement is a DEBUG line (one INFO line per happy-path occurrence: the worker's outcome);
    // the trigger's lines are the local run's second delivery of each schedule event, re-enqueued.
    expect(byFn).toEqual(new Set(['trigger', 'worker occurrence-digest']));
    const workerLines = run.logs.filter((l) => l.fn === 'worker occurrence-digest').map((l) => JSON.parse(l.line));
    expect(workerLines.filter((l) => l.message === 'occurrence SUCCEEDED')).toHaveLength(2);
    const stats = Object.fromEntries(run.functions.map((f) => [f.label, f]));
    expect(stats.trigger.invocations).toBe(4);
    expect(stats['worker occurrence-digest'].requests).toBeGreaterThan(100); // 64 shard queries per status
    expect(stats.notifier.invocations).toBeGreaterThanOrEqual(1);
    expect(formatLocalRun(run)).toContain("2 occurrence(s) ended as their jobs' policies dictate (2 SUCCEEDED)");
  });

  it("names a function's variable that refers to what the run does not create, and how to give it", async () => {
    const copy = mkdtempSync(path.join(tmpdir(), 'sample-secret-'));
    try {
      cpSync(assemblyDir, copy, { recursive: true });
      const file = path.join(copy, 'ScheduledJobs.template.json');
      const template = JSON.parse(readFileSync(file, 'utf8'));
      template.Resources.ApiKey = { Type: 'AWS::SecretsManager::Secret', Properties: {} };
      template.Resources[digestWorker().function].Properties.Environment.Variables.API_KEY_ARN = { Ref: 'ApiKey' };
      writeFileSync(file, JSON.stringify(template));
      await expect(runLocally({ assemblyDir: copy, endpoint: server.endpoint })).rejects.toThrow(
        `worker occurrence-digest (${digestWorker().function}): environment variable API_KEY_ARN: Ref to ApiKey (AWS::SecretsManager::Secret), which the local run does not create; give it with environment: { 'occurrence-digest': { API_KEY_ARN: '...' } }`,
      );
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('runs again on the same emulator (its own resource names) from the command-line form', async () => {
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
    const code = await main([
      '--assembly',
      assemblyDir,
      '--endpoint',
      server.endpoint,
      '--timeout',
      '90',
      '--jobs',
      'occurrence-digest',
    ]);
    expect(printed.join('\n')).toContain("1 occurrence(s) ended as their jobs' policies dictate (1 SUCCEEDED)");
    expect(code).toBe(0);
  });
});

function digestSchedule() {
  const schedule = app.schedules.find((s) => s.jobId === 'occurrence-digest');
  if (schedule === undefined) throw new Error('the sample app has no occurrence-digest schedule');
  return schedule;
}

function digestWorker() {
  const worker = app.workers.find((w) => w.workerId === 'occurrence-digest');
  if (worker === undefined) throw new Error('the sample app has no occurrence-digest worker');
  return worker;
}

/** moto_server's command, or undefined (with the reason printed) when it cannot be had: the end-to-end part is skipped. */
function motoOrSkip(): MotoCommand | undefined {
  try {
    return ensureMotoServer();
  } catch (error) {
    if (!(error instanceof MotoUnavailableError)) throw error;
    console.warn(`skipping runLocally on moto: ${error.message}`);
    return undefined;
  }
}
