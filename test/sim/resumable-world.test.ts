/**
 * sim/resumable-world.ts: the two-hour resumable job in the simulated world, and the invariants it adds (R1-R5).
 */
import { describe, expect, it } from 'vitest';
import { calmPlan } from '../../sim/plan';
import {
  checkpointProblem,
  expectedReport,
  RESUMABLE_RUN_MS,
  simulateResumableMany,
  simulateResumableOne,
} from '../../sim/resumable-world';
import { REPORT_KEY } from '../../sim/world';

const part = (partNumber: number, etag = `e${partNumber}`) => ({ partNumber, etag });
const checkpoint = (parts: { partNumber: number; etag: string }[], uploadId = 'u1') => ({
  state: '{}',
  at: '2026-11-30T06:00:00.000Z',
  upload: { uploadId, parts, bytes: parts.length * 1024 },
});

describe('resumable world', () => {
  it('runs the two-hour job over segments of 14 minutes on a calm plan and commits exactly its output, once', async () => {
    const checked = await simulateResumableOne(calmPlan());

    expect(checked.violations).toEqual([]);
    expect(checked.resumableViolations).toEqual([]);
    expect(checked.outcome.row).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
    // 120 minutes of work in segments of at most 14 minutes (asked to yield 20 s before their end): 9 segments.
    expect(checked.segments).toBeGreaterThanOrEqual(Math.ceil(RESUMABLE_RUN_MS / (14 * 60_000)) - 1);
    expect(checked.outcome.objects.get(REPORT_KEY)?.body).toBe(expectedReport());
    expect(checked.outcome.delivered).toBe(1);
  });

  it('holds the six invariants and R1-R5 over 40 seeded fault plans with late yields', async () => {
    const { tally, failure } = await simulateResumableMany(40, 7);

    expect(failure).toBeUndefined();
    expect(tally.runs).toBe(40);
    expect(tally.succeeded).toBeGreaterThan(0);
    expect(tally.resumedAfterLoss).toBeGreaterThan(0);
    expect(tally.lateYieldsPastGrace).toBeGreaterThan(0);
  });

  it('a late yield costs no attempt: a job that overruns its grace in two segments still finishes on attempt 1, its report exact', async () => {
    const checked = await simulateResumableOne(calmPlan(), { segments: [0, 2], overrunMs: 90_000 });

    expect(checked.resumableViolations).toEqual([]);
    expect(checked.violations).toEqual([]);
    expect(checked.lateYields).toEqual({ overran: 2, pastGrace: 2 });
    expect(checked.outcome.row).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
    expect(checked.outcome.objects.get(REPORT_KEY)?.body).toBe(expectedReport());
  });

  it('a yield within the grace is an ordinary one: the last writes of the job are recorded, the report exact', async () => {
    const checked = await simulateResumableOne(calmPlan(), { segments: [1], overrunMs: 10_000 });

    expect(checked.resumableViolations).toEqual([]);
    expect(checked.lateYields).toEqual({ overran: 1, pastGrace: 0 });
    expect(checked.outcome.objects.get(REPORT_KEY)?.body).toBe(expectedReport());
    expect(checked.outcome.row).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
  });

  it('R4 flags a checkpoint that replaced or lost a part, or moved to another upload, and accepts one that extends', () => {
    expect(checkpointProblem(checkpoint([part(1)]), checkpoint([part(1), part(33)]))).toBeUndefined();
    expect(checkpointProblem(checkpoint([part(1), part(2)]), checkpoint([part(1), part(2, 'stale')]))).toMatch(
      /replaced/,
    );
    expect(checkpointProblem(checkpoint([part(1), part(2)]), checkpoint([part(1)]))).toMatch(/lost or replaced/);
    expect(checkpointProblem(checkpoint([part(1)]), checkpoint([part(1)], 'u2'))).toMatch(/moved from upload u1/);
  });
});
