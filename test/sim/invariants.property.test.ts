/**
 * The six invariants over a few hundred generated fault plans (fixed seed, so a failure replays). `npm run sim`
 * runs the same property over more plans.
 */
import { describe, expect, it } from 'vitest';
import { formatReport, simulateMany } from '../../sim/simulate';

describe('claim protocol under generated faults', () => {
  it('keeps all six invariants over 300 fault plans (seed 20261130), exercising every fault family', async () => {
    const report = await simulateMany({ runs: 300, seed: 20261130 });
    expect(report.failure, report.failure ? formatReport(report) : '').toBeUndefined();
    const { tally } = report;
    expect(tally.runs).toBe(300);
    // A generator that stopped producing a fault family would let the property pass vacuously.
    expect(tally.workerCrashes).toBeGreaterThan(10);
    expect(tally.freezes).toBeGreaterThan(5);
    expect(tally.sqsDuplicates).toBeGreaterThan(10);
    expect(tally.adoptedCommittedReport).toBeGreaterThan(0);
    expect(tally.staleWritesRefused).toBeGreaterThan(0);
    expect(tally.failed).toBeGreaterThan(0);
    expect(tally.succeeded).toBeGreaterThan(tally.failed);
  });
});
