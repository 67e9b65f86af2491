/**
 * The simulated world models the faults it claims to, each shown once on a fixed plan: the property tests rely on
 * these models, so they are tested on their own.
 */
import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../sim/invariants';
import { calmPlan } from '../../sim/plan';
import { simulateOne } from '../../sim/simulate';
import { REPORT_KEY, WORKER_ID } from '../../sim/world';

const lines = (trace: { who: string; what: string }[], pattern: RegExp) =>
  trace.filter((l) => pattern.test(`${l.who} ${l.what}`));

describe('simulated world', () => {
  it('runs the happy path through the real handlers: one claim, one report, one notification, 12 requests (2 for the slot, 1 for the commit point)', async () => {
    const { outcome, checked } = await simulateOne(calmPlan({ jobMs: 100_000 }));
    expect(checked.violations).toEqual([]);
    expect(outcome.row).toMatchObject({ status: 'SUCCEEDED', attempt: 1, reportKey: REPORT_KEY });
    expect(outcome.delivered).toBe(1);
    expect(outcome.calls.map((c) => c.op)).toEqual([
      'PutItem',
      'SendMessage',
      'UpdateItem', // claim
      'UpdateItem', // take the running slot (overlap skip, the default)
      'UpdateItem',
      'UpdateItem',
      'UpdateItem', // the commit point (an operator's cancel is refused from here on)
      'PutObject',
      'UpdateItem', // complete
      'UpdateItem', // release the slot
      'Publish',
      'UpdateItem',
    ]);
  });

  it('records the worker in the row, and invariant 5 flags a row that lost it (the reconciler could not re-enqueue it)', async () => {
    const { outcome, checked } = await simulateOne(calmPlan({ jobMs: 1_000 }));
    expect(checked.violations).toEqual([]);
    expect(outcome.row?.worker).toBe(WORKER_ID);
    const { worker: _lost, ...withoutWorker } = outcome.row!;
    const broken = checkInvariants({ ...outcome, row: withoutWorker });
    expect(broken.violations).toEqual([
      { invariant: 5, message: `the row names worker undefined, not ${WORKER_ID} whose queue carried it` },
    ]);
  });

  it('is a function of its plan: the same plan gives the same trace', async () => {
    const plan = calmPlan({
      seed: 42,
      sqsDuplicates: [30_000],
      callFaults: [{ actor: 'worker', call: 3, fault: { kind: 'transient' } }],
      skewsMs: [1_500, -2_000],
    });
    const a = await simulateOne(plan);
    const b = await simulateOne(plan);
    expect(b.outcome.trace).toEqual(a.outcome.trace);
  });

  it('commit-then-die: the redelivery adopts the committed report; the job ran once and is announced once', async () => {
    const { outcome, checked } = await simulateOne(
      // Worker call 4 of a 20 s first attempt is its PutObject (claim, take the slot, commit point, commit: no look-up
      // before a first attempt).
      calmPlan({ jobMs: 20_000, callFaults: [{ actor: 'worker', call: 4, fault: { kind: 'crash-after' } }] }),
    );
    expect(checked.violations).toEqual([]);
    expect(lines(outcome.trace, /worker#1 DIES: crashed after PutObject was applied/)).toHaveLength(1);
    expect(lines(outcome.trace, /report already committed by an earlier attempt/)).toHaveLength(1);
    expect(new Set(outcome.sideEffects.map((e) => e.leaseId))).toEqual(new Set(['lease-1']));
    expect(outcome.row).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
    expect(outcome.delivered).toBe(1);
  });

  it('a worker frozen past its lease resumes to find every write refused, while the new holder finishes', async () => {
    // Paused 150 s inside its job; a copy of the message arrives after its lease expired and is claimed.
    const { outcome, checked } = await simulateOne(
      calmPlan({
        jobMs: 100_000,
        freezes: [{ invocation: 1, atMs: 50_000, forMs: 150_000 }],
        sqsDuplicates: [175_000],
      }),
    );
    expect(checked.violations).toEqual([]);
    expect(checked.overlapChecked).toBe(false);
    expect(
      lines(outcome.trace, /aws worker#1 UpdateItem (extend|release) lease-1 → ConditionalCheckFailedException/).length,
    ).toBeGreaterThan(0);
    expect(outcome.row).toMatchObject({ status: 'SUCCEEDED' });
    expect(outcome.row?.leaseId).not.toBe('lease-1');
  });

  it('a notifier that publishes and dies before recording it: the FIFO deduplication id keeps it to one', async () => {
    // Notifier calls: Publish, then markNotified; it dies right after the publish.
    const { outcome, checked } = await simulateOne(
      calmPlan({ jobMs: 5_000, callFaults: [{ actor: 'notifier', call: 1, fault: { kind: 'crash-after' } }] }),
    );
    expect(checked.violations).toEqual([]);
    expect(outcome.published).toBe(2);
    expect(outcome.delivered).toBe(1);
  });

  it('a doubled Scheduler delivery and a failing first trigger still give one row and one run', async () => {
    const { outcome, checked } = await simulateOne(
      calmPlan({
        jobMs: 5_000,
        schedulerDeliveries: [0, 2_000],
        callFaults: [{ actor: 'trigger', call: 1, fault: { kind: 'transient' } }],
      }),
    );
    expect(checked.violations).toEqual([]);
    expect(lines(outcome.trace, /trigger#\d+ invoked \(Scheduler delivery 1, try 2\)/)).toHaveLength(1);
    expect(outcome.claims).toBe(1);
    expect(outcome.row).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
  });

  it('a Lambda timeout kills a worker whose calls hang, and the message comes back after the visibility timeout', async () => {
    // complete (worker call 5 of a 30 s job: claim, take the slot, commit point, commit, complete) arrives 400 s late,
    // past the 330 s function timeout.
    const { outcome, checked } = await simulateOne(
      calmPlan({ jobMs: 30_000, callFaults: [{ actor: 'worker', call: 5, fault: { kind: 'slow', ms: 400_000 } }] }),
    );
    expect(checked.violations).toEqual([]);
    expect(lines(outcome.trace, /worker#1 DIES: Lambda timeout/)).toHaveLength(1);
    expect(outcome.row).toMatchObject({ status: 'SUCCEEDED' });
  });
});
