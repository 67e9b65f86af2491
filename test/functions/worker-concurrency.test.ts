/**
 * A job's maxConcurrency through the real worker and reconciler handlers, over the DynamoDB adapter
 * (functions/aws/capacity-store.ts) on the stateful fakes (which run the real condition and key expressions), on fake
 * timers: never more than the cap at once, the rest WAITING and all finished; a lost wake-up repaired by the
 * reconciler; a waiting occurrence whose deadline passed leaves the list and wakes the next.
 */
import { describe, expect, it, vi } from 'vitest';
import { CAPACITY_SORT_KEY, WAIT_PREFIX } from '../../functions/aws/capacity-store';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import type { JobDefinition } from '../../functions/protocol/ports';
import { faults } from '../../sim/fakes/fake-aws';
import { type Harness, makeHarness, SEED_TIMING, startDelivery, useHarnessTime } from '../support/harness';

useHarnessTime();

const TIMES = ['06:00', '06:01', '06:02', '06:03', '06:04'].map((hm) => `2026-11-30T${hm}:00Z`);
const RUN_MS = 10_000;

/** A job that works RUN_MS and records how many of its runs overlapped at most. */
function countingJob() {
  const seen = { running: 0, most: 0, runs: [] as string[] };
  const definition: JobDefinition = {
    reportExtension: 'txt',
    async run(occurrence) {
      seen.running++;
      seen.most = Math.max(seen.most, seen.running);
      seen.runs.push(occurrence.scheduledTime);
      await new Promise((resolve) => setTimeout(resolve, RUN_MS));
      seen.running--;
      return { body: `report of ${occurrence.scheduledTime}`, contentType: 'text/plain' };
    },
  };
  return { definition, seen };
}

function capped(maxConcurrency: number, job: JobDefinition): Harness {
  return makeHarness({
    jobs: { report: job },
    settings: [{ id: 'report', ...SEED_TIMING, overlap: 'allowAll', maxConcurrency }],
  });
}

const statusOf = (h: Harness, time: string) => h.aws.row('report', time)?.status;
const waitingItems = (h: Harness) =>
  [...h.aws.table.values()].filter((i) => i.jobId === 'report' && String(i.scheduledTime).startsWith(WAIT_PREFIX));

/** Deliver every message sent since `from`, all at once, until the queue has nothing new; returns the new `from`. */
async function drain(h: Harness, from: number): Promise<number> {
  let next = from;
  while (next < h.aws.sent.length) {
    const batch = h.aws.sent.slice(next);
    next = h.aws.sent.length;
    const deliveries = batch.map((body) => startDelivery(h, body));
    await vi.advanceTimersByTimeAsync(RUN_MS + 1_000);
    await Promise.all(deliveries.map((d) => d.promise));
  }
  return next;
}

