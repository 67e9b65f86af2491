/**
 * A fake console API for the page's browser tests: the bundled page (bundlePage()) and fixture JSON on a tiny
 * node:http server at 127.0.0.1 on a random port, without a session. It records every POST (path, content type,
 * body) and answers actions as the real server would, in words.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type ActionResult,
  type AttentionKind,
  type BackfillPreview,
  type ConsoleConfig,
  TIMELINE_PAGE_BARS,
  type TimelineBar,
} from '../../console/contract';
import { bundlePage } from '../../console/server/page-bundle';
import {
  denseBars,
  fixtureAttention,
  fixtureJobs,
  fixtureOccurrence,
  fixtureSchedules,
  NOW,
  weeklyExportBars,
} from './page-fixtures';

/** A POST the page made. */
export interface RecordedPost {
  readonly path: string;
  readonly contentType: string | undefined;
  readonly body: Record<string, unknown>;
}

/** The running fake. */
export interface FakeApi {
  readonly url: string;
  readonly posts: RecordedPost[];
  /** Read-only mode, as `--read-only` would set it. */
  readOnly: boolean;
  /** GET /api/timeline requests, for paging assertions. */
  readonly timelineRequests: URLSearchParams[];
  /** GET /api/attention requests: the window the page asked for. */
  readonly attentionRequests: URLSearchParams[];
  /** GET /api/timelines requests: the all-jobs timeline's range and buckets. */
  readonly timelinesRequests: URLSearchParams[];
  close(): Promise<void>;
}

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
/** More than MAX_TIMELINE_BARS in the dense job's week, so that the page has to stop loading. */
export const DENSE_BARS = 10_500;
const BY = 'tester via console (arn:aws:sts::123456789012:assumed-role/Operator/tester)';

