/**
 * `occurrences schedules ...` through the command line, on fakes of the registry and of Scheduler: what each
 * subcommand writes and prints, the exit codes (2 for a bad argument named by its flag, 4 for a key without a
 * schedule, 1 for an import with a failed item), the import's progress lines and summary, its checkpoint, and where
 * the registry table comes from.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScheduleTargetOptions } from '../../bin/occurrences/commands/schedules-target';
import { runCli } from '../../bin/occurrences/program';
import { scheduleOperationsOver } from '../../operations/schedules';
import { FakeProjection, FakeRegistry, template } from '../protocol/drift-fakes';
import { cliDeps } from './support';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const JOB = 'weekly-report';
const T = template(JOB);

function world() {
  const registry = new FakeRegistry();
  const projection = new FakeProjection(() => NOW);
  projection.templates.set(JOB, T);
  const clock = { now: () => NOW };
  const connected: ScheduleTargetOptions[] = [];
  const cli = async (...args: string[]) => {
    const deps = {
      ...cliDeps(clock),
      env: { USER: 'alice' },
      interactive: false,
      connectSchedules: async (options: ScheduleTargetOptions) => {
        connected.push(options);
        return { ops: scheduleOperationsOver({ registry, projection, clock }), where: 'registry fake' };
      },
    };
    const code = await runCli(args, deps);
    return { code, out: deps.captured.out.join('\n'), err: deps.captured.err.join('\n') };
  };
  return { registry, projection, cli, connected };
}

const tmp = () => mkdtempSync(path.join(tmpdir(), 'schedules-cli-'));

describe('occurrences schedules upsert/get/list/pause/resume/delete', () => {
  it('upserts a schedule with every option, then says unchanged the second time', async () => {
    const w = world();
    const args = [
      'schedules',
      'upsert',
      JOB,
      'cust-42',
      '--expression',
      'cron(0 8 ? * MON *)',
      '--time-zone',
      'Europe/Paris',
      '--input',
      '{"plan":"pro"}',
      '--paused',
      '--by',
      'ops',
    ];
    const first = await w.cli(...args);
    expect(first).toMatchObject({ code: 0 });
    expect(first.out).toMatch(
      /^created weekly-report\/cust-42: cron\(0 8 \? \* MON \*\) Europe\/Paris, PAUSED, v1, in sync$/,
    );
    expect(w.registry.row(JOB, 'cust-42')).toMatchObject({ input: { plan: 'pro' }, state: 'PAUSED', updatedBy: 'ops' });
    expect([...w.projection.schedules.values()]).toMatchObject([{ state: 'DISABLED' }]);
    const second = await w.cli(...args);
    expect(second.out).toMatch(/^unchanged /);
  });

  it('names the flag of each wrong field, exit 2, and writes nothing', async () => {
    const w = world();
    const r = await w.cli(
      'schedules',
      'upsert',
      JOB,
      'cust-1',
      '--expression',
      'every monday',
      '--time-zone',
      'Mars/Olympus',
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--expression: expression /);
    expect(r.err).toMatch(/--time-zone: timeZone /);
    expect(r.err).toMatch(/Usage: occurrences schedules upsert/);
    expect(w.registry.rows.size).toBe(0);
  });

  it('refuses --input that is not JSON, naming it', async () => {
    const w = world();
    const r = await w.cli('schedules', 'upsert', JOB, 'k', '--expression', 'rate(1 day)', '--input', '{plan: pro}');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--input: must be JSON/);
  });

  it('names <jobId> for a job that takes no schedules at run time', async () => {
    const w = world();
    const r = await w.cli('schedules', 'upsert', 'nightly', 'k', '--expression', 'rate(1 day)');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/<jobId>: job 'nightly' takes no schedules at run time/);
  });

  it('gets a schedule, and exits 4 for a key without one', async () => {
    const w = world();
    await w.cli('schedules', 'upsert', JOB, 'cust-1', '--expression', 'rate(1 day)');
    const got = await w.cli('schedules', 'get', JOB, 'cust-1');
    expect(got.code).toBe(0);
    expect(got.out).toMatch(/^job: +weekly-report$/m);
    expect(got.out).toMatch(/^expression: +rate\(1 day\)$/m);
    expect(got.out).toMatch(/^updated: .* by alice@/m);
    const json = await w.cli('schedules', 'get', JOB, 'cust-1', '--json');
    expect(JSON.parse(json.out)).toMatchObject({ scheduleKey: 'cust-1', inSync: true });
    const missing = await w.cli('schedules', 'get', JOB, 'nobody');
    expect(missing.code).toBe(4);
    expect(missing.err).toMatch(/job weekly-report has no schedule with key "nobody"|'nobody'/);
  });

  it('lists by prefix, a page at a time, and prints the cursor of the next page', async () => {
    const w = world();
    for (const key of ['a-1', 'a-2', 'a-3', 'b-1'])
      await w.cli('schedules', 'upsert', JOB, key, '--expression', 'rate(1 day)');
    const page = await w.cli('schedules', 'list', JOB, '--prefix', 'a-', '--limit', '2');
    expect(page.out.split('\n').map((l) => l.split('\t')[0])).toEqual(['a-1', 'a-2']);
    const cursor = /more: --cursor (\S+)/.exec(page.err)?.[1];
    expect(cursor).toBeDefined();
    const next = await w.cli('schedules', 'list', JOB, '--prefix', 'a-', '--limit', '2', '--cursor', cursor as string);
    expect(next.out.split('\t')[0]).toBe('a-3');
    expect(next.err).not.toMatch(/more:/);
    const bad = await w.cli('schedules', 'list', JOB, '--limit', '5000');
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.err).toMatch(/--limit: must be a whole number from 1 to 1000/);
  });

  it('pauses and resumes (the schedule DISABLED, then ENABLED), and exits 4 for a key without a schedule', async () => {
    const w = world();
    await w.cli('schedules', 'upsert', JOB, 'c', '--expression', 'rate(1 day)');
    expect((await w.cli('schedules', 'pause', JOB, 'c')).out).toMatch(/^paused weekly-report\/c: .*PAUSED/);
    expect([...w.projection.schedules.values()][0].state).toBe('DISABLED');
    expect((await w.cli('schedules', 'resume', JOB, 'c')).out).toMatch(/^resumed .*ENABLED/);
    expect([...w.projection.schedules.values()][0].state).toBe('ENABLED');
    expect((await w.cli('schedules', 'pause', JOB, 'nobody')).code).toBe(4);
  });

  it('deletes the schedule and its row; a second delete exits 4', async () => {
    const w = world();
    await w.cli('schedules', 'upsert', JOB, 'c', '--expression', 'rate(1 day)');
    const r = await w.cli('schedules', 'delete', JOB, 'c');
    expect(r).toMatchObject({ code: 0 });
    expect(w.registry.rows.size).toBe(0);
    expect(w.projection.schedules.size).toBe(0);
    expect((await w.cli('schedules', 'delete', JOB, 'c')).code).toBe(4);
  });

  it('passes --registry-table, --schedule-group and --output-prefix to the target, the default stack as unset', async () => {
    const w = world();
    await w.cli(
      'schedules',
      'get',
      JOB,
      'k',
      '--registry-table',
      'Registry1',
      '--schedule-group',
      'Group1',
      '--output-prefix',
      'Reports',
    );
    expect(w.connected).toEqual([
      expect.objectContaining({
        registryTable: 'Registry1',
        scheduleGroup: 'Group1',
        outputPrefix: 'Reports',
        stack: undefined,
      }),
    ]);
    await w.cli('--stack', 'Prod', 'schedules', 'get', JOB, 'k');
    expect(w.connected[1]).toMatchObject({ stack: 'Prod' });
  });
});

describe('occurrences schedules import', () => {
  const lines = (n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => JSON.stringify({ scheduleKey: `c${from + i}`, expression: 'rate(1 day)' }));

  it('imports an NDJSON file, prints plain progress lines and a summary, exit 0', async () => {
    const w = world();
    const file = path.join(tmp(), 'schedules.ndjson');
    writeFileSync(file, `${lines(20).join('\n')}\n`);
    const r = await w.cli('schedules', 'import', JOB, file, '--rate', '10000');
    expect(r.code).toBe(0);
    expect(w.registry.rows.size).toBe(20);
    expect(r.err.split('\n')).toContain('imported 20/20 (0 failed)');
    expect(r.err.split('\n').filter((l) => l.startsWith('imported '))).toHaveLength(10);
    expect(r.out).toMatch(/20 created, updated or repaired, 0 unchanged, 0 failed/);
  });

  it('reports each bad line by its number and key, imports the rest, and exits 1', async () => {
    const w = world();
    const file = path.join(tmp(), 'schedules.ndjson');
    writeFileSync(
      file,
      [
        lines(1)[0],
        '',
        '{not json',
        JSON.stringify({ scheduleKey: 'bad', expression: 'rate(1 day)', timeZone: 'Nowhere/Else' }),
        lines(1, 5)[0],
      ].join('\n'),
    );
    const r = await w.cli('schedules', 'import', JOB, file, '--rate', '10000');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^line 3: not JSON/m);
    expect(r.err).toMatch(/^line 4 \(bad\): timeZone /m);
    expect(r.out).toMatch(/2 created, updated or repaired, 0 unchanged, 2 failed/);
    expect([...w.registry.rows.keys()].sort()).toEqual([`${JOB}|c0`, `${JOB}|c5`]);
  });

  it('imports a JSON array; run again, it writes nothing', async () => {
    const w = world();
    const file = path.join(tmp(), 'schedules.json');
    writeFileSync(file, `[${lines(5).join(',')}]`);
    await w.cli('schedules', 'import', JOB, file, '--rate', '10000');
    const puts = w.registry.calls.put;
    const again = await w.cli('schedules', 'import', JOB, file, '--rate', '10000', '--json');
    expect(JSON.parse(again.out)).toMatchObject({ written: 0, unchanged: 5, failed: [] });
    expect(w.registry.calls.put).toBe(puts);
  });

  it('keeps a checkpoint, and an import started with it skips the lines done', async () => {
    const w = world();
    const dir = tmp();
    const file = path.join(dir, 's.ndjson');
    const checkpoint = path.join(dir, 'checkpoint');
    writeFileSync(file, lines(6).join('\n'));
    writeFileSync(checkpoint, '4\n');
    const r = await w.cli('schedules', 'import', JOB, file, '--rate', '10000', '--checkpoint', checkpoint);
    expect(r.out).toMatch(/2 created, updated or repaired, 0 unchanged, 0 failed, 4 skipped/);
    expect([...w.registry.rows.keys()].sort()).toEqual([`${JOB}|c4`, `${JOB}|c5`]);
    expect(readFileSync(checkpoint, 'utf8')).toBe('6\n');
  });

  it('names the argument: an unreadable file, a file that is no array, a bad --rate', async () => {
    const w = world();
    const dir = tmp();
    expect((await w.cli('schedules', 'import', JOB, path.join(dir, 'none.ndjson'))).err).toMatch(/<file>: cannot read/);
    const object = path.join(dir, 'o.json');
    writeFileSync(object, '{"scheduleKey":"a"}');
    expect((await w.cli('schedules', 'import', JOB, object)).err).toMatch(/<file>: .* must hold a JSON array/);
    const ok = path.join(dir, 'ok.ndjson');
    writeFileSync(ok, lines(1)[0]);
    const bad = await w.cli('schedules', 'import', JOB, ok, '--rate', 'fast');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--rate: must be a number/);
  });
});
