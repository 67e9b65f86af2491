/**
 * `occurrences console` against the emulator: the real command on the real adapters (moto's DynamoDB, Scheduler,
 * SQS and STS), driven over HTTP as the page drives it. A pause and a resume through the console change the job-state
 * row and the Scheduler schedule's State, recorded as `<os user> via console (<caller ARN>)`, with one audit line
 * each; the pages say what they read; a taken port is a usage error naming --port.
 */

import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetScheduleCommand } from '@aws-sdk/client-scheduler';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../bin/occurrences/program';
import type { AttentionView, JobsPage, TimelinePage } from '../../console/contract';
import { JOB_STATE_SORT_KEY } from '../../functions/protocol/job-state';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import { STATUS_INDEX_SHARDS } from '../../functions/protocol/table-schema';
import { type RunningConsole, signIn, startConsoleCommand } from './console-command';
import { cliDeps, deployedFlags, GROUP, HOURLY, putRows, row, schedulerClient, useCliEmulator } from './support';

const emulator = useCliEmulator({ deployed: true });

let running: RunningConsole | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** Starts the command on a free port and waits (bounded) for the line it prints. */
/** The command on the deployed stack's names, with `extra` options. */
function startCommand(extra: string[] = []): Promise<RunningConsole> {
  return startConsoleCommand([...extra, ...deployedFlags(emulator)]);
}

async function jobState(jobId: string) {
  const out = await emulator.clients.documents.send(
    new GetCommand({ TableName: emulator.resources.tableName, Key: { jobId, scheduledTime: JOB_STATE_SORT_KEY } }),
  );
  return out.Item;
}

async function schedulerState(jobId: string): Promise<string | undefined> {
  const scheduler = schedulerClient(emulator.moto.endpoint);
  try {
    return (await scheduler.send(new GetScheduleCommand({ GroupName: GROUP, Name: jobId }))).State;
  } finally {
    scheduler.destroy();
  }
}

