import { describe, expect, it } from 'vitest';
import { type JobSettings, withDefaults } from '../../../functions/protocol/job-settings';
import type { Occurrence, OccurrenceKey } from '../../../functions/protocol/occurrence';
import { fakeOccurrence } from '../../../testing';
import { judgeRow, type VerdictContext } from '../../../testing/local/verdict';

const JOB = 'report';
const T0 = '2026-12-02T05:00:00Z';
const T1 = '2026-12-02T06:00:00Z';
const keys: OccurrenceKey[] = [
  { jobId: JOB, scheduledTime: T0 },
  { jobId: JOB, scheduledTime: T1 },
];

function contextFor(settings: Partial<JobSettings> = {}, announcing = true): VerdictContext {
  return { settings: new Map([[JOB, withDefaults({ id: JOB, ...settings })]]), announcing, keys };
}

const row = (fields: Partial<Occurrence>): Occurrence => fakeOccurrence({ jobId: JOB, scheduledTime: T1, ...fields });
const judge = (r: Occurrence | undefined, context = contextFor()) =>
  judgeRow({ jobId: JOB, scheduledTime: T1 }, r, context);

const succeeded = row({ status: 'SUCCEEDED', notifiedAt: '2026-12-02T06:00:05.000Z', reportKey: 'reports/r.txt' });
const skippedForOverlap = row({ status: 'SKIPPED', skipReason: 'overlap', yieldedTo: T0 });
const cancelled = row({ status: 'CANCELLED', cancelledBy: T0 });

describe('Function: judgeRow', () => {
  it('expects a SUCCEEDED row to be announced where the stack announces, and not where it does not', () => {
    expect(judge(succeeded).expected).toBe(true);
    const unannounced = { ...succeeded, notifiedAt: undefined };
    expect(judge(unannounced)).toEqual({ expected: false, why: 'report committed but never announced' });
    expect(judge(unannounced, contextFor({}, false)).expected).toBe(true);
  });

  it.each([
    ['skip', true],
    ['bufferOne', true],
    ['bufferAll', false],
    ['allowAll', false],
    ['cancelOther', false],
  ] as const)('under overlap %s, a skip for overlap naming an occurrence of the run is expected: %s', (overlap, ok) => {
    const verdict = judge(skippedForOverlap, contextFor({ overlap }));
    expect(verdict.expected).toBe(ok);
    expect(verdict.why).toMatch(
      ok ? `overlap, yielded to ${T0}` : `; expected a run: overlap ${overlap} skips nothing`,
    );
  });

  it("takes the row's own overlap (an operator's run --overlap) over the job's", () => {
    expect(judge({ ...skippedForOverlap, overlap: 'allowAll' }, contextFor({ overlap: 'skip' })).expected).toBe(false);
  });

  it('refuses a skip that names an occurrence outside the run', () => {
    const verdict = judge({ ...skippedForOverlap, yieldedTo: '2026-12-01T05:00:00Z' });
    expect(verdict).toMatchObject({ expected: false, why: expect.stringMatching(/expected it to yield to/) });
  });

  it.each([
    ['cancelOther', true],
    ['skip', false],
    ['allowAll', false],
  ] as const)('under overlap %s, a CANCELLED row is expected: %s', (overlap, ok) => {
    expect(judge(cancelled, contextFor({ overlap })).expected).toBe(ok);
  });

  it('expects a missed skip only when the row was recorded later than the catch-up window', () => {
    const late = row({ status: 'SKIPPED', skipReason: 'missed', createdAt: '2026-12-02T07:00:01.000Z' });
    expect(judge(late, contextFor({ catchupWindowSeconds: 3600 })).expected).toBe(true);
    const inWindow = { ...late, createdAt: '2026-12-02T06:59:59.000Z' };
    expect(judge(inWindow, contextFor({ catchupWindowSeconds: 3600 }))).toMatchObject({
      expected: false,
      why: expect.stringMatching(/expected a run: it was recorded within its window/),
    });
  });

  it('never expects a paused skip, a FAILED row, an open row or no row', () => {
    expect(judge(row({ status: 'SKIPPED', skipReason: 'paused' })).expected).toBe(false);
    expect(judge(row({ status: 'FAILED', lastError: 'boom' }))).toEqual({ expected: false, why: 'failed: boom' });
    expect(judge(row({ status: 'BUFFERED' }))).toMatchObject({ expected: false, why: /^still BUFFERED/ });
    expect(judge(row({}))).toMatchObject({ expected: false, why: /^still RUNNING/ });
    expect(judge(undefined)).toEqual({ expected: false, why: 'no row: the trigger did not record it' });
  });
});
