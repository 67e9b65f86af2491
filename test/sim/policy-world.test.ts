/**
 * The policy world (sim/policy-world.ts): several occurrences of one job under an overlap policy, on fixed plans
 * (each policy's defining case once), a short property run, and the invariants' own ability to fail.
 */
import { describe, expect, it } from 'vitest';
import { calmPlan } from '../../sim/plan';
import {
  checkPolicyInvariants,
  firstOwnStarts,
  type PolicyPlan,
  simulatePolicies,
  simulatePolicyPlan,
  slotHeldSince,
} from '../../sim/policy-world';
import { type PolicyScenario, pauseNoteOf, scheduleOf } from '../../sim/world';

const statuses = (rows: readonly (Record<string, unknown> | undefined)[]) => rows.map((r) => r?.status);
const ids = (violations: readonly { invariant: string }[]) => [...new Set(violations.map((v) => v.invariant))];
const M1 = '2026-11-30T06:01:00Z';
const M2 = '2026-11-30T06:02:00Z';

describe('the policy world', () => {
  it('skip: a slow first occurrence makes the next one SKIPPED for overlap, yielding to it', async () => {
    const scenario: PolicyScenario = { overlap: 'skip', others: [{ afterMs: 30_000, jobMs: 5_000 }] };
    const { outcome, violations } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 100_000 }), scenario });
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['SUCCEEDED', 'SKIPPED']);
    expect(outcome.rows[1]).toMatchObject({ skipReason: 'overlap', yieldedTo: '2026-11-30T06:00:00Z' });
  });

  it('bufferAll: the later ones wait and run one after another, in order, without overlapping', async () => {
    const scenario: PolicyScenario = {
      overlap: 'bufferAll',
      others: [
        { afterMs: 40_000, jobMs: 20_000 },
        { afterMs: 20_000, jobMs: 20_000 },
      ],
    };
    const { outcome, violations } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 60_000 }), scenario });
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    const starts = [...outcome.firstStartedAt.entries()].sort((a, b) => a[1] - b[1]).map(([t]) => t);
    expect(starts).toEqual(['2026-11-30T06:00:00Z', '2026-11-30T06:00:20Z', '2026-11-30T06:00:40Z']);
  });

  it('cancelOther: the later one cancels the running one, and their side effects never overlap', async () => {
    const scenario: PolicyScenario = { overlap: 'cancelOther', others: [{ afterMs: 30_000, jobMs: 5_000 }] };
    const { outcome, violations } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 200_000 }), scenario });
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['CANCELLED', 'SUCCEEDED']);
    expect(outcome.rows[0]).toMatchObject({ cancelledBy: '2026-11-30T06:00:30Z' });
  });

  it('a dead first occurrence: once its lease expired the next one runs, and the first is claimed again and yields', async () => {
    const scenario: PolicyScenario = { overlap: 'skip', others: [{ afterMs: 150_000, jobMs: 5_000 }] };
    const plan = calmPlan({ jobMs: 60_000, crashes: [{ invocation: 1, atMs: 20_000 }] });
    const { outcome, violations } = await simulatePolicyPlan({ plan, scenario });
    expect(violations).toEqual([]);
    expect(outcome.rows[1]?.status).toBe('SUCCEEDED');
    expect(['SUCCEEDED', 'SKIPPED']).toContain(outcome.rows[0]?.status);
  });

  it('the invariants fail when two occurrences of a skip job overlap, or a row does not say why it did not run', async () => {
    const scenario: PolicyScenario = { overlap: 'skip', others: [{ afterMs: 30_000, jobMs: 5_000 }] };
    const { outcome } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 100_000 }), scenario });
    const first = outcome.sideEffects[1]!;
    const overlapping = {
      ...outcome,
      sideEffects: [...outcome.sideEffects, { ...first, leaseId: 'intruder', scheduledTime: '2026-11-30T06:00:30Z' }],
    };
    expect(checkPolicyInvariants(overlapping, scenario).map((v) => v.invariant)).toEqual(['P3']);
    expect(checkPolicyInvariants(overlapping, { ...scenario, overlap: 'allowAll' })).toEqual([]);
    const { yieldedTo: _, ...silent } = outcome.rows[1]!;
    const unexplained = { ...outcome, rows: [outcome.rows[0], silent] };
    expect(checkPolicyInvariants(unexplained, scenario).map((v) => v.invariant)).toEqual(['P5']);
  });

  it('keeps every policy invariant over 60 generated plans (seed 20261201), some with each new field', async () => {
    const report = await simulatePolicies({ runs: 60, seed: 20261201 });
    expect(report.failure?.violations).toBeUndefined();
    expect(report.tally.runs).toBe(60);
    expect(Object.keys(report.tally.byPolicy).length).toBeGreaterThanOrEqual(4);
    const { withWindow, withOperator, withPauseAfterFailures, operatorPauses } = report.tally;
    expect(Math.min(withWindow, withOperator, withPauseAfterFailures, operatorPauses)).toBeGreaterThan(0);
  });
});

