/**
 * runLocally judges every occurrence against its job's policies: on an app with a job per overlap policy whose
 * occurrences are fired at once, each policy's outcome is what it dictates and the run is ok; fired in turn, every
 * occurrence runs; a job that fails makes the run not ok and says why. On moto, from the app's synthesized template.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRun, runLocally } from '../../testing';
import { formatLocalRun } from '../../testing/local/format';
import { type MotoServer, startMotoServer } from '../../testing/local/moto-server';
import { FAILING_JOB, POLICY_JOBS, synthPoliciesApp, UNIMPLEMENTED_JOB } from './fixtures/policies-app';

const assemblyDir = mkdtempSync(path.join(tmpdir(), 'policies-cdk-out-'));
let moto: MotoServer;

beforeAll(async () => {
  synthPoliciesApp(assemblyDir);
  moto = await startMotoServer();
});
afterAll(async () => {
  await moto?.stop();
  rmSync(assemblyDir, { recursive: true, force: true });
});

const statuses = (run: LocalRun, jobId: string) => run.rows.filter((r) => r.jobId === jobId).map((r) => r.status);

describe('Function: runLocally, judged by each job policy', () => {
  it('fired at once, ends each job as its overlap policy dictates, and the run is ok', async () => {
    const run = await runLocally({
      assemblyDir,
      endpoint: moto.endpoint,
      fire: 'at-once',
      count: 3,
      jobs: Object.values(POLICY_JOBS),
      redeliverLate: true,
    });
    const why = formatLocalRun(run);
    expect(run.ok, why).toBe(true);
    expect(run.rows.every((r) => r.expected)).toBe(true);
    expect(statuses(run, POLICY_JOBS.allowAll)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(statuses(run, POLICY_JOBS.bufferAll)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    // skip: one run at a time; the others name the one they yielded to.
    const skip = run.rows.filter((r) => r.jobId === POLICY_JOBS.skip);
    expect(skip.filter((r) => r.status === 'SUCCEEDED').length).toBeGreaterThanOrEqual(1);
    for (const r of skip.filter((r) => r.status === 'SKIPPED')) expect(r.why).toMatch(/^overlap, yielded to \d{4}-/);
    expect(statuses(run, POLICY_JOBS.bufferOne).every((s) => s === 'SUCCEEDED' || s === 'SKIPPED')).toBe(true);
    // cancelOther: the runs that were cancelled name their canceller; at least the last start ran to its end.
    const cancelOther = run.rows.filter((r) => r.jobId === POLICY_JOBS.cancelOther);
    expect(cancelOther.some((r) => r.status === 'SUCCEEDED')).toBe(true);
    for (const r of cancelOther.filter((r) => r.status === 'CANCELLED')) expect(r.why).toMatch(/^cancelled by /);
    // The late redeliveries recorded nothing new.
    const late = run.fires.filter((f) => f.late);
    expect(late).toHaveLength(15);
    expect(new Set(late.map((f) => f.outcome))).toEqual(new Set(['duplicate-suppressed']));
    expect(why).toMatch(/15 occurrence\(s\) ended as their jobs' policies dictate/);
  });

  it('fired in turn, runs every occurrence of every policy', async () => {
    const run = await runLocally({ assemblyDir, endpoint: moto.endpoint, count: 2, jobs: Object.values(POLICY_JOBS) });
    expect(run.ok, formatLocalRun(run)).toBe(true);
    expect(run.fireMode).toBe('in-turn');
    expect(run.rows.map((r) => r.status)).toEqual(Array(10).fill('SUCCEEDED'));
  });

  it('is not ok when a job fails, and says why beside the row', async () => {
    const run = await runLocally({ assemblyDir, endpoint: moto.endpoint, jobs: [FAILING_JOB], copies: 1 });
    expect(run.ok).toBe(false);
    expect(run.rows).toEqual([
      expect.objectContaining({
        status: 'FAILED',
        expected: false,
        why: expect.stringMatching(/the upstream is down/),
      }),
    ]);
    expect(formatLocalRun(run)).toMatch(/1 of 1 occurrence\(s\) did not end as their policy dictates \(!\)/);
  });

  it("names the resources and the occurrences CLI's options for them", async () => {
    const run = await runLocally({ assemblyDir, endpoint: moto.endpoint, jobs: [POLICY_JOBS.skip], copies: 1 });
    const { resources } = run;
    expect(resources.endpoint).toBe(moto.endpoint);
    expect(resources.scheduleGroupName).toMatch(/^Policies-Jobs-Schedules-Group-.*-[0-9a-f]{6}$/);
    expect(Object.keys(resources.workerQueues)).toEqual(['policies']);
    expect(resources.cliOptions).toEqual([
      '--endpoint',
      moto.endpoint,
      '--table',
      resources.tableName,
      '--bucket',
      resources.bucketName,
      '--schedule-group',
      resources.scheduleGroupName,
      '--worker-queue',
      `policies=${resources.workerQueues.policies}`,
    ]);
  });

  it("stops before anything fires when a schedule routes a job its worker's defineWorker does not implement", async () => {
    const broken = mkdtempSync(path.join(tmpdir(), 'policies-unimplemented-cdk-out-'));
    try {
      synthPoliciesApp(broken, { unimplemented: true });
      const run = runLocally({ assemblyDir: broken, endpoint: moto.endpoint, copies: 1 });
      await expect(run).rejects.toThrow(
        new RegExp(
          `worker policies: its defineWorker\\(\\{ jobs \\}\\) has no job ${UNIMPLEMENTED_JOB} \\(it has skip-job, `,
        ),
      );
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });
});
