/**
 * The registry world (sim/registry-world.ts): the app's writes of run-time schedules, Scheduler edited behind the
 * registry's back, and the reconciler as deployed, each defining case once on a fixed plan; a short property run;
 * and the invariants' own ability to fail.
 */
import { describe, expect, it } from 'vitest';
import { scheduleNameOf } from '../../functions/protocol/schedule-registry';
import {
  checkRegistryInvariants,
  convergenceBoundMs,
  KEYED_GROUP,
  KEYS,
  MAX_OTHER_JOBS,
  type RegistryPlan,
  STRAY_NAMES,
  simulateRegistry,
  simulateRegistryPlan,
} from '../../sim/registry-world';

const plan = (over: Partial<RegistryPlan>): RegistryPlan => ({
  seed: 1,
  keys: 1,
  ops: [],
  edits: [],
  callFaults: [],
  phaseMs: 100_000,
  ...over,
});
const upsert = (atMs: number, spec = 1, key = 0) => ({ atMs, caller: 1, key, op: 'upsert' as const, spec });
const repairKinds = (o: Awaited<ReturnType<typeof simulateRegistryPlan>>['outcome']) =>
  o.reports.flatMap((r) => r.repairs.map((x) => x.kind));
const ids = (violations: readonly { invariant: string }[]) => [...new Set(violations.map((v) => v.invariant))];