describe('the policy world: bufferAll order (P6)', () => {
  const scenario: PolicyScenario = {
    overlap: 'bufferAll',
    others: [
      { afterMs: 40_000, jobMs: 20_000 },
      { afterMs: 20_000, jobMs: 20_000 },
    ],
  };

  it('P6 fails when a later buffered occurrence starts before an earlier one buffered before it', async () => {
    const { outcome } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 60_000 }), scenario });
    const start = (t: string) => outcome.runStarts.find((s) => s.scheduledTime === t);
    const [second, third] = [start('2026-11-30T06:00:20Z'), start('2026-11-30T06:00:40Z')];
    if (second === undefined || third === undefined) throw new Error('the buffered ones did not start');
    const swapped = {
      ...outcome,
      runStarts: outcome.runStarts.map((s) =>
        s === second ? { ...s, at: third.at } : s === third ? { ...s, at: second.at } : s,
      ),
    };
    expect(ids(checkPolicyInvariants(swapped, scenario))).toEqual(['P6']);
  });

  // Found at seed 7250006 (--world cancel), no operator action needed. 06:00:02 took the free slot (+2.3 s), but the
  // take's response was lost and its delivery failed; 06:00:00, delivered late (+6.8 s), was BUFFERED behind it. The
  // redelivery of 06:00:02 (after the visibility timeout) took its own slot back and logged its first start, before
  // 06:00:00 ran: as documented (the slot naming the occurrence is taken back before anything buffered). P6 took that
  // logged start for the moment it went ahead of the buffer.
  const heldFirst: PolicyPlan = {
    plan: {
      seed: 1585970329,
      jobMs: 260000,
      schedulerDeliveries: [8173, 6814, 29486],
      callFaults: [
        { actor: 'worker', call: 12, fault: { kind: 'lost-retried' } },
        { actor: 'worker', call: 9, fault: { kind: 'transient' } },
        { actor: 'worker', call: 9, fault: { kind: 'transient' } },
        { actor: 'worker', call: 8, fault: { kind: 'slow', ms: 24815 } },
        { actor: 'worker', call: 2, fault: { kind: 'lost-error' } },
        { actor: 'worker', call: 3, fault: { kind: 'lost-retried' } },
      ],
      crashes: [{ invocation: 4, atMs: 29640 }],
      freezes: [{ invocation: 2, atMs: 113537, forMs: 138839 }],
      sqsDuplicates: [],
      skewsMs: [5758, -6290, -3552, 4423],
      maxAttempts: 17,
    },
    scenario: {
      overlap: 'bufferAll',
      others: [
        { afterMs: 179985, jobMs: 109789 },
        { afterMs: 2012, jobMs: 71287 },
      ],
    },
  };
  const EARLY = '2026-11-30T06:00:00Z';
  const HOLDER = '2026-11-30T06:00:02Z';

  it('one that held the slot when an earlier one was BUFFERED may start first, even if its first start came later', async () => {
    const { outcome, violations } = await simulatePolicyPlan(heldFirst);
    expect(violations).toEqual([]);
    const bufferedAt = outcome.firstBufferedAt.get(EARLY) ?? 0;
    const starts = firstOwnStarts(outcome);
    expect(slotHeldSince(outcome, HOLDER, starts.get(HOLDER) ?? 0)).toBeLessThan(bufferedAt);
    expect(starts.get(HOLDER)).toBeGreaterThan(bufferedAt);
    expect(starts.get(EARLY)).toBeGreaterThan(starts.get(HOLDER) ?? 0);
  });

  it('P6 fails there when the holder lost the slot between the earlier one being BUFFERED and its own start', async () => {
    const { outcome } = await simulatePolicyPlan(heldFirst);
    const bufferedAt = outcome.firstBufferedAt.get(EARLY) ?? 0;
    const last = outcome.jobStateWrites.filter((w) => w.at <= bufferedAt).at(-1);
    if (last === undefined) throw new Error('no job-state write before the buffering');
    const { slotTime: _t, slotLeaseId: _l, ...kept } = last.after;
    const released = { ...kept, version: Number(last.after.version) + 1 };
    const release = { at: bufferedAt + 1, who: 'worker#1', before: last.after, after: released };
    const i = outcome.jobStateWrites.indexOf(last) + 1;
    const writes = [...outcome.jobStateWrites.slice(0, i), release, ...outcome.jobStateWrites.slice(i)];
    expect(ids(checkPolicyInvariants({ ...outcome, jobStateWrites: writes }, heldFirst.scenario))).toEqual(['P6']);
  });
});

