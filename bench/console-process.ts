/**
 * The console started the way an operator starts it: the real `occurrences console` command as a process of its own
 * (the package bin, bin/occurrences/bin.cjs, which runs bin/occurrences.ts through tsx in this checkout), its address
 * read from the one line it prints. The console's benchmark and its end-to-end tests (test/console/e2e-*.test.ts) share
 * it, so both measure and check what a user gets, not an in-process server wired differently.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';

const BIN = path.resolve(__dirname, '..', 'bin', 'occurrences', 'bin.cjs');

/** The line the command prints once it listens (docs/cli.md): the address with the session's token. */
export const CONSOLE_LINE = /^Console: (http:\/\/127\.0\.0\.1:(\d+))\/\?token=([A-Za-z0-9_-]+)$/m;

/** A console process that is listening. */
export interface RunningConsole {
  /** `http://127.0.0.1:<port>`: the only origin the console accepts. */
  readonly origin: string;
  readonly port: number;
  /** The session token it printed. */
  readonly token: string;
  /** The address it printed, token included: what the operator opens. */
  readonly url: string;
  /** Every line it wrote on stdout so far (the address, then one JSON audit line per action). */
  readonly stdout: string[];
  /** What it wrote on stderr so far. */
  readonly stderr: () => string;
  /** The JSON audit lines printed so far, parsed. */
  audit(): Record<string, unknown>[];
  /** SIGTERM, as Ctrl-C would; SIGKILL when it has not exited after 10 s. Resolves with its exit code. */
  stop(): Promise<number | null>;
}

export interface StartConsoleOptions {
  /** Give up when the address line has not come after this long. Default 60 s (tsx compiles the CLI on start). */
  readonly timeoutMs?: number;
  /** Environment variables added to the process's. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Starts `occurrences <args>` (say `console --local f --port 0`) and resolves once it printed its address; rejects with
 * what it wrote when it exits first or stays silent for `timeoutMs`.
 */
export function startConsole(args: readonly string[], options: StartConsoleOptions = {}): Promise<RunningConsole> {
  // No AWS settings of the caller's: the target comes from the arguments (--local), as it does for an operator.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  let partial = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    stdout.push(...lines);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`occurrences ${args.join(' ')} printed no address in ${options.timeoutMs ?? 60_000} ms: ${stderr}`),
      );
    }, options.timeoutMs ?? 60_000);
    const poll = setInterval(() => {
      const match = stdout.join('\n').match(CONSOLE_LINE);
      if (match === null) return;
      clearInterval(poll);
      clearTimeout(timer);
      resolve(running(child, match, stdout, () => stderr));
    }, 50);
    child.once('exit', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`occurrences ${args.join(' ')} exited ${code} before it listened: ${stderr}`));
    });
  });
}

function running(
  child: ChildProcessWithoutNullStreams,
  match: RegExpMatchArray,
  stdout: string[],
  stderr: () => string,
): RunningConsole {
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
  return {
    origin: match[1],
    port: Number(match[2]),
    token: match[3],
    url: match[0].replace(/^Console: /, ''),
    stdout,
    stderr,
    audit: () =>
      stdout.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      try {
        return await exited;
      } finally {
        clearTimeout(killer);
      }
    },
  };
}
