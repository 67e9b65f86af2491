/**
 * The console's HTTP server as a Hono app: the page (one HTML shell, its script and style), the read routes of
 * console/contract.ts and the five actions. Everything it reads and writes goes through ConsoleDeps (deps.ts), so
 * `app.request()` tests it on in-memory fakes and startConsole (start.ts) serves it on the real adapters.
 *
 *   request ─▶ security headers ─▶ Host / Origin / session / POST rules (session.ts) ─▶ body limit ─▶ route
 *   route ─▶ read-unit meter (read-units.ts) ─▶ ports ─▶ JSON, or { error } with the contract's status
 */

import type { Context } from 'hono';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { isoSeconds } from '../../functions/protocol/occurrence';
import { listSchedules } from '../../operations/schedules';
import type {
  AllTimelines,
  AttentionView,
  ConsoleConfig,
  OccurrenceDetail,
  SchedulesPage,
  TimelinePage,
} from '../contract';
import { ACTIONS, type ActionName, runAction } from './actions';
import { allTimelines } from './all-timelines';
import { attentionView } from './attention';
import type { ConsoleDeps } from './deps';
import { badParameter, errorAnswer, HttpError } from './http-errors';
import { deployedJobOf, jobSummaries, scheduleOfJob, summaryOf } from './jobs';
import { occurrenceDetail } from './occurrence';
import type { PageBundle } from './page-bundle';
import {
  bucketsParam,
  cursorParam,
  jobIdParam,
  keyParam,
  kindsParam,
  optionalTimeParam,
  scheduledTimeParam,
  timeParam,
} from './params';
import { RecentJobs } from './recent-jobs';
import { downloadReport } from './report';
import { type ConsoleSession, securityHeaders, sessionGuard } from './session';
import { timelinePage } from './timeline-page';

export interface ConsoleAppOptions {
  /** The port the server listens on: the Host and Origin it accepts. */
  readonly port: number;
  /** The sign-in token and the session it becomes (session.ts). */
  readonly session: ConsoleSession;
  /** Refuse every action (and say so in /api/config, so the page shows none). */
  readonly readOnly: boolean;
  /** The page's script and style (bundlePage()); built once, on the first request when given as a function. */
  readonly page: PageBundle | (() => Promise<PageBundle>);
}

/**
 * The largest request body: an action's JSON is a few hundred bytes. A longer body is answered 413 on its
 * Content-Length before any of it is read, or as soon as a body without one passes the limit.
 */
export const MAX_BODY_BYTES = 64 * 1024;

/** The page's shell: its script builds everything from /api. */
const SHELL =
  '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
  '<meta name="viewport" content="width=device-width, initial-scale=1">' +
  '<title>occurrences console</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/assets/console.css"></head>' +
  '<body><noscript>The console needs JavaScript.</noscript><script src="/assets/console.js"></script></body></html>';

