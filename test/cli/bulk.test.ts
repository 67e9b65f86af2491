/**
 * `occurrences bulk retry|cancel` over an in-memory target: a dry run lists and changes nothing, a run needs --yes or
 * a confirmation on a terminal, a filter matching nothing or more than --max is refused before any write, bad
 * arguments are named with the flag before connecting, a resumed run takes its filter from its state file, and bulk
 * cancel runs the cancel the program's deps inject. The run on moto is test/integration/bulk-retry.test.ts.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BulkCancelFactory } from '../../bin/occurrences/commands/bulk';
import type { CliDeps } from '../../bin/occurrences/context';
import { runCli } from '../../bin/occurrences/program';
import type { Target } from '../../bin/occurrences/target';
import type { ManualRetryFields } from '../../functions/protocol/manual-retry';
import { iso, type Occurrence, type OccurrenceKey, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { CancellableStore, CancelRequest, ReopenRequest } from '../../functions/protocol/ports';
import { capture, HOURLY, memoryCatalogue, OTHER, row, WORKER } from './support';

const { FAILED, PENDING, RUNNING } = OccurrenceStatus;
const NOW = Date.parse('2026-12-02T12:00:00Z');
const clock = { now: () => NOW };
const ARN = 'arn:aws:sts::123456789012:assumed-role/Operators/alice';

type Row = Occurrence & ManualRetryFields;

/** The table and the queue the command writes, in memory: every write is recorded. */
function memoryTarget(rows: readonly Row[]) {
  const table = new Map(rows.map((r) => [r.scheduledTime, r]));
  const reopens: ReopenRequest[] = [];
  const sent: string[] = [];
  const target = {
    tableName: 't',
    where: 'table t',
    jobs: memoryCatalogue(),
    queues: { byWorker: new Map([[WORKER, { send: async (body: string) => void sent.push(body) }]]), source: 'test' },
    reader: {
      listJobNewestFirst: async (
        jobId: string,
        range: { from: string; to: string; limit: number },
        statuses: readonly OccurrenceStatus[],
      ) =>
        [...table.values()]
          .filter((r) => r.jobId === jobId && r.scheduledTime >= range.from && r.scheduledTime < range.to)
          .filter((r) => statuses.includes(r.status))
          .sort((a, b) => b.scheduledTime.localeCompare(a.scheduledTime))
          .slice(0, range.limit),
    },
    store: {
      get: async (key: OccurrenceKey) => table.get(key.scheduledTime),
      reopenFailed: async (key: OccurrenceKey, request: ReopenRequest) => {
        const current = table.get(key.scheduledTime);
        if (current?.status !== FAILED || (request.bulkId && current.bulkActions?.includes(request.bulkId)))
          return { reopened: false, current };
        reopens.push(request);
        table.set(key.scheduledTime, {
          ...current,
          status: PENDING,
          bulkActions: [...(current.bulkActions ?? []), request.bulkId ?? ''],
        });
        return { reopened: true };
      },
    },
  } as unknown as Target;
  return { target, table, reopens, sent };
}

const failedAt = (day: number) => row(HOURLY, `2026-11-${String(day).padStart(2, '0')}T06:00:00Z`, FAILED, NOW);

async function cli(args: string[], target: Target, extra: Partial<CliDeps> & { cancelFor?: BulkCancelFactory } = {}) {
  const captured = capture();
  const home = extra.env?.HOME ?? mkdtempSync(join(tmpdir(), 'bulk-cli-'));
  const deps = {
    io: captured.io,
    clock,
    env: { HOME: home, USER: 'alice' },
    connect: async () => target,
    callerArn: async () => ARN,
    ...extra,
  };
  const code = await runCli(['bulk', ...args], deps);
  return { code, out: captured.out.join('\n'), err: captured.err.join('\n'), home };
}

const RANGE = ['--from', '2026-11-01', '--to', '2026-12-01'];