describe('worker: maxConcurrency', () => {
  it('runs at most 2 of 5 occurrences at once; the others wait, are woken in turn and all SUCCEED', async () => {
    const { definition, seen } = countingJob();
    const h = capped(2, definition);
    for (const scheduledTime of TIMES) await h.trigger({ jobId: 'report', scheduledTime });
    const first = h.aws.sent.length;
    const deliveries = TIMES.map((t) => startDelivery(h, encodeEnvelope({ jobId: 'report', scheduledTime: t })));
    await vi.advanceTimersByTimeAsync(1_000);
    // Two run; three are recorded WAITING (BUFFERED for capacity), their messages acknowledged.
    const waiting = TIMES.filter((t) => h.aws.row('report', t)?.waitingFor === 'capacity');
    expect(waiting).toHaveLength(3);
    for (const t of waiting) expect(statusOf(h, t)).toBe('BUFFERED');
    // While they wait, the reconciler leaves them to the capacity repair (no unit is free: nothing to wake).
    for (const t of waiting) expect(h.aws.row('report', t)?.waitingSince).toBe(h.aws.row('report', t)?.bufferedAt);
    expect(waitingItems(h)).toHaveLength(3);
    expect(h.aws.row('report', CAPACITY_SORT_KEY)?.holds).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(RUN_MS);
    expect(await Promise.all(deliveries.map((d) => d.promise))).toEqual([[], [], [], [], []]);
    await drain(h, first);
    expect(seen.most).toBe(2);
    expect(TIMES.map((t) => statusOf(h, t))).toEqual(TIMES.map(() => 'SUCCEEDED'));
    expect(seen.runs.sort()).toEqual(TIMES);
    expect(waitingItems(h)).toEqual([]);
    expect(h.aws.row('report', CAPACITY_SORT_KEY)?.holds).toEqual([]);
  });

  it("the reconciler wakes a waiting occurrence whose wake-up was lost with the holder's send", async () => {
    const { definition } = countingJob();
    const h = capped(1, definition);
    for (const scheduledTime of TIMES.slice(0, 2)) await h.trigger({ jobId: 'report', scheduledTime });
    const first = h.aws.sent.length;
    const a = startDelivery(h, encodeEnvelope({ jobId: 'report', scheduledTime: TIMES[0] }));
    await vi.advanceTimersByTimeAsync(100);
    await h.deliver(encodeEnvelope({ jobId: 'report', scheduledTime: TIMES[1] }));
    expect(h.aws.row('report', TIMES[1])?.waitingFor).toBe('capacity');
    // A's wake of B is lost (SQS down for that send).
    h.aws.failAlways('SendMessage', faults.unavailable);
    await vi.advanceTimersByTimeAsync(RUN_MS);
    await a.promise;
    h.aws.clearFaults('SendMessage');
    expect(statusOf(h, TIMES[0])).toBe('SUCCEEDED');
    expect(h.aws.sent.length).toBe(first);
    // Past the stuck threshold: the occurrences' half leaves the WAITING row alone (it is not the slot's), the
    // capacity half wakes it, once.
    vi.setSystemTime(Date.now() + 1_300_000);
    const report = await h.reconciler();
    expect(report.fixed).toEqual([]);
    expect(report.capacity).toEqual({ woken: 1, dropped: 0, errors: 0 });
    expect(h.aws.sent.length).toBe(first + 1);
    await drain(h, first);
    expect(statusOf(h, TIMES[1])).toBe('SUCCEEDED');
  });

  it('a waiting occurrence past its deadline ends FAILED when woken, leaves the list and wakes the next', async () => {
    const { definition, seen } = countingJob();
    const h = makeHarness({
      jobs: { report: definition },
      settings: [
        { id: 'report', ...SEED_TIMING, overlap: 'allowAll', maxConcurrency: 1, retry: { deadlineSeconds: 300 } },
      ],
    });
    vi.setSystemTime(Date.parse(TIMES[2]));
    for (const scheduledTime of TIMES.slice(0, 3)) await h.trigger({ jobId: 'report', scheduledTime });
    const first = h.aws.sent.length;
    const a = startDelivery(h, encodeEnvelope({ jobId: 'report', scheduledTime: TIMES[2] }));
    await vi.advanceTimersByTimeAsync(100);
    for (const t of TIMES.slice(0, 2)) await h.deliver(encodeEnvelope({ jobId: 'report', scheduledTime: t }));
    // 06:00's deadline (06:05) passes while it waits.
    vi.setSystemTime(Date.parse('2026-11-30T06:05:01Z'));
    await vi.advanceTimersByTimeAsync(RUN_MS);
    await a.promise;
    await drain(h, first);
    expect(statusOf(h, TIMES[0])).toBe('FAILED');
    expect(statusOf(h, TIMES[1])).toBe('SUCCEEDED');
    expect(seen.runs).toEqual([TIMES[2], TIMES[1]]);
    expect(waitingItems(h)).toEqual([]);
  });
});
