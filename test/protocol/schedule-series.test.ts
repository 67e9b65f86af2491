/**
 * Occurrences of schedules created at run time (functions/protocol/schedule-key.ts): the trigger records them in the
 * partition of their series with the schedule's input, the worker hands both to the job and commits the report under
 * the key, and the running slot, the overlap policy and the pause after failures are per (job, schedule key), while
 * a pause of the whole job stops every key. Driven through the real handlers and adapters over the stateful fakes,
 * on fake timers.
 */
import { describe, expect, it, vi } from 'vitest';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import type { JobSettingsInput } from '../../functions/protocol/job-settings';
import type { JobDefinition, ScheduleSwitch } from '../../functions/protocol/ports';
import type { JsonValue } from '../../functions/protocol/schedule-key';
import { WHOLE_JOB_PAUSE_CACHE_MS } from '../../functions/protocol/whole-job-pause';
import { type Harness, makeHarness, SEED_TIMING, startDelivery, T0, useHarnessTime } from '../support/harness';

const A = '2026-11-30T06:00:00Z';
const B = '2026-11-30T06:01:00Z';
const message = (scheduleKey: string, scheduledTime: string) =>
  encodeEnvelope({ jobId: 'report', scheduleKey, scheduledTime });

let h: Harness;
useHarnessTime();

/** A job that works for `ms` unless aborted, fails for the keys in `failing`, and records what it was given. */
function jobOf(ms: number, failing: ReadonlySet<string> = new Set()) {
  const seen: { scheduleKey?: string; scheduledTime: string; input?: unknown }[] = [];
  const definition: JobDefinition = {
    reportExtension: 'txt',
    async run(occurrence, { signal }) {
      const { scheduleKey, scheduledTime, input } = occurrence;
      seen.push({ scheduleKey, scheduledTime, input });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        const stop = () => {
          clearTimeout(timer);
          reject(signal.reason);
        };
        signal.addEventListener('abort', stop, { once: true });
      });
      if (scheduleKey !== undefined && failing.has(scheduleKey)) throw new Error(`no data for ${scheduleKey}`);
      return { body: `report for ${scheduleKey}`, contentType: 'text/plain' };
    },
  };
  return { definition, seen };
}

function harness(job: JobDefinition, settings: Partial<JobSettingsInput> = {}, schedules?: ScheduleSwitch) {
  h = makeHarness({ jobs: { report: job }, settings: [{ id: 'report', ...SEED_TIMING, ...settings }], schedules });
  return h;
}

/** Fires the schedule of `scheduleKey`, held in the registry with `input` (the trigger takes the input from there). */
const trigger = (scheduleKey: string, scheduledTime: string, input?: unknown) => {
  h.registry.held('report', scheduleKey, input as JsonValue | undefined);
  return h.trigger({ jobId: 'report', scheduleKey, scheduledTime, ...(input === undefined ? {} : { input }) });
};

describe('an occurrence of a schedule created at run time', () => {
  it('is recorded in its series partition with its key and input; the job gets both; the report lands under the key', async () => {
    const job = jobOf(1_000);
    harness(job.definition);
    expect(await trigger('cust-42', A, { customerId: 42, locale: 'de-DE' })).toBe('recorded');

    const stored = h.aws.row('report#cust-42', A);
    expect(stored).toMatchObject({ jobId: 'report#cust-42', scheduleKey: 'cust-42', status: 'PENDING' });
    expect(stored?.input).toEqual({ customerId: 42, locale: 'de-DE' });
    expect(h.aws.row('report', A)).toBeUndefined();
    expect(h.aws.sent.at(-1)).toBe(message('cust-42', A));

    const delivery = startDelivery(h, message('cust-42', A));
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await delivery.promise).toEqual([]);

    expect(job.seen).toEqual([
      { scheduleKey: 'cust-42', scheduledTime: A, input: { customerId: 42, locale: 'de-DE' } },
    ]);
    expect(h.aws.row('report#cust-42', A)).toMatchObject({
      status: 'SUCCEEDED',
      reportKey: `reports/report/cust-42/${A}.txt`,
    });
    expect(h.aws.objects.get(`reports/report/cust-42/${A}.txt`)?.metadata).toMatchObject({ 'schedule-key': 'cust-42' });
  });

  it('a doubled trigger of one key is suppressed, while the same time of another key is a new occurrence', async () => {
    harness(jobOf(1_000).definition);
    await trigger('cust-1', A);
    const claimed = startDelivery(h, message('cust-1', A));
    await vi.advanceTimersByTimeAsync(10);
    expect(await trigger('cust-1', A)).toBe('duplicate-suppressed');
    expect(await trigger('cust-2', A)).toBe('recorded');
    await vi.advanceTimersByTimeAsync(2_000);
    await claimed.promise;
  });

  it('the trigger rejects the event of a job template (a job that takes schedules at run time), writing nothing', async () => {
    harness(jobOf(1_000).definition);
    await expect(
      h.trigger({ jobId: 'report', scheduledTime: A, keyedScheduleGroup: 'report-schedules' }),
    ).rejects.toThrow(/template schedule of job report fired: it must stay DISABLED/);
    await expect(trigger('has a space', A)).rejects.toThrow(/scheduleKey must be 1-128 letters/);
    await expect(trigger('cust-1', A, { blob: 'x'.repeat(3_000) })).rejects.toThrow(/input must be at most 2048 bytes/);
    expect(h.aws.table.size).toBe(0);
    expect(h.aws.sent).toEqual([]);
  });
});

