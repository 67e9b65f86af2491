/**
 * runLocally on a stack with a customer-managed key (ScheduledJobsProps.encryptionKey): its jobs run end to end on
 * moto, announced, and their reports are read back, as on a stack without one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScheduledJobs } from '../../lib/scheduled-jobs';
import { runLocally } from '../../testing';
import { formatLocalRun } from '../../testing/local/format';
import { type MotoServer, startMotoServer } from '../../testing/local/moto-server';

const assemblyDir = mkdtempSync(path.join(tmpdir(), 'keyed-cdk-out-'));
let moto: MotoServer;
const JOBS = ['allow-all-job', 'skip-job'];

beforeAll(async () => {
  const app = new App({ outdir: assemblyDir, context: { 'aws:cdk:enable-asset-metadata': true } });
  const stack = new Stack(app, 'Keyed');
  const encryptionKey = new kms.Key(stack, 'Key', { enableKeyRotation: true });
  const jobs = new ScheduledJobs(stack, 'Jobs', { encryptionKey });
  const worker = jobs.addWorker('policies', { entry: path.join(__dirname, 'fixtures', 'policies-worker.ts') });
  for (const id of JOBS)
    jobs.addJob(id, {
      schedule: ScheduleExpression.expression('cron(0 * * * ? *)'),
      worker,
      timeout: Duration.seconds(30),
      leaseDuration: Duration.seconds(10),
      heartbeatInterval: Duration.seconds(2),
      leaseSafetyMargin: Duration.seconds(2),
    });
  app.synth();
  moto = await startMotoServer();
});
afterAll(async () => {
  await moto?.stop();
  rmSync(assemblyDir, { recursive: true, force: true });
});

describe('Function: runLocally, on a stack with a customer-managed key', () => {
  it('runs every occurrence to SUCCEEDED, announces it and reads its report', async () => {
    const run = await runLocally({ assemblyDir, endpoint: moto.endpoint, count: 2, jobs: JOBS });
    expect(run.ok, formatLocalRun(run)).toBe(true);
    expect(run.rows.map((r) => r.status)).toEqual(Array(4).fill('SUCCEEDED'));
    expect(run.rows.every((r) => r.announced && typeof r.report === 'string' && r.report.length > 0)).toBe(true);
  });
});
