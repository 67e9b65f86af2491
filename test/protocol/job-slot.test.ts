/**
 * protocol/job-slot.ts: the overlap policies and the pause after failures, driven through the worker handler over
 * the real adapters and the stateful fakes (which run the real condition expressions), on fake timers. The decision
 * itself is tested case by case in overlap-policy.test.ts; here, what the worker writes and sends for it.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import { LeaseLostError } from '../../functions/protocol/errors';
import type { JobSettingsInput } from '../../functions/protocol/job-settings';
import type { JobDefinition, ScheduleSwitch } from '../../functions/protocol/ports';
import { faults } from '../../sim/fakes/fake-aws';
import { indexed } from '../aws/fixtures';
import { type Harness, makeHarness, SEED_TIMING, startDelivery, T0, useHarnessTime } from '../support/harness';

const A = '2026-11-30T06:00:00Z';
const B = '2026-11-30T06:01:00Z';
const C = '2026-11-30T06:02:00Z';
const message = (scheduledTime: string) => encodeEnvelope({ jobId: 'report', scheduledTime });
const iso = (ms: number) => new Date(ms).toISOString();

let h: Harness;
useHarnessTime();

/** A job that works for durations[scheduledTime] ms (default 1 s) unless aborted, and fails for the times in `failing`. */
function jobOf(durations: Record<string, number>, failing: ReadonlySet<string> = new Set()) {
  const started: string[] = [];
  const aborted: { scheduledTime: string; at: number; reason: unknown }[] = [];
  const definition: JobDefinition = {
    reportExtension: 'txt',
    async run(occurrence, { signal }) {
      started.push(occurrence.scheduledTime);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, durations[occurrence.scheduledTime] ?? 1_000);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            aborted.push({ scheduledTime: occurrence.scheduledTime, at: Date.now(), reason: signal.reason });
            reject(signal.reason);
          },
          { once: true },
        );
      });
      if (failing.has(occurrence.scheduledTime)) throw new Error(`upstream down for ${occurrence.scheduledTime}`);
      return { body: `report of ${occurrence.scheduledTime}`, contentType: 'text/plain' };
    },
  };
  return { definition, started, aborted };
}

function harness(
  job: JobDefinition,
  settings: Partial<JobSettingsInput> = {},
  schedules?: ScheduleSwitch,
  stuckAfterSeconds?: number,
) {
  h = makeHarness({
    jobs: { report: job },
    settings: [{ id: 'report', ...SEED_TIMING, ...settings }],
    schedules,
    stuckAfterSeconds,
  });
  return h;
}

const row = (scheduledTime: string) => h.aws.row('report', scheduledTime);
const jobState = () => h.aws.row('report', '#job');
const record = async (...times: string[]) => {
  for (const scheduledTime of times) await h.trigger({ jobId: 'report', scheduledTime });
};
/** Deliver a message and run the clock while its job works (the fake timers stand still otherwise). */
async function deliverRunning(scheduledTime: string, ms = 1_000): Promise<string[]> {
  const delivery = startDelivery(h, message(scheduledTime));
  await vi.advanceTimersByTimeAsync(ms);
  return delivery.promise;
}
/** The messages sent since the triggers (the wakes of buffered occurrences). */
const sentAfter = (count: number) => h.aws.sent.slice(count);

