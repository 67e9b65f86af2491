/**
 * protocol/reconcile.ts against the stateful fakes: each way an occurrence can fall through the cracks is left behind
 * by the real handlers (or, where only a crash can leave it, written as the crash leaves it), then repaired by one
 * reconciler run and finished by the real worker. The runs go through the reconciler handler; what the handler
 * itself adds (a run with failures throws) is tested in test/functions/reconciler.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import type { JobDefinition } from '../../functions/protocol/ports';
import { parseReconcileThresholds, routedWorkers, stuckReason } from '../../functions/protocol/reconcile';
import { faults } from '../../sim/fakes/fake-aws';
import { indexed } from '../aws/fixtures';
import {
  type Harness,
  makeHarness,
  RECONCILE_TEST_THRESHOLDS,
  SCHEDULED,
  T0,
  TEST_STUCK_AFTER_SECONDS,
  timedJob,
  useHarnessTime,
} from '../support/harness';

const KEY = { jobId: 'report', scheduledTime: SCHEDULED };
const MESSAGE = encodeEnvelope(KEY);
const STUCK_MS = TEST_STUCK_AFTER_SECONDS * 1000;
const ROW = `report|${SCHEDULED}`;

let h: Harness;
useHarnessTime();

const row = () => h.aws.row(KEY.jobId, KEY.scheduledTime)!;
const messagesSent = () => h.aws.sent.length;

/** Deliver the last message sent, as SQS would, and let a job of up to `jobMs` finish. */
async function deliverLastMessage(jobMs = 1_000) {
  const run = h.deliver(h.aws.sent.at(-1)!);
  await vi.advanceTimersByTimeAsync(jobMs);
  return run;
}

/** A job that fails its first `failures` runs, then works. */
function flakyJob(failures: number): JobDefinition & { runs: number } {
  const job = {
    runs: 0,
    reportExtension: 'txt',
    async run() {
      job.runs++;
      if (job.runs <= failures) throw new Error(`down (run ${job.runs})`);
      return { body: 'ok', contentType: 'text/plain' };
    },
  };
  return job;
}

describe('reconcile: PENDING and never claimed', () => {
  it('re-enqueues an occurrence whose trigger recorded it but never enqueued it, and the worker then runs it once', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    // The trigger's three invocations all fail at the enqueue: the row stays PENDING and no message exists.
    h.aws.failAlways('SendMessage', faults.unavailable);
    for (let i = 0; i < 3; i++) await expect(h.trigger(KEY)).rejects.toThrow(/enqueue occurrence failed/);
    h.aws.clearFaults('SendMessage');
    expect(row().status).toBe('PENDING');
    expect(messagesSent()).toBe(0);

    await vi.advanceTimersByTimeAsync(STUCK_MS + 1_000);
    const report = await h.reconciler();

    expect(report.fixed).toEqual([{ ...KEY, status: 'PENDING', action: 'requeued', reason: 'never-claimed' }]);
    expect(h.aws.sent).toEqual([MESSAGE]);
    expect(row()).toMatchObject({
      status: 'PENDING',
      requeueCount: 1,
      requeuedAt: new Date(T0 + STUCK_MS + 1_000).toISOString(),
    });
    expect(h.metrics).toEqual([{ name: 'OccurrencesRequeued', value: 1, jobId: 'report' }]);
    expect(h.logs.find((l) => l.message === 'reconciler re-enqueued a stuck occurrence')?.fields).toMatchObject({
      ...KEY,
      status: 'PENDING',
      reason: 'never-claimed',
      stuckSince: new Date(T0).toISOString(),
    });

    expect(await deliverLastMessage()).toEqual([]);
    expect(row().status).toBe('SUCCEEDED');
    expect(job.log.runs).toBe(1);
  });

  it("re-enqueues a stuck PENDING occurrence scheduled long before its look-back (a backfill or an operator's retry)", async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    h.aws.failAlways('SendMessage', faults.unavailable);
    for (let i = 0; i < 3; i++) await expect(h.trigger(KEY)).rejects.toThrow(/enqueue occurrence failed/);
    h.aws.clearFaults('SendMessage');
    // The same row, but for an occurrence of 30 days ago whose deadline counts from now (as backfill records it).
    const old = '2026-10-31T06:00:00Z';
    h.aws.table.set(`report|${old}`, indexed({ ...row(), scheduledTime: old }));
    h.aws.table.delete(`report|${SCHEDULED}`);

    await vi.advanceTimersByTimeAsync(STUCK_MS + 1_000);
    const report = await h.reconciler();

    expect(report.fixed).toEqual([
      { jobId: 'report', scheduledTime: old, status: 'PENDING', action: 'requeued', reason: 'never-claimed' },
    ]);
    expect(h.aws.sent).toEqual([encodeEnvelope({ jobId: 'report', scheduledTime: old })]);
  });

  it('leaves a PENDING row alone until it has waited stuckAfterSeconds, since its message may still be in the queue', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger(KEY);
    await vi.advanceTimersByTimeAsync(STUCK_MS - 1_000);
    const report = await h.reconciler();
    expect(report).toMatchObject({ examined: 1, fixed: [], errors: 0 });
    expect(messagesSent()).toBe(1); // the trigger's own
    expect(row().requeuedAt).toBeUndefined();
  });

  it('does not re-enqueue again while its own message may still be waiting, but does once that has also been stuck', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    h.aws.failNext('SendMessage', faults.unavailable);
    await expect(h.trigger(KEY)).rejects.toThrow();
    await vi.advanceTimersByTimeAsync(STUCK_MS + 1_000);
    await h.reconciler();
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect((await h.reconciler()).fixed).toEqual([]);
    expect(messagesSent()).toBe(1);

    await vi.advanceTimersByTimeAsync(STUCK_MS);
    expect((await h.reconciler()).fixed).toHaveLength(1);
    expect(messagesSent()).toBe(2);
    expect(row().requeueCount).toBe(2);
  });
});

