/**
 * The harness must catch a protocol that is wrong. Each broken variant is built without touching functions/: a
 * subclass of the real DynamoDB adapter (sim/variants.ts).
 */
import { describe, expect, it } from 'vitest';
import { calmPlan, pausedCommitPlan, takeoverPlan } from '../../sim/plan';
import { formatReport, simulateMany, simulateOne } from '../../sim/simulate';
import { BROKEN_IGNORED_EXTEND, BROKEN_NEVER_LOOKS, BROKEN_UNCONDITIONAL_COMPLETE } from '../../sim/variants';

describe('a deliberately broken protocol is caught', () => {
  it('an ignored extend result: two workers run the job at once (invariant 3), reported with the seed and a shrunk trace', async () => {
    const report = await simulateMany({ runs: 200, seed: 5, variant: BROKEN_IGNORED_EXTEND, plans: takeoverPlan });
    expect(report.failure).toBeDefined();
    const { violations, plan } = report.failure!;
    expect(violations.map((v) => v.invariant)).toContain(3);
    expect(violations.some((v) => /side effects of lease-\d+ and lease-\d+ overlap/.test(v.message))).toBe(true);
    const printed = formatReport(report);
    expect(printed).toContain('INVARIANT VIOLATED');
    expect(printed).toContain('Replay: seed 5, path "');
    expect(printed).toMatch(/worker#1 +UpdateItem extend lease-1 +\[fault: transient\]/);
    // The shrunk plan replays to the same violation: a run is a function of its plan.
    expect((await simulateOne(plan, BROKEN_IGNORED_EXTEND)).checked.violations).toEqual(violations);
  });

  it('an unconditional complete: a worker that lost its lease rewrites the row (invariant 3)', async () => {
    // Not shrunk here, to keep the suite quick; the test above shows the shrinking.
    const report = await simulateMany({
      runs: 200,
      seed: 5,
      variant: BROKEN_UNCONDITIONAL_COMPLETE,
      plans: pausedCommitPlan,
      shrink: false,
    });
    expect(report.failure).toBeDefined();
    expect(
      report.failure!.violations.some(
        (v) => v.invariant === 3 && /UpdateItem complete lease-\d+ changed a row it did not hold/.test(v.message),
      ),
    ).toBe(true);
    expect(formatReport(report)).toContain('FREEZES for');
  });

  it('a worker that never looks for a committed report runs the job again after commit-then-die (invariant 6), and only invariant 6 sees it', async () => {
    // Worker call 4 of the first attempt is its PutObject (claim, slot, commit point, put); the process dies right after
    // it is applied.
    const commitThenDie = calmPlan({
      jobMs: 20_000,
      callFaults: [{ actor: 'worker', call: 4, fault: { kind: 'crash-after' } }],
    });
    const broken = await simulateOne(commitThenDie, BROKEN_NEVER_LOOKS);
    expect(broken.checked.violations.map((v) => v.invariant)).toEqual([6]);
    expect(broken.checked.violations[0].message).toMatch(
      /lease-2 \(claimed at .*\) ran the job .* although the report was committed/,
    );
    expect(broken.outcome.objects.size).toBe(1); // the write-once put still kept one report
    expect(broken.outcome.delivered).toBe(1);
    expect((await simulateOne(commitThenDie)).checked.violations).toEqual([]);
  });

  it('the same fault families find nothing wrong with the real protocol', async () => {
    for (const plans of [takeoverPlan, pausedCommitPlan]) {
      const report = await simulateMany({ runs: 40, seed: 5, plans });
      expect(report.failure, report.failure ? formatReport(report) : '').toBeUndefined();
    }
  });
});
