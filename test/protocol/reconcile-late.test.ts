/**
 * protocol/reconcile-late.ts through the reconciler handler, on the stateful fakes and fake timers: an occurrence due
 * and not started within its job's lateAfter is counted as OccurrencesLate (a row still waiting, or a fire time of a
 * disabled schedule with no row), a paused job owes nothing, and each run counts what is late now (a gauge).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { JOB_STATE_SORT_KEY } from '../../functions/protocol/job-state';
import type { DisabledSchedule, LateCheckSources } from '../../functions/protocol/ports';
import { isLateRow, MISSING_FIRE_TIMES_COUNTED, missingFireTimes } from '../../functions/protocol/reconcile-late';
import { clientConfig, type Harness, makeHarness, SCHEDULED, T0, timedJob, useHarnessTime } from '../support/harness';

const LATE_AFTER = 600;
const EVENT = { jobId: 'report', scheduledTime: SCHEDULED, lateAfterSeconds: LATE_AFTER };

let h: Harness;
useHarnessTime();

const lateMetrics = () => h.metrics.filter((m) => m.name === 'OccurrencesLate');

async function pauseJob(jobId: string) {
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient(clientConfig));
  await doc.send(
    new PutCommand({
      TableName: 'occurrences',
      Item: { jobId, scheduledTime: JOB_STATE_SORT_KEY, pausedAt: new Date(T0).toISOString(), pauseCause: 'operator' },
    }),
  );
}

describe('late by row', () => {
  it('counts a PENDING row not started lateAfter after its scheduled time, under its worker', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger(EVENT); // recorded and enqueued; no worker ever takes the message
    await vi.advanceTimersByTimeAsync(LATE_AFTER * 1000 + 1_000);

    const report = await h.reconciler();

    expect(report.late).toBe(1);
    expect(lateMetrics()).toEqual([{ name: 'OccurrencesLate', value: 1, jobId: 'report' }]);
    expect(h.logs.find((l) => l.message.startsWith('occurrence is late'))?.fields).toMatchObject({
      jobId: 'report',
      scheduledTime: SCHEDULED,
      worker: 'test-worker',
      cause: 'not-started',
      status: 'PENDING',
    });
  });

  it('does not count a row still within its lateAfter', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger(EVENT);
    await vi.advanceTimersByTimeAsync(LATE_AFTER * 1000 - 1_000);

    expect((await h.reconciler()).late).toBe(0);
    expect(lateMetrics()).toEqual([]);
  });

  it('does not count a row recorded without a lateAfter (a schedule deployed before it existed)', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger({ jobId: 'report', scheduledTime: SCHEDULED });
    await vi.advanceTimersByTimeAsync(LATE_AFTER * 1000 + 1_000);

    expect((await h.reconciler()).late).toBe(0);
  });

  it('does not count a late row of a paused job', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger(EVENT);
    await pauseJob('report');
    await vi.advanceTimersByTimeAsync(LATE_AFTER * 1000 + 1_000);

    expect((await h.reconciler()).late).toBe(0);
    expect(lateMetrics()).toEqual([]);
  });

  it('counts a late row once per run, as a gauge: two runs report 1 each, never 2', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger(EVENT);
    await vi.advanceTimersByTimeAsync(LATE_AFTER * 1000 + 1_000);
    await h.reconciler();
    await vi.advanceTimersByTimeAsync(60_000);
    await h.reconciler();

    expect(lateMetrics().map((m) => m.value)).toEqual([1, 1]);
  });

  it('stops counting a row once a worker has run it', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger(EVENT);
    await vi.advanceTimersByTimeAsync(LATE_AFTER * 1000 + 1_000);
    const run = h.deliver(h.aws.sent.at(-1)!);
    await vi.advanceTimersByTimeAsync(2_000);
    await run;

    expect((await h.reconciler()).late).toBe(0);
  });

  it('measures a RETRY_WAIT row from its retry time, not its scheduled time', () => {
    const now = Date.parse(SCHEDULED) + 3_600_000;
    const waiting = {
      jobId: 'report',
      scheduledTime: SCHEDULED,
      status: 'RETRY_WAIT' as const,
      attempt: 1,
      deadlineAt: SCHEDULED,
      createdAt: SCHEDULED,
      ttl: 0,
      lateAfterSeconds: LATE_AFTER,
    };
    expect(isLateRow({ ...waiting, nextAttemptAt: new Date(now - 300_000).toISOString() }, now)).toBe(false);
    expect(isLateRow({ ...waiting, nextAttemptAt: new Date(now - 700_000).toISOString() }, now)).toBe(true);
  });
});

const HOURLY: DisabledSchedule = {
  jobId: 'report',
  worker: 'test-worker',
  expression: 'cron(0 * * * ? *)',
  timeZone: 'UTC',
  lateAfterSeconds: LATE_AFTER,
  createdAt: '2026-11-01T00:00:00Z',
};

/** Sources whose only disabled schedule is `schedule`, the newest row read from the fake table. */
function disabled(schedule: DisabledSchedule): LateCheckSources {
  return {
    disabledSchedules: async () => [schedule],
    newestScheduledTime: async (series) => (h.aws.row(series, SCHEDULED) === undefined ? undefined : SCHEDULED),
  };
}