describe('reconcile: each row on its own worker', () => {
  /** A worker queue that records what it was sent. */
  const recordingQueue = () => {
    const sent: string[] = [];
    return { sent, queue: { send: async (body: string) => void sent.push(body), hide: async () => {} } };
  };

  it("re-enqueues a stuck row on the queue of the worker it names, after that worker's own threshold, and skips a row without one", async () => {
    const fast = recordingQueue();
    const slow = recordingQueue();
    h = makeHarness({
      jobs: { report: timedJob(1_000) },
      reconcileWorkers: new Map([
        ['fast', { queue: fast.queue, stuckAfterSeconds: 600 }],
        ['slow', { queue: slow.queue, stuckAfterSeconds: 6_000 }],
      ]),
    });
    const pending = (scheduledTime: string, worker?: string) =>
      h.aws.table.set(
        `report|${scheduledTime}`,
        indexed({
          jobId: 'report',
          scheduledTime,
          status: 'PENDING',
          attempt: 0,
          createdAt: new Date(Date.now()).toISOString(),
          deadlineAt: '2026-12-30T00:00:00.000Z',
          ttl: 2_000_000_000,
          worker,
        }),
      );
    const [a, b, c] = ['2026-11-30T01:00:00Z', '2026-11-30T02:00:00Z', '2026-11-30T03:00:00Z'];
    pending(a, 'fast');
    pending(b, 'slow');
    pending(c);

    await vi.advanceTimersByTimeAsync(700_000);
    const first = await h.reconciler();
    expect(first.fixed.map((f) => f.scheduledTime)).toEqual([a]);
    expect(first.skipped).toBe(1); // the row without a worker: recorded before workers existed
    expect(fast.sent).toEqual([encodeEnvelope({ jobId: 'report', scheduledTime: a })]);
    expect(slow.sent).toEqual([]);
    expect(h.logs.some((l) => l.message.includes('a worker this deployment does not run'))).toBe(true);

    await vi.advanceTimersByTimeAsync(6_000_000);
    const second = await h.reconciler();
    expect(second.fixed.map((f) => f.scheduledTime)).toEqual(expect.arrayContaining([b]));
    expect(slow.sent).toEqual([encodeEnvelope({ jobId: 'report', scheduledTime: b })]);
  });
});