describe('the policy world: the catch-up window', () => {
  const scenario: PolicyScenario = {
    overlap: 'skip',
    catchupWindowSeconds: 60,
    others: [
      { afterMs: 120_000, jobMs: 5_000, lateMs: 90_000 },
      { afterMs: 240_000, jobMs: 5_000, lateMs: 30_000 },
    ],
  };

  it('a delivery later than the window records the occurrence SKIPPED/missed and runs nothing; one within it runs', async () => {
    const { outcome, violations } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 10_000 }), scenario });
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['SUCCEEDED', 'SKIPPED', 'SUCCEEDED']);
    expect(outcome.rows[1]).toMatchObject({ skipReason: 'missed' });
    expect(outcome.sideEffects.some((e) => e.scheduledTime === '2026-11-30T06:02:00Z')).toBe(false);
  });

  it('P7 fails when a missed occurrence ran, or one recorded within the window is called missed', async () => {
    const { outcome } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 10_000 }), scenario });
    const ran = {
      ...outcome,
      sideEffects: [
        ...outcome.sideEffects,
        { leaseId: 'x', at: outcome.horizon, scheduledTime: '2026-11-30T06:02:00Z' },
      ],
    };
    expect(ids(checkPolicyInvariants(ran, scenario))).toEqual(['P7']);
    const wronglyMissed = { ...outcome.rows[2], skipReason: 'missed' };
    const called = { ...outcome, rows: [outcome.rows[0], outcome.rows[1], wronglyMissed] };
    expect(ids(checkPolicyInvariants(called, scenario))).toEqual(['P7']);
  });
});

