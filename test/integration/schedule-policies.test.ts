/**
 * The schedule policies against moto's DynamoDB (the real condition expressions of the slot, the compare-and-swap
 * writes, the fenced SKIPPED/BUFFERED/CANCELLED writes) and moto's Scheduler API (the pause after failures), through
 * the real trigger, worker and notifier handlers of scripts/local.
 */
import { GetScheduleCommand } from '@aws-sdk/client-scheduler';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { documentClient } from '../../functions/aws/clients';
import { LeaseLostError } from '../../functions/protocol/errors';
import type { JobSettings } from '../../functions/protocol/job-settings';
import type { OccurrenceKey } from '../../functions/protocol/occurrence';
import { ENV } from '../../functions/runtime-env';
import type { LocalPipeline } from '../../scripts/local/pipeline';
import {
  type CountingJob,
  enabledSchedule as emulatorSchedule,
  JOB_ID,
  jobByTime,
  pipeline,
  testSettings,
  useMoto,
  waitForStatus,
} from './emulator';

const emulator = useMoto();
const SETTLE_MS = 30_000;
afterEach(() => {
  delete process.env[ENV.scheduleGroup];
});

/** Three whole-second scheduled times of the job, a second apart and a little in the past: A < B < C. */
function times(): [OccurrenceKey, OccurrenceKey, OccurrenceKey] {
  const base = Math.floor(Date.now() / 1000) * 1000 - 10_000;
  const at = (i: number) => ({
    jobId: JOB_ID,
    scheduledTime: new Date(base + i * 1000).toISOString().replace('.000Z', 'Z'),
  });
  return [at(0), at(1), at(2)];
}

async function start(job: CountingJob, settings: JobSettings): Promise<LocalPipeline> {
  const p = await pipeline(emulator, { jobs: { [JOB_ID]: job }, settings: [settings] });
  p.start();
  return p;
}

async function jobState(p: LocalPipeline): Promise<Record<string, unknown> | undefined> {
  const out = await p.clients.documents.send(
    new GetCommand({
      TableName: p.resources.tableName,
      Key: { jobId: JOB_ID, scheduledTime: '#job' },
      ConsistentRead: true,
    }),
  );
  return out.Item;
}