describe('overlap per schedule key', () => {
  it('under skip, one key running slowly never skips another key; a second occurrence of the same key is SKIPPED', async () => {
    const job = jobOf(100_000);
    harness(job.definition, { overlap: 'skip' });
    await trigger('cust-1', A);
    await trigger('cust-2', B);
    await trigger('cust-1', B);
    const first = startDelivery(h, message('cust-1', A));
    await vi.advanceTimersByTimeAsync(10_000);
    const other = startDelivery(h, message('cust-2', B));
    await vi.advanceTimersByTimeAsync(10_000);

    expect(await h.deliver(message('cust-1', B))).toEqual([]);
    expect(h.aws.row('report#cust-1', B)).toMatchObject({ status: 'SKIPPED', skipReason: 'overlap', yieldedTo: A });
    expect(h.aws.row('report#cust-2', B)?.status).toBe('RUNNING');
    expect(h.aws.row('report#cust-1', '#job')).toMatchObject({ slotTime: A });
    expect(h.aws.row('report#cust-2', '#job')).toMatchObject({ slotTime: B });
    expect(h.aws.row('report', '#job')).toBeUndefined();

    await vi.advanceTimersByTimeAsync(100_000);
    expect(await first.promise).toEqual([]);
    expect(await other.promise).toEqual([]);
    expect(job.seen.map((s) => `${s.scheduleKey} ${s.scheduledTime}`)).toEqual([`cust-1 ${A}`, `cust-2 ${B}`]);
  });

  it('a pause of the whole job SKIPS every key as paused; a key paused after its failures leaves other keys running', async () => {
    const switched: string[] = [];
    const schedules: ScheduleSwitch = { setState: async (id, state) => void switched.push(`${id} ${state}`) };
    const job = jobOf(1_000, new Set(['cust-bad']));
    harness(job.definition, { pauseAfterFailures: 1, retry: { maxAttempts: 1 } }, schedules);

    await trigger('cust-bad', A);
    const bad = startDelivery(h, message('cust-bad', A));
    await vi.advanceTimersByTimeAsync(2_000);
    await bad.promise;
    expect(h.aws.row('report#cust-bad', A)?.status).toBe('FAILED');
    expect(h.aws.row('report#cust-bad', '#job')).toMatchObject({ pauseCause: 'failures' });
    // The schedule's Scheduler state is the registry's: the worker leaves it to resumeSchedule.
    expect(switched).toEqual([]);

    await trigger('cust-bad', B);
    expect(await h.deliver(message('cust-bad', B))).toEqual([]);
    expect(h.aws.row('report#cust-bad', B)).toMatchObject({ status: 'SKIPPED', skipReason: 'paused' });
    await trigger('cust-good', B);
    const good = startDelivery(h, message('cust-good', B));
    await vi.advanceTimersByTimeAsync(2_000);
    await good.promise;
    expect(h.aws.row('report#cust-good', B)?.status).toBe('SUCCEEDED');

    // Now the whole job is paused by an operator (its own state row): every key is SKIPPED as paused, once the
    // worker container's answer about the whole job's pause is older than WHOLE_JOB_PAUSE_CACHE_MS.
    h.aws.table.set('report|#job', {
      jobId: 'report',
      scheduledTime: '#job',
      version: 1,
      pausedAt: new Date(T0).toISOString(),
      pausedBy: 'ops',
      pauseCause: 'operator',
    });
    await vi.advanceTimersByTimeAsync(WHOLE_JOB_PAUSE_CACHE_MS);
    const C = '2026-11-30T06:02:00Z';
    await trigger('cust-good', C);
    expect(await h.deliver(message('cust-good', C))).toEqual([]);
    expect(h.aws.row('report#cust-good', C)).toMatchObject({ status: 'SKIPPED', skipReason: 'paused' });
  });
});

