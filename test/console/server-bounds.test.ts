/**
 * The console's bounds (console/server/app.ts, actions.ts, report.ts, start.ts): a body over 64 KB is answered 413
 * without being read, an audit line carries the parameters the action took and nothing else of the body, a report
 * is downloaded only from the occurrence's own prefix, and the connections open at once are capped.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../console/server/app';
import { startConsole } from '../../console/server/start';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import { appOf, errorOf, HOURLY, KEY, KEYED, ORIGIN, post, row, signedIn, world } from './server-support';

/** A body that counts how many bytes of it were read, made of `chunks` chunks of 16 KB, produced on demand. */
function countedBody(chunks: number): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  let left = chunks;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (left-- === 0) return controller.close();
        const chunk = new Uint8Array(16 * 1024).fill(0x20);
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  ); // nothing pulled ahead: a pull is a read
  return { body, pulled: () => pulled };
}

const pauseAt = (init: RequestInit & { duplex?: 'half' }) => ({
  method: 'POST',
  duplex: 'half' as const,
  ...init,
  headers: { 'content-type': 'application/json', origin: ORIGIN, ...(init.headers as Record<string, string>) },
});

describe('the request body limit', () => {
  it('answers 413 on a Content-Length over the limit without reading a byte of the body', async () => {
    const w = await world();
    const app = appOf(w.deps);
    const { body, pulled } = countedBody(6_400); // 100 MB, were it read
    const answer = await signedIn(
      app,
      '/api/actions/pause',
      pauseAt({ body, headers: { 'content-length': String(100 * 1024 * 1024) } }),
    );
    expect(answer.status).toBe(413);
    expect(await errorOf(answer)).toBe(`body: must be at most ${MAX_BODY_BYTES} bytes`);
    expect(pulled()).toBe(0);
    expect(w.switched).toEqual([]);
    expect(w.audit).toEqual([]);
  });

  it('stops reading a body without a length as soon as it passes the limit', async () => {
    const w = await world();
    const app = appOf(w.deps);
    const { body, pulled } = countedBody(6_400);
    const answer = await signedIn(app, '/api/actions/pause', pauseAt({ body }));
    expect(answer.status).toBe(413);
    // The limit and at most the chunk that crossed it, and what the stream buffered ahead: never the 100 MB.
    expect(pulled()).toBeLessThanOrEqual(MAX_BODY_BYTES + 3 * 16 * 1024);
    expect(w.switched).toEqual([]);
  });

  it('takes a body up to the limit', async () => {
    const w = await world();
    const app = appOf(w.deps);
    const note = 'n'.repeat(100);
    const padded = JSON.stringify({ jobId: HOURLY, note }).padEnd(MAX_BODY_BYTES, ' ');
    const answer = await signedIn(app, '/api/actions/pause', pauseAt({ body: padded }));
    expect(answer.status).toBe(200);
    expect(w.switched).toEqual([{ jobId: HOURLY, state: 'DISABLED' }]);
  });
});

describe('the audit line', () => {
  it('carries the parameters the action took, not a field it does not know', async () => {
    const w = await world();
    const app = appOf(w.deps);
    const answer = await post(app, 'pause', {
      jobId: HOURLY,
      note: 'deploy',
      by: 'mallory@example.com',
      padding: 'x'.repeat(1000),
    });
    expect(answer.status).toBe(200);
    expect(w.audit).toHaveLength(1);
    expect(w.audit[0].request).toEqual({ jobId: HOURLY, note: 'deploy' });
    expect(JSON.stringify(w.audit[0])).not.toContain('mallory');
  });

  it('carries the parameters read up to a refused one', async () => {
    const w = await world();
    const app = appOf(w.deps);
    const answer = await post(app, 'retry', { jobId: HOURLY, scheduledTime: 'yesterday', extra: 'x' });
    expect(answer.status).toBe(400);
    expect(w.audit[0].request).toEqual({ jobId: HOURLY, scheduledTime: 'yesterday' });
    expect(w.audit[0].outcome).toMatch(/^error: scheduledTime/);
  });
});

