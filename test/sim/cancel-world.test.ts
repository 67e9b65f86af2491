/**
 * The operator's cancel in the policy world (sim/policy-world.ts cancelPlan, P11 and P12): fixed plans where the cancel
 * meets a running job, a buffered occurrence and a job at its commit point, a short property run, and the two
 * invariants' own ability to fail.
 */
import { describe, expect, it } from 'vitest';
import { calmPlan } from '../../sim/plan';
import { cancelPlan, checkPolicyInvariants, simulatePolicies, simulatePolicyPlan } from '../../sim/policy-world';
import type { PolicyScenario } from '../../sim/world';

const statuses = (rows: readonly (Record<string, unknown> | undefined)[]) => rows.map((r) => r?.status);
const ids = (violations: readonly { invariant: string }[]) => [...new Set(violations.map((v) => v.invariant))];
const FIRST = '2026-11-30T06:00:00Z';
const REPORT = `reports/report/${FIRST}.txt`;

describe('the operator cancel in the policy world', () => {
  it('stops a running first occurrence: CANCELLED by the operator, no report, and the next one runs', async () => {
    const scenario: PolicyScenario = {
      overlap: 'bufferAll',
      others: [{ afterMs: 20_000, jobMs: 5_000 }],
      operator: [{ action: 'cancel', target: 0, atMs: 30_000 }],
    };
    const { outcome, violations } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 200_000 }), scenario });
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['CANCELLED', 'SUCCEEDED']);
    expect(outcome.rows[0]).toMatchObject({ cancelledByOperator: 'operator@sim', cancelNote: 'operator action 1' });
    expect(outcome.objects.has(REPORT)).toBe(false);
    expect(outcome.operatorActions[0]).toMatchObject({ action: 'cancel', outcome: 'cancelled' });
  });

  it("closes a BUFFERED occurrence, which the holder's wake-up then finds finished", async () => {
    const scenario: PolicyScenario = {
      overlap: 'bufferAll',
      others: [
        { afterMs: 10_000, jobMs: 5_000 },
        { afterMs: 20_000, jobMs: 5_000 },
      ],
      operator: [{ action: 'cancel', target: 1, atMs: 30_000 }],
    };
    const { outcome, violations } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 60_000 }), scenario });
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['SUCCEEDED', 'CANCELLED', 'SUCCEEDED']);
  });

  it('is refused once the occurrence SUCCEEDED, and changes nothing', async () => {
    const scenario: PolicyScenario = {
      overlap: 'skip',
      others: [{ afterMs: 60_000, jobMs: 5_000 }],
      operator: [{ action: 'cancel', target: 0, atMs: 30_000 }],
    };
    const { outcome, violations } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 10_000 }), scenario });
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(outcome.operatorActions[0]).toMatchObject({ outcome: 'refused' });
  });

  it('P11 fails on a report committed after the cancel; P12 on a row both SUCCEEDED and CANCELLED, or a cancel not in the row', async () => {
    const scenario: PolicyScenario = {
      overlap: 'skip',
      others: [{ afterMs: 60_000, jobMs: 5_000 }],
      operator: [{ action: 'cancel', target: 0, atMs: 30_000 }],
    };
    const { outcome } = await simulatePolicyPlan({ plan: calmPlan({ jobMs: 200_000 }), scenario });
    const cancelledAt = outcome.operatorCancelledAt.get(FIRST);
    if (cancelledAt === undefined) throw new Error('not cancelled');
    const committedLate = { ...outcome, commitsAt: new Map([[REPORT, [cancelledAt + 1]]]) };
    expect(ids(checkPolicyInvariants(committedLate, scenario))).toEqual(['P11']);
    const both = { ...outcome, statusesSeen: new Map([[FIRST, new Set(['RUNNING', 'SUCCEEDED', 'CANCELLED'])]]) };
    expect(ids(checkPolicyInvariants(both, scenario))).toEqual(['P12']);
    const notInRow = { ...outcome, rows: [{ ...outcome.rows[0], status: 'FAILED', lastError: 'x' }, outcome.rows[1]] };
    expect(ids(checkPolicyInvariants(notInRow, scenario))).toContain('P12');
  });

  it("refuses the cancel of an occurrence an earlier lease of which reached its commit point: that worker's put may land late", async () => {
    // P11 (seed 7250004): worker#1 froze for 195 s right after its commit point; its lease expired, worker#4 claimed
    // again, the operator's cancel (conditioned then only on the current lease's commit point) was recorded, and
    // worker#1 woke and put its report after it.
    const plan = {
      plan: {
        seed: 1482069027,
        jobMs: 119997,
        schedulerDeliveries: [0],
        callFaults: [{ actor: 'worker' as const, call: 5, fault: { kind: 'pause-after' as const, ms: 195480 } }],
        crashes: [],
        freezes: [],
        sqsDuplicates: [201521, 242014],
        skewsMs: [2203, -4031, -7124],
      },
      scenario: {
        overlap: 'skip' as const,
        others: [
          { afterMs: 130627, jobMs: 81863 },
          { afterMs: 179999, jobMs: 118873 },
        ],
        operator: [
          { action: 'cancel' as const, target: 0, atMs: 120608 },
          { action: 'cancel' as const, target: 0, atMs: 201885 },
        ],
      },
    };
    const { outcome, violations } = await simulatePolicyPlan(plan);
    expect(violations).toEqual([]);
    expect(outcome.operatorActions.map((a) => a.outcome)).toEqual(['refused', 'refused']);
    expect(outcome.rows[0]?.status).toBe('SUCCEEDED');
  });

  it('a start and a running holder that lost their leases to cancels leave the buffer and wake its head, which runs', async () => {
    // P4 (seed 7250005): B was cancelled while its start wrote the buffer [B, C], and A (the slot holder) at its commit
    // point; both acknowledged their messages, the finished B stayed at the buffer's head and C stayed BUFFERED.
    const plan = {
      plan: {
        seed: 0,
        jobMs: 2064,
        schedulerDeliveries: [1139],
        callFaults: [],
        crashes: [],
        freezes: [],
        sqsDuplicates: [],
        skewsMs: [0],
      },
      scenario: {
        overlap: 'bufferAll' as const,
        others: [
          { afterMs: 2000, jobMs: 1000 },
          { afterMs: 2500, jobMs: 1000 },
        ],
        operator: [
          { action: 'cancel' as const, target: 0, atMs: 0 },
          { action: 'cancel' as const, target: 1, atMs: 2228 },
          { action: 'cancel' as const, target: 0, atMs: 3493 },
        ],
      },
    };
    const { outcome, violations } = await simulatePolicyPlan(plan);
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['CANCELLED', 'CANCELLED', 'SUCCEEDED']);
  });

  it('holds every invariant over a short run of generated cancel plans', async () => {
    const report = await simulatePolicies({ runs: 25, seed: 7250003, plans: cancelPlan });
    expect(report.failure).toBeUndefined();
    expect(report.tally.cancels.cancelled ?? 0).toBeGreaterThan(0);
  });
});