describe('two occurrences of one job', () => {
  it('skip: the second, fired while the first runs, is SKIPPED for overlap and runs nothing', async () => {
    const [a, b] = times();
    const job = jobByTime({ [a.scheduledTime]: 3_000 });
    const p = await start(job, testSettings({ overlap: 'skip' }));
    await p.fire([a]);
    await waitForStatus(p, a, ['RUNNING']);
    await p.fire([b]);
    const [rowA, rowB] = await p.waitUntilSettled([a, b], SETTLE_MS);
    await p.stop();

    expect(rowA).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
    expect(rowB).toMatchObject({ status: 'SKIPPED', skipReason: 'overlap', yieldedTo: a.scheduledTime, attempt: 0 });
    expect(job.runs).toEqual([a.scheduledTime]);
    expect((await jobState(p))?.slotTime).toBeUndefined();
  });

  it('bufferAll: fired while the first runs, in reverse order, they start one at a time in scheduled-time order', async () => {
    const [a, b, c] = times();
    const job = jobByTime({ [a.scheduledTime]: 3_000 });
    const p = await start(job, testSettings({ overlap: 'bufferAll' }));
    await p.fire([a]);
    await waitForStatus(p, a, ['RUNNING']);
    await p.fire([c]);
    await waitForStatus(p, c, ['BUFFERED']);
    await p.fire([b]);
    await waitForStatus(p, b, ['BUFFERED']);
    expect((await jobState(p))?.buffer).toEqual([b.scheduledTime, c.scheduledTime]);
    const rows = await p.waitUntilSettled([a, b, c], SETTLE_MS);
    await p.stop();

    expect(rows.map((r) => r?.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(job.runs).toEqual([a.scheduledTime, b.scheduledTime, c.scheduledTime]);
    expect(await jobState(p)).not.toHaveProperty('buffer');
  });

  it('cancelOther: the later one cancels a job that never stops on its own; the abort reaches it through its signal', async () => {
    const [a, b] = times();
    const job = jobByTime({ [a.scheduledTime]: 600_000 });
    const p = await start(job, testSettings({ overlap: 'cancelOther' }));
    await p.fire([a]);
    await waitForStatus(p, a, ['RUNNING']);
    await p.fire([b]);
    const [rowA, rowB] = await p.waitUntilSettled([a, b], SETTLE_MS);
    // A's heartbeat (every 2 s) finds its lease revoked and aborts the job.
    for (let i = 0; i < 100 && job.aborted.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    await p.stop();

    expect(rowA).toMatchObject({ status: 'CANCELLED', cancelledBy: b.scheduledTime });
    expect(rowB).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
    expect(job.aborted).toEqual([a.scheduledTime]);
    expect(job.abortReasons[0]).toBeInstanceOf(LeaseLostError);
    expect(await p.reportKeys()).toEqual([`reports/${JOB_ID}/${b.scheduledTime}.txt`]);
  });
});

describe('two schedule keys of one job (schedules created at run time)', () => {
  it('skip: a slow occurrence of one key never skips the other key, while a second of the same key is SKIPPED', async () => {
    const [a, b, c] = times();
    const slow = { ...a, scheduleKey: 'cust-1' };
    const otherKey = { ...b, scheduleKey: 'cust-2' };
    const sameKey = { ...c, scheduleKey: 'cust-1' };
    const job = jobByTime({ [a.scheduledTime]: 4_000 });
    const p = await start(job, testSettings({ overlap: 'skip' }));
    await p.fire([slow]);
    await waitForStatus(p, slow, ['RUNNING']);
    await p.fire([otherKey, sameKey]);
    const [rowSlow, rowOther, rowSame] = await p.waitUntilSettled([slow, otherKey, sameKey], SETTLE_MS);
    await p.stop();

    expect(rowSlow).toMatchObject({ status: 'SUCCEEDED', scheduleKey: 'cust-1' });
    expect(rowOther).toMatchObject({ status: 'SUCCEEDED', scheduleKey: 'cust-2' });
    expect(rowSame).toMatchObject({ status: 'SKIPPED', skipReason: 'overlap', yieldedTo: a.scheduledTime });
    expect(job.runs.sort()).toEqual([a.scheduledTime, b.scheduledTime]);
    expect((await p.reportKeys()).sort()).toEqual([
      `reports/${JOB_ID}/cust-1/${a.scheduledTime}.txt`,
      `reports/${JOB_ID}/cust-2/${b.scheduledTime}.txt`,
    ]);
  });
});

describe('a paused job', () => {
  it('a delivery is SKIPPED as paused when the job-state row says so; the claim is undone', async () => {
    const [a] = times();
    const job = jobByTime({});
    const p = await start(job, testSettings());
    await p.clients.documents.send(
      new PutCommand({
        TableName: p.resources.tableName,
        Item: {
          jobId: JOB_ID,
          scheduledTime: '#job',
          version: 1,
          pausedAt: new Date().toISOString(),
          pausedBy: 'test',
          pauseCause: 'operator',
        },
      }),
    );
    await p.fire([a]);
    const [row] = await p.waitUntilSettled([a], SETTLE_MS);
    await p.stop();

    expect(row).toMatchObject({ status: 'SKIPPED', skipReason: 'paused', attempt: 0 });
    expect(job.runs).toEqual([]);
  });
});

describe('pauseAfterFailures', () => {
  const enabledSchedule = (group: string) => emulatorSchedule(emulator.moto.endpoint, group);

  async function pausedState(p: LocalPipeline): Promise<Record<string, unknown> | undefined> {
    let state = await jobState(p);
    for (let i = 0; i < 50 && state?.pausedAt === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100));
      state = await jobState(p);
    }
    return state;
  }

  it("disables the job's schedule on moto's Scheduler after N FAILED occurrences in a row", async () => {
    const group = 'itest-jobs';
    const scheduler = await enabledSchedule(group);
    const [a, b] = times();
    const failing = new Set([a.scheduledTime, b.scheduledTime]);
    const p = await start(jobByTime({}, failing), testSettings({ pauseAfterFailures: 2, retry: { maxAttempts: 1 } }));
    await p.fire([a]);
    await p.waitUntilSettled([a], SETTLE_MS);
    expect((await scheduler.send(new GetScheduleCommand({ Name: JOB_ID, GroupName: group }))).State).toBe('ENABLED');
    await p.fire([b]);
    const [rowB] = await p.waitUntilSettled([b], SETTLE_MS);
    const state = await pausedState(p);
    await p.stop();

    expect(rowB?.status).toBe('FAILED');
    expect(state).toMatchObject({ consecutiveFailures: 2, pausedBy: 'pauseAfterFailures', pauseCause: 'failures' });
    expect(String(state?.pauseNote)).toMatch(/^paused after 2 FAILED occurrences in a row; last: attempt 1: /);
    const schedule = await scheduler.send(new GetScheduleCommand({ Name: JOB_ID, GroupName: group }));
    expect(schedule.State).toBe('DISABLED');
    expect(schedule.ScheduleExpression).toBe('rate(1 hour)');
  });

  /** One occurrence of a job that pauses after one FAILED occurrence, run with `install`'s fault: its row and state. */
  async function failOnceUnder<F extends { uninstall(): void }>(install: () => F) {
    const [a] = times();
    const p = await start(
      jobByTime({}, new Set([a.scheduledTime])),
      testSettings({ pauseAfterFailures: 1, retry: { maxAttempts: 1 } }),
    );
    const fault = install();
    try {
      await p.fire([a]);
      const [rowA] = await p.waitUntilSettled([a], SETTLE_MS);
      return { rowA, state: await pausedState(p), fault };
    } finally {
      await p.stop();
      fault.uninstall();
    }
  }

  // The simulation's P10 (seed 1967791534): the pause is applied, its response lost; the SDK's retry is refused by the
  // pause itself, and a read-back of the row times out. The worker still disables the schedule: the refusal returns
  // the row, which shows its own pause.
  it('disables the schedule when the pause was applied, its response lost and its retry refused by itself', async () => {
    const group = 'itest-lost-pause';
    const scheduler = await enabledSchedule(group);
    const { rowA, state, fault: lost } = await failOnceUnder(loseThePauseResponse);

    expect(rowA?.status).toBe('FAILED');
    expect(lost).toMatchObject({ pauseSent: 2, readsFailed: 0 });
    expect(state).toMatchObject({ consecutiveFailures: 1, pausedBy: 'pauseAfterFailures', pauseCause: 'failures' });
    expect((await scheduler.send(new GetScheduleCommand({ Name: JOB_ID, GroupName: group }))).State).toBe('DISABLED');
  });

  // The simulation's P10 (seed 7240001): the release that counted the failure is applied, but no answer comes back
  // past the SDK's retries. The worker sends it again; moto refuses it (the slot is gone), the refusal names this
  // run's lease as the one counted last, so the failure counts once and the job pauses.
  it('pauses when the counting release was applied and its answer lost past the SDK retries', async () => {
    const group = 'itest-lost-release';
    const scheduler = await enabledSchedule(group);
    const { rowA, state, fault: lost } = await failOnceUnder(loseTheCountingReleaseAnswer);

    expect(rowA?.status).toBe('FAILED');
    expect(lost.releasesSent).toBe(2);
    expect(state).toMatchObject({ consecutiveFailures: 1, pausedBy: 'pauseAfterFailures', pauseCause: 'failures' });
    expect(state?.slotTime).toBeUndefined();
    expect((await scheduler.send(new GetScheduleCommand({ Name: JOB_ID, GroupName: group }))).State).toBe('DISABLED');
  });
});

type RawRequest = { request?: { body?: unknown } };

/** The handlers' DynamoDB client's middleware stack, typed as far as these faults use it (raw request bodies). */
function handlersDynamoStack() {
  return documentClient().middlewareStack as unknown as {
    remove(name: string): boolean;
    add(
      middleware: (next: (args: RawRequest) => Promise<unknown>) => (args: RawRequest) => Promise<unknown>,
      options: object,
    ): void;
  };
}

/**
 * On the handlers' DynamoDB client, outside the SDK's retries: the first release that counts a run end is sent and
 * applied, and the caller gets a timeout instead of its answer (as when every retry of it timed out). Counts the
 * releases sent.
 */
function loseTheCountingReleaseAnswer(): { releasesSent: number; uninstall: () => void } {
  const NAME = 'loseTheCountingReleaseAnswer';
  const stack = handlersDynamoStack();
  const seen = { releasesSent: 0, uninstall: () => void stack.remove(NAME) };
  stack.add(
    (next) => async (args) => {
      const raw = args.request?.body;
      const body = raw instanceof Uint8Array ? new TextDecoder().decode(raw) : String(raw ?? '');
      if (!body.includes('REMOVE #slotTime') || !body.includes('#countedLeaseId')) return next(args);
      seen.releasesSent++;
      const out = await next(args);
      if (seen.releasesSent > 1) return out;
      throw Object.assign(new Error('socket timed out after the request was sent'), { name: 'TimeoutError' });
    },
    { step: 'build', name: NAME, override: true },
  );
  return seen;
}

/**
 * On the handlers' DynamoDB client: the pause after failures is sent, applied and its response dropped, then sent
 * again as the SDK would (moto refuses it: the row is paused by the first); after that, the next read of the
 * job-state row times out. Counts what happened.
 */
function loseThePauseResponse(): { pauseSent: number; readsFailed: number; uninstall: () => void } {
  const NAME = 'loseThePauseResponse';
  const stack = handlersDynamoStack();
  const seen = { pauseSent: 0, readsFailed: 0, uninstall: () => void stack.remove(NAME) };
  let armedRead = false;
  stack.add(
    (next) => async (args) => {
      const raw = args.request?.body;
      const body = raw instanceof Uint8Array ? new TextDecoder().decode(raw) : String(raw ?? '');
      if (armedRead && body.includes('"#job"') && !body.includes('UpdateExpression')) {
        armedRead = false;
        seen.readsFailed++;
        throw Object.assign(new Error('socket timed out after the request was sent'), { name: 'TimeoutError' });
      }
      if (seen.pauseSent > 0 || !body.includes('#pausedAt = :at')) return next(args);
      seen.pauseSent++;
      await next(args);
      armedRead = true;
      seen.pauseSent++;
      return next(args);
    },
    { step: 'build', name: NAME, override: true },
  );
  return seen;
}
