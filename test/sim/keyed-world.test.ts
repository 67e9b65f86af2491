/**
 * The keyed world (sim/keyed-world.ts): occurrences of several schedule keys of one job, each key its own series
 * with its own running slot and overlap policy; the defining case on a fixed plan, the invariants' own ability to
 * fail, and a short property run.
 */
import { describe, expect, it } from 'vitest';
import { checkKeyedInvariants, crossKeyOverlap, simulateKeyed, simulateKeyedPlan } from '../../sim/keyed-world';
import { calmPlan } from '../../sim/plan';
import type { PolicyScenario } from '../../sim/world';

const statuses = (rows: readonly (Record<string, unknown> | undefined)[]) => rows.map((r) => r?.status);

describe('the keyed world', () => {
  // k0 at 06:00 works 100 s; k1 at 06:00:30 works 5 s; k0 again at 06:00:40.
  const scenario: PolicyScenario = {
    overlap: 'skip',
    keys: ['k0', 'k1'],
    others: [
      { afterMs: 30_000, jobMs: 5_000, key: 1 },
      { afterMs: 40_000, jobMs: 5_000, key: 0 },
    ],
  };

  it("skip: one key's slow run never skips another key's occurrence, only its own key's next one", async () => {
    const { outcome, violations } = await simulateKeyedPlan({ plan: calmPlan({ jobMs: 100_000 }), scenario });
    expect(violations).toEqual([]);
    expect(statuses(outcome.rows)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SKIPPED']);
    expect(outcome.rows[2]).toMatchObject({ skipReason: 'overlap', yieldedTo: '2026-11-30T06:00:00Z' });
    expect(crossKeyOverlap(outcome)).toBe(true);
    expect([...outcome.objects.keys()].sort()).toEqual([
      'reports/report/k0/2026-11-30T06:00:00Z.txt',
      'reports/report/k1/2026-11-30T06:00:30Z.txt',
    ]);
  });

  it('the invariants fail when a row yields to a time only another key has, or one series runs twice at once', async () => {
    const { outcome } = await simulateKeyedPlan({ plan: calmPlan({ jobMs: 100_000 }), scenario });
    const yieldedToOther = { ...outcome.rows[2], yieldedTo: '2026-11-30T06:00:30Z' };
    const wrong = { ...outcome, rows: [outcome.rows[0], outcome.rows[1], yieldedToOther] };
    expect(checkKeyedInvariants(wrong, scenario).map((v) => v.invariant)).toEqual(['K2']);
    const first = outcome.sideEffects[1]!;
    const twice = { ...outcome, sideEffects: [...outcome.sideEffects, { ...first, leaseId: 'intruder' }] };
    expect(checkKeyedInvariants(twice, scenario).map((v) => v.invariant)).toEqual(['K1']);
    expect(checkKeyedInvariants(twice, { ...scenario, overlap: 'allowAll' })).toEqual([]);
  });

  it('keeps K1-K4 over 30 generated plans (seed 20261208), every policy', async () => {
    const report = await simulateKeyed({ runs: 30, seed: 20261208 });
    expect(report.failure?.violations).toBeUndefined();
    expect(report.tally.runs).toBe(30);
    expect(report.tally.crossKeyOverlaps).toBeGreaterThan(0);
  });
});