/** The console's app. */
export function createConsoleApp(given: ConsoleDeps, options: ConsoleAppOptions): Hono {
  const jobs = new RecentJobs(given.jobs, given.clock);
  const deps: ConsoleDeps = { ...given, jobs };
  const app = new Hono();
  let bundle: Promise<PageBundle> | undefined;
  const page = () => {
    bundle ??= typeof options.page === 'function' ? options.page() : Promise.resolve(options.page);
    return bundle;
  };

  app.use('*', securityHeaders());
  app.use('*', sessionGuard({ port: options.port, session: options.session }));
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => c.json({ error: `body: must be at most ${MAX_BODY_BYTES} bytes` }, 413),
    }),
  );
  app.onError((error, c) => {
    const { status, error: message } = errorAnswer(error);
    return c.json({ error: message }, status);
  });
  app.notFound((c) => c.json({ error: `no such route: ${c.req.method} ${c.req.path}` }, 404));

  app.get('/', (c) => c.html(SHELL));
  app.get('/assets/console.js', async (c) =>
    c.body((await page()).script, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }),
  );
  app.get('/assets/console.css', async (c) =>
    c.body((await page()).style, 200, { 'Content-Type': 'text/css; charset=utf-8' }),
  );

  app.get('/api/config', (c) => {
    const config: ConsoleConfig = {
      readOnly: options.readOnly,
      where: deps.where,
      operator: deps.operator,
      now: new Date(deps.clock.now()).toISOString(),
      reports: deps.reports !== undefined,
      registry: deps.registry !== undefined,
    };
    return c.json(config);
  });

  app.get('/api/jobs', async (c) => {
    const { value: jobs, units } = await metered(c, deps, () => jobSummaries(deps));
    return c.json({ jobs, readUnits: units });
  });

  app.get('/api/jobs/:jobId', async (c) => {
    const jobId = jobIdParam('jobId', c.req.param('jobId'));
    const key = keyParam('key', c.req.query('key'));
    const { value } = await metered(c, deps, async () => {
      const template = await deployedJobOf(deps, jobId);
      if (key === undefined) return summaryOf(deps, template);
      const { job, schedule } = await scheduleOfJob(deps, template, key);
      return summaryOf(deps, job, schedule);
    });
    return c.json(value);
  });

  app.get('/api/jobs/:jobId/schedules', async (c) => {
    const jobId = jobIdParam('jobId', c.req.param('jobId'));
    const prefix = c.req.query('prefix') || undefined;
    const cursor = c.req.query('cursor') || undefined;
    if (deps.registry === undefined)
      throw new HttpError(404, 'the schedule registry is unknown: start the console with --registry-table');
    const registry = deps.registry;
    const listed = await listSchedules(registry, jobId, {
      limit: 100,
      ...(prefix === undefined ? {} : { prefix }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    const answer: SchedulesPage = {
      schedules: listed.schedules.map((s) => ({
        jobId: s.jobId,
        scheduleKey: s.scheduleKey,
        expression: s.expression,
        timeZone: s.timeZone,
        state: s.state === 'PAUSED' ? 'DISABLED' : 'ENABLED',
        updatedAt: s.updatedAt,
      })),
      ...(listed.cursor === undefined ? {} : { cursor: listed.cursor }),
    };
    return c.json(answer);
  });

  app.get('/api/timeline', async (c) => {
    const jobId = jobIdParam('job', c.req.query('job'));
    const key = keyParam('key', c.req.query('key'));
    const from = timeParam('from', c.req.query('from'));
    const to = timeParam('to', c.req.query('to'));
    const before = optionalTimeParam('before', c.req.query('before'));
    if (from >= to) throw badParameter('to', 'must be after from');
    const { value, units } = await metered(c, deps, () => timelinePage(deps, { jobId, key, from, to, before }));
    const answer: TimelinePage = { ...value, readUnits: units };
    return c.json(answer);
  });

  app.get('/api/timelines', async (c) => {
    const from = timeParam('from', c.req.query('from'));
    const to = timeParam('to', c.req.query('to'));
    if (from >= to) throw badParameter('to', 'must be after from');
    const buckets = bucketsParam('buckets', c.req.query('buckets'));
    const job = c.req.query('job') ? jobIdParam('job', c.req.query('job')) : undefined;
    // Every job: the page's last job id; one job's keys: the registry's cursor.
    const cursor =
      job === undefined
        ? c.req.query('cursor')
          ? jobIdParam('cursor', c.req.query('cursor'))
          : undefined
        : cursorParam('cursor', c.req.query('cursor'));
    const { value, units } = await metered(c, deps, () => allTimelines(deps, { from, to, buckets, job, cursor }));
    const answer: AllTimelines = { ...value, readUnits: units };
    return c.json(answer);
  });

  app.get('/api/occurrence', async (c) => {
    const jobId = jobIdParam('job', c.req.query('job'));
    const key = keyParam('key', c.req.query('key'));
    const time = scheduledTimeParam('time', c.req.query('time'));
    const { value, units } = await metered(c, deps, () =>
      occurrenceDetail(deps, { jobId, ...(key === undefined ? {} : { scheduleKey: key }), scheduledTime: time }),
    );
    const answer: OccurrenceDetail = { ...value, readUnits: units };
    return c.json(answer);
  });

  app.get('/api/attention', async (c) => {
    const from = timeParam('from', c.req.query('from'));
    const to = timeParam('to', c.req.query('to'));
    if (from >= to) throw badParameter('to', 'must be after from');
    const index = deps.index;
    if (index === undefined) throw new HttpError(404, 'the status index is not known to this console');
    const job = c.req.query('job') ? jobIdParam('job', c.req.query('job')) : undefined;
    const kinds = kindsParam('kind', c.req.query('kind'));
    const filter = { ...(job === undefined ? {} : { job }), ...(kinds === undefined ? {} : { kinds }) };
    const { value, units } = await metered(c, deps, () =>
      attentionView({ ...deps, index }, { from: isoSeconds(from), to: isoSeconds(to) }, filter),
    );
    const answer: AttentionView = { ...value, readUnits: units };
    return c.json(answer);
  });

  app.get('/api/report', async (c) => {
    const jobId = jobIdParam('job', c.req.query('job'));
    const key = keyParam('key', c.req.query('key'));
    const time = scheduledTimeParam('time', c.req.query('time'));
    return downloadReport(deps, { jobId, ...(key === undefined ? {} : { scheduleKey: key }), scheduledTime: time });
  });

  app.post('/api/actions/:action', async (c) => {
    const action = c.req.param('action');
    if (!ACTIONS.includes(action as ActionName))
      throw new HttpError(404, `no such action: ${action} (the actions: ${ACTIONS.join(', ')})`);
    if (options.readOnly) throw new HttpError(403, 'the console was started with --read-only: actions are refused');
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw badParameter('body', 'must be JSON');
    }
    try {
      const { status, answer } = await runAction(deps, action as ActionName, body);
      return c.json(answer, status);
    } finally {
      jobs.forget();
    }
  });

  return app;
}

/** Runs `work` under the read-unit meter, and puts its count in the answer's headers too. */
async function metered<T>(
  c: Context,
  deps: ConsoleDeps,
  work: () => Promise<T>,
): Promise<{ readonly value: T; readonly units: number }> {
  if (deps.meter === undefined) return { value: await work(), units: 0 };
  const { value, reads } = await deps.meter.measure(work);
  c.header('X-Read-Units', String(reads.units));
  c.header('X-Read-Requests', String(reads.requests));
  return { value, units: reads.units };
}
