/**
 * The console's read routes (console/contract.ts) on in-memory rows: the config, the jobs page, one job or one
 * run-time schedule, a job's schedules, timeline pages (newest first, paged with `before`), one occurrence in full,
 * the report download, and a 400 naming each bad parameter.
 */
import { describe, expect, it } from 'vitest';
import type {
  ConsoleConfig,
  JobSummary,
  JobsPage,
  OccurrenceDetail,
  SchedulesPage,
  TimelinePage,
} from '../../console/contract';
import { TIMELINE_PAGE_BARS } from '../../console/contract';
import { iso, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { appOf, errorOf, HOURLY, KEY, KEYED, NOW, OPERATOR, row, signedIn, world } from './server-support';

const json = async <T>(answer: Response | Promise<Response>): Promise<T> => {
  const r = await answer;
  expect(r.status, await r.clone().text()).toBe(200);
  return (await r.json()) as T;
};

describe('GET /api/config', () => {
  it('says what the console is connected to, who acts, and whether reports and the registry are known', async () => {
    const w = await world();
    const config = await json<ConsoleConfig>(signedIn(appOf(w.deps), '/api/config'));
    expect(config).toEqual({
      readOnly: false,
      where: 'table Occurrences (in memory)',
      operator: OPERATOR,
      now: '2026-12-01T12:00:00.000Z',
      reports: true,
      registry: true,
    });
  });
});

describe('GET /api/jobs', () => {
  it('calls the last run the newest occurrence that ran: a SKIPPED one claimed before it yielded is not it', async () => {
    const w = await world();
    w.occurrences.add(
      row(HOURLY, '2026-12-01T12:00:00Z', OccurrenceStatus.SKIPPED, {
        attempt: 1,
        claimedAt: '2026-12-01T12:00:01.000Z',
        skipReason: 'overlap',
        yieldedTo: '2026-12-01T10:00:00Z',
        skippedAt: '2026-12-01T12:00:08.000Z',
      }),
    );
    const hourly = (await json<JobsPage>(signedIn(appOf(w.deps), '/api/jobs'))).jobs[0];
    expect(hourly.recent[0]).toMatchObject({ scheduledTime: '2026-12-01T12:00:00Z', status: 'SKIPPED' });
    expect(hourly.lastRun).toMatchObject({ scheduledTime: '2026-12-01T10:00:00Z', status: 'RUNNING' });
  });

  it("gives each job's schedule in words, its last run, failures in a row, the next fire times and its history strip", async () => {
    const w = await world();
    const page = await json<JobsPage>(signedIn(appOf(w.deps), '/api/jobs'));
    expect(page.jobs.map((j) => j.jobId)).toEqual([HOURLY, KEYED]);
    const hourly = page.jobs[0];
    expect(hourly).toMatchObject({
      jobId: HOURLY,
      schedule: 'cron(0 * * * ? *)',
      scheduleInWords: 'Every hour',
      timeZone: 'UTC',
      schedulerState: 'ENABLED',
      runtimeSchedules: false,
      worker: 'reports',
      overlap: 'bufferAll',
      paused: false,
      failuresInARow: 2,
      // The newest that started: the long run, still going (no end, no duration).
      lastRun: { scheduledTime: '2026-12-01T10:00:00Z', status: 'RUNNING', startedAt: '2026-12-01T10:00:02.000Z' },
      next: [
        '2026-12-01T13:00:00Z',
        '2026-12-01T14:00:00Z',
        '2026-12-01T15:00:00Z',
        '2026-12-01T16:00:00Z',
        '2026-12-01T17:00:00Z',
      ],
    });
    expect(hourly.lastRun?.durationMs).toBeUndefined();
    expect(hourly.recent).toEqual([
      { scheduledTime: '2026-12-01T11:00:00Z', status: 'SKIPPED', skipReason: 'overlap' },
      { scheduledTime: '2026-12-01T10:00:00Z', status: 'RUNNING' },
      { scheduledTime: '2026-12-01T09:00:00Z', status: 'SUCCEEDED' },
      { scheduledTime: '2026-12-01T08:00:00Z', status: 'FAILED' },
    ]);
    // The template of a job with run-time schedules has no occurrences and fires nothing itself.
    expect(page.jobs[1]).toMatchObject({ jobId: KEYED, runtimeSchedules: true, recent: [], next: [] });
    // A schedule deployed before its input named the overlap policy: unknown, not guessed.
    expect(page.jobs[1]).not.toHaveProperty('overlap');
    // At most 20 newest rows of each job, by one newest-first read of its partition.
    expect(w.occurrences.queries.map((q) => [q.series, q.range.limit])).toEqual([[HOURLY, 20]]);
    expect(page.readUnits).toBe(0);
  });

  it("gives the last run's duration once it ended, and the pause with who, when and why", async () => {
    const w = await world();
    w.occurrences.rows.clear();
    w.occurrences.add(
      row(HOURLY, '2026-12-01T11:00:00Z', OccurrenceStatus.SUCCEEDED, {
        claimedAt: '2026-12-01T11:00:02.000Z',
        succeededAt: '2026-12-01T11:02:32.000Z',
      }),
    );
    w.states.rows.set(HOURLY, {
      jobId: HOURLY,
      scheduledTime: '#job',
      version: 4,
      pausedAt: '2026-12-01T11:30:00.000Z',
      pausedBy: 'bob',
      pauseNote: 'database migration',
      pauseCause: 'operator',
    });
    const hourly = (await json<JobsPage>(signedIn(appOf(w.deps), '/api/jobs'))).jobs[0];
    expect(hourly.lastRun).toEqual({
      scheduledTime: '2026-12-01T11:00:00Z',
      status: 'SUCCEEDED',
      startedAt: '2026-12-01T11:00:02.000Z',
      endedAt: '2026-12-01T11:02:32.000Z',
      durationMs: 150_000,
    });
    expect(hourly.paused).toBe(true);
    expect(hourly.pause).toEqual({
      at: '2026-12-01T11:30:00.000Z',
      by: 'bob',
      note: 'database migration',
      cause: 'operator',
    });
    expect(hourly.next).toEqual([]);
    expect(hourly.failuresInARow).toBe(0);
  });
});

describe('GET /api/jobs/:jobId', () => {
  it('gives one job, and one run-time schedule of a job with the key: its expression, zone and series', async () => {
    const app = appOf((await world()).deps);
    expect((await json<JobSummary>(signedIn(app, `/api/jobs/${HOURLY}`))).jobId).toBe(HOURLY);
    const keyed = await json<JobSummary>(signedIn(app, `/api/jobs/${KEYED}?key=${KEY}`));
    expect(keyed).toMatchObject({
      jobId: KEYED,
      scheduleKey: KEY,
      schedule: 'cron(0 8 ? * 2 *)',
      scheduleInWords: 'At 08:00, only on Monday',
      timeZone: 'Europe/Paris',
      schedulerState: 'ENABLED',
      runtimeSchedules: true,
      recent: [{ scheduledTime: '2026-11-30T08:00:00Z', status: 'SUCCEEDED' }],
    });
    // Mondays at 08:00 in Paris: 07:00 UTC in winter.
    expect(keyed.next[0]).toBe('2026-12-07T07:00:00Z');
  });

  it('answers 404 for a job that is not deployed and for a key without a schedule, naming them', async () => {
    const app = appOf((await world()).deps);
    const job = await signedIn(app, '/api/jobs/nope');
    expect(job.status).toBe(404);
    expect(await errorOf(job)).toBe('job nope is not deployed (the deployed jobs: hourly-report, weekly-report)');
    const key = await signedIn(app, `/api/jobs/${KEYED}?key=customer-7`);
    expect(key.status).toBe(404);
    expect(await errorOf(key)).toBe(`key: job ${KEYED} has no schedule customer-7`);
  });
});

describe('GET /api/jobs/:jobId/schedules', () => {
  it("lists a job's run-time schedules from the registry", async () => {
    const page = await json<SchedulesPage>(signedIn(appOf((await world()).deps), `/api/jobs/${KEYED}/schedules`));
    expect(page.schedules).toEqual([
      expect.objectContaining({ jobId: KEYED, scheduleKey: KEY, expression: 'cron(0 8 ? * 2 *)', state: 'ENABLED' }),
    ]);
    expect(page.cursor).toBeUndefined();
  });
});

describe('GET /api/timeline', () => {
  it('gives the bars of the range newest first, a skipped one with the time it yielded to, and the fire times ahead', async () => {
    const app = appOf((await world()).deps);
    const page = await json<TimelinePage>(
      signedIn(app, `/api/timeline?job=${HOURLY}&from=2026-12-01T00:00:00Z&to=2026-12-01T15:00:00Z`),
    );
    expect(page.bars.map((b) => [b.scheduledTime, b.status])).toEqual([
      ['2026-12-01T11:00:00Z', 'SKIPPED'],
      ['2026-12-01T10:00:00Z', 'RUNNING'],
      ['2026-12-01T09:00:00Z', 'SUCCEEDED'],
      ['2026-12-01T08:00:00Z', 'FAILED'],
    ]);
    expect(page.bars[0]).toEqual({
      scheduledTime: '2026-12-01T11:00:00Z',
      status: 'SKIPPED',
      attempt: 0,
      endedAt: '2026-12-01T11:00:01.000Z',
      skipReason: 'overlap',
      yieldedTo: '2026-12-01T10:00:00Z',
    });
    expect(page.bars[1]).toMatchObject({
      startedAt: '2026-12-01T10:00:02.000Z',
      segments: 3,
      progress: { done: 60, total: 100, at: '2026-12-01T11:59:00.000Z' },
    });
    expect(page.bars[1].endedAt).toBeUndefined();
    expect(page.bars[2]).toMatchObject({ startedAt: '2026-12-01T09:00:01.000Z', endedAt: '2026-12-01T09:05:01.000Z' });
    expect(page.bars[3]).toMatchObject({
      attempt: 3,
      endedAt: '2026-12-01T08:21:00.000Z',
      lastError: 'Error: the database said no',
    });
    expect(page.before).toBeUndefined();
    expect(page.next).toEqual(['2026-12-01T13:00:00Z', '2026-12-01T14:00:00Z', '2026-12-01T15:00:00Z']);
  });

  it(`pages a long range ${TIMELINE_PAGE_BARS} bars at a time: before is the oldest of a full page`, async () => {
    const w = await world();
    w.occurrences.rows.clear();
    const start = Date.parse('2026-11-30T00:00:00Z');
    for (let i = 0; i < TIMELINE_PAGE_BARS + 5; i++)
      w.occurrences.add(row(HOURLY, iso(start + i * 60_000).replace('.000Z', 'Z'), OccurrenceStatus.SUCCEEDED));
    const app = appOf(w.deps);
    const range = `job=${HOURLY}&from=2026-11-30T00:00:00Z&to=2026-12-01T00:00:00Z`;
    const first = await json<TimelinePage>(signedIn(app, `/api/timeline?${range}`));
    expect(first.bars).toHaveLength(TIMELINE_PAGE_BARS);
    expect(first.bars[0].scheduledTime).toBe('2026-11-30T16:44:00Z');
    expect(first.before).toBe('2026-11-30T00:05:00Z');
    expect(first.bars.at(-1)?.scheduledTime).toBe(first.before);
    expect(first.next).toEqual([]); // the range ends before now
    const second = await json<TimelinePage>(signedIn(app, `/api/timeline?${range}&before=${first.before}`));
    expect(second.bars.map((b) => b.scheduledTime)).toEqual([
      '2026-11-30T00:04:00Z',
      '2026-11-30T00:03:00Z',
      '2026-11-30T00:02:00Z',
      '2026-11-30T00:01:00Z',
      '2026-11-30T00:00:00Z',
    ]);
    expect(second.before).toBeUndefined();
  });

  it("gives one run-time schedule's timeline with the key", async () => {
    const page = await json<TimelinePage>(
      signedIn(
        appOf((await world()).deps),
        `/api/timeline?job=${KEYED}&key=${KEY}&from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z`,
      ),
    );
    expect(page.scheduleKey).toBe(KEY);
    expect(page.bars.map((b) => b.scheduledTime)).toEqual(['2026-11-30T08:00:00Z']);
  });

  it('answers 400 naming each bad parameter', async () => {
    const app = appOf((await world()).deps);
    const cases: [string, RegExp][] = [
      ['from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z', /^job: is required/],
      [`job=no%20such&from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z`, /^job: must be a job id/],
      [`job=${HOURLY}&to=2026-12-02T00:00:00Z`, /^from: is required/],
      [`job=${HOURLY}&from=yesterday&to=2026-12-02T00:00:00Z`, /^from: must be an ISO-8601 time with a zone/],
      [`job=${HOURLY}&from=2026-12-01T00:00:00&to=2026-12-02T00:00:00Z`, /^from: must be an ISO-8601 time with a zone/],
      [`job=${HOURLY}&from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z`, /^to: must be after from/],
      [`job=${HOURLY}&from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z&before=soon`, /^before: must be an ISO-8601/],
      [`job=${HOURLY}&key=%23bad&from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z`, /^key: must be a schedule key/],
    ];
    for (const [query, error] of cases) {
      const answer = await signedIn(app, `/api/timeline?${query}`);
      expect(answer.status, query).toBe(400);
      expect(await errorOf(answer), query).toMatch(error);
    }
  });
});

describe('GET /api/occurrence', () => {
  it('gives the row in full, its bar, the report link, the notification, the checkpoint and whether it is live', async () => {
    const app = appOf((await world()).deps);
    const done = await json<OccurrenceDetail>(signedIn(app, `/api/occurrence?job=${HOURLY}&time=2026-12-01T09:00:00Z`));
    expect(done.row).toMatchObject({ jobId: HOURLY, status: 'SUCCEEDED', ttl: expect.any(Number) });
    expect(done.summary).toMatchObject({ status: 'SUCCEEDED', endedAt: '2026-12-01T09:05:01.000Z' });
    expect(done.report).toEqual({
      key: `reports/${HOURLY}/2026-12-01T09:00:00Z.json`,
      href: `/api/report?job=${HOURLY}&time=2026-12-01T09%3A00%3A00Z`,
    });
    expect(done.notification).toEqual({ publishedAt: '2026-12-01T09:05:02.000Z', messageId: 'msg-1' });
    expect(done.live).toBe(false);
    const running = await json<OccurrenceDetail>(
      // Any zone names the same occurrence: 11:00+01:00 is 10:00 UTC.
      signedIn(app, `/api/occurrence?job=${HOURLY}&time=${encodeURIComponent('2026-12-01T11:00:00+01:00')}`),
    );
    expect(running.live).toBe(true);
    expect(running.report).toBeUndefined();
    expect(running.notification).toEqual({});
    expect(running.checkpoint).toEqual({
      at: '2026-12-01T11:58:00.000Z',
      ageMs: NOW - Date.parse('2026-12-01T11:58:00.000Z'),
      bytes: 5_242_880,
      parts: 1,
    });
  });

  it("offers retry where the library's plain retry would reopen the row (FAILED), and says why not elsewhere", async () => {
    const app = appOf((await world()).deps);
    const at = (time: string) => json<OccurrenceDetail>(signedIn(app, `/api/occurrence?job=${HOURLY}&time=${time}`));
    expect((await at('2026-12-01T08:00:00Z')).retry).toEqual({ offered: true });
    const succeeded = (await at('2026-12-01T09:00:00Z')).retry;
    expect(succeeded).toEqual({
      offered: false,
      reason: expect.stringMatching(/^it SUCCEEDED .*Not even with --force/),
    });
    expect((await at('2026-12-01T10:00:00Z')).retry).toEqual({
      offered: false,
      reason: expect.stringMatching(/^it is RUNNING: a worker holds its lease/),
    });
    expect((await at('2026-12-01T11:00:00Z')).retry).toMatchObject({ offered: false });
  });

  it('answers 404 for an occurrence that has no row, and 400 for a time that is not one', async () => {
    const app = appOf((await world()).deps);
    const missing = await signedIn(app, `/api/occurrence?job=${HOURLY}&time=2026-12-01T07:00:00Z`);
    expect(missing.status).toBe(404);
    expect(await errorOf(missing)).toBe(`there is no occurrence of ${HOURLY} at 2026-12-01T07:00:00Z`);
    const bad = await signedIn(app, `/api/occurrence?job=${HOURLY}&time=2026-12-01T07:00:00.5Z`);
    expect(bad.status).toBe(400);
    expect(await errorOf(bad)).toMatch(/^time: scheduledTime must be whole seconds/);
  });
});

describe('GET /api/report', () => {
  it('streams the committed report as an attachment named as its key ends', async () => {
    const app = appOf((await world()).deps);
    const answer = await signedIn(app, `/api/report?job=${HOURLY}&time=2026-12-01T09:00:00Z`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-disposition')).toBe('attachment; filename="2026-12-01T09:00:00Z.json"');
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(await answer.text()).toBe('{"rows":42}');
  });

  it('answers 404 for an occurrence without a committed report', async () => {
    const app = appOf((await world()).deps);
    const answer = await signedIn(app, `/api/report?job=${HOURLY}&time=2026-12-01T10:00:00Z`);
    expect(answer.status).toBe(404);
    expect(await errorOf(answer)).toBe('the occurrence has no committed report (it is RUNNING)');
  });
});

describe('a run-time schedule of a paused job', () => {
  it('is paused with its job: the pause is the job’s, and it fires nothing', async () => {
    const w = await world();
    w.states.rows.set(KEYED, {
      jobId: KEYED,
      scheduledTime: '#job',
      version: 1,
      pausedAt: '2026-12-01T11:00:00.000Z',
      pausedBy: 'bob',
      pauseNote: 'all customers on hold',
      pauseCause: 'operator',
    });
    const keyed = await json<JobSummary>(signedIn(appOf(w.deps), `/api/jobs/${KEYED}?key=${KEY}`));
    expect(keyed).toMatchObject({ paused: true, pause: { by: 'bob', note: 'all customers on hold' }, next: [] });
  });
});