describe('late by missing row: a schedule disabled behind the stack back', () => {
  it('counts the fire time after the newest row once it is past lateAfter', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) }, lateSources: disabled(HOURLY) });
    await h.trigger({ jobId: 'report', scheduledTime: SCHEDULED });
    const run = h.deliver(h.aws.sent.at(-1)!);
    await vi.advanceTimersByTimeAsync(2_000);
    await run;
    // 07:00 fired nothing (disabled); at 07:11 it is late.
    await vi.advanceTimersByTimeAsync(3_600_000 + LATE_AFTER * 1000 + 60_000 - 2_000);

    const report = await h.reconciler();

    expect(report.late).toBe(1);
    expect(lateMetrics()).toEqual([{ name: 'OccurrencesLate', value: 1, jobId: 'report' }]);
    expect(h.logs.find((l) => l.message.startsWith('occurrence is late'))?.fields).toMatchObject({
      scheduledTime: '2026-11-30T07:00:00Z',
      cause: 'no-occurrence',
    });
  });

  it('does not count a fire time within lateAfter', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) }, lateSources: disabled(HOURLY) });
    await h.trigger({ jobId: 'report', scheduledTime: SCHEDULED });
    await vi.advanceTimersByTimeAsync(3_600_000 + LATE_AFTER * 1000 - 60_000);

    expect((await h.reconciler()).late).toBe(0);
  });

  it('does not count the fire times of a paused job (the stack disabled its schedule)', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) }, lateSources: disabled(HOURLY) });
    await h.trigger({ jobId: 'report', scheduledTime: SCHEDULED });
    await pauseJob('report');
    await vi.advanceTimersByTimeAsync(3 * 3_600_000);

    expect((await h.reconciler()).late).toBe(0);
  });

  it('counts from the schedule creation when the job has no row at all, and at most a bounded number', () => {
    const now = Date.parse('2026-11-01T05:30:00Z');
    expect(missingFireTimes(HOURLY, undefined, now).map((l) => l.scheduledTime)).toEqual([
      '2026-11-01T01:00:00Z',
      '2026-11-01T02:00:00Z',
      '2026-11-01T03:00:00Z',
      '2026-11-01T04:00:00Z',
      '2026-11-01T05:00:00Z',
    ]);
    const minutely = { ...HOURLY, expression: 'rate(1 minute)' };
    expect(missingFireTimes(minutely, undefined, now + 86_400_000)).toHaveLength(MISSING_FIRE_TIMES_COUNTED);
  });

  it('counts a failed listing as an error of the run, which fails it for the next run to retry', async () => {
    const failing: LateCheckSources = {
      disabledSchedules: async () => {
        throw new Error('AccessDenied');
      },
      newestScheduledTime: async () => undefined,
    };
    h = makeHarness({ jobs: { report: timedJob(1_000) }, lateSources: failing });
    await expect(h.reconciler()).rejects.toThrow(/1 failed read/);
  });
});