describe('reconcile: the route a row records (no function knows every worker)', () => {
  const recordingQueue = () => {
    const sent: string[] = [];
    return { sent, queue: { send: async (body: string) => void sent.push(body), hide: async () => {} } };
  };
  const pending = (scheduledTime: string, fields: Record<string, unknown>) =>
    h.aws.table.set(
      `report|${scheduledTime}`,
      indexed({
        jobId: 'report',
        scheduledTime,
        status: 'PENDING',
        attempt: 0,
        createdAt: new Date(Date.now()).toISOString(),
        deadlineAt: '2026-12-30T00:00:00.000Z',
        ttl: 2_000_000_000,
        worker: 'w',
        ...fields,
      }),
    );

  it("re-sends to the row's own queue after the row's own threshold; a row without a route to its job's schedule's", async () => {
    const byUrl = new Map([
      ['https://sqs/recorded', recordingQueue()],
      ['https://sqs/looked-up', recordingQueue()],
    ]);
    const looked: string[] = [];
    h = makeHarness({
      jobs: { report: timedJob(1_000) },
      reconcileWorkers: routedWorkers({
        shortestStuckAfterSeconds: 600,
        queueAt: (url) => byUrl.get(url)!.queue,
        lookup: {
          routeOf: async (jobId, worker) => {
            looked.push(`${jobId}/${worker}`);
            return { queueUrl: 'https://sqs/looked-up', stuckAfterSeconds: 600 };
          },
        },
      }),
    });
    const [a, b, c] = ['2026-11-30T01:00:00Z', '2026-11-30T02:00:00Z', '2026-11-30T03:00:00Z'];
    pending(a, { queueUrl: 'https://sqs/recorded', stuckAfterSeconds: 600 });
    pending(b, { queueUrl: 'https://sqs/recorded', stuckAfterSeconds: 6_000 }); // its own, longer threshold
    pending(c, {}); // recorded before rows carried their route

    await vi.advanceTimersByTimeAsync(700_000);
    const run = await h.reconciler();
    expect(run.fixed.map((f) => f.scheduledTime).sort()).toEqual([a, c]);
    expect(byUrl.get('https://sqs/recorded')!.sent).toEqual([encodeEnvelope({ jobId: 'report', scheduledTime: a })]);
    expect(byUrl.get('https://sqs/looked-up')!.sent).toEqual([encodeEnvelope({ jobId: 'report', scheduledTime: c })]);
    // Only the row without a route was looked up.
    expect(looked).toEqual(['report/w']);
  });

  it('skips a row whose route nobody knows (its job removed), and counts a failed look-up as an error, sending nothing', async () => {
    const queue = recordingQueue();
    let fail = false;
    h = makeHarness({
      jobs: { report: timedJob(1_000) },
      reconcileWorkers: routedWorkers({
        shortestStuckAfterSeconds: 600,
        queueAt: () => queue.queue,
        lookup: {
          routeOf: async () => {
            if (fail) throw new Error('Scheduler throttled');
            return undefined;
          },
        },
      }),
    });
    pending('2026-11-30T01:00:00Z', {});
    await vi.advanceTimersByTimeAsync(700_000);
    const skipped = await h.reconciler();
    expect(skipped).toMatchObject({ fixed: [], skipped: 1, errors: 0 });
    fail = true;
    await expect(h.reconciler()).rejects.toThrow('1 failed read(s) or write(s)');
    expect(h.logs.some((l) => l.message.includes("could not find a stuck occurrence's route"))).toBe(true);
    expect(queue.sent).toEqual([]);
  });
});

