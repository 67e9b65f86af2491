/**
 * list, show and watch against the emulator (moto), from rows written into the table as the functions write them.
 */
import { PutCommand, QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
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
  createSchedules,
  createStack,
  GROUP,
  HOURLY,
  hourlyJob,
  OTHER,
  putRows,
  row,
  targetOf,
  useCliEmulator,
  WORKER,
} from './support';

const { PENDING, RUNNING, RETRY_WAIT, SUCCEEDED, FAILED, SKIPPED, BUFFERED, CANCELLED } = OccurrenceStatus;
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
      target,
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

    const rows = await runList(context(clock), target, { statuses: [FAILED], from: 0, to: NOW, limit: 50 }, false);

    expect(rows.map((r) => [r.jobId, r.scheduledTime])).toEqual([
      [HOURLY, hour(7)],
      [OTHER, '2026-11-30T05:30:00Z'],
    ]);
    const inputs = sent.mock.calls.map(([c]) => (c as QueryCommand).input);
    expect(inputs.filter((i) => i.IndexName === 'byStatusShard')).toHaveLength(STATUS_INDEX_SHARDS);
    // The page's full rows: one BatchGetItem (no IndexName, no KeyConditionExpression).
    expect(inputs.filter((i) => i.IndexName === undefined)).toHaveLength(1);
  });

  it('without a job or status queries each index key once (OPEN, FAILED, SKIPPED, CANCELLED) and keeps the newest `limit`', async () => {
    await seed();
    const target = targetOf(emulator.clients, emulator.resources);
    const ctx = context(clock);

    const sent = vi.spyOn(emulator.clients.documents, 'send');

    const rows = await runList(ctx, target, { statuses: [], from: 0, to: NOW, limit: 3 }, false);

    expect(rows.map((r) => r.scheduledTime)).toEqual([hour(12), hour(11), hour(8)]);
    const inputs = sent.mock.calls.map(([c]) => (c as QueryCommand).input);
    expect(inputs.filter((i) => i.IndexName === 'byStatusShard')).toHaveLength(4 * STATUS_INDEX_SHARDS);
    expect(ctx.captured.text()).toContain('--limit 3 reached, there may be more');
  });

  it("across jobs, reads announced successes from each deployed job's partition, and says so in the footer", async () => {
    await seed();
    // Announced: it has left the status index; only its job's partition has it.
    await putRows(emulator.clients, emulator.resources.tableName, [
      row(HOURLY, hour(5), SUCCEEDED, NOW, {
        reportKey: `reports/${HOURLY}/${hour(5)}.txt`,
        succeededAt: '2026-11-30T05:00:03.000Z',
        notifiedAt: '2026-11-30T05:00:04.000Z',
      }),
    ]);
    const query = { statuses: [SUCCEEDED], from: 0, to: NOW, limit: 50 };
    const jobs = { group: GROUP, jobIds: async () => [HOURLY, OTHER], job: async () => undefined };

    const withoutJobs = context(clock);
    const tableOnly = { ...targetOf(emulator.clients, emulator.resources), jobs: undefined };
    const unannounced = await runList(withoutJobs, tableOnly, query, false);
    expect(unannounced.map((r) => [r.jobId, r.scheduledTime])).toEqual([
      [HOURLY, hour(6)],
      [OTHER, '2026-11-29T05:30:00Z'],
    ]);
    expect(withoutJobs.captured.text()).toContain('SUCCEEDED: only those not yet announced');

    const ctx = context(clock);
    const all = await runList(ctx, { ...targetOf(emulator.clients, emulator.resources), jobs }, query, false);
    expect(all.map((r) => [r.jobId, r.scheduledTime])).toEqual([
      [HOURLY, hour(6)],
      [HOURLY, hour(5)],
      [OTHER, '2026-11-29T05:30:00Z'],
    ]);
    expect(ctx.captured.text()).toContain(
      `SUCCEEDED read from the partitions of the 2 job(s) in schedule group ${GROUP}`,
    );
  });

  it('a listing of FAILED only reads no partition and adds no note', async () => {
    await seed();
    const ctx = context(clock);
    const jobs = { group: GROUP, jobIds: vi.fn(async () => [HOURLY]), job: async () => undefined };
    await runList(
      ctx,
      { ...targetOf(emulator.clients, emulator.resources), jobs },
      { statuses: [FAILED], from: 0, to: NOW, limit: 50 },
      false,
    );
    expect(jobs.jobIds).not.toHaveBeenCalled();
    expect(ctx.captured.text()).not.toContain('SUCCEEDED');
  });

  it('filters one job by status and by a time range whose end is exclusive', async () => {
    await seed();
    const target = targetOf(emulator.clients, emulator.resources);

    const rows = await runList(
      context(clock),
      target,
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
      targetOf(emulator.clients, emulator.resources),
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

/**
 * Rows that did not run, or wait to, as the worker writes them (docs/schedule-policies.md, "What a row says"), and
 * the job-state row that holds the running slot and the buffer.
 */
async function seedNotRun(): Promise<void> {
  await putRows(emulator.clients, emulator.resources.tableName, [
    row(HOURLY, hour(1), SKIPPED, NOW, {
      skipReason: 'overlap',
      yieldedTo: hour(0),
      skippedAt: '2026-11-30T01:00:02.000Z',
    }),
    row(HOURLY, hour(2), SKIPPED, NOW, {
      skipReason: 'missed',
      createdAt: '2026-11-30T05:00:00.000Z',
      skippedAt: '2026-11-30T05:00:00.000Z',
    }),
    row(HOURLY, hour(3), SKIPPED, NOW, { skipReason: 'paused', skippedAt: '2026-11-30T04:30:20.000Z' }),
    row(HOURLY, hour(4), CANCELLED, NOW, {
      cancelledBy: hour(5),
      cancelledAt: '2026-11-30T05:00:01.000Z',
      leaseId: `revoked-by-${hour(5)}-l5`,
      leaseExpiresAt: '2026-11-30T05:00:30.000Z',
    }),
    row(HOURLY, hour(5), RUNNING, NOW, { leaseOwner: 'w5', leaseExpiresAt: iso(NOW + 30_000) }),
    row(HOURLY, hour(6), BUFFERED, NOW, { bufferedAt: '2026-11-30T06:00:01.000Z' }),
    row(HOURLY, hour(7), BUFFERED, NOW, { bufferedAt: '2026-11-30T07:00:01.000Z' }),
  ]);
  await emulator.clients.documents.send(
    new PutCommand({
      TableName: emulator.resources.tableName,
      Item: { jobId: HOURLY, scheduledTime: '#job', version: 4, slotTime: hour(5), buffer: [hour(6), hour(7)] },
    }),
  );
}

describe('list: why a row did not run, or waits', () => {
  it('says the skip reason, what a BUFFERED row waits for and who cancelled a row, in the detail column', async () => {
    await seedNotRun();
    const ctx = context(clock);

    await runList(
      ctx,
      targetOf(emulator.clients, emulator.resources),
      { jobId: HOURLY, statuses: [], from: 0, to: NOW, limit: 50 },
      false,
    );

    const line = (h: number) => ctx.captured.out[0].split('\n').find((l) => l.includes(hour(h))) ?? '';
    expect(line(1)).toMatch(/SKIPPED.*│ overlap, yielded to 2026-11-30T00:00:00Z\s*│/);
    expect(line(2)).toMatch(/SKIPPED.*│ missed: recorded 3 h after its time, past the job's catch-up window\s*│/);
    expect(line(3)).toMatch(/SKIPPED.*│ paused: delivered while the job was paused\s*│/);
    expect(line(4)).toMatch(/CANCELLED.*│ cancelled by 2026-11-30T05:00:00Z \(overlap cancelOther\)\s*│/);
    expect(line(6)).toMatch(/BUFFERED.*│ waiting for 2026-11-30T05:00:00Z \(1 of 2 in the buffer\)\s*│/);
    expect(line(7)).toMatch(/BUFFERED.*│ waiting for 2026-11-30T05:00:00Z \(2 of 2 in the buffer\)\s*│/);
    // The last change of a skipped row is its skip, not its creation.
    expect(line(3)).toMatch(/│ 7h 30m ago\s*│/);
  });

  it('lists every status across jobs, including SKIPPED, BUFFERED and CANCELLED', async () => {
    await seedNotRun();
    const ctx = context(clock);

    const rows = await runList(
      ctx,
      targetOf(emulator.clients, emulator.resources),
      { statuses: [SKIPPED, BUFFERED, CANCELLED], from: 0, to: NOW, limit: 50 },
      false,
    );

    expect(rows.map((r) => r.status)).toEqual([BUFFERED, BUFFERED, CANCELLED, SKIPPED, SKIPPED, SKIPPED]);
    expect(ctx.captured.text()).toContain('waiting for 2026-11-30T05:00:00Z (1 of 2 in the buffer)');
  });
});

describe('list and watch: a job the table does not know', () => {
  const tableFlags = () => ['--table', emulator.resources.tableName, '--endpoint', emulator.moto.endpoint];

  it('refuses --job of a job with no occurrence and no job-state row, naming --job (exit 2)', async () => {
    await seed();
    const deps = cliDeps(clock);

    const code = await runCli(['list', '--job', 'nosuchjob', ...tableFlags()], deps);

    expect(code).toBe(2);
    expect(deps.captured.out).toEqual([]);
    expect(deps.captured.err.join('\n')).toMatch(
      new RegExp(
        `^error: --job: job "nosuchjob" is not in table ${emulator.resources.tableName} at .*: it has no occurrence ` +
          'and no job-state row \\(a job deployed but never fired has none either: pass --schedule-group or ' +
          '--stack to look for its schedule\\)\\nUsage: occurrences list \\[options\\]\\nRun "occurrences list ' +
          '--help" for the options\\.$',
      ),
    );
  });

  it('with the schedule group, names the jobs the group has', async () => {
    await createSchedules(emulator.moto.endpoint, [hourlyJob]);
    const deps = cliDeps(clock);

    const code = await runCli(['list', '--job', 'nosuchjob', ...tableFlags(), '--schedule-group', GROUP], deps);

    expect(code).toBe(2);
    expect(deps.captured.err[0]).toMatch(
      /: it has no occurrence and no job-state row, and job "nosuchjob" has no schedule in group test-jobs: it is disabled or not deployed \(the group has schedules for: hourly-report\)\n/,
    );
  });

  it('accepts a job that only has its schedule, and says it has no occurrence yet', async () => {
    await createSchedules(emulator.moto.endpoint, [hourlyJob]);
    const deps = cliDeps(clock);

    const code = await runCli(['list', '--job', HOURLY, ...tableFlags(), '--schedule-group', GROUP], deps);

    expect(deps.captured.err).toEqual([]);
    expect(code).toBe(0);
    expect(deps.captured.text()).toContain(
      `no occurrences (job ${HOURLY}, any status, scheduled 2026-11-23T12:00:20Z onwards); it has no occurrence ` +
        `yet (its schedule is in group ${GROUP})`,
    );
  });

  it('accepts a job whose rows are all outside the range, and says where its newest one is', async () => {
    await seed();
    const deps = cliDeps(clock);

    const code = await runCli(['list', '--job', OTHER, '--from', '2026-12-01', ...tableFlags()], deps);

    expect(code).toBe(0);
    expect(deps.captured.text()).toContain(
      `no occurrences (job ${OTHER}, any status, scheduled 2026-12-01T00:00:00Z onwards); its newest occurrence ` +
        'is scheduled 2026-11-30T05:30:00Z (FAILED)',
    );
  });

  it('accepts a job that has only its job-state row', async () => {
    await emulator.clients.documents.send(
      new PutCommand({
        TableName: emulator.resources.tableName,
        Item: { jobId: 'paused-job', scheduledTime: '#job', version: 1, pausedAt: '2026-11-30T00:00:00.000Z' },
      }),
    );
    const deps = cliDeps(clock);

    const code = await runCli(['list', '--job', 'paused-job', '--json', ...tableFlags()], deps);

    expect(code).toBe(0);
    expect(JSON.parse(deps.captured.text())).toEqual([]);
  });

  it('watch refuses it at its first poll', async () => {
    const deps = { ...cliDeps(clock), sleep: async () => expect.fail('watch must stop before it waits') };

    const code = await runCli(['watch', '--job', 'nosuchjob', ...tableFlags()], deps);

    expect(code).toBe(2);
    expect(deps.captured.err.join('\n')).toMatch(
      /^watching nosuchjob.*\nerror: --job: job "nosuchjob" is not in table/,
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

  const shown = async (h: number) => {
    const ctx = context(clock);
    await runShow(
      ctx,
      targetOf(emulator.clients, emulator.resources).store,
      { jobId: HOURLY, scheduledTime: hour(h) },
      { json: false, bucketName: 'reports', states: targetOf(emulator.clients, emulator.resources).states },
    );
    return ctx.captured.text();
  };

  it('says when and why a row was skipped for overlap, what it yielded to, and why it has no report', async () => {
    await seedNotRun();

    const text = await shown(1);

    expect(text).toMatch(/skipped\s*│ 2026-11-30T01:00:02.000Z \(11h 00m ago\)/);
    expect(text).toMatch(
      /why skipped\s*│ overlap: another occurrence of the job held \(or was waiting for\) the job's running slot/,
    );
    expect(text).toMatch(
      /yielded to\s*│ the occurrence of 2026-11-30T00:00:00Z \(occurrences show hourly-report 2026-11-30T00:00:00Z\)/,
    );
    expect(text).toMatch(/report\s*│ none: the occurrence was skipped, so the job did not run/);
    expect(text).not.toContain('none committed yet');
  });

  it('says how late a missed occurrence was recorded, and that a paused one was delivered while paused', async () => {
    await seedNotRun();

    expect(await shown(2)).toMatch(
      /why skipped\s*│ missed: first recorded 3h 00m after its scheduled time, past the job's catch-up window; never enqueued/,
    );
    expect(await shown(3)).toMatch(/why skipped\s*│ paused: delivered while the job was paused/);
  });

  it('says since when a BUFFERED row waits, for which occurrence, and its place in the buffer', async () => {
    await seedNotRun();

    const text = await shown(7);

    expect(text).toMatch(/buffered\s*│ 2026-11-30T07:00:01.000Z \(5h 00m ago\)/);
    expect(text).toMatch(
      /waiting for\s*│ the job's running slot, held by the occurrence of 2026-11-30T05:00:00Z; 2 of 2 in the buffer/,
    );
    expect(text).toMatch(/report\s*│ none committed yet; it will be under s3:\/\/reports\/reports\/hourly-report\//);
  });

  it('says when and by which occurrence a row was cancelled, and why it has no report', async () => {
    await seedNotRun();

    const text = await shown(4);

    expect(text).toMatch(/cancelled\s*│ 2026-11-30T05:00:01.000Z \(7h 00m ago\)/);
    expect(text).toMatch(
      /cancelled by\s*│ the occurrence of 2026-11-30T05:00:00Z, under overlap cancelOther: this run's lease was revoked; its worker may have worked on until 2026-11-30T05:00:30.000Z/,
    );
    expect(text).toMatch(/report\s*│ none: the run was cancelled before it committed one/);
  });

  it("says who asked for an operator's occurrence, and its own overlap policy", async () => {
    await putRows(emulator.clients, emulator.resources.tableName, [
      row(HOURLY, hour(9), PENDING, NOW, { origin: 'run', requestedBy: 'alice@bastion', overlap: 'allowAll' }),
    ]);

    const text = await shown(9);

    expect(text).toMatch(/requested by\s*│ alice@bastion \(occurrences run\)/);
    expect(text).toMatch(/overlap policy\s*│ allowAll \(this occurrence's own, instead of the job's\)/);
  });

  it('says why a FAILED row has no report instead of "none committed yet"', async () => {
    await seed();

    const text = await shown(7);

    expect(text).toMatch(/report\s*│ none: the occurrence failed before a report was committed; retry reopens it/);
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
    const where = `table ${emulator.resources.tableName} at ${emulator.moto.endpoint}`;
    expect(deps.captured.err).toEqual([
      `no occurrence ${HOURLY} ${hour(3)} in ${where}`,
      // The job has no row at all: a misspelt id looks the same, so say so.
      `<jobId>: job "${HOURLY}" is not in ${where}: it has no occurrence and no job-state row (a job deployed but ` +
        'never fired has none either: pass --schedule-group or --stack to look for its schedule)',
    ]);
  });

  it('says only "no occurrence" when the job has other occurrences', async () => {
    await seed();
    const deps = cliDeps(clock);
    const flags = ['--table', emulator.resources.tableName, '--bucket', 'b', '--endpoint', emulator.moto.endpoint];

    const code = await runCli(['show', HOURLY, hour(3), ...flags], deps);

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