describe('overlap skip (the default)', () => {
  it('a slow predecessor: the next occurrence is SKIPPED for overlap, its claim undone, and the slot freed at the end', async () => {
    const job = jobOf({ [A]: 100_000 });
    harness(job.definition);
    await record(A, B);
    const a = startDelivery(h, message(A));
    await vi.advanceTimersByTimeAsync(30_000);

    expect(await h.deliver(message(B))).toEqual([]);

    expect(row(B)).toMatchObject({ status: 'SKIPPED', skipReason: 'overlap', yieldedTo: A, attempt: 0 });
    expect(row(B)?.leaseExpiresAt).toBeUndefined();
    expect(row(B)?.statusShard).toMatch(/^SKIPPED#/);
    expect(jobState()).toMatchObject({ slotTime: A, slotLeaseId: 'lease-1' });
    await vi.advanceTimersByTimeAsync(80_000);
    await a.promise;
    expect(row(A)?.status).toBe('SUCCEEDED');
    expect(job.started).toEqual([A]);
    expect(jobState()?.slotTime).toBeUndefined();
    expect(h.metrics.filter((m) => m.name === 'OccurrencesSkipped')).toHaveLength(1);
  });

  it('a dead predecessor: once its lease expired the next one runs, after revoking that lease so a late extend fails', async () => {
    const job = jobOf({});
    harness(job.definition);
    await record(A, B);
    // A's worker claimed it at T0, took the slot and died.
    h.aws.table.set(
      `report|${A}`,
      indexed({ ...row(A)!, status: 'RUNNING', attempt: 1, leaseId: 'dead', leaseExpiresAt: iso(T0 + 120_000) }),
    );
    h.aws.table.set('report|#job', {
      jobId: 'report',
      scheduledTime: '#job',
      version: 1,
      slotTime: A,
      slotLeaseId: 'dead',
    });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await h.deliver(message(B))).toEqual([]);
    expect(row(B)?.status).toBe('SKIPPED'); // still live at +60 s

    await vi.advanceTimersByTimeAsync(61_000);
    await h.trigger({ jobId: 'report', scheduledTime: C });
    expect(await deliverRunning(C)).toEqual([]);

    expect(row(C)?.status).toBe('SUCCEEDED');
    expect(job.started).toEqual([C]);
    // A stays RUNNING, claimable by its own redelivery, but its dead worker's lease is gone.
    expect(row(A)).toMatchObject({ status: 'RUNNING', leaseId: 'revoked-by-2026-11-30T06:02:00Z-lease-2' });
    const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-central-1' }));
    const lateExtend = new DynamoOccurrenceStore(doc, 'occurrences').extend(
      { key: { jobId: 'report', scheduledTime: A }, leaseId: 'dead' },
      Date.now() + 120_000,
      Date.now(),
    );
    await expect(lateExtend).rejects.toBeInstanceOf(LeaseLostError);
  });
});

describe('overlap bufferAll', () => {
  it('buffers while one runs and starts the buffered ones one at a time, in scheduled-time order', async () => {
    const job = jobOf({ [A]: 60_000, [B]: 10_000, [C]: 10_000 });
    harness(job.definition, { overlap: 'bufferAll' });
    await record(A, B, C);
    const triggered = h.aws.sent.length;
    const a = startDelivery(h, message(A));
    await vi.advanceTimersByTimeAsync(1_000);
    // C's message arrives before B's.
    expect(await h.deliver(message(C))).toEqual([]);
    expect(await h.deliver(message(B))).toEqual([]);
    expect(row(B)).toMatchObject({ status: 'BUFFERED', attempt: 0 });
    expect(row(C)).toMatchObject({ status: 'BUFFERED', attempt: 0 });
    expect(jobState()?.buffer).toEqual([B, C]);

    await vi.advanceTimersByTimeAsync(60_000);
    await a.promise;
    expect(sentAfter(triggered)).toEqual([message(B)]);
    const b = startDelivery(h, message(B));
    await vi.advanceTimersByTimeAsync(10_000);
    await b.promise;
    expect(sentAfter(triggered)).toEqual([message(B), message(C)]);
    const c = startDelivery(h, message(C));
    await vi.advanceTimersByTimeAsync(10_000);
    await c.promise;

    expect(job.started).toEqual([A, B, C]);
    for (const t of [A, B, C]) expect(row(t)).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
    expect(jobState()?.buffer).toBeUndefined();
    expect(jobState()?.slotTime).toBeUndefined();
  });

  it('a BUFFERED occurrence whose deadline passes while it waits ends FAILED and leaves the buffer', async () => {
    const job = jobOf({ [A]: 20_000 });
    harness(job.definition, { overlap: 'bufferAll', timeoutSeconds: 30, retry: { deadlineSeconds: 60 } });
    await record(A, B);
    const a = startDelivery(h, message(A));
    await vi.advanceTimersByTimeAsync(1_000);
    await h.deliver(message(B));
    expect(jobState()?.buffer).toEqual([B]);
    await vi.advanceTimersByTimeAsync(20_000);
    await a.promise;
    // A's release woke B, but B's message comes only after B's deadline (06:02).
    await vi.advanceTimersByTimeAsync(100_000);

    expect(await h.deliver(message(B))).toEqual([]);

    expect(row(B)?.status).toBe('FAILED');
    expect(row(B)?.lastError).toMatch(/deadline/);
    expect(jobState()?.buffer).toBeUndefined();
    expect(job.started).toEqual([A]);
  });
});