describe('reconcile: RUNNING with a lease that expired long ago', () => {
  /** A worker claimed attempt 1 and died; its message then went to the DLQ (more crashes than maxReceiveCount). */
  async function leaveDeadWorkersRow(leaseExpiresAt: number) {
    await h.trigger(KEY);
    h.aws.table.set(
      ROW,
      indexed({
        ...row(),
        status: 'RUNNING',
        attempt: 1,
        leaseId: 'dead',
        leaseOwner: 'gone',
        claimedAt: new Date(T0).toISOString(),
        leaseExpiresAt: new Date(leaseExpiresAt).toISOString(),
      }),
    );
  }

  it('re-enqueues it, and the next worker claims attempt 2 and finishes the occurrence', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await leaveDeadWorkersRow(T0 + 120_000);
    await vi.advanceTimersByTimeAsync(120_000 + STUCK_MS + 1_000);

    const report = await h.reconciler();
    expect(report.fixed).toEqual([{ ...KEY, status: 'RUNNING', action: 'requeued', reason: 'lease-expired' }]);
    expect(await deliverLastMessage()).toEqual([]);
    expect(row()).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
    expect(job.log.runs).toBe(1);
  });

  it('leaves a live worker alone: a lease being extended is never stuck', async () => {
    // A short threshold, so that the run outlasts it several times over.
    h = makeHarness({
      jobs: { report: timedJob(800_000) },
      settings: [{ id: 'report', timeoutSeconds: 870 }],
      stuckAfterSeconds: 120,
    });
    await h.trigger(KEY);
    const run = h.deliver(MESSAGE, { remainingMs: 900_000 });
    for (let minute = 1; minute <= 13; minute++) {
      await vi.advanceTimersByTimeAsync(60_000);
      expect(row().status).toBe('RUNNING');
      expect((await h.reconciler()).fixed).toEqual([]);
    }
    expect(messagesSent()).toBe(1);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(await run).toEqual([]);
    expect(row().status).toBe('SUCCEEDED');
  });

  it("writes nothing and sends nothing when a worker claims the row between the reconciler's read and its write", async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await leaveDeadWorkersRow(T0 + 120_000);
    await vi.advanceTimersByTimeAsync(120_000 + STUCK_MS + 1_000);
    // Right after the reconciler read the row, the dead worker's message comes back from a redrive and a live
    // worker claims.
    h.aws.afterWrite = (operation) => {
      if (operation !== 'BatchGetItem' || row().leaseId !== 'dead') return;
      h.aws.table.set(
        ROW,
        indexed({
          ...row(),
          attempt: 2,
          leaseId: 'live',
          leaseExpiresAt: new Date(Date.now() + 120_000).toISOString(),
        }),
      );
    };

    const report = await h.reconciler();
    expect(report).toMatchObject({ fixed: [], changedMeanwhile: 1, errors: 0 });
    expect(messagesSent()).toBe(1); // the trigger's only
    expect(row()).toMatchObject({ leaseId: 'live', attempt: 2 });
    expect(row().requeuedAt).toBeUndefined();
    expect(h.metrics).toEqual([]);
  });

  it('a re-enqueue that races a worker claiming just after it costs one dropped message, not a second run', async () => {
    const job = timedJob(60_000);
    h = makeHarness({ jobs: { report: job } });
    await leaveDeadWorkersRow(T0 + 120_000);
    await vi.advanceTimersByTimeAsync(120_000 + STUCK_MS + 1_000);
    await h.reconciler();
    const requeued = h.aws.sent.at(-1)!;

    // The original message is redriven from the DLQ by an operator at the same moment: it claims first.
    const first = h.deliver(MESSAGE);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await h.deliver(requeued)).toEqual([]);
    expect(h.logs.some((l) => l.message.includes('held by a live lease elsewhere'))).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    await first;
    expect(row()).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
    expect(job.log.runs).toBe(1);
    expect(h.aws.objects.size).toBe(1);
  });

  it('closes a stuck row whose attempts are used up: the worker records it FAILED', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) }, settings: [{ id: 'report', retry: { maxAttempts: 1 } }] });
    await leaveDeadWorkersRow(T0 + 120_000);
    await vi.advanceTimersByTimeAsync(120_000 + STUCK_MS + 1_000);
    await h.reconciler();
    await deliverLastMessage();
    expect(row()).toMatchObject({ status: 'FAILED' });
    expect(row().lastError).toMatch(/all 1 attempts used/);
  });
});