describe('the report download', () => {
  it("streams the occurrence's own report", async () => {
    const app = appOf((await world()).deps);
    const answer = await signedIn(app, `/api/report?job=${HOURLY}&time=2026-12-01T09:00:00Z`);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('{"rows":42}');
  });

  it.each([
    ['another folder of the bucket', 'secrets/not-a-report.txt'],
    ["another job's report", 'reports/other-job/2026-12-01T09:00:00Z.json'],
    ['a folder under its own prefix', `reports/${HOURLY}/${KEY}/2026-12-01T09:00:00Z.json`],
    ['a walk up from its prefix', `reports/${HOURLY}/../secrets/x`],
    ['the prefix itself', `reports/${HOURLY}/`],
  ])('refuses a planted reportKey outside its prefix (%s) with 403, reading nothing', async (_, planted) => {
    const w = await world();
    const opened: string[] = [];
    const reports = w.deps.reports;
    const open = async (key: string) => {
      opened.push(key);
      return reports?.open(key);
    };
    const deps = { ...w.deps, reports: { open } };
    w.reports.set(planted, 'secret');
    w.occurrences.add(
      row(HOURLY, '2026-12-01T07:00:00Z', OccurrenceStatus.SUCCEEDED, {
        succeededAt: '2026-12-01T07:01:00.000Z',
        reportKey: planted,
      }),
    );
    const answer = await signedIn(appOf(deps), `/api/report?job=${HOURLY}&time=2026-12-01T07:00:00Z`);
    expect(answer.status).toBe(403);
    expect(await errorOf(answer)).toContain(`outside its reports (reports/${HOURLY}/…)`);
    expect(opened).toEqual([]);
  });

  it("takes a run-time schedule's report under reports/{job}/{key}/ and refuses the job's own folder", async () => {
    const w = await world();
    const time = '2026-11-30T08:00:00Z';
    const own = `reports/${KEYED}/${KEY}/${time}.json`;
    w.reports.set(own, 'mine');
    w.reports.set(`reports/${KEYED}/${time}.json`, 'not mine');
    const base = row(KEYED, time, OccurrenceStatus.SUCCEEDED, { scheduleKey: KEY, worker: 'w' });
    w.occurrences.add({ ...base, reportKey: own });
    const app = appOf(w.deps);
    const path = `/api/report?job=${KEYED}&key=${KEY}&time=${time}`;
    expect(await (await signedIn(app, path)).text()).toBe('mine');
    w.occurrences.add({ ...base, reportKey: `reports/${KEYED}/${time}.json` });
    expect((await signedIn(app, path)).status).toBe(403);
  });
});

describe('the open connections', () => {
  it('closes a connection over the cap and keeps serving the ones under it', async () => {
    const w = await world();
    const running = await startConsole(w.deps, { port: 0, maxConnections: 2, page: { script: '', style: '' } });
    const sockets: Socket[] = [];
    try {
      const open = () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(running.port, '127.0.0.1', () => resolve(socket));
          socket.once('error', reject);
          sockets.push(socket);
        });
      const closed = (socket: Socket) =>
        new Promise<boolean>((resolve) => {
          if (socket.destroyed) return resolve(true);
          const timer = setTimeout(() => resolve(false), 2_000);
          socket.once('close', () => {
            clearTimeout(timer);
            resolve(true);
          });
        });
      const first = await open();
      const second = await open();
      const third = await open();
      expect(await closed(third)).toBe(true);
      // The two under the cap still get answers (401: no session; the point is that they are served).
      for (const socket of [first, second]) {
        const answer = await new Promise<string>((resolve) => {
          socket.once('data', (data) => resolve(data.toString()));
          socket.write(`GET /api/config HTTP/1.1\r\nHost: 127.0.0.1:${running.port}\r\n\r\n`);
        });
        expect(answer).toMatch(/^HTTP\/1\.1 401/);
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      await running.close();
    }
  });
});