describe('the reconciler and BUFFERED occurrences', () => {
  it('re-enqueues a BUFFERED occurrence whose wake was lost, once the slot is not live, and not before', async () => {
    const job = jobOf({ [A]: 60_000 });
    harness(job.definition, { overlap: 'bufferAll' }, undefined, 30);
    await record(A, B);
    const triggered = h.aws.sent.length;
    const a = startDelivery(h, message(A));
    await vi.advanceTimersByTimeAsync(1_000);
    await h.deliver(message(B));
    await vi.advanceTimersByTimeAsync(40_000);
    expect((await h.reconciler()).fixed).toEqual([]);

    h.aws.failAlways('SendMessage', faults.unavailable);
    await vi.advanceTimersByTimeAsync(20_000);
    await a.promise;
    h.aws.clearFaults();
    expect(sentAfter(triggered)).toEqual([]);
    expect(h.logs.some((l) => l.message.startsWith('could not enqueue an occurrence of the job again'))).toBe(true);

    const report = await h.reconciler();
    expect(report.fixed).toEqual([
      { jobId: 'report', scheduledTime: B, status: 'BUFFERED', action: 'requeued', reason: 'buffered-slot-free' },
    ]);
    expect(sentAfter(triggered)).toEqual([message(B)]);
    await deliverRunning(B);
    expect(row(B)?.status).toBe('SUCCEEDED');
  });
});

describe('overlap bufferOne', () => {
  it('a buffered occurrence whose predecessor fails: the failing one keeps the slot across its retry, then the buffered one runs', async () => {
    const job = jobOf({ [A]: 5_000 }, new Set([A]));
    harness(job.definition, { overlap: 'bufferOne', retry: { maxAttempts: 2 } });
    await record(A, B, C);
    const triggered = h.aws.sent.length;
    expect(await deliverRunning(A, 5_000)).toHaveLength(1); // failed attempt 1: hidden until its retry
    expect(row(A)?.status).toBe('RETRY_WAIT');

    await h.deliver(message(B));
    await h.deliver(message(C));
    expect(row(B)?.status).toBe('BUFFERED');
    expect(row(C)).toMatchObject({ status: 'SKIPPED', skipReason: 'overlap', yieldedTo: B });

    await vi.advanceTimersByTimeAsync(60_000);
    const retry = startDelivery(h, message(A));
    await vi.advanceTimersByTimeAsync(5_000);
    await retry.promise;
    expect(row(A)?.status).toBe('FAILED');
    expect(sentAfter(triggered)).toEqual([message(B)]);
    await deliverRunning(B);

    expect(row(B)).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
    expect(job.started).toEqual([A, A, B]);
  });
});