describe('reconcile: a retry whose time passed with nothing in flight', () => {
  it('re-enqueues a RETRY_WAIT row whose hidden message was lost, and the retry then succeeds', async () => {
    const job = flakyJob(1);
    h = makeHarness({ jobs: { report: job } });
    await h.trigger(KEY);
    await h.deliver(MESSAGE); // attempt 1 fails: RETRY_WAIT, and the message is hidden until nextAttemptAt
    expect(row().status).toBe('RETRY_WAIT');
    const nextAttemptAt = Date.parse(row().nextAttemptAt as string);

    // The hidden message never comes back (it reached the DLQ). Just past due is not stuck yet:
    await vi.advanceTimersByTimeAsync(nextAttemptAt - Date.now() + 60_000);
    expect((await h.reconciler()).fixed).toEqual([]);
    await vi.advanceTimersByTimeAsync(STUCK_MS);
    const report = await h.reconciler();
    expect(report.fixed).toEqual([{ ...KEY, status: 'RETRY_WAIT', action: 'requeued', reason: 'retry-overdue' }]);

    expect(await deliverLastMessage()).toEqual([]);
    expect(row()).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
    expect(job.runs).toBe(2);
  });
});

describe('reconcile: SUCCEEDED but never announced', () => {
  async function succeedWithoutAnnouncement() {
    await h.trigger(KEY);
    const run = h.deliver(MESSAGE);
    await vi.advanceTimersByTimeAsync(1_000);
    await run;
    expect(row()).toMatchObject({ status: 'SUCCEEDED' });
    expect(row().notifiedAt).toBeUndefined();
  }

  it("announces it through the notifier's path once the stream has given up, records notifiedAt, and only once", async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await succeedWithoutAnnouncement();
    // Within the stream's 24 h the stream notifier is still retrying: the reconciler must not compete with it.
    await vi.advanceTimersByTimeAsync(24 * 3_600_000);
    expect((await h.reconciler()).fixed).toEqual([]);
    expect(h.aws.published).toHaveLength(0);

    await vi.advanceTimersByTimeAsync(3_600_000 + 1_000);
    const report = await h.reconciler();
    expect(report.fixed).toEqual([{ ...KEY, status: 'SUCCEEDED', action: 'announced', reason: 'never-announced' }]);
    expect(h.aws.published).toHaveLength(1);
    expect(h.aws.published[0]).toMatchObject({
      MessageDeduplicationId: `report#${SCHEDULED}`,
      MessageGroupId: 'report',
    });
    expect(row().notifiedAt).toBeDefined();
    expect(h.metrics.filter((m) => m.name === 'ReportsReannounced')).toEqual([
      { name: 'ReportsReannounced', value: 1, jobId: 'report' },
    ]);

    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect((await h.reconciler()).fixed).toEqual([]);
    expect(h.aws.published).toHaveLength(1);
  });

  it('leaves announced reports alone', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger(KEY);
    const before = { ...row(), status: 'RUNNING' };
    const run = h.deliver(MESSAGE);
    await vi.advanceTimersByTimeAsync(1_000);
    await run;
    await h.streamChange(before);
    expect(h.aws.published).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(26 * 3_600_000);
    expect((await h.reconciler()).fixed).toEqual([]);
    expect(h.aws.published).toHaveLength(1);
  });
});