describe('bulk retry', () => {
  it('--dry-run lists the selection, oldest first, and changes nothing', async () => {
    const t = memoryTarget([failedAt(3), failedAt(1), row(HOURLY, '2026-11-02T06:00:00Z', RUNNING, NOW)]);

    const result = await cli(['retry', HOURLY, ...RANGE, '--dry-run'], t.target);

    expect(result.code).toBe(0);
    expect(result.out).toBe(
      [
        '2026-11-01T06:00:00Z  FAILED  attempt 1',
        '2026-11-03T06:00:00Z  FAILED  attempt 1',
        `dry run: 2 FAILED occurrence(s) of ${HOURLY} scheduled from 2026-11-01T00:00:00Z to 2026-12-01T00:00:00Z would be retried; nothing was changed.`,
      ].join('\n'),
    );
    expect(t.reopens).toEqual([]);
    expect(t.sent).toEqual([]);
  });

  it('without --yes and without a terminal, refuses and changes nothing (exit 3)', async () => {
    const t = memoryTarget([failedAt(1)]);

    const result = await cli(['retry', HOURLY, ...RANGE], t.target);

    expect(result.code).toBe(3);
    expect(result.err).toContain('Pass --yes to go ahead (there is no terminal to ask on); nothing was changed.');
    expect(t.reopens).toEqual([]);
  });

  it('asks on a terminal: a no changes nothing, a yes retries each row and records who', async () => {
    const t = memoryTarget([failedAt(1), failedAt(2)]);
    const questions: string[] = [];

    const no = await cli(['retry', HOURLY, ...RANGE], t.target, {
      confirm: async (q) => {
        questions.push(q);
        return false;
      },
    });
    expect(no.code).toBe(3);
    expect(t.reopens).toEqual([]);
    expect(questions).toEqual([
      `retry 2 FAILED occurrence(s) of ${HOURLY} scheduled from 2026-11-01T00:00:00Z to 2026-12-01T00:00:00Z?`,
    ]);

    const yes = await cli(['retry', HOURLY, ...RANGE], t.target, { confirm: async () => true });

    expect(yes.code).toBe(0);
    expect(yes.out).toMatch(/^bulk retry bulk-20261202T120000Z-[0-9a-f]{6}: retried 2 of 2, 0 refused, 0 failed\.$/);
    expect(t.sent).toHaveLength(2);
    expect(t.reopens.map((r) => r.by)).toEqual(Array(2).fill(`alice@${hostname()} (${ARN})`));
  });

  it('asks STS once per process, and records the OS user alone, with a warning, when STS fails', async () => {
    const t = memoryTarget([failedAt(1), failedAt(2)]);
    let asked = 0;

    const result = await cli(['retry', HOURLY, ...RANGE, '--yes'], t.target, {
      callerArn: async () => {
        asked++;
        throw new Error('ExpiredToken');
      },
    });

    expect(result.code).toBe(0);
    expect(asked).toBe(1);
    expect(result.err).toContain(
      'warning: no AWS identity (STS GetCallerIdentity failed): actions are recorded by the OS user alone',
    );
    expect(t.reopens.map((r) => r.by)).toEqual([`alice@${hostname()}`, `alice@${hostname()}`]);
  });

  it('a filter matching nothing says so and writes nothing (exit 4)', async () => {
    const t = memoryTarget([failedAt(1)]);

    const result = await cli(['retry', HOURLY, '--from', '2026-10-01', '--to', '2026-10-31', '--yes'], t.target);

    expect(result.code).toBe(4);
    expect(result.err).toBe(
      `nothing to retry: no FAILED occurrence(s) of ${HOURLY} scheduled from 2026-10-01T00:00:00Z to 2026-10-31T00:00:00Z; nothing was changed.`,
    );
    expect(t.reopens).toEqual([]);
  });

  it('refuses a selection larger than --max before any write, and a raised --max goes ahead', async () => {
    const t = memoryTarget([failedAt(1), failedAt(2), failedAt(3)]);

    const refused = await cli(['retry', HOURLY, ...RANGE, '--yes', '--max', '2'], t.target);

    expect(refused.code).toBe(3);
    expect(refused.err).toContain(
      'the filter matches more than 2 occurrences, more than the cap of 2; nothing was changed',
    );
    expect(t.reopens).toEqual([]);
    expect((await cli(['retry', HOURLY, ...RANGE, '--yes', '--max', '3'], t.target)).code).toBe(0);
    expect(t.reopens).toHaveLength(3);
  });

  it('names each bad argument by its flag before connecting (exit 2)', async () => {
    const target = new Proxy({} as Target, {
      get: () => {
        throw new Error('a bad argument must be caught before reading the target');
      },
    });
    const cases: Array<[string[], string]> = [
      [['retry', HOURLY, '--to', '2026-12-01', '--yes'], '--from: required (or --resume <bulkId>)'],
      [['retry', HOURLY, ...RANGE, '--status', 'PENDING'], '--status: retry acts only on FAILED, not PENDING'],
      [
        ['retry', HOURLY, '--from', '2026-12-01', '--to', '2026-11-01'],
        '--from (2026-12-01T00:00:00Z) must be before to',
      ],
      [['retry', HOURLY, ...RANGE, '--rate', '0'], '--rate: must be a number above 0, up to 1000'],
      [['retry', HOURLY, ...RANGE, '--max', '0'], '--max: must be a whole number from 1 to 1000000'],
      [['retry', HOURLY, '--resume', 'yesterday'], '--resume: must be a bulk run id such as bulk-'],
      [
        ['retry', HOURLY, '--resume', 'bulk-20261202T120000Z-abcdef', '--status', 'FAILED'],
        '--status: a resumed run keeps its own filter',
      ],
      [
        ['retry', HOURLY, '--resume', 'bulk-20261202T120000Z-abcdef'],
        '--resume: cannot read the state file of run bulk-20261202T120000Z-abcdef',
      ],
    ];
    for (const [args, message] of cases) {
      const result = await cli(args, target, { connect: () => Promise.reject(new Error('connected')) });
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.err).toContain(message);
    }
  });

  it("refuses a job whose worker's queue is unknown before selecting anything (exit 2)", async () => {
    const t = memoryTarget([{ ...failedAt(1), jobId: OTHER }]);

    const result = await cli(['retry', OTHER, ...RANGE, '--yes'], t.target);

    expect(result.code).toBe(2);
    expect(result.err).toContain('--worker-queue');
    expect(t.reopens).toEqual([]);
    // Not even the run's state file: nothing was started.
    expect(existsSync(join(result.home, '.occurrences'))).toBe(false);
  });

  it('resumes a run from its state file: same filter, same id, rows it did skipped', async () => {
    const t = memoryTarget([failedAt(1), failedAt(2)]);
    const first = await cli(['retry', HOURLY, ...RANGE, '--yes'], t.target);
    const bulkId = /bulk run (bulk-\S+) /.exec(first.err)?.[1] as string;
    const state = JSON.parse(readFileSync(join(first.home, '.occurrences', 'bulk', `${bulkId}.json`), 'utf8'));
    expect(state).toMatchObject({
      bulkId,
      action: 'retry',
      jobId: HOURLY,
      statuses: [FAILED],
      from: '2026-11-01T00:00:00Z',
      to: '2026-12-01T00:00:00Z',
      max: 1000,
      finishedAt: iso(NOW),
      result: { acted: 2 },
    });
    // One row failed again since, holding the run's id.
    t.table.set('2026-11-01T06:00:00Z', { ...(t.table.get('2026-11-01T06:00:00Z') as Row), status: FAILED });

    const resumed = await cli(['retry', HOURLY, '--resume', bulkId, '--yes'], t.target, { env: { HOME: first.home } });

    expect(resumed.out).toBe(`bulk retry ${bulkId}: retried 0 of 1, 1 done by this run before, 0 refused, 0 failed.`);
    expect(t.reopens).toHaveLength(2);
    const wrongJob = await cli(['retry', 'other-report', '--resume', bulkId], t.target, { env: { HOME: first.home } });
    expect(wrongJob.err).toContain(
      `--resume: run ${bulkId} was a bulk retry of ${HOURLY}, not a bulk retry of other-report`,
    );
  });
});

