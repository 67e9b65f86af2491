/**
 * The console command as an operator starts it, for the tests against moto: `occurrences console --port 0` with the
 * flags given, run in-process through runCli until stopped, and signed into as a browser does (the printed URL, then
 * the cookie it sets).
 */
import { expect } from 'vitest';
import { runCli } from '../../bin/occurrences/program';
import { cliDeps } from './support';

/** The page the tests serve instead of the bundle: the server's routes are what they check. */
const PAGE = { script: '/* page */', style: '' };

export interface RunningConsole {
  /** `http://127.0.0.1:<port>`. */
  readonly base: string;
  readonly token: string;
  /** What the command printed on stdout (the Console line, the audit lines) and stderr, so far. */
  readonly out: string[];
  readonly err: string[];
  /** Stops it as Ctrl-C does; resolves with its exit code. */
  stop(): Promise<number>;
}

/** Starts `occurrences console --port 0 <args>` as user `tester`, and waits (at most 30 s: the first start on a loaded machine connects to moto and asks STS) for its Console line. */
export async function startConsoleCommand(args: readonly string[]): Promise<RunningConsole> {
  const stop = new AbortController();
  const deps = { ...cliDeps({ now: () => Date.now() }), env: { USER: 'tester' }, signal: stop.signal, page: PAGE };
  const exit = runCli(['console', '--port', '0', ...args], deps);
  for (let i = 0; i < 600 && !deps.captured.out.some((l) => l.startsWith('Console: ')); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const line = deps.captured.out.find((l) => l.startsWith('Console: '));
  if (line === undefined) throw new Error(`no Console line; stderr: ${deps.captured.err.join('\n')}`);
  const url = new URL(line.slice('Console: '.length));
  return {
    base: url.origin,
    token: url.searchParams.get('token') ?? '',
    out: deps.captured.out,
    err: deps.captured.err,
    stop: async () => {
      stop.abort();
      return exit;
    },
  };
}

/** Signs in as a browser does: the printed URL, then the cookie it set (`name=value`, for a Cookie header). */
export async function signIn(console_: RunningConsole): Promise<string> {
  const answer = await fetch(`${console_.base}/?token=${console_.token}`, { redirect: 'manual' });
  expect(answer.status).toBe(302);
  return (answer.headers.get('set-cookie') ?? '').split(';')[0];
}