describe('the registry world', () => {
  it('an upsert writes the row, then one schedule; the same upsert again writes nothing and calls Scheduler not at all', async () => {
    const { outcome, violations } = await simulateRegistryPlan(plan({ ops: [upsert(0), upsert(60_000)] }));
    expect(violations).toEqual([]);
    expect(outcome.ops.map((o) => o.outcome)).toEqual(['created', 'unchanged']);
    expect(outcome.schedules.map((s) => s.Name)).toEqual([scheduleNameOf('c0')]);
    // Its caller's template is remembered from the first call: one consistent read, and nothing else.
    const calls = outcome.trace.filter((l) => l.who === 'aws' && l.what.startsWith('app#2 '));
    expect(calls.map((l) => l.what)).toEqual(['app#2 GetItem c0 → ok']);
  });

  it('a caller that dies between the registry write and the Scheduler write: the sweep creates the schedule within the grace and one period', async () => {
    // Its calls: GetSchedule (the template), GetItem, PutItem (the row), CreateSchedule: it dies sending the fourth.
    const crash = { actor: 'app' as const, invocation: 1, call: 4, fault: { kind: 'crash-before' as const } };
    const { outcome, violations } = await simulateRegistryPlan(plan({ ops: [upsert(0)], callFaults: [crash] }));
    expect(violations).toEqual([]);
    expect(outcome.ops[0]?.outcome).toBe('killed');
    expect(repairKinds(outcome)).toEqual(['sync']);
    expect(outcome.convergedAt! - outcome.lastChangeAt).toBeLessThanOrEqual(convergenceBoundMs());
  });

  it('a response lost after the row was written: the caller sees an error, the row stands and its schedule follows', async () => {
    const lost = { actor: 'app' as const, invocation: 1, call: 3, fault: { kind: 'lost-error' as const } };
    const { outcome, violations } = await simulateRegistryPlan(plan({ ops: [upsert(0)], callFaults: [lost] }));
    expect(violations).toEqual([]);
    expect(outcome.ops[0]).toMatchObject({ ok: false, outcome: 'DependencyError' });
    expect(outcome.rows.map((r) => r.version)).toEqual([1]);
    expect(outcome.schedules).toHaveLength(1);
  });

  it('a schedule deleted or disabled by hand is put back, and an orphan removed, by the audit within a cycle', async () => {
    for (const edit of ['delete', 'disable', 'orphan'] as const) {
      const { outcome, violations } = await simulateRegistryPlan(
        plan({ keys: 2, ops: [upsert(0)], edits: [{ atMs: 600_000, key: 0, edit }] }),
      );
      expect(violations, edit).toEqual([]);
      expect(outcome.editsApplied[edit], edit).toBe(1);
      expect(repairKinds(outcome), edit).toEqual([{ delete: 'missing', disable: 'state', orphan: 'orphan' }[edit]]);
    }
  });

  it('with 10 jobs, a hand-made orphan of any name in any job’s group is removed within the bound (S7)', async () => {
    // After the faulted reconciler runs (4 periods from the phase): S7 applies to these.
    const edits = STRAY_NAMES.map((_, i) => ({
      atMs: 40 * 60_000 + i * 1_000,
      key: 0,
      edit: 'orphan' as const,
      job: i,
      stray: i,
    }));
    const { outcome, violations } = await simulateRegistryPlan(
      plan({ keys: 1, ops: [upsert(0)], edits, otherJobs: MAX_OTHER_JOBS }),
    );
    expect(violations).toEqual([]);
    expect(outcome.editsApplied.orphan).toBe(STRAY_NAMES.length);
    expect(repairKinds(outcome).filter((k) => k === 'orphan')).toHaveLength(STRAY_NAMES.length);
    expect(outcome.otherSchedules).toEqual([]);
    expect(outcome.schedules.map((s) => s.Name)).toEqual([scheduleNameOf(KEYS[0])]);
    // S7 names an orphan left past the bound; S2 one left at the end in another job's group.
    const left = { ...outcome.schedules[0]!, Name: 'hand-made-by-ops', GroupName: 'job-01-keyed' };
    expect(ids(checkRegistryInvariants({ ...outcome, unrepaired: ['orphan hand-made-by-ops'] }))).toEqual(['S7']);
    expect(ids(checkRegistryInvariants({ ...outcome, otherSchedules: [left] }))).toEqual(['S2']);
  });

  it('two callers racing on one key: one schedule, and the row holds the last write', async () => {
    const race = plan({ ops: [upsert(0, 1), { ...upsert(0, 0), caller: 2 }, { ...upsert(3, 2), caller: 3 }] });
    const { outcome, violations } = await simulateRegistryPlan(race);
    expect(violations).toEqual([]);
    expect(outcome.rows).toHaveLength(1);
    expect(outcome.schedules).toHaveLength(1);
  });

  it('the invariants fail on a schedule missing, one without a row, a tombstone left, and a success not in the history', async () => {
    const { outcome } = await simulateRegistryPlan(plan({ keys: 2, ops: [upsert(0), upsert(0, 0, 1)] }));
    expect(checkRegistryInvariants(outcome)).toEqual([]);
    const [first, second] = outcome.schedules;
    expect(ids(checkRegistryInvariants({ ...outcome, schedules: [first!] }))).toEqual(['S1']);
    const orphan = { ...second!, Name: `${second!.Name.slice(0, 3)}orphan` };
    expect(ids(checkRegistryInvariants({ ...outcome, schedules: [...outcome.schedules, orphan] }))).toEqual(['S2']);
    const tombstone = { ...outcome.rows[0]!, deletedAt: '2026-12-01T00:01:00.000Z' };
    expect(ids(checkRegistryInvariants({ ...outcome, rows: [tombstone, outcome.rows[1]!] }))).toContain('S3');
    expect(ids(checkRegistryInvariants({ ...outcome, writes: [] }))).toEqual(['S4']);
    expect(outcome.schedules.every((s) => s.GroupName === KEYED_GROUP)).toBe(true);
  });

  it('keeps S1-S5 over 25 generated plans (seed 20261207)', async () => {
    const report = await simulateRegistry({ runs: 25, seed: 20261207 });
    expect(report.failure?.violations).toBeUndefined();
    expect(report.tally.runs).toBe(25);
    expect(Object.keys(report.tally.repairs).length).toBeGreaterThan(0);
  });
});
