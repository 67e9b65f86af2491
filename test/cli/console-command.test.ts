/**
 * `occurrences console`'s wiring, on an in-memory target: the one line it prints, `read-only` after it, the
 * operator it records without an AWS identity, a browser that cannot be opened as a warning, and the end on the CLI's
 * signal (Ctrl-C).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../bin/occurrences/program';
import type { Target } from '../../bin/occurrences/target';
import type { ConsoleConfig } from '../../console/contract';
import type { OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';
import type { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { hourlyJob, world } from '../console/server-support';
import { cliDeps } from './support';

async function fakeTarget(): Promise<Target> {
  const w = await world();
  return {
    tableName: 'Occurrences',
    reader: { listSeriesNewestFirst: (series: string, range) => w.occurrences.newestFirst(series, range) } as Pick<
      OperatorOccurrenceReader,
      'listSeriesNewestFirst'
    > as OperatorOccurrenceReader,
    store: w.occurrences as unknown as OperatorOccurrenceStore,
    states: w.states,
    jobs: {
      group: 'g',
      job: async (id) => (id === hourlyJob.id ? hourlyJob : undefined),
      jobIds: async () => [hourlyJob.id],
    },
    schedules: w.deps.schedules,
    where: 'table Occurrences (in memory)',
  };
}

describe('occurrences console (wiring)', () => {
  it('prints the URL then read-only, records the OS user alone without an identity, warns when no browser opens', async () => {
    const stop = new AbortController();
    const target = await fakeTarget();
    const opened: string[] = [];
    const deps = {
      ...cliDeps({ now: () => Date.parse('2026-12-01T12:00:00Z') }),
      env: { USER: 'tester' },
      signal: stop.signal,
      connect: async () => target,
      callerArn: async () => undefined,
      openBrowser: async (url: string) => {
        opened.push(url);
        throw new Error('xdg-open: not found');
      },
      page: { script: '', style: '' },
    };
    const exit = runCli(['console', '--port', '0', '--read-only', '--open', '--table', 'Occurrences'], deps);
    for (let i = 0; i < 100 && deps.captured.out.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    const [line, mode] = deps.captured.out;
    expect(line).toMatch(/^Console: http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    expect(mode).toBe('read-only');
    for (let i = 0; i < 100 && opened.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    // --open puts no secret on the opener's command line: a file:// address of a page only this user may read,
    // which sends the browser on to the printed address.
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatch(/^file:\/\/.*\/sign-in\.html$/);
    expect(opened[0]).not.toContain('token');
    const file = fileURLToPath(opened[0]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8')).toContain(
      `<meta http-equiv="refresh" content="0;url=${line.slice('Console: '.length)}">`,
    );
    const url = new URL(line.slice('Console: '.length));
    const signIn = await fetch(url, { redirect: 'manual' });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0];
    const config = (await (await fetch(`${url.origin}/api/config`, { headers: { cookie } })).json()) as ConsoleConfig;
    expect(config).toMatchObject({ readOnly: true, operator: 'tester via console', reports: false, registry: false });
    expect(deps.captured.err).toEqual([
      'warning: no AWS identity (STS GetCallerIdentity failed): actions are recorded by the OS user alone',
      'warning: could not open a browser (Error: xdg-open: not found); open the URL above',
    ]);
    stop.abort();
    expect(await exit).toBe(0);
    // Closed: nothing listens on the port any more, and the sign-in page is gone.
    await expect(fetch(`${url.origin}/api/config`)).rejects.toThrow();
    expect(existsSync(dirname(file))).toBe(false);
  });
});