describe('a whole-job pause with occurrences of a key BUFFERED: the stranded buffer', () => {
  const [X, B1, B2] = ['2026-11-30T05:59:00Z', '2026-11-30T06:00:00Z', '2026-11-30T06:01:00Z'];
  const pauseWholeJob = () =>
    h.aws.table.set('report|#job', {
      jobId: 'report',
      scheduledTime: '#job',
      version: 1,
      pausedAt: new Date(T0).toISOString(),
      pausedBy: 'ops',
      pauseCause: 'operator',
    });
  const sentSince = (n: number) => h.aws.sent.slice(n);

  /** Key acme of a bufferAll job: X holds the slot (for 60 s), B1 and B2 BUFFERED behind it. */
  async function bufferBehindX(job: ReturnType<typeof jobOf>) {
    harness(job.definition, { overlap: 'bufferAll' });
    for (const t of [X, B1, B2]) await trigger('acme', t);
    const x = startDelivery(h, message('acme', X));
    await vi.advanceTimersByTimeAsync(1_000);
    await h.deliver(message('acme', B1));
    await h.deliver(message('acme', B2));
    expect(h.aws.row('report#acme', '#job')).toMatchObject({ slotTime: X, buffer: [B1, B2] });
    return x;
  }

  it('each buffered one, woken in turn, is SKIPPED as paused and leaves the buffer, waking the next', async () => {
    const job = jobOf(60_000);
    const x = await bufferBehindX(job);
    pauseWholeJob();
    await vi.advanceTimersByTimeAsync(60_000);
    await x.promise;
    const sent = h.aws.sent.length;
    expect(h.aws.row('report#acme', X)?.status).toBe('SUCCEEDED');

    // X's release woke B1 (sent before `sent`); B1 is SKIPPED as paused, leaves the buffer and wakes B2.
    expect(await h.deliver(message('acme', B1))).toEqual([]);
    expect(h.aws.row('report#acme', B1)).toMatchObject({ status: 'SKIPPED', skipReason: 'paused' });
    expect(h.aws.row('report#acme', '#job')).toMatchObject({ buffer: [B2] });
    expect(sentSince(sent)).toEqual([message('acme', B2)]);
    await h.deliver(message('acme', B2));
    expect(h.aws.row('report#acme', B2)).toMatchObject({ status: 'SKIPPED', skipReason: 'paused' });
    expect(h.aws.row('report#acme', '#job')?.buffer).toBeUndefined();
    expect(job.seen.map((s) => s.scheduledTime)).toEqual([X]);
  });

  it('the reconciler repairs a buffer whose head is final: the one behind it runs once the job is resumed', async () => {
    const job = jobOf(1_000);
    harness(job.definition, { overlap: 'bufferAll' });
    for (const t of [B1, B2]) await trigger('acme', t);
    // What the worker before the fix left: B1 SKIPPED as paused but still at the head, B2 BUFFERED, the slot free.
    const pending = (t: string) => h.aws.row('report#acme', t) as Record<string, unknown>;
    h.aws.table.set(`report#acme|${B1}`, {
      ...pending(B1),
      status: 'SKIPPED',
      statusShard: 'SKIPPED#1',
      skipReason: 'paused',
      skippedAt: new Date(T0).toISOString(),
    });
    h.aws.table.set(`report#acme|${B2}`, {
      ...pending(B2),
      status: 'BUFFERED',
      bufferedAt: new Date(T0).toISOString(),
    });
    h.aws.table.set('report#acme|#job', { jobId: 'report#acme', scheduledTime: '#job', version: 2, buffer: [B1, B2] });
    // Past the worker's stuck threshold (20 minutes here): the reconciler judges the BUFFERED row then.
    await vi.advanceTimersByTimeAsync(30 * 60_000);
    const sent = h.aws.sent.length;

    const report = await h.reconciler();
    expect(report.fixed).toEqual([
      {
        jobId: 'report',
        scheduleKey: 'acme',
        scheduledTime: B2,
        status: 'BUFFERED',
        action: 'requeued',
        reason: 'buffered-slot-free',
      },
    ]);
    expect(sentSince(sent)).toEqual([message('acme', B2)]);
    // B2's delivery finds the final head before it and wakes it; the head's delivery, refused as finished, drops it
    // from the buffer and wakes B2, which then takes the slot and runs.
    await h.deliver(message('acme', B2));
    expect(sentSince(sent).at(-1)).toBe(message('acme', B1));
    await h.deliver(message('acme', B1));
    expect(h.aws.row('report#acme', '#job')).toMatchObject({ buffer: [B2] });
    expect(sentSince(sent).at(-1)).toBe(message('acme', B2));
    const b2 = startDelivery(h, message('acme', B2));
    await vi.advanceTimersByTimeAsync(2_000);
    await b2.promise;
    expect(h.aws.row('report#acme', B2)?.status).toBe('SUCCEEDED');
    expect(job.seen.map((s) => s.scheduledTime)).toEqual([B2]);
  });
});
