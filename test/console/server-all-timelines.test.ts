/**
 * GET /api/timelines (console/server/all-timelines.ts): every job on one time axis. Each row counts its occurrences by
 * status per bucket, carries its bars when it has few, aggregates a run-time-schedule job's keys into one row, and a
 * page reads at most SERIES_PER_PAGE partitions whatever the number of jobs.
 */
import { describe, expect, it } from 'vitest';
import { type AllTimelines, TIMELINE_ROW_BARS, TIMELINE_ROW_READ } from '../../console/contract';
import { KEY_ROWS_PER_PAGE, KEYS_PER_ROW, SERIES_PER_PAGE } from '../../console/server/all-timelines';
import type { DeployedJob } from '../../functions/protocol/job-control';
import { JOB_STATE_SORT_KEY } from '../../functions/protocol/job-state';
import { isoSeconds, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { upsertSchedule } from '../../operations/schedules';
import { appOf, errorOf, HOURLY, hourlyJob, KEY, KEYED, keyedJob, row, signedIn, world } from './server-support';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function path(params: Record<string, string | number>): string {
  return `/api/timelines?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}`;
}

async function get(app: ReturnType<typeof appOf>, params: Record<string, string | number>): Promise<AllTimelines> {
  const answer = await signedIn(app, path(params));
  expect(answer.status, await answer.clone().text()).toBe(200);
  return (await answer.json()) as AllTimelines;
}

/** The morning of the hourly job (server-support) over [06:00, 14:00) in 8 hourly buckets. */
const MORNING = { from: '2026-12-01T06:00:00Z', to: '2026-12-01T14:00:00Z', buckets: 8 };

describe('GET /api/timelines', () => {
  it("counts each job's occurrences by status per bucket, with its bars, and its fire times ahead of now", async () => {
    const w = await world();
    const view = await get(appOf(w.deps), MORNING);
    expect(view.jobCount).toBe(2);
    expect(view.bucketMs).toBe(HOUR);
    const hourly = view.rows.find((r) => r.jobId === HOURLY);
    // 08:00 FAILED is bucket 2, 09:00 SUCCEEDED 3, 10:00 RUNNING 4, 11:00 SKIPPED 5.
    expect(hourly?.buckets).toEqual([
      [2, { FAILED: 1 }],
      [3, { SUCCEEDED: 1 }],
      [4, { RUNNING: 1 }],
      [5, { SKIPPED: 1 }],
    ]);
    expect(hourly?.bars?.map((b) => b.status).sort()).toEqual(['FAILED', 'RUNNING', 'SKIPPED', 'SUCCEEDED']);
    expect(hourly?.paused).toBe(false);
    // Now is 12:00: the hourly cron's fires in (now, to].
    expect(hourly?.next).toEqual(['2026-12-01T13:00:00Z', '2026-12-01T14:00:00Z']);
    expect(hourly?.readFrom).toBeUndefined();
  });

  it("aggregates a run-time-schedule job's keys into one row, and lists them as rows with job=", async () => {
    const w = await world();
    const ops = w.deps.registry;
    if (ops === undefined) throw new Error('the world has a registry');
    await upsertSchedule(ops, KEYED, 'customer-77', { expression: 'rate(1 day)', timeZone: 'UTC' }, { by: 'bob' });
    w.occurrences.add(
      row(KEYED, '2026-11-30T09:00:00Z', OccurrenceStatus.FAILED, { scheduleKey: 'customer-77', worker: 'w' }),
    );
    const range = { from: '2026-11-30T00:00:00Z', to: '2026-12-01T00:00:00Z', buckets: 24 };
    const view = await get(appOf(w.deps), range);
    const keyed = view.rows.find((r) => r.jobId === KEYED);
    expect(keyed?.aggregated).toEqual({ keys: 2, moreKeys: false });
    // customer-42's 08:00 SUCCEEDED and customer-77's 09:00 FAILED, added up; no bars for an aggregated row.
    expect(keyed?.buckets).toEqual([
      [8, { SUCCEEDED: 1 }],
      [9, { FAILED: 1 }],
    ]);
    expect(keyed?.bars).toBeUndefined();

    const keys = await get(appOf(w.deps), { ...range, job: KEYED });
    expect(keys.job).toBe(KEYED);
    expect(keys.rows.map((r) => [r.scheduleKey, r.buckets])).toEqual([
      [KEY, [[8, { SUCCEEDED: 1 }]]],
      ['customer-77', [[9, { FAILED: 1 }]]],
    ]);
  });

  it('a paused job fires nothing ahead; a paused key neither', async () => {
    const w = await world();
    const paused: DeployedJob = { ...hourlyJob, id: 'paused-job', state: 'DISABLED' };
    const jobs = [hourlyJob, paused];
    const deps = {
      ...w.deps,
      jobs: {
        jobIds: async () => jobs.map((j) => j.id).sort(),
        job: async (id: string) => jobs.find((j) => j.id === id),
      },
    };
    const view = await get(appOf(deps), MORNING);
    expect(view.rows.find((r) => r.jobId === 'paused-job')).toMatchObject({ paused: true, next: [] });
    w.states.rows.set(KEYED, {
      jobId: KEYED,
      scheduledTime: JOB_STATE_SORT_KEY,
      version: 1,
      pausedAt: '2026-12-01T11:00:00Z',
      pausedBy: 'alice',
      pauseNote: 'migration',
    });
    const keys = await get(appOf(w.deps), { ...MORNING, job: KEYED });
    expect(keys.rows).toEqual([expect.objectContaining({ scheduleKey: KEY, paused: true, next: [] })]);
  });

  it('a row with more than TIMELINE_ROW_BARS occurrences carries only buckets; past TIMELINE_ROW_READ it says where its read stopped', async () => {
    const w = await world();
    const from = Date.parse('2026-11-01T00:00:00Z');
    const busy = TIMELINE_ROW_READ + 50;
    for (let i = 0; i < busy; i++)
      w.occurrences.add(row(HOURLY, isoSeconds(from + i * 60_000), OccurrenceStatus.SUCCEEDED));
    const view = await get(appOf(w.deps), { from: isoSeconds(from), to: isoSeconds(from + DAY), buckets: 24 });
    const hourly = view.rows.find((r) => r.jobId === HOURLY);
    expect(TIMELINE_ROW_READ).toBeGreaterThan(TIMELINE_ROW_BARS);
    expect(hourly?.bars).toBeUndefined();
    // The newest TIMELINE_ROW_READ were read: the oldest read is the 51st minute.
    expect(hourly?.readFrom).toBe(isoSeconds(from + 50 * 60_000));
    const counted = hourly?.buckets.reduce((sum, [, counts]) => sum + (counts.SUCCEEDED ?? 0), 0);
    expect(counted).toBe(TIMELINE_ROW_READ);
  });

  it('reads at most SERIES_PER_PAGE partitions a page, whatever the number of jobs, and pages on with the cursor', async () => {
    for (const count of [10, 100, 1_000]) {
      const w = await world();
      const jobs: DeployedJob[] = Array.from({ length: count }, (_, i) => ({
        ...hourlyJob,
        id: `job-${String(i).padStart(4, '0')}`,
      }));
      const deps = {
        ...w.deps,
        jobs: { jobIds: async () => jobs.map((j) => j.id), job: async (id: string) => jobs.find((j) => j.id === id) },
      };
      const app = appOf(deps);
      const first = await get(app, MORNING);
      expect(w.occurrences.queries.length).toBe(Math.min(count, SERIES_PER_PAGE));
      expect(first.rows).toHaveLength(Math.min(count, SERIES_PER_PAGE));
      expect(first.jobCount).toBe(count);
      if (count <= SERIES_PER_PAGE) {
        expect(first.cursor).toBeUndefined();
        continue;
      }
      expect(first.cursor).toBe(jobs[SERIES_PER_PAGE - 1].id);
      const second = await get(app, { ...MORNING, cursor: first.cursor as string });
      expect(second.rows[0].jobId).toBe(jobs[SERIES_PER_PAGE].id);
    }
  });

  it('a run-time-schedule job counts KEYS_PER_ROW against the page; job= lists KEY_ROWS_PER_PAGE keys a page', async () => {
    const w = await world();
    const ops = w.deps.registry;
    if (ops === undefined) throw new Error('the world has a registry');
    for (let i = 0; i < KEY_ROWS_PER_PAGE + 5; i++)
      await upsertSchedule(
        ops,
        KEYED,
        `k-${String(i).padStart(3, '0')}`,
        { expression: 'rate(1 day)', timeZone: 'UTC' },
        { by: 'bob' },
      );
    const fixed: DeployedJob[] = Array.from({ length: SERIES_PER_PAGE }, (_, i) => ({ ...hourlyJob, id: `a-${i}` }));
    const all = [...fixed, keyedJob].sort((a, b) => (a.id < b.id ? -1 : 1));
    const deps = {
      ...w.deps,
      jobs: { jobIds: async () => all.map((j) => j.id), job: async (id: string) => all.find((j) => j.id === id) },
    };
    const app = appOf(deps);
    const first = await get(app, MORNING);
    // 40 fixed jobs fill the page; the keyed job (after them in id order) is on the next.
    expect(first.rows).toHaveLength(SERIES_PER_PAGE);
    const second = await get(app, { ...MORNING, cursor: first.cursor as string });
    expect(second.rows.map((r) => [r.jobId, r.aggregated])).toEqual([[KEYED, { keys: KEYS_PER_ROW, moreKeys: true }]]);
    w.occurrences.queries.length = 0;
    const keys = await get(app, { ...MORNING, job: KEYED });
    expect(keys.rows).toHaveLength(KEY_ROWS_PER_PAGE);
    expect(w.occurrences.queries).toHaveLength(KEY_ROWS_PER_PAGE);
    const rest = await get(app, { ...MORNING, job: KEYED, cursor: keys.cursor as string });
    // customer-42 and the 25 k-… keys: 26 in all.
    expect(rest.rows).toHaveLength(6);
    expect(rest.cursor).toBeUndefined();
  });

  it('names a bad parameter: buckets, the range, a job with a fixed schedule for job=', async () => {
    const app = appOf((await world()).deps);
    const answer = await signedIn(app, path({ ...MORNING, buckets: 0 }));
    expect(answer.status).toBe(400);
    expect(await errorOf(answer)).toMatch(/^buckets: must be a whole number from 1 to 600, got "0"/);
    const reversed = await signedIn(app, path({ ...MORNING, from: MORNING.to, to: MORNING.from }));
    expect(await errorOf(reversed)).toMatch(/^to: must be after from/);
    const fixed = await signedIn(app, path({ ...MORNING, job: HOURLY }));
    expect(fixed.status).toBe(404);
    expect(await errorOf(fixed)).toMatch(/fixed schedule/);
  });
});