describe('bulk cancel', () => {
  it('cancels each waiting or running row through the injected cancel, with who and the note', async () => {
    const rows = [row(HOURLY, '2026-11-01T06:00:00Z', PENDING, NOW), row(HOURLY, '2026-11-02T06:00:00Z', RUNNING, NOW)];
    const t = memoryTarget([...rows, failedAt(3)]);
    const calls: Array<{ key: string; by: string; note: string }> = [];
    const cancelFor: BulkCancelFactory = (_target, _ctx, request) => async (key) => {
      calls.push({ key: key.scheduledTime, ...request });
      return { outcome: 'cancelled' };
    };

    const result = await cli(
      ['cancel', HOURLY, ...RANGE, '--yes', '--note', 'upstream down', '--by', 'bob'],
      t.target,
      {
        cancelFor,
      } as Partial<CliDeps>,
    );

    expect(result.code).toBe(0);
    expect(calls).toEqual([
      { key: '2026-11-01T06:00:00Z', by: 'bob', note: 'upstream down' },
      { key: '2026-11-02T06:00:00Z', by: 'bob', note: 'upstream down' },
    ]);
    expect(result.out).toMatch(/cancelled 2 of 2, 0 refused, 0 failed\.$/);
  });

  it('bulk cancel without an injected cancel runs the operator cancel on the target store, once per row', async () => {
    const pending = row(HOURLY, '2026-11-20T06:00:00Z', PENDING, NOW);
    const memory = memoryTarget([pending]);
    const cancels: CancelRequest[] = [];
    const store = memory.target.store as unknown as { cancel: CancellableStore['cancel'] };
    store.cancel = async (key, request) => {
      const current = memory.table.get(key.scheduledTime);
      if (current?.status !== request.observed.status) return { cancelled: false, current };
      cancels.push(request);
      memory.table.set(key.scheduledTime, { ...current, status: OccurrenceStatus.CANCELLED });
      return { cancelled: true };
    };

    const result = await cli(['cancel', HOURLY, ...RANGE, '--yes', '--note', 'upstream down'], memory.target);

    expect(result.code).toBe(0);
    expect(cancels).toEqual([expect.objectContaining({ note: 'upstream down', by: expect.stringContaining(ARN) })]);
    expect(memory.table.get(pending.scheduledTime)?.status).toBe(OccurrenceStatus.CANCELLED);
  });
});
