/**
 * list, show and watch against the emulator (moto), from rows written into the table as the functions write them.
 */
import { QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { runList } from '../../bin/occurrences/commands/list';
import { runShow } from '../../bin/occurrences/commands/show';
import { runWatch } from '../../bin/occurrences/commands/watch';
import { runCli } from '../../bin/occurrences/program';
import { OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { DependencyError } from '../../functions/protocol/errors';
import { iso, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { STATUS_INDEX_SHARDS, statusShardOf } from '../../functions/protocol/table-schema';
import {
  cliDeps,
  context,
  createStack,
  HOURLY,
  OTHER,
  putRows,
  row,
  targetOf,
  useCliEmulator,
  WORKER,
} from './support';

const { PENDING, RUNNING, RETRY_WAIT, SUCCEEDED, FAILED } = OccurrenceStatus;
const NOW = Date.parse('2026-11-30T12:00:20.000Z');
const clock = { now: () => NOW };
const hour = (h: number) => `2026-11-30T${String(h).padStart(2, '0')}:00:00Z`;

const emulator = useCliEmulator();

/** A day of one job's occurrences in every state, and a few of another job. */
async function seed(): Promise<void> {
  await putRows(emulator.clients, emulator.resources.tableName, [
    row(HOURLY, hour(6), SUCCEEDED, NOW, {
      reportKey: `reports/${HOURLY}/${hour(6)}.txt`,
      succeededAt: '2026-11-30T06:00:03.000Z',
    }),
    row(HOURLY, hour(7), FAILED, NOW, {
      lastError: 'Error: upstream returned 503',
      failedAt: '2026-11-30T07:00:04.000Z',
    }),
    row(HOURLY, hour(8), RETRY_WAIT, NOW, {
      lastError: 'Error: timeout',
      nextAttemptAt: '2026-11-30T12:01:00.000Z',
      releasedAt: '2026-11-30T11:59:00.000Z',
    }),
    row(HOURLY, hour(11), RUNNING, NOW, {
      leaseId: 'lease-1',
      leaseOwner: 'worker-log-stream/req-1',
      claimedAt: '2026-11-30T12:00:00.000Z',
      heartbeatAt: '2026-11-30T12:00:10.000Z',
      leaseExpiresAt: '2026-11-30T12:00:40.000Z',
      worker: WORKER,
    }),
    row(HOURLY, hour(12), PENDING, NOW),
    row(OTHER, '2026-11-30T05:30:00Z', FAILED, NOW, {
      lastError: 'Error: bad input',
      failedAt: '2026-11-30T05:31:00.000Z',
    }),
    row(OTHER, '2026-11-29T05:30:00Z', SUCCEEDED, NOW),
  ]);
}

describe('list', () => {
  it('lists one job newest first with a table-key Query, never a Scan', async () => {
    await seed();
    const target = targetOf(emulator.clients, emulator.resources);
    const ctx = context(clock);
    const sent = vi.spyOn(emulator.clients.documents, 'send');

    const rows = await runList(
      ctx,
      target.reader,
      { jobId: HOURLY, statuses: [], from: Date.parse('2026-11-30T00:00:00Z'), to: NOW, limit: 50 },
      false,
    );

    expect(rows.map((r) => r.scheduledTime)).toEqual([hour(12), hour(11), hour(8), hour(7), hour(6)]);
    const commands = sent.mock.calls.map(([c]) => c);
    expect(commands.every((c) => c instanceof QueryCommand && c.input.IndexName === undefined)).toBe(true);
    expect(commands.some((c) => c instanceof ScanCommand)).toBe(false);
    const table = ctx.captured.text();
    expect(table).toMatch(/hourly-report.*2026-11-30T07:00:00Z.*FAILED.*Error: upstream returned 503/);
    expect(table).toMatch(/2026-11-30T11:00:00Z.*RUNNING.*lease held by worker-log-stream\/req-1/);
    expect(table).toContain('5 occurrence(s), newest first (job hourly-report, any status');
  });

  it('lists a status across jobs from every shard of the status index, newest first, then reads the page', async () => {
    await seed();
    const target = targetOf(emulator.clients, emulator.resources);
    const sent = vi.spyOn(emulator.clients.documents, 'send');

    const rows = await runList(
      context(clock),
      target.reader,
      { statuses: [FAILED], from: 0, to: NOW, limit: 50 },
      false,
    );

    expect(rows.map((r) => [r.jobId, r.scheduledTime])).toEqual([
      [HOURLY, hour(7)],
      [OTHER, '2026-11-30T05:30:00Z'],
    ]);
    const inputs = sent.mock.calls.map(([c]) => (c as QueryCommand).input);
    expect(inputs.filter((i) => i.IndexName === 'byStatusShard')).toHaveLength(STATUS_INDEX_SHARDS);
    // The page's full rows: one BatchGetItem (no IndexName, no KeyConditionExpression).
    expect(inputs.filter((i) => i.IndexName === undefined)).toHaveLength(1);
  });

  it('without a job or status queries the index once per status and keeps the newest `limit` of all', async () => {
    await seed();
    const target = targetOf(emulator.clients, emulator.resources);
    const ctx = context(clock);

    const rows = await runList(ctx, target.reader, { statuses: [], from: 0, to: NOW, limit: 3 }, false);

    expect(rows.map((r) => r.scheduledTime)).toEqual([hour(12), hour(11), hour(8)]);
    expect(ctx.captured.text()).toContain('--limit 3 reached, there may be more');
  });

  it('filters one job by status and by a time range whose end is exclusive', async () => {
    await seed();
    const target = targetOf(emulator.clients, emulator.resources);

    const rows = await runList(
      context(clock),
      target.reader,
      { jobId: HOURLY, statuses: [FAILED, SUCCEEDED], from: Date.parse(hour(6)), to: Date.parse(hour(7)), limit: 50 },
      false,
    );

    expect(rows.map((r) => r.scheduledTime)).toEqual([hour(6)]);
  });

  it('prints the rows as JSON for scripts', async () => {
    await seed();
    const ctx = context(clock);

    await runList(
      ctx,
      targetOf(emulator.clients, emulator.resources).reader,
      { jobId: OTHER, statuses: [], from: 0, to: NOW, limit: 50 },
      true,
    );

    const parsed = JSON.parse(ctx.captured.text());
    expect(parsed.map((r: { scheduledTime: string; status: string }) => [r.scheduledTime, r.status])).toEqual([
      ['2026-11-30T05:30:00Z', FAILED],
      ['2026-11-29T05:30:00Z', SUCCEEDED],
    ]);
  });

  it('finds the table from the stack outputs when no --table is given', async () => {
    await seed();
    await createStack(emulator.moto.endpoint, 'OpsStack', {
      OccurrenceTableName: emulator.resources.tableName,
      ReportBucketName: emulator.resources.bucketName,
    });
    const deps = cliDeps(clock);

    const code = await runCli(
      ['list', '--job', OTHER, '--from', '2026-11-01', '--stack', 'OpsStack', '--endpoint', emulator.moto.endpoint],
      deps,
    );

    expect(deps.captured.err).toEqual([]);
    expect(code).toBe(0);
    expect(deps.captured.text()).toContain('2 occurrence(s), newest first (job other-report');
  });

  it('says which stack is missing, as a usage error (exit 2)', async () => {
    const deps = cliDeps(clock);

    const code = await runCli(['list', '--stack', 'NoSuchStack', '--endpoint', emulator.moto.endpoint], deps);

    expect(code).toBe(2);
    expect(deps.captured.err.join('\n')).toMatch(
      /stack NoSuchStack does not exist.*\nUsage: occurrences list \[options\]/s,
    );
  });

  it('reports a missing table as a classified AWS failure (exit 1), not a stack trace', async () => {
    const deps = cliDeps(clock);

    const code = await runCli(
      ['list', '--table', 'no-such-table', '--job', HOURLY, '--endpoint', emulator.moto.endpoint],
      deps,
    );

    expect(code).toBe(1);
    expect(deps.captured.err.join('\n')).toMatch(
      /^error: list occurrences failed \(fatal\): ResourceNotFoundException/,
    );
  });
});

describe('show', () => {
  it('shows a running occurrence with its lease age, heartbeat, expiry, worker and where its report will be', async () => {
    await seed();
    const ctx = context(clock);

    await runShow(
      ctx,
      targetOf(emulator.clients, emulator.resources).store,
      { jobId: HOURLY, scheduledTime: hour(11) },
      { json: false, bucketName: 'reports' },
    );

    const text = ctx.captured.text();
    expect(text).toMatch(/status\s*│ RUNNING/);
    expect(text).toMatch(/attempt\s*│ 1\s*│/);
    expect(text).toMatch(/worker\s*│ reports\s*│/);
    expect(text).toContain('held for 20s, last extended 10s ago, expires in 20s');
    expect(text).toContain('worker-log-stream/req-1');
    // The file's extension is the job's own, which only its worker knows: the prefix is what the CLI can say.
    expect(text).toContain(`none committed yet; it will be under s3://reports/reports/${HOURLY}/`);
    expect(text).toContain('attempt history: not recorded in this row');
  });

  it("shows a failed occurrence's error and an attempt history when the row records one", async () => {
    await putRows(emulator.clients, emulator.resources.tableName, [
      row(HOURLY, hour(7), FAILED, NOW, {
        attempt: 2,
        lastError: 'Error: upstream returned 503',
        failedAt: '2026-11-30T07:02:00.000Z',
        attempts: [
          {
            attempt: 1,
            outcome: 'RETRY_WAIT',
            at: '2026-11-30T07:00:05.000Z',
            leaseId: 'l-1',
            error: 'Error: timeout',
          },
          {
            attempt: 2,
            outcome: 'FAILED',
            at: '2026-11-30T07:02:00.000Z',
            leaseId: 'l-2',
            error: 'Error: upstream returned 503',
          },
        ],
      } as object),
    ]);
    const ctx = context(clock);

    await runShow(
      ctx,
      targetOf(emulator.clients, emulator.resources).store,
      { jobId: HOURLY, scheduledTime: hour(7) },
      { json: false },
    );

    const text = ctx.captured.text();
    expect(text).toMatch(/last error\s*│ Error: upstream returned 503/);
    expect(text).toContain('attempt history (as recorded, oldest first)');
    expect(text).toMatch(/│ 1\s*│ RETRY_WAIT\s*│ 2026-11-30T07:00:05.000Z\s*│ l-1\s*│ Error: timeout/);
    expect(text).toMatch(/│ 2\s*│ FAILED/);
  });

  it('exits 4 with a message naming the occurrence when there is none', async () => {
    const deps = cliDeps(clock);

    const code = await runCli(
      [
        'show',
        HOURLY,
        hour(3),
        '--table',
        emulator.resources.tableName,
        '--bucket',
        'b',
        '--endpoint',
        emulator.moto.endpoint,
      ],
      deps,
    );

    expect(code).toBe(4);
    expect(deps.captured.err).toEqual([
      `no occurrence ${HOURLY} ${hour(3)} in table ${emulator.resources.tableName} at ${emulator.moto.endpoint}`,
    ]);
  });
});

describe('watch', () => {
  it('prints the rows it finds, then each change between polls, until stopped', async () => {
    await putRows(emulator.clients, emulator.resources.tableName, [row(HOURLY, hour(12), PENDING, NOW)]);
    const target = targetOf(emulator.clients, emulator.resources);
    const ctx = context(clock);
    const stop = new AbortController();
    const table = emulator.resources.tableName;
    const key = { jobId: HOURLY, scheduledTime: hour(12) };
    // Each pause between polls is where the world changes: a claim, then the completion, then Ctrl-C.
    const changes = [
      () =>
        emulator.clients.documents.send(
          new UpdateCommand({
            TableName: table,
            Key: key,
            UpdateExpression: 'SET #s = :s, attempt = :a, leaseOwner = :o, leaseExpiresAt = :e',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':s': RUNNING, ':a': 1, ':o': 'worker-1', ':e': iso(NOW + 30_000) },
          }),
        ),
      () =>
        emulator.clients.documents.send(
          new UpdateCommand({
            TableName: table,
            Key: key,
            UpdateExpression: 'SET #s = :s, reportKey = :k',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':s': SUCCEEDED, ':k': 'reports/x.txt' },
          }),
        ),
      async () => stop.abort(),
    ];
    const sleep = vi.fn(async () => {
      await changes.shift()!();
    });

    await runWatch(
      ctx,
      target,
      { jobId: HOURLY, statuses: [], from: 0, to: Date.parse('9999-01-01T00:00:00Z'), limit: 200 },
      { intervalMs: 2000, json: false, signal: stop.signal, sleep },
    );

    expect(sleep).toHaveBeenCalledTimes(3);
    expect(ctx.captured.out).toEqual([
      `2026-11-30T12:00:20.000Z  ${HOURLY} ${hour(12)}  PENDING`,
      `2026-11-30T12:00:20.000Z  ${HOURLY} ${hour(12)}  PENDING -> RUNNING attempt 1  lease held by worker-1`,
      `2026-11-30T12:00:20.000Z  ${HOURLY} ${hour(12)}  RUNNING -> SUCCEEDED attempt 1  reports/x.txt`,
    ]);
  });

  it('keeps watching after a poll fails transiently, and says so on stderr', async () => {
    await putRows(emulator.clients, emulator.resources.tableName, [row(HOURLY, hour(12), PENDING, NOW)]);
    let polls = 0;
    class FlakyReader extends OperatorOccurrenceReader {
      override async listJobNewestFirst(...args: Parameters<OperatorOccurrenceReader['listJobNewestFirst']>) {
        if (++polls === 1)
          throw new DependencyError(
            'transient',
            'list occurrences',
            Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }),
          );
        return super.listJobNewestFirst(...args);
      }
    }
    const ctx = context(clock);
    const stop = new AbortController();
    const sleeps: Array<() => void> = [() => undefined, () => stop.abort()];

    await runWatch(
      ctx,
      {
        reader: new FlakyReader(emulator.clients.documents, emulator.resources.tableName),
        store: targetOf(emulator.clients, emulator.resources).store,
      },
      { jobId: HOURLY, statuses: [], from: 0, to: NOW, limit: 200 },
      { intervalMs: 2000, json: false, signal: stop.signal, sleep: async () => sleeps.shift()!() },
    );

    expect(ctx.captured.err).toContain(
      '2026-11-30T12:00:20.000Z  poll failed, trying again in 2 s: ' +
        'list occurrences failed (transient): ThrottlingException: Rate exceeded',
    );
    expect(ctx.captured.out).toEqual([`2026-11-30T12:00:20.000Z  ${HOURLY} ${hour(12)}  PENDING`]);
  });

  it('says where a row went when it leaves a status-filtered view', async () => {
    await putRows(emulator.clients, emulator.resources.tableName, [
      row(HOURLY, hour(12), RUNNING, NOW, { leaseOwner: 'w', leaseExpiresAt: iso(NOW + 30_000) }),
    ]);
    const ctx = context(clock);
    const stop = new AbortController();
    const key = { jobId: HOURLY, scheduledTime: hour(12) };
    const changes = [
      () =>
        emulator.clients.documents.send(
          new UpdateCommand({
            TableName: emulator.resources.tableName,
            Key: key,
            // As the store writes a status: with its index key.
            UpdateExpression: 'SET #s = :s, statusShard = :shard, lastError = :e',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':s': FAILED, ':shard': statusShardOf(key, FAILED), ':e': 'Error: boom' },
          }),
        ),
      async () => stop.abort(),
    ];

    await runWatch(
      ctx,
      targetOf(emulator.clients, emulator.resources),
      { statuses: [RUNNING], from: 0, to: NOW, limit: 200 },
      {
        intervalMs: 1000,
        json: true,
        signal: stop.signal,
        sleep: async () => {
          await changes.shift()!();
        },
      },
    );

    expect(ctx.captured.out.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ scheduledTime: hour(12), to: RUNNING }),
      expect.objectContaining({
        scheduledTime: hour(12),
        from: RUNNING,
        to: FAILED,
        detail: 'Error: boom (no longer in this view)',
      }),
    ]);
  });
});