describe('overlap cancelOther', () => {
  it('cancels a job that never stops on its own: its row is CANCELLED, the abort reaches it through the signal, and the new run starts once its lease has run out', async () => {
    const job = jobOf({ [A]: 10 * 86_400_000, [B]: 5_000 });
    harness(job.definition, { overlap: 'cancelOther' });
    await record(A, B);
    const a = startDelivery(h, message(A));
    await vi.advanceTimersByTimeAsync(50_000); // A's first heartbeat (45 s) extended its lease to T0 + 165 s

    // The worker's function timeout leaves a cancelOther job its lease besides its time limit (workerLimits).
    const b = startDelivery(h, message(B), 450_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(row(A)).toMatchObject({ status: 'CANCELLED', cancelledBy: B });
    expect(row(A)?.statusShard).toMatch(/^CANCELLED#/);
    expect(jobState()).toMatchObject({ slotTime: B, slotLeaseId: 'lease-2' });

    // A's next heartbeat (90 s) finds its lease revoked: the job is aborted, nothing written.
    await vi.advanceTimersByTimeAsync(40_000);
    expect(await a.promise).toEqual([]);
    expect(job.aborted).toHaveLength(1);
    expect(job.aborted[0].reason).toBeInstanceOf(LeaseLostError);
    expect(job.aborted[0].at).toBeLessThanOrEqual(T0 + 91_000);
    // B waits out the lease A's worker last confirmed, whatever that worker does meanwhile.
    expect(job.started).toEqual([A]);
    await vi.advanceTimersByTimeAsync(T0 + 165_000 - Date.now() + 5_000);
    await b.promise;
    expect(job.started).toEqual([A, B]);
    expect(row(B)?.status).toBe('SUCCEEDED');
    expect(row(A)?.status).toBe('CANCELLED');
    expect(h.aws.objects.has(`reports/report/${A}.txt`)).toBe(false);
    expect(h.metrics.filter((m) => m.name === 'OccurrencesCancelled')).toHaveLength(1);
  });
});

describe('overlap cancelOther and the commit point', () => {
  it("leaves a holder past its commit point to finish: not cancelled, and the new run waits out the holder's lease", async () => {
    const job = jobOf({ [B]: 5_000 });
    harness(job.definition, { overlap: 'cancelOther' });
    await record(A, B);
    const leaseExpiresAt = iso(T0 + 60_000);
    // A's worker reached its commit point (its report may be committed already) and holds the slot.
    h.aws.table.set(
      `report|${A}`,
      indexed({
        ...row(A),
        status: 'RUNNING',
        attempt: 1,
        leaseId: 'holder',
        leaseExpiresAt,
        committingLease: 'holder',
        committingAt: iso(T0 + 1_000),
      }),
    );
    h.aws.table.set('report|#job', {
      jobId: 'report',
      scheduledTime: '#job',
      version: 1,
      slotTime: A,
      slotLeaseId: 'holder',
    });

    const b = startDelivery(h, message(B), 450_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(row(A)).toMatchObject({ status: 'RUNNING', leaseId: 'holder' });
    expect(jobState()).toMatchObject({ slotTime: B });
    expect(job.started).toEqual([]);

    await vi.advanceTimersByTimeAsync(60_000 + 5_000);
    await b.promise;
    expect(job.started).toEqual([B]);
    expect(h.metrics.filter((m) => m.name === 'OccurrencesCancelled')).toHaveLength(0);
  });
});

describe('a paused job', () => {
  const paused = {
    jobId: 'report',
    scheduledTime: '#job',
    version: 4,
    pausedAt: iso(T0 - 1),
    pausedBy: 'ops',
    pauseCause: 'operator',
  };

  it.each(['skip', 'allowAll'] as const)(
    'under %s, a delivery is SKIPPED as paused without running',
    async (overlap) => {
      const job = jobOf({});
      harness(job.definition, { overlap });
      await record(A);
      h.aws.table.set('report|#job', { ...paused });
      const before = h.aws.calls.length;

      expect(await h.deliver(message(A))).toEqual([]);

      expect(row(A)).toMatchObject({ status: 'SKIPPED', skipReason: 'paused', attempt: 0 });
      expect(job.started).toEqual([]);
      expect(jobState()).toEqual(paused);
      // claim; the fast path refused (skip) or one read (allowAll); the SKIPPED write
      expect(h.aws.calls.slice(before)).toEqual(
        overlap === 'allowAll' ? ['UpdateItem', 'GetItem', 'UpdateItem'] : ['UpdateItem', 'UpdateItem', 'UpdateItem'],
      );
    },
  );
});

describe('a finished occurrence left in the buffer (its start lost its lease after the buffer write)', () => {
  it('its next delivery, refused as finished, takes it out of the buffer and wakes the one behind it, which runs', async () => {
    const job = jobOf({});
    harness(job.definition, { overlap: 'bufferAll' });
    await record(A, B);
    h.aws.table.set(`report|${A}`, { ...row(A), status: 'FAILED', lastError: 'attempt 3: Error: upstream down' });
    h.aws.table.set('report|#job', { jobId: 'report', scheduledTime: '#job', version: 3, buffer: [A, B] });
    const sent = h.aws.sent.length;

    expect(await h.deliver(message(A))).toEqual([]);
    expect(jobState()).toMatchObject({ version: 4, buffer: [B] });
    expect(sentAfter(sent)).toEqual([message(B)]);
    await deliverRunning(B);
    expect(row(B)?.status).toBe('SUCCEEDED');
    expect(job.started).toEqual([B]);
  });
});

describe('a job paused while occurrences are BUFFERED', () => {
  it('each buffered one, woken in turn, is SKIPPED as paused and leaves the buffer, waking the next', async () => {
    const job = jobOf({ [A]: 100_000 });
    harness(job.definition, { overlap: 'bufferAll' });
    await record(A, B, C);
    const a = startDelivery(h, message(A));
    await vi.advanceTimersByTimeAsync(10_000);
    await h.deliver(message(B));
    await h.deliver(message(C));
    expect(jobState()).toMatchObject({ slotTime: A, buffer: [B, C] });
    h.aws.table.set('report|#job', {
      ...jobState(),
      pausedAt: iso(T0 + 20_000),
      pausedBy: 'ops',
      pauseCause: 'operator',
    });
    const sent = h.aws.sent.length;
    await vi.advanceTimersByTimeAsync(100_000);
    await a.promise;
    expect(sentAfter(sent)).toEqual([message(B)]);

    await h.deliver(message(B));
    expect(row(B)).toMatchObject({ status: 'SKIPPED', skipReason: 'paused' });
    expect(jobState()).toMatchObject({ buffer: [C] });
    expect(sentAfter(sent)).toEqual([message(B), message(C)]);
    await h.deliver(message(C));
    expect(row(C)).toMatchObject({ status: 'SKIPPED', skipReason: 'paused' });
    expect(jobState()?.buffer).toBeUndefined();
    expect(job.started).toEqual([A]);
  });
});

/** A schedule switch that records each state it is asked to set. */
function recordingSwitch() {
  const calls: [string, string][] = [];
  return { calls, setState: async (jobId: string, state: 'ENABLED' | 'DISABLED') => void calls.push([jobId, state]) };
}

/** A job whose every attempt fails, one attempt per occurrence, pausing after one FAILED occurrence; A recorded. */
async function failingJobPausingAfterOne(): Promise<ReturnType<typeof recordingSwitch>> {
  const job = jobOf({}, new Set([A]));
  const schedules = recordingSwitch();
  harness(job.definition, { pauseAfterFailures: 1, retry: { maxAttempts: 1 } }, schedules);
  await record(A);
  return schedules;
}

/** The job's schedule was disabled once, and the pause counted once. */
function expectPausedOnce(schedules: ReturnType<typeof recordingSwitch>): void {
  expect(schedules.calls).toEqual([['report', 'DISABLED']]);
  expect(h.metrics.filter((m) => m.name === 'JobsPausedOnFailures')).toHaveLength(1);
}

describe('pauseAfterFailures', () => {
  it('the Nth FAILED in a row pauses the job with a note, disables its schedule, and later deliveries are SKIPPED', async () => {
    const job = jobOf({}, new Set([A, B]));
    const schedules = recordingSwitch();
    harness(job.definition, { pauseAfterFailures: 2, retry: { maxAttempts: 1 } }, schedules);
    await record(A, B, C);
    await deliverRunning(A);
    expect(jobState()).toMatchObject({ consecutiveFailures: 1 });
    expect(schedules.calls).toEqual([]);
    await deliverRunning(B);

    expect(jobState()).toMatchObject({
      consecutiveFailures: 2,
      pausedBy: 'pauseAfterFailures',
      pauseCause: 'failures',
      pauseNote: `paused after 2 FAILED occurrences in a row; last: attempt 1: Error: upstream down for ${B}`,
    });
    expect(jobState()?.pausedAt).toBeDefined();
    expect(schedules.calls).toEqual([['report', 'DISABLED']]);
    expect(h.metrics.filter((m) => m.name === 'JobsPausedOnFailures')).toEqual([
      { name: 'JobsPausedOnFailures', value: 1, jobId: 'report' },
    ]);
    await h.deliver(message(C));
    expect(row(C)).toMatchObject({ status: 'SKIPPED', skipReason: 'paused' });
    expect(job.started).toEqual([A, B]);
  });

  it('a SUCCEEDED occurrence between failures starts the count again', async () => {
    const job = jobOf({}, new Set([A, C]));
    const schedules = recordingSwitch();
    harness(job.definition, { pauseAfterFailures: 2, retry: { maxAttempts: 1 } }, schedules);
    await record(A, B, C);
    for (const t of [A, B, C]) await deliverRunning(t);
    expect(jobState()).toMatchObject({ consecutiveFailures: 1 });
    expect(jobState()?.pausedAt).toBeUndefined();
    expect(schedules.calls).toEqual([]);
  });

  it('a pause write whose response was lost still pauses once and disables the schedule (read back: ours)', async () => {
    const schedules = await failingJobPausingAfterOne();
    h.aws.afterWrite = (_operation, input) => {
      if (!String(input.UpdateExpression).includes('#pausedAt = :at')) return;
      h.aws.afterWrite = undefined;
      throw faults.unavailable();
    };
    await deliverRunning(A);
    expect(jobState()).toMatchObject({ consecutiveFailures: 1, pauseCause: 'failures' });
    expectPausedOnce(schedules);
  });

  // The simulation's P10 (seed 1967791534): the SDK's retry of a pause whose response was lost is refused by that
  // pause; the worker read the row to find out, the read timed out, and the schedule was never disabled.
  it('a pause refused by its own write (response lost, SDK retry) is recognised from the refused row, with no read', async () => {
    const schedules = await failingJobPausingAfterOne();
    h.aws.afterWrite = (_operation, input) => {
      if (!String(input.UpdateExpression).startsWith('REMOVE #slotTime')) return;
      // The release counted the failure: the next UpdateItem is the pause, whose response is lost; a read now fails.
      h.aws.afterWrite = undefined;
      h.aws.loseResponseOf = 'UpdateItem';
      h.aws.failNext('GetItem', faults.unavailable);
    };
    await deliverRunning(A);
    expect(jobState()).toMatchObject({ consecutiveFailures: 1, pauseCause: 'failures', version: 3 });
    expectPausedOnce(schedules);
  });

  it('a pause that got no answer, whose first read-back fails too, reads again, finds its pause and disables the schedule', async () => {
    const schedules = await failingJobPausingAfterOne();
    h.aws.afterWrite = (_operation, input) => {
      if (!String(input.UpdateExpression).includes('#pausedAt = :at')) return;
      h.aws.afterWrite = undefined;
      h.aws.failNext('GetItem', faults.unavailable);
      throw faults.unavailable();
    };
    await deliverRunning(A, 5_000);
    expect(jobState()).toMatchObject({ consecutiveFailures: 1, pauseCause: 'failures' });
    expectPausedOnce(schedules);
  });

  // The simulation's P10 (seed 7240001): the release that counted the failure was applied, but its response was lost
  // past the SDK's retries; the worker gave up on it, and the job, whose count had reached its limit, never paused.
  it('a counting release applied but unanswered is retried, recognised as ours, and the job pauses', async () => {
    const schedules = await failingJobPausingAfterOne();
    h.aws.afterWrite = (_operation, input) => {
      if (!String(input.UpdateExpression).startsWith('REMOVE #slotTime')) return;
      h.aws.afterWrite = undefined;
      throw faults.unavailable();
    };
    await deliverRunning(A, 5_000);
    expect(jobState()).toMatchObject({ consecutiveFailures: 1, countedLeaseId: 'lease-1', pauseCause: 'failures' });
    expect(jobState()?.slotTime).toBeUndefined();
    expectPausedOnce(schedules);
  });

  it('a counting release that failed before it was applied is retried: the failure counts once, and the job pauses', async () => {
    const schedules = await failingJobPausingAfterOne();
    // The write after the one that records FAILED is the release: it fails without being applied.
    h.aws.afterWrite = (_operation, input) => {
      if (!String(input.UpdateExpression).includes('#lastError')) return;
      h.aws.afterWrite = undefined;
      h.aws.failNext('UpdateItem', faults.unavailable);
    };
    await deliverRunning(A, 5_000);
    expect(jobState()).toMatchObject({ consecutiveFailures: 1, countedLeaseId: 'lease-1', pauseCause: 'failures' });
    expect(jobState()?.slotTime).toBeUndefined();
    expect(schedules.calls).toEqual([['report', 'DISABLED']]);
  });

  it('allowAll: a count applied but unanswered is read back, found ours, and the job pauses', async () => {
    const job = jobOf({}, new Set([A]));
    const schedules = recordingSwitch();
    harness(job.definition, { overlap: 'allowAll', pauseAfterFailures: 1, retry: { maxAttempts: 1 } }, schedules);
    await record(A);
    h.aws.afterWrite = (_operation, input) => {
      if (!String(input.UpdateExpression).includes('#countedLeaseId = :leaseId')) return;
      h.aws.afterWrite = undefined;
      throw faults.unavailable();
    };
    await deliverRunning(A, 5_000);
    expect(jobState()).toMatchObject({ consecutiveFailures: 1, pauseCause: 'failures' });
    expect(schedules.calls).toEqual([['report', 'DISABLED']]);
  });

  it('allowAll: a count that failed before it was applied is not sent again (it could count twice), and does not pause', async () => {
    const job = jobOf({}, new Set([A]));
    const schedules = recordingSwitch();
    harness(job.definition, { overlap: 'allowAll', pauseAfterFailures: 1, retry: { maxAttempts: 1 } }, schedules);
    await record(A);
    h.aws.afterWrite = (_operation, input) => {
      if (!String(input.UpdateExpression).includes('#lastError')) return;
      h.aws.afterWrite = undefined;
      h.aws.failNext('UpdateItem', faults.unavailable);
    };
    await deliverRunning(A, 5_000);
    expect(jobState()?.consecutiveFailures).toBeUndefined();
    expect(jobState()?.pausedAt).toBeUndefined();
    expect(schedules.calls).toEqual([]);
  });

  it('a pause refused because another start wrote the row meanwhile is decided again, and pauses', async () => {
    const schedules = await failingJobPausingAfterOne();
    // Right after the release that counted the failure, a woken start takes the slot (a write of its own).
    h.aws.afterWrite = (_operation, input) => {
      if (!String(input.UpdateExpression).startsWith('REMOVE #slotTime')) return;
      h.aws.afterWrite = undefined;
      const state = jobState() as Record<string, unknown>;
      h.aws.table.set('report|#job', {
        ...state,
        slotTime: B,
        slotLeaseId: 'other',
        version: Number(state.version) + 1,
      });
    };
    await deliverRunning(A);
    expect(jobState()).toMatchObject({ slotTime: B, consecutiveFailures: 1, pauseCause: 'failures' });
    expect(schedules.calls).toEqual([['report', 'DISABLED']]);
  });

  it('allowAll: a count whose response was lost is not counted twice, so one failure does not pause a job of 2', async () => {
    const job = jobOf({}, new Set([A]));
    const schedules = recordingSwitch();
    harness(job.definition, { overlap: 'allowAll', pauseAfterFailures: 2, retry: { maxAttempts: 1 } }, schedules);
    await record(A);
    // The next write after the one that records FAILED is the count: its response is lost and the SDK retries it.
    h.aws.afterWrite = (_operation, input) => {
      if (!String(input.UpdateExpression).includes('#lastError')) return;
      h.aws.afterWrite = undefined;
      h.aws.loseResponseOf = 'UpdateItem';
    };
    await deliverRunning(A);
    expect(jobState()).toMatchObject({ consecutiveFailures: 1 });
    expect(jobState()?.pausedAt).toBeUndefined();
    expect(schedules.calls).toEqual([]);
  });

  it('allowAll counts failures without a slot, in one write per run end', async () => {
    const job = jobOf({}, new Set([A, B]));
    const schedules = recordingSwitch();
    harness(job.definition, { overlap: 'allowAll', pauseAfterFailures: 2, retry: { maxAttempts: 1 } }, schedules);
    await record(A, B);
    await deliverRunning(A);
    await deliverRunning(B);
    expect(jobState()).toMatchObject({ consecutiveFailures: 2, pauseCause: 'failures' });
    expect(jobState()?.slotTime).toBeUndefined();
    expect(schedules.calls).toEqual([['report', 'DISABLED']]);
  });
});
