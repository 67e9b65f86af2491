/**
 * The policy world (sim/policy-world.ts): several occurrences of one job under an overlap policy, on fixed plans
 * (each policy's defining case once), a short property run, and the invariants' own ability to fail.
 */
import { describe, expect, it } from 'vitest';
import { calmPlan } from '../../sim/plan';
import { checkPolicyInvariants, simulatePolicies, simulatePolicyPlan } from '../../sim/policy-world';
import type { PolicyScenario } from '../../sim/world';

const statuses = (rows: readonly (Record<string, unknown> | undefined)[]) => rows.map((r) => r?.status);

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

  it('keeps every policy invariant over 60 generated plans (seed 20261201)', async () => {
    const report = await simulatePolicies({ runs: 60, seed: 20261201 });
    expect(report.failure?.violations).toBeUndefined();
    expect(report.tally.runs).toBe(60);
    expect(Object.keys(report.tally.byPolicy).length).toBeGreaterThanOrEqual(4);
  }, 120_000);
});