/** Starts the fake on a free port. */
export async function startFakeApi(): Promise<FakeApi> {
  const bundle = await bundlePage();
  const timelines: Record<string, TimelineBar[]> = {
    'weekly-export': weeklyExportBars(),
    dense: denseBars(DENSE_BARS),
  };
  const posts: RecordedPost[] = [];
  const timelineRequests: URLSearchParams[] = [];
  const attentionRequests: URLSearchParams[] = [];
  const timelinesRequests: URLSearchParams[] = [];
  const polls = new Map<string, number>();
  const state = { readOnly: false };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && url.pathname === '/') {
      // The real server's CSP, so that the page is tested under it (no inline script or style, no eval).
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': CSP });
      res.end(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>occurrences console</title>' +
          '<meta name="viewport" content="width=device-width, initial-scale=1">' +
          '<link rel="stylesheet" href="/assets/console.css"></head>' +
          '<body><script src="/assets/console.js"></script></body></html>',
      );
      return;
    }
    if (url.pathname === '/assets/console.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' });
      res.end(bundle.script);
      return;
    }
    if (url.pathname === '/assets/console.css') {
      res.writeHead(200, { 'Content-Type': 'text/css; charset=utf-8' });
      res.end(bundle.style);
      return;
    }
    if (req.method === 'POST' && url.pathname.startsWith('/api/actions/')) {
      const body = JSON.parse((await readBody(req)) || '{}') as Record<string, unknown>;
      posts.push({ path: url.pathname, contentType: req.headers['content-type'], body });
      if (state.readOnly) return json(403, { error: 'the console was started with --read-only: actions are refused' });
      return json(200, actionAnswer(url.pathname.slice('/api/actions/'.length), body));
    }
    if (req.method !== 'GET') return json(405, { error: 'method' });
    if (url.pathname === '/api/config') {
      const config: ConsoleConfig = {
        readOnly: state.readOnly,
        where: 'table jobs-table at http://127.0.0.1:5000',
        operator: BY,
        now: new Date(NOW).toISOString(),
        reports: true,
        registry: true,
      };
      return json(200, config);
    }
    if (url.pathname === '/api/jobs') return json(200, { jobs: fixtureJobs(), readUnits: 3.5 });
    if (url.pathname === '/api/attention') {
      attentionRequests.push(url.searchParams);
      const job = url.searchParams.get('job') || undefined;
      const kind = url.searchParams.get('kind');
      const filter = {
        ...(job === undefined ? {} : { job }),
        ...(kind ? { kinds: kind.split(',') as AttentionKind[] } : {}),
      };
      return json(200, fixtureAttention(url.searchParams.get('from') ?? '', url.searchParams.get('to') ?? '', filter));
    }
    const schedules = /^\/api\/jobs\/([^/]+)\/schedules$/.exec(url.pathname);
    if (schedules) {
      const all = fixtureSchedules();
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const page = all.slice(start, start + 10);
      return json(200, { schedules: page, ...(start + 10 < all.length ? { cursor: String(start + 10) } : {}) });
    }
    const job = /^\/api\/jobs\/([^/]+)$/.exec(url.pathname);
    if (job) {
      const found = fixtureJobs().find((j) => j.jobId === decodeURIComponent(job[1]));
      return found ? json(200, found) : json(404, { error: `no job ${job[1]}` });
    }
    if (url.pathname === '/api/timeline') {
      timelineRequests.push(url.searchParams);
      const jobId = url.searchParams.get('job') ?? '';
      const from = url.searchParams.get('from') ?? '';
      const to = url.searchParams.get('to') ?? '';
      const before = url.searchParams.get('before');
      const inRange = (timelines[jobId] ?? []).filter(
        (bar) => bar.scheduledTime >= from && bar.scheduledTime < to && (before === null || bar.scheduledTime < before),
      );
      const page = inRange.slice(0, TIMELINE_PAGE_BARS);
      const more = inRange.length > page.length;
      const next = jobId === 'weekly-export' ? [1, 2, 3].map((h) => new Date(NOW + h * 3_600_000).toISOString()) : [];
      return json(200, {
        jobId,
        from,
        to,
        bars: page,
        ...(more ? { before: page[page.length - 1].scheduledTime } : {}),
        next: next.filter((t) => t <= to),
        readUnits: Math.ceil(page.length / 25) * 0.5,
      });
    }
    if (url.pathname === '/api/timelines') {
      // Every job of the fixtures on one axis: counts per bucket, and the bars of a row with at most 200.
      timelinesRequests.push(url.searchParams);
      const from = Date.parse(url.searchParams.get('from') ?? '');
      const to = Date.parse(url.searchParams.get('to') ?? '');
      const buckets = Number(url.searchParams.get('buckets'));
      const bucketMs = (to - from) / buckets;
      const rows = Object.entries(timelines).map(([jobId, all]) => {
        const inRange = all.filter((b) => Date.parse(b.scheduledTime) >= from && Date.parse(b.scheduledTime) < to);
        const counts = new Map<number, Record<string, number>>();
        for (const bar of inRange) {
          const i = Math.floor((Date.parse(bar.scheduledTime) - from) / bucketMs);
          const c = counts.get(i) ?? {};
          c[bar.status] = (c[bar.status] ?? 0) + 1;
          counts.set(i, c);
        }
        const next = jobId === 'weekly-export' ? [1, 2, 3].map((h) => new Date(NOW + h * 3_600_000).toISOString()) : [];
        return {
          jobId,
          paused: false,
          buckets: [...counts.entries()].sort(([a], [b]) => a - b),
          ...(inRange.length <= 200 ? { bars: inRange } : {}),
          next: next.filter((t) => Date.parse(t) <= to),
        };
      });
      return json(200, {
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        bucketMs,
        rows,
        jobCount: rows.length,
        readUnits: 2,
      });
    }
    if (url.pathname === '/api/occurrence') {
      const jobId = url.searchParams.get('job') ?? '';
      const time = url.searchParams.get('time') ?? '';
      const bar = (timelines[jobId] ?? []).find((b) => b.scheduledTime === time);
      if (bar === undefined) return json(404, { error: `no occurrence of ${jobId} at ${time}` });
      const count = polls.get(time) ?? 0;
      polls.set(time, count + 1);
      return json(200, fixtureOccurrence(bar, count));
    }
    return json(404, { error: `no route ${url.pathname}` });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: String(error) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    timelineRequests,
    attentionRequests,
    timelinesRequests,
    get readOnly() {
      return state.readOnly;
    },
    set readOnly(value: boolean) {
      state.readOnly = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function actionAnswer(action: string, body: Record<string, unknown>): ActionResult | BackfillPreview {
  const jobId = String(body.jobId);
  switch (action) {
    case 'pause':
      return { outcome: 'paused', message: `${jobId} is paused: its schedule is disabled.`, by: BY };
    case 'resume':
      return { outcome: 'resumed', message: `${jobId} is resumed.`, by: BY };
    case 'run':
      return { outcome: 'recorded', message: `An occurrence of ${jobId} is recorded for now and enqueued.`, by: BY };
    case 'cancel':
      return { outcome: 'cancelled', message: `${jobId} ${String(body.scheduledTime)} is cancelled.`, by: BY };
    case 'retry':
      if (body.force === true) return { outcome: 'enqueued', message: 'One more message is enqueued.', by: BY };
      return {
        outcome: 'refused',
        message: 'It is RUNNING but its lease expired: use force to enqueue one more message.',
        by: BY,
        forceWouldEnqueue: true,
      };
    case 'backfill':
      if (body.dryRun === true) {
        return {
          outcome: 'dry-run',
          message: 'Nothing was written.',
          by: BY,
          planned: 4,
          existing: { SUCCEEDED: 20 },
          times: [
            '2026-12-01T00:00:00.000Z',
            '2026-12-01T01:00:00.000Z',
            '2026-12-01T02:00:00.000Z',
            '2026-12-01T03:00:00.000Z',
          ],
        };
      }
      return { outcome: 'recorded', message: `4 occurrences of ${jobId} are recorded.`, by: BY };
    default:
      return { outcome: 'unknown', message: action, by: BY };
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
    });
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}
