/**
 * An operator's cancel (functions/protocol/cancel-occurrence.ts) over HTTP against moto, with the real condition
 * expressions, racing the real worker: a running long job is stopped within one heartbeat and commits no report; a
 * PENDING and a BUFFERED occurrence are closed and never run; an unknown or finished occurrence is refused with no
 * write. moto's conditional writes are not atomic under concurrency: each cancel here is one request at a time.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { documentClient } from '../../functions/aws/clients';
import { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { cancelOccurrence } from '../../functions/protocol/cancel-occurrence';
import { LeaseLostError } from '../../functions/protocol/errors';
import type { OccurrenceKey } from '../../functions/protocol/occurrence';
import type { LocalPipeline } from '../../scripts/local/pipeline';
import {
  countingJob,
  JOB_ID,
  jobByTime,
  occurrences,
  pipeline,
  testSettings,
  useMoto,
  waitForStatus,
} from './emulator';

const emulator = useMoto();
const BY = 'alice@ops-host';

function cancel(p: LocalPipeline, key: OccurrenceKey, note?: string) {
  const store = new OperatorOccurrenceStore(documentClient(), p.resources.tableName);
  return cancelOccurrence({ store, clock: { now: () => Date.now() }, newId: randomUUID }, key, {
    by: BY,
    ...(note === undefined ? {} : { note }),
  });
}

async function waitFor(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('timed out');
}

describe('an operator cancel on moto', () => {
  it('stops a running long job within one heartbeat (2 s): CANCELLED with who and why, no report, nothing announced', async () => {
    const job = countingJob(60_000);
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: job } });
    const [key] = occurrences(1);
    p.start();
    await p.fire([key]);
    await waitFor(async () => (await p.store.get(key))?.status === 'RUNNING' && job.runs.length === 1);

    const cancelledAt = Date.now();
    expect(await cancel(p, key, 'upstream broken')).toMatchObject({
      outcome: 'cancelled',
      stopsBy: expect.any(String),
    });
    await waitFor(async () => job.aborted.length === 1);
    const stoppedAfterMs = Date.now() - cancelledAt;
    await p.stop();

    // One heartbeat (2 s) plus the time the extend and the poll take on a loaded machine.
    expect(stoppedAfterMs).toBeLessThan(2_000 + 3_000);
    expect(job.abortReasons[0]).toBeInstanceOf(LeaseLostError);
    expect(await p.store.get(key)).toMatchObject({
      status: 'CANCELLED',
      cancelledByOperator: BY,
      cancelNote: 'upstream broken',
      leaseId: expect.stringMatching(/^cancelled-by-operator-/),
      history: [expect.objectContaining({ outcome: 'cancelled', by: BY, note: 'upstream broken' })],
    });
    expect((await p.store.get(key))?.statusShard).toMatch(/^CANCELLED#/);
    expect(await p.reportKeys()).toEqual([]);
    expect(await p.drainAnnouncements()).toEqual([]);
  });

  it('closes a PENDING occurrence before any worker claims it; its message is then consumed without a run', async () => {
    const job = countingJob();
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: job } });
    const [key] = occurrences(1);
    await p.fire([key]);
    expect(await cancel(p, key)).toMatchObject({ outcome: 'cancelled', previous: { status: 'PENDING' } });

    p.start();
    // The worker receives the message within a poll, finds a finished row and acknowledges it.
    await waitFor(async () => emulator.logs.some((l) => l.includes('already finished')), 10_000);
    await p.stop();
    expect(job.runs).toEqual([]);
    expect(await p.deadLetterCount()).toBe(0);
    expect((await p.store.get(key))?.status).toBe('CANCELLED');
    expect(await p.reportKeys()).toEqual([]);
  });

  it('closes a BUFFERED occurrence: when the running one ends, the buffer moves on without running it', async () => {
    const [later, first] = occurrences(2);
    const job = jobByTime({ [first.scheduledTime]: 6_000 }, new Set(), 200);
    const p = await pipeline(emulator, {
      jobs: { [JOB_ID]: job },
      settings: [testSettings({ overlap: 'bufferAll' })],
    });
    p.start();
    await p.fire([first]);
    await waitFor(async () => job.runs.length === 1);
    await p.fire([later]);
    await waitForStatus(p, later, ['BUFFERED']);

    expect(await cancel(p, later)).toMatchObject({ outcome: 'cancelled', previous: { status: 'BUFFERED' } });
    await waitForStatus(p, first, ['SUCCEEDED']);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await p.stop();

    expect(job.runs).toEqual([first.scheduledTime]);
    expect((await p.store.get(later))?.status).toBe('CANCELLED');
    expect(await p.reportKeys()).toHaveLength(1);
  });

  it('refuses an unknown occurrence and a SUCCEEDED one with the reason, and writes nothing', async () => {
    const job = countingJob();
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: job } });
    const [done, unknown] = occurrences(2);
    p.start();
    await p.fire([done]);
    const [succeeded] = await p.waitUntilSettled([done], 20_000);
    await p.stop();

    expect(await cancel(p, unknown)).toEqual({ outcome: 'refused', reason: 'there is no such occurrence' });
    expect(await p.store.get(unknown)).toBeUndefined();
    expect(await cancel(p, done)).toMatchObject({ outcome: 'refused', status: 'SUCCEEDED' });
    expect(await p.store.get(done)).toEqual(succeeded);
  });
});
