/**
 * bench/audit-bound.ts: the audit's repair bound is per stack (the same runs for 1, 10 and 50 jobs) while its
 * requests grow with the jobs and their schedules.
 */
import { describe, expect, it } from 'vitest';
import { auditFigure } from '../../bench/audit-bound';

describe('auditFigure', () => {
  it('states the same cycle and repair bound for 1, 10 and 50 jobs: 17 runs, and 18 runs (90 minutes)', () => {
    for (const jobs of [1, 10, 50]) {
      expect(auditFigure(jobs, 1_000)).toMatchObject({ runsPerCycle: 17, repairBoundRuns: 18, repairBoundMinutes: 90 });
    }
  });

  it('lists each slice once a cycle: 65 calls for a small job, one more per 100 schedules of a slice for a big one', () => {
    expect(auditFigure(1, 1_000)).toMatchObject({ listCallsPerCycle: 65, queriesPerCycle: 256 });
    // 100,000 schedules: 6,250 in each hex-digit slice, 63 pages each (16 x 63 = 1,008), and 49 empty slices.
    expect(auditFigure(1, 100_000).listCallsPerCycle).toBe(16 * 63 + 49);
    expect(auditFigure(10, 100_000).listCallsPerCycle).toBe(10 * (16 * 63 + 49));
  });

  it('fits the heaviest run of 50 jobs of 100,000 schedules in the timeout: 8 jobs at a time, 7 waves of one job', () => {
    const one = auditFigure(1, 100_000);
    const fifty = auditFigure(50, 100_000);
    expect(fifty.heaviestRunSeconds).toBeCloseTo(7 * one.heaviestRunSeconds, 6);
    expect(fifty.fitsTimeout).toBe(true);
    // A job 10 times bigger again would not: the figure says so.
    expect(auditFigure(50, 1_000_000).fitsTimeout).toBe(false);
  });
});
