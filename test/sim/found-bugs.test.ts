/**
 * Protocol bugs the simulation found, fixed since; each test states the guarantee the bug broke. Each bug is named
 * for what went wrong, as in docs/design.md. The third, "stray copy during a retry" (a second message of the same
 * occurrence kept alive through a long retry sequence), is a rule of the worker's and is tested with it, in
 * test/functions/worker.test.ts ("drops another copy of the occurrence's message while a retry waits").
 */
import { describe, expect, it } from 'vitest';
import { calmPlan } from '../../sim/plan';
import { simulateOne } from '../../sim/simulate';

/** A six-hour outage: every attempt fails and is retried until attempts or the deadline run out. */
const longOutage = { jobMs: 1_000, outage: { fromMs: 0, forMs: 7 * 3600_000 } };
const EARLY_ARRIVAL = 'log: retry not due yet; hiding the message until it is';

describe("retry hidden by a slow clock: hidden by one worker's clock, found not due by another's", () => {
  it('with agreeing clocks, an occurrence whose every attempt fails ends FAILED with its last error', async () => {
    const { outcome, checked } = await simulateOne(calmPlan({ ...longOutage, skewsMs: [0] }));
    expect(checked.violations).toEqual([]);
    expect(outcome.row).toMatchObject({ status: 'FAILED', attempt: 20 });
    expect(String(outcome.row?.lastError)).toContain('upstream unavailable');
  });

  // The retry is hidden until nextAttemptAt by the releasing worker's clock. A receiver whose clock was 3 s behind
  // found it "not due" and hid it again, two receives per attempt against a redrive limit of maxAttempts + 5: the
  // message reached the DLQ after about 12 attempts and the row stayed RETRY_WAIT. The claim now counts a retry as
  // due leaseSafetyMarginSeconds early, the skew the protocol tolerates.
  it('with worker clocks 3 s apart, the occurrence still ends FAILED after all 20 attempts, one receive each', async () => {
    const { outcome, checked } = await simulateOne(calmPlan({ ...longOutage, skewsMs: [3_000, 0] }));
    expect(checked.violations).toEqual([]);
    expect(outcome.row).toMatchObject({ status: 'FAILED', attempt: 20 });
    expect(outcome.trace.filter((l) => l.what === EARLY_ARRIVAL)).toEqual([]);
    expect(outcome.messagesInDlq).toBe(0);
  });
});

describe('FAILED beside a committed report: the last attempt fails to see the report', () => {
  /** Attempt 1 commits its report and dies (its calls: claim, take the slot, commit); attempt 2 is the last (maxAttempts 2). */
  const commitThenDie = {
    jobMs: 5_000,
    maxAttempts: 2,
    callFaults: [{ actor: 'worker' as const, invocation: 1, call: 3, fault: { kind: 'crash-after' as const } }],
  };
  /** ... and attempt 2's look-up of the committed report (its third call, after claim and take: HeadObject) fails transiently. */
  const lookUpFails = { actor: 'worker' as const, invocation: 2, call: 3, fault: { kind: 'transient' as const } };

  it('commit-then-die before the last attempt: the last attempt adopts the report', async () => {
    const { outcome, checked } = await simulateOne(calmPlan(commitThenDie));
    expect(checked.violations).toEqual([]);
    expect(outcome.row).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
  });

  // The look-up was one HeadObject, not retried; its failure went to the failed-attempt path, which on the last
  // attempt recorded FAILED without looking again: FAILED beside a committed report, nothing announced. The look-up
  // is now retried like every other call, and the last attempt looks again before it records FAILED.
  it('and when that look-up fails once, the occurrence still ends SUCCEEDED with the committed report, announced once', async () => {
    const { outcome, checked } = await simulateOne(
      calmPlan({ ...commitThenDie, callFaults: [...commitThenDie.callFaults, lookUpFails] }),
    );
    expect(checked.violations).toEqual([]);
    expect(outcome.row?.status).toBe('SUCCEEDED');
    expect(outcome.objects.size).toBe(1);
    expect(outcome.delivered).toBe(1);
  });
});
