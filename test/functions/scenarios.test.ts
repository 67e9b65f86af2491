/**
 * The failure stories the project exists for, end to end through the real handlers: a doubled trigger, and
 * commit-then-die before and after the notification. Each ends with one run, one report, one notification.
 */
import { describe, expect, it, vi } from 'vitest';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import type { Row as Item } from '../../sim/fakes/dynamo-expressions';
import {
  type Harness,
  lambdaContext,
  makeHarness,
  SCHEDULED,
  sqsEvent,
  timedJob,
  useHarnessTime,
} from '../support/harness';

const EVENT = { jobId: 'report', scheduledTime: SCHEDULED };
const REPORT_KEY = `reports/report/${SCHEDULED}.txt`;
/** The sample stack's queue visibility timeout: when SQS hands out a message again after its worker died. */
const VISIBILITY_MS = 900_000;

let h: Harness;
useHarnessTime();

/** Every stream record the table would emit for transitions into SUCCEEDED, fed to the notifier. */
async function announceTransitions(before: Item) {
  const row = h.aws.row('report', SCHEDULED)!;
  if (row.status === 'SUCCEEDED' && before.status !== 'SUCCEEDED') await h.streamChange(before);
}

describe('scenarios', () => {
  it('a doubled trigger gives one occurrence, one run, one report and one notification', async () => {
    const job = timedJob(30_000);
    h = makeHarness({ jobs: { report: job } });
    const results = await Promise.all([h.trigger(EVENT), h.trigger(EVENT)]);
    expect(results.sort()).toEqual(['pending-re-enqueued', 'recorded']);
    expect(h.aws.table.size).toBe(1);

    // Both messages arrive, even in one batch: one claims, the other sees the live lease and is dropped.
    const before = { ...h.aws.row('report', SCHEDULED)! };
    const batch = h.worker(
      sqsEvent(h.aws.sent.map((body, i) => ({ messageId: `m${i}`, body }))),
      lambdaContext(150_000),
    );
    await vi.advanceTimersByTimeAsync(30_000);
    expect((await batch).batchItemFailures).toEqual([]);
    await announceTransitions({ ...before, status: 'RUNNING' });

    expect(job.log.runs).toBe(1);
    expect(h.aws.objects.size).toBe(1);
    expect(h.aws.delivered).toHaveLength(1);
  });

  it('the happy path of a 100 s job costs 12 AWS requests: 2 to trigger, 8 to work (2 heartbeats, 2 for the slot, the commit point), 2 to announce', async () => {
    h = makeHarness({ jobs: { report: timedJob(100_000) } });
    await h.trigger(EVENT);
    const triggerCalls = h.aws.calls.length;
    const running = { ...h.aws.row('report', SCHEDULED)!, status: 'RUNNING' };
    const run = h.deliver(encodeEnvelope(EVENT));
    await vi.advanceTimersByTimeAsync(100_000);
    await run;
    const workerCalls = h.aws.calls.length - triggerCalls;
    await announceTransitions(running);
    const notifierCalls = h.aws.calls.length - triggerCalls - workerCalls;

    expect(h.aws.calls.slice(0, triggerCalls)).toEqual(['PutItem', 'SendMessage']);
    // claim, take the running slot (overlap skip, the default), extend at 45 s and 90 s, the commit point, commit,
    // complete, release the slot (no look-up for a committed report on a first claim)
    expect(h.aws.calls.slice(triggerCalls, triggerCalls + workerCalls)).toEqual([
      'UpdateItem',
      'UpdateItem',
      'UpdateItem',
      'UpdateItem',
      'UpdateItem',
      'PutObject',
      'UpdateItem',
      'UpdateItem',
    ]);
    // publish and record, from the stream record's image (no read of the row)
    expect(h.aws.calls.slice(-notifierCalls)).toEqual(['Publish', 'UpdateItem']);
    expect(h.aws.calls).toHaveLength(12);
  });

  it('commit-then-die before complete: the redelivery observes the committed report, completes it and it is announced once', async () => {
    const job = timedJob(10_000);
    h = makeHarness({ jobs: { report: job } });
    await h.trigger(EVENT);
    h.aws.dieAfter = 'PutObject';
    void h.deliver(encodeEnvelope(EVENT));
    await vi.advanceTimersByTimeAsync(10_000);
    // The process is gone: its heartbeat goes with it.
    vi.clearAllTimers();
    expect(h.aws.objects.has(REPORT_KEY)).toBe(true);
    const afterCrash = { ...h.aws.row('report', SCHEDULED)! };
    expect(afterCrash.status).toBe('RUNNING');

    // SQS hands the unacknowledged message out again after the visibility timeout; the lease has expired by then.
    vi.setSystemTime(Date.now() + VISIBILITY_MS);
    expect(await h.deliver(encodeEnvelope(EVENT))).toEqual([]);
    await announceTransitions(afterCrash);

    expect(job.log.runs).toBe(1);
    expect(h.aws.count('PutObject')).toBe(1);
    expect(h.aws.row('report', SCHEDULED)).toMatchObject({ status: 'SUCCEEDED', attempt: 2, reportKey: REPORT_KEY });
    expect(h.aws.delivered).toHaveLength(1);
  });

  it('commit-then-die after the notification: the redelivery finds it finished and announces nothing again', async () => {
    const job = timedJob(10_000);
    h = makeHarness({ jobs: { report: job } });
    await h.trigger(EVENT);
    const running = { ...h.aws.row('report', SCHEDULED)!, status: 'RUNNING' };
    const first = h.deliver(encodeEnvelope(EVENT));
    await vi.advanceTimersByTimeAsync(10_000);
    await first; // completed...
    await announceTransitions(running); // ...and announced; then the invocation dies before SQS deletes the message.

    vi.setSystemTime(Date.now() + VISIBILITY_MS);
    expect(await h.deliver(encodeEnvelope(EVENT))).toEqual([]);
    await announceTransitions(h.aws.row('report', SCHEDULED)!); // no transition: nothing to feed

    expect(job.log.runs).toBe(1);
    expect(h.aws.count('PutObject')).toBe(1);
    expect(h.aws.published).toHaveLength(1);
    expect(h.aws.row('report', SCHEDULED)?.notifiedAt).toBeDefined();
  });

  it('commit-then-die between the notifier publishing and recording it: one notification reaches subscribers', async () => {
    const job = timedJob(1_000);
    h = makeHarness({ jobs: { report: job } });
    await h.trigger(EVENT);
    const running = { ...h.aws.row('report', SCHEDULED)!, status: 'RUNNING' };
    const run = h.deliver(encodeEnvelope(EVENT));
    await vi.advanceTimersByTimeAsync(1_000);
    await run;
    h.aws.dieAfter = 'Publish';
    void h.streamChange(running);
    await vi.advanceTimersByTimeAsync(0);
    // Lambda retries the stream batch seconds later.
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await h.streamChange(running)).toEqual([]);

    expect(h.aws.published).toHaveLength(2);
    expect(h.aws.delivered).toHaveLength(1);
    expect(h.aws.row('report', SCHEDULED)?.notificationId).toBe('sns-2');
  });
});
