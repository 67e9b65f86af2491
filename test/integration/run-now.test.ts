/**
 * `occurrences run` end to end on moto: the operator's runJobNow (functions/protocol/job-control.ts) records the
 * occurrence through the trigger's own insert and enqueues it, and the real worker applies the overlap policy to it,
 * the job's or the one given for this occurrence.
 */
import { describe, expect, it } from 'vitest';
import { DynamoJobStateStore } from '../../functions/aws/job-state-store';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import { type DeployedJob, runJobNow } from '../../functions/protocol/job-control';
import type { JobSettings, OverlapPolicy } from '../../functions/protocol/job-settings';
import { type Clock, systemClock } from '../../functions/protocol/ports';
import type { LocalPipeline } from '../../scripts/local/pipeline';
import { LOCAL_WORKER } from '../../testing/local/local-aws';
import { countingJob, JOB_ID, pipeline, testSettings, useMoto, waitForStatus } from './emulator';

const emulator = useMoto();
const SETTLE_MS = 30_000;
const silent = { info: () => {}, warn: () => {}, error: () => {} };

/** The job as the CLI's catalogue would read it from its schedule. */
function scheduledJob(settings: JobSettings): DeployedJob {
  return {
    id: JOB_ID,
    schedule: 'cron(0 6 * * ? *)',
    timeZone: 'UTC',
    state: 'ENABLED',
    route: {
      worker: LOCAL_WORKER,
      deadlineSeconds: settings.retry.deadlineSeconds,
      retentionDays: settings.retentionDays,
    },
  };
}

/** runJobNow with the pipeline's table and queue, at the clock given (a second apart for two runs). */
async function runNow(p: LocalPipeline, settings: JobSettings, clock: Clock, overlap?: OverlapPolicy) {
  const deps = {
    states: new DynamoJobStateStore(p.clients.documents, p.resources.tableName),
    clock,
    trigger: {
      store: p.store,
      queues: new Map([[LOCAL_WORKER, new SqsWorkQueue(p.clients.sqs, p.resources.jobQueueUrl)]]),
      clock,
      logger: silent,
    },
  };
  const result = await runJobNow(deps, scheduledJob(settings), { by: 'test@ci', ...(overlap && { overlap }) });
  if (result.outcome !== 'recorded') throw new Error(`run was ${result.outcome}`);
  return { jobId: JOB_ID, scheduledTime: result.scheduledTime };
}

const later = (ms: number): Clock => ({ now: () => systemClock.now() + ms });

/** A job of 3 s under the policy skip, and a first `run` of it that is RUNNING. */
async function firstRunRunning() {
  const settings = testSettings({ overlap: 'skip' });
  const job = countingJob(3_000);
  const p = await pipeline(emulator, { jobs: { [JOB_ID]: job }, settings: [settings] });
  p.start();
  const first = await runNow(p, settings, systemClock);
  await waitForStatus(p, first, ['RUNNING']);
  return { settings, job, p, first };
}

describe('occurrences run, through the worker on moto', () => {
  it('obeys the job policy: a run while the previous run runs is SKIPPED, naming it, and runs nothing', async () => {
    const { settings, job, p, first } = await firstRunRunning();
    const second = await runNow(p, settings, later(1_000));
    const [a, b] = await p.waitUntilSettled([first, second], SETTLE_MS);
    await p.stop();

    expect(a).toMatchObject({ status: 'SUCCEEDED', origin: 'run', requestedBy: 'test@ci' });
    expect(b).toMatchObject({ status: 'SKIPPED', skipReason: 'overlap', yieldedTo: first.scheduledTime });
    expect(job.runs).toEqual([first.scheduledTime]);
  });

  it('--overlap allowAll runs it beside the running one, both to SUCCEEDED', async () => {
    const { settings, job, p, first } = await firstRunRunning();
    const second = await runNow(p, settings, later(1_000), 'allowAll');
    await waitForStatus(p, second, ['RUNNING']);
    const [a, b] = await p.waitUntilSettled([first, second], SETTLE_MS);
    await p.stop();

    expect([a?.status, b?.status]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(b).toMatchObject({ overlap: 'allowAll', origin: 'run' });
    expect([...job.runs].sort()).toEqual([first.scheduledTime, second.scheduledTime]);
  });
});
