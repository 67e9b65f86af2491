/**
 * The backfill as library functions (operations/backfill.ts), on in-memory ports: the plan of a range, the range's
 * rules, the dry run's count of what exists, and the recording, which returns what it did (and its first failure)
 * instead of printing or throwing.
 */
import { describe, expect, it } from 'vitest';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import { ScheduleError } from '../../functions/protocol/schedule-times';
import { backfillRangeProblem, planBackfill, previewBackfill, recordBackfill } from '../../operations/backfill';
import { HOURLY, hourlyJob, MemoryOccurrences, MemoryQueue, NOW, row } from '../console/server-support';

const from = Date.parse('2026-12-01T07:00:00Z');
const to = Date.parse('2026-12-01T10:00:00Z');

describe('backfillRangeProblem', () => {
  it('names from when the range is empty or reversed, to when it reaches past now, nothing otherwise', () => {
    expect(backfillRangeProblem(to, from, NOW)?.parameter).toBe('from');
    expect(backfillRangeProblem(from, from, NOW)?.parameter).toBe('from');
    expect(backfillRangeProblem(from, NOW + 1000, NOW)).toMatchObject({
      parameter: 'to',
      problem: expect.stringMatching(/^\(2026-12-01T12:00:01Z\) is in the future: the Scheduler fires/),
    });
    expect(backfillRangeProblem(from, NOW, NOW)).toBeUndefined();
  });
});

describe('planBackfill', () => {
  it('gives the fire times in [from, to), oldest first, and refuses more than max', () => {
    expect(planBackfill(hourlyJob, { from, to, max: 10 }).times).toEqual([
      '2026-12-01T07:00:00Z',
      '2026-12-01T08:00:00Z',
      '2026-12-01T09:00:00Z',
    ]);
    expect(() => planBackfill(hourlyJob, { from, to, max: 2 })).toThrow(ScheduleError);
  });
});

describe('previewBackfill and recordBackfill', () => {
  it('counts the existing rows by status, then records only the missing ones, as backfilled by the caller', async () => {
    const rows = new MemoryOccurrences();
    rows.add(row(HOURLY, '2026-12-01T08:00:00Z', OccurrenceStatus.FAILED));
    const queue = new MemoryQueue();
    const plan = planBackfill(hourlyJob, { from, to, max: 10 });
    const preview = await previewBackfill(
      { listJobNewestFirst: (jobId, range) => rows.newestFirst(jobId, range) },
      plan,
    );
    expect(preview).toEqual({ planned: 3, existing: { FAILED: 1 } });
    const clock = { now: () => NOW };
    const recorded = await recordBackfill({ store: rows, queues: new Map([['reports', queue]]), clock }, plan, {
      by: 'alice',
    });
    expect(recorded).toEqual({
      results: { recorded: 2, 'duplicate-suppressed': 1 },
      done: 3,
      failure: undefined,
      countFrom: NOW,
    });
    expect(await rows.get({ jobId: HOURLY, scheduledTime: '2026-12-01T07:00:00Z' })).toMatchObject({
      origin: 'backfill',
      requestedBy: 'alice',
      overlap: 'bufferAll',
      deadlineAt: new Date(NOW + 3600_000).toISOString(),
    });
    expect(queue.sent).toHaveLength(2);
  });

  it('stops at the first failure and returns it with how far it got', async () => {
    const rows = new MemoryOccurrences();
    const failing = new MemoryQueue();
    let sends = 0;
    failing.send = async () => {
      if (++sends === 2) throw new Error('SQS is down');
    };
    const plan = planBackfill(hourlyJob, { from, to, max: 10 });
    const recorded = await recordBackfill(
      { store: rows, queues: new Map([['reports', failing]]), clock: { now: () => NOW } },
      plan,
    );
    expect(recorded.done).toBe(1);
    expect(String(recorded.failure)).toMatch(/SQS is down/);
  });
});