describe('occurrences console', () => {
  it('pauses and resumes a job over HTTP: the job-state row and the Scheduler schedule change, one audit line each', async () => {
    running = await startCommand();
    expect(running.out[0]).toMatch(/^Console: http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    const cookie = await signIn(running);
    const action = (name: string, body: object) =>
      fetch(`${running?.base}/api/actions/${name}`, {
        method: 'POST',
        headers: { cookie, origin: running?.base ?? '', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const by = 'tester via console (arn:aws:sts::123456789012:user/moto)';

    const paused = await action('pause', { jobId: HOURLY, note: 'upstream API down' });
    expect(paused.status).toBe(200);
    expect(await paused.json()).toMatchObject({ outcome: 'paused', by });
    expect(await schedulerState(HOURLY)).toBe('DISABLED');
    expect(await jobState(HOURLY)).toMatchObject({
      pausedBy: by,
      pauseNote: 'upstream API down',
      pauseCause: 'operator',
    });

    const resumed = await action('resume', { jobId: HOURLY });
    expect(resumed.status).toBe(200);
    expect(await resumed.json()).toMatchObject({ outcome: 'resumed', by });
    expect(await schedulerState(HOURLY)).toBe('ENABLED');
    const state = await jobState(HOURLY);
    expect(state?.pausedAt).toBeUndefined();
    expect(state).toMatchObject({ resumedBy: by });

    const audit = running.out.slice(1).map((l) => JSON.parse(l));
    expect(audit.map((a) => [a.action, a.by, a.outcome])).toEqual([
      ['pause', by, 'paused'],
      ['resume', by, 'resumed'],
    ]);
    expect(await running.stop()).toBe(0);
  });

  it('reads the jobs page and a timeline from the table, and says how many read units each took', async () => {
    const now = Date.now();
    const hour = (n: number) =>
      new Date(Math.floor(now / 3600_000) * 3600_000 - n * 3600_000).toISOString().replace('.000Z', 'Z');
    const reportKey = `reports/${HOURLY}/${hour(2)}.json`;
    await emulator.clients.s3.send(
      new PutObjectCommand({
        Bucket: emulator.resources.bucketName,
        Key: reportKey,
        Body: '{"rows":42}',
        ContentType: 'application/json',
      }),
    );
    await putRows(emulator.clients, emulator.resources.tableName, [
      row(HOURLY, hour(2), OccurrenceStatus.SUCCEEDED, now, { reportKey }),
      row(HOURLY, hour(1), OccurrenceStatus.SKIPPED, now, { skipReason: 'overlap', yieldedTo: hour(2) }),
    ]);
    running = await startCommand(['--read-only', '--bucket', emulator.resources.bucketName]);
    expect(running.out.slice(0, 2)).toEqual([expect.stringMatching(/^Console: /), 'read-only']);
    // A script signs in as a browser does (the printed address, once) and sends the session it got as a Bearer.
    const session = (await signIn(running)).split('=')[1];
    const headers = { authorization: `Bearer ${session}` };
    const jobs = await fetch(`${running.base}/api/jobs`, { headers });
    const page = (await jobs.json()) as JobsPage;
    expect(page.jobs.find((j) => j.jobId === HOURLY)?.recent.map((r) => r.status)).toEqual(['SKIPPED', 'SUCCEEDED']);
    // Estimated from item sizes against the emulator: two jobs, each a consistent GetItem and a Query.
    expect(page.readUnits).toBeGreaterThan(0);
    expect(jobs.headers.get('x-read-requests')).toBe('4');
    const from = new Date(now - 86_400_000).toISOString();
    const to = new Date(now).toISOString();
    const timeline = await fetch(`${running.base}/api/timeline?job=${HOURLY}&from=${from}&to=${to}`, { headers });
    const bars = (await timeline.json()) as TimelinePage;
    expect(bars.bars.map((b) => [b.status, b.yieldedTo])).toEqual([
      ['SKIPPED', hour(2)],
      ['SUCCEEDED', undefined],
    ]);
    expect(timeline.headers.get('x-read-requests')).toBe('1');
    // The report, streamed from the bucket as a download.
    const report = await fetch(`${running.base}/api/report?job=${HOURLY}&time=${hour(2)}`, { headers });
    expect(report.status).toBe(200);
    expect(report.headers.get('content-disposition')).toBe(`attachment; filename="${hour(2)}.json"`);
    expect(await report.text()).toBe('{"rows":42}');
    const refused = await fetch(`${running.base}/api/actions/pause`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ jobId: HOURLY, note: 'x' }),
    });
    expect(refused.status).toBe(403);
    expect(await schedulerState(HOURLY)).toBe('ENABLED');
  });

  it('lists what needs attention through the status index: one Query per OPEN and FAILED shard, not per job', async () => {
    const now = Date.now();
    const hour = (n: number) =>
      new Date(Math.floor(now / 3600_000) * 3600_000 - n * 3600_000).toISOString().replace('.000Z', 'Z');
    await putRows(emulator.clients, emulator.resources.tableName, [
      row(HOURLY, hour(6), OccurrenceStatus.FAILED, now, {
        lastError: 'Error: the upstream said no\n    at run (job.ts:1:1)',
      }),
      row(HOURLY, hour(5), OccurrenceStatus.RUNNING, now, {
        claimedAt: new Date(now - 600_000).toISOString(),
        heartbeatAt: new Date(now - 30_000).toISOString(),
      }),
    ]);
    running = await startCommand(['--read-only']);
    const session = (await signIn(running)).split('=')[1];
    const from = new Date(now - 86_400_000).toISOString();
    const to = new Date(now).toISOString();
    const started = performance.now();
    const answer = await fetch(`${running.base}/api/attention?from=${from}&to=${to}`, {
      headers: { authorization: `Bearer ${session}` },
    });
    const took = performance.now() - started;
    expect(answer.status).toBe(200);
    const view = (await answer.json()) as AttentionView;
    const mine = view.items.filter((i) => i.scheduledTime === hour(6) || i.scheduledTime === hour(5));
    expect(mine.map((i) => [i.kind, i.jobId])).toEqual([
      ['failed', HOURLY],
      ['running', HOURLY],
    ]);
    expect(mine[0].error).toBe('Error: the upstream said no');
    expect(mine[1].heartbeatAgeMs).toBeGreaterThanOrEqual(30_000);
    // 128 OPEN and 128 FAILED shards, one Query each (none holds a second page here), and one BatchGetItem.
    expect(answer.headers.get('x-read-requests')).toBe(String(2 * STATUS_INDEX_SHARDS + 1));
    console.log(
      `attention view on moto: ${answer.headers.get('x-read-requests')} DynamoDB requests, ${Math.round(took)} ms`,
    );
  });

  it('refuses a taken port with a usage error that names --port', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const deps = { ...cliDeps({ now: () => Date.now() }), env: { USER: 'tester' }, page: { script: '', style: '' } };
      const code = await runCli(['console', '--port', String(port), ...deployedFlags(emulator)], deps);
      expect(code).toBe(2);
      expect(deps.captured.err.join('\n')).toMatch(
        new RegExp(`^error: --port: port ${port} on 127\\.0\\.0\\.1 is in use by another program; pass another --port`),
      );
    } finally {
      taken.close();
    }
  });
});