describe('reconcile: what it cannot fix, and failures', () => {
  it('skips and logs a stuck row of a worker this deployment does not run (removed since), instead of sending it nowhere', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    h.aws.table.set(
      `retired|${SCHEDULED}`,
      indexed({
        jobId: 'retired',
        scheduledTime: SCHEDULED,
        status: 'PENDING',
        attempt: 0,
        createdAt: new Date(T0).toISOString(),
        deadlineAt: new Date(T0 + 21_600_000).toISOString(),
        ttl: 0,
        worker: 'retired-worker',
      }),
    );
    await vi.advanceTimersByTimeAsync(STUCK_MS + 1_000);
    const report = await h.reconciler();
    expect(report).toMatchObject({ fixed: [], skipped: 1 });
    expect(messagesSent()).toBe(0);
    expect(h.logs.find((l) => l.message.includes('worker this deployment does not run'))?.fields).toMatchObject({
      jobId: 'retired',
      worker: 'retired-worker',
    });
  });

  it('stops after maxFixesPerRun and says so; the next run continues', async () => {
    h = makeHarness({
      jobs: { report: timedJob(1_000) },
      thresholds: { ...RECONCILE_TEST_THRESHOLDS, maxFixesPerRun: 2 },
    });
    h.aws.failAlways('SendMessage', faults.unavailable);
    for (const hour of ['06', '07', '08'])
      await expect(h.trigger({ jobId: 'report', scheduledTime: `2026-11-30T${hour}:00:00Z` })).rejects.toThrow();
    h.aws.clearFaults();
    await vi.advanceTimersByTimeAsync(3 * 3_600_000 + STUCK_MS);
    expect(await h.reconciler()).toMatchObject({ truncated: true });
    expect(messagesSent()).toBe(2);
    expect((await h.reconciler()).fixed).toHaveLength(1);
    expect(messagesSent()).toBe(3);
  });
});

describe('stuckReason', () => {
  const base = {
    ...KEY,
    attempt: 1,
    deadlineAt: '2026-11-30T12:00:00Z',
    createdAt: '2026-11-30T06:00:00.000Z',
    ttl: 0,
  };
  const now = Date.parse('2026-11-30T07:00:00Z');

  it('judges each status by its own clock, and never a finished row', () => {
    expect(stuckReason({ ...base, status: 'PENDING' }, now, 1_200)).toBe('never-claimed');
    expect(stuckReason({ ...base, status: 'PENDING' }, now, 3_600)).toBeUndefined();
    expect(stuckReason({ ...base, status: 'RUNNING', leaseExpiresAt: '2026-11-30T06:39:00.000Z' }, now, 1_200)).toBe(
      'lease-expired',
    );
    expect(
      stuckReason({ ...base, status: 'RUNNING', leaseExpiresAt: '2026-11-30T06:41:00.000Z' }, now, 1_200),
    ).toBeUndefined();
    expect(stuckReason({ ...base, status: 'RUNNING' }, now, 1_200)).toBeUndefined();
    expect(stuckReason({ ...base, status: 'RETRY_WAIT', nextAttemptAt: '2026-11-30T06:30:00.000Z' }, now, 1_200)).toBe(
      'retry-overdue',
    );
    expect(
      stuckReason({ ...base, status: 'PENDING', requeuedAt: '2026-11-30T06:50:00.000Z' }, now, 1_200),
    ).toBeUndefined();
    expect(stuckReason({ ...base, status: 'FAILED' }, now, 1)).toBeUndefined();
    expect(stuckReason({ ...base, status: 'SUCCEEDED' }, now, 1)).toBeUndefined();
  });
});

describe('reconcile thresholds from the environment', () => {
  it('name the wrong field', () => {
    expect(() =>
      parseReconcileThresholds(
        JSON.stringify({ ...RECONCILE_TEST_THRESHOLDS, maxFixesPerRun: -1 }),
        'RECONCILE_THRESHOLDS',
      ),
    ).toThrow('RECONCILE_THRESHOLDS.maxFixesPerRun: must be a whole number of at least 1, got -1');
    expect(() =>
      parseReconcileThresholds(JSON.stringify({ ...RECONCILE_TEST_THRESHOLDS, stuckAfter: 5 }), 'RECONCILE_THRESHOLDS'),
    ).toThrow('RECONCILE_THRESHOLDS.stuckAfter: unknown field');
    expect(() => parseReconcileThresholds('{', 'RECONCILE_THRESHOLDS')).toThrow(
      'RECONCILE_THRESHOLDS is not valid JSON',
    );
    expect(parseReconcileThresholds(JSON.stringify(RECONCILE_TEST_THRESHOLDS), 'X')).toEqual(RECONCILE_TEST_THRESHOLDS);
  });
});