describe('the policy world: pause and resume', () => {
  // A pause at +70 s: the occurrence of 06:01 fired at +60 s and its delivery, 40 s late, arrives while paused.
  const paused: PolicyScenario = {
    overlap: 'skip',
    others: [
      { afterMs: 60_000, jobMs: 5_000, lateMs: 40_000 },
      { afterMs: 120_000, jobMs: 5_000 },
    ],
    operator: [{ atMs: 70_000, action: 'pause' }],
  };

  it('the schedule is the cron of the scenario minutes (what a resume catches up on)', () => {
    expect(scheduleOf(paused)).toBe('cron(0,1,2 6 30 11 ? 2026)');
    expect(() => scheduleOf({ overlap: 'skip', others: [{ afterMs: 30_000, jobMs: 1 }] })).toThrow(/whole minute/);
  });

  it('a delivery in flight while paused is SKIPPED/paused, a later fire time is held back, and the pause stands', async () => {
    const { outcome, violations } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 10_000 }), scenario: paused });
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['SUCCEEDED', 'SKIPPED', undefined]);
    expect(outcome.rows[1]).toMatchObject({ skipReason: 'paused' });
    expect(outcome.firesHeldBack.map((f) => f.scheduledTime)).toEqual([M2]);
    expect(outcome.jobState).toMatchObject({ pauseNote: pauseNoteOf(1), pauseCause: 'operator' });
    expect(outcome.scheduleChanges.map((c) => c.state)).toEqual(['DISABLED']);
  });

  it('a resume enables the schedule and records and runs the fire times held back inside the window', async () => {
    const scenario: PolicyScenario = {
      ...paused,
      operator: [...(paused.operator ?? []), { atMs: 400_000, action: 'resume' }],
    };
    const { outcome, violations } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 10_000 }), scenario });
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['SUCCEEDED', 'SKIPPED', 'SUCCEEDED']);
    expect(outcome.operatorActions.map((a) => a.outcome)).toEqual(['paused', 'resumed']);
    expect(outcome.scheduleChanges.map((c) => c.state)).toEqual(['DISABLED', 'ENABLED']);
    expect(outcome.jobState?.pausedAt).toBeUndefined();
  });

  it('P8 fails when an attempt claimed while paused starts, or the slot is taken on a paused row; P4 when a held-back time was not caught up', async () => {
    const { outcome } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 10_000 }), scenario: paused });
    const pausedAt = outcome.jobStateWrites.find((w) => w.after.pausedAt !== undefined)?.at ?? 0;
    const started = {
      ...outcome,
      leaseClaims: new Map([...outcome.leaseClaims, ['late', { scheduledTime: M1, at: pausedAt + 1_000 }]]),
      runStarts: [...outcome.runStarts, { leaseId: 'late', scheduledTime: M1, at: pausedAt + 1_100 }],
    };
    expect(ids(checkPolicyInvariants(started, paused))).toEqual(['P8']);
    const before = outcome.jobState;
    if (before === undefined) throw new Error('no job-state row');
    const after = { ...before, slotTime: M1, slotLeaseId: 'late', version: Number(before.version) + 1 };
    const takenWhilePaused = {
      ...outcome,
      jobStateWrites: [...outcome.jobStateWrites, { at: outcome.horizon, who: 'worker#9', before, after }],
    };
    expect(ids(checkPolicyInvariants(takenWhilePaused, paused))).toEqual(['P8']);
    const resumed = {
      ...outcome,
      operatorActions: [{ action: 'resume' as const, at: 0, endedAt: outcome.horizon, outcome: 'resumed' }],
    };
    expect(ids(checkPolicyInvariants(resumed, paused))).toContain('P4');
  });

  it('P9 fails when a write skips a version, a worker lifts a pause, or a pause the operator was told of is not in the history', async () => {
    const { outcome } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 10_000 }), scenario: paused });
    const writes = outcome.jobStateWrites;
    const i = writes.findIndex((w) => w.after.pausedAt !== undefined);
    const w = writes[i];
    if (w === undefined) throw new Error('no pause write');
    const skipped = {
      ...outcome,
      jobStateWrites: writes.map((x, j) => (j === i ? { ...x, after: { ...x.after, version: 99 } } : x)),
    };
    expect(ids(checkPolicyInvariants(skipped, paused))).toEqual(['P9']);
    const { pausedAt: _, ...lifted } = w.after;
    const byWorker = {
      ...outcome,
      jobStateWrites: [
        ...writes,
        {
          at: outcome.horizon,
          who: 'worker#9',
          before: w.after,
          after: { ...lifted, version: Number(w.after.version) + 1 },
        },
      ],
    };
    expect(ids(checkPolicyInvariants(byWorker, paused))).toContain('P9');
    const lost = { ...outcome, jobStateWrites: writes.filter((_x, j) => j !== i) };
    expect(ids(checkPolicyInvariants(lost, paused))).toContain('P9');
  });
});

describe('the policy world: pauseAfterFailures', () => {
  // The upstream is down for an hour and each occurrence has one attempt: every one FAILS.
  const plan = calmPlan({ jobMs: 5_000, outage: { fromMs: 0, forMs: 3_600_000 }, maxAttempts: 1 });
  const scenario: PolicyScenario = {
    overlap: 'skip',
    pauseAfterFailures: 2,
    others: [
      { afterMs: 60_000, jobMs: 5_000 },
      { afterMs: 120_000, jobMs: 5_000 },
    ],
  };

  it('after 2 FAILED occurrences in a row the worker pauses the job with a note and disables its schedule', async () => {
    const { outcome, violations } = await simulatePolicyPlan({ plan, scenario });
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['FAILED', 'FAILED', undefined]);
    expect(outcome.jobState).toMatchObject({
      pauseCause: 'failures',
      pausedBy: 'pauseAfterFailures',
      consecutiveFailures: 2,
    });
    expect(outcome.scheduleChanges).toMatchObject([{ state: 'DISABLED', who: expect.stringMatching(/^worker#/) }]);
    expect(outcome.firesHeldBack.map((f) => f.scheduledTime)).toEqual([M2]);
  });

  it('P10 fails when the schedule was not disabled, the pause came before N counted failures, or a count of N was never followed by a pause', async () => {
    const { outcome } = await simulatePolicyPlan({ plan, scenario });
    expect(ids(checkPolicyInvariants({ ...outcome, scheduleChanges: [] }, scenario))).toEqual(['P10']);
    const early = { ...outcome, settings: { ...outcome.settings, pauseAfterFailures: 3 } };
    expect(ids(checkPolicyInvariants(early, scenario))).toEqual(['P10']);
    const notPaused = {
      ...outcome,
      jobStateWrites: outcome.jobStateWrites.filter((w) => w.after.pauseCause === undefined),
    };
    expect(ids(checkPolicyInvariants(notPaused, scenario))).toEqual(['P10']);
  });
});
