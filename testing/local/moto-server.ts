/**
 * Starts and stops moto_server, the AWS emulator the local run and the integration tests use.
 *
 * Where moto comes from, in order: `moto_server` on the PATH; this package's venv in the user's cache
 * (`$XDG_CACHE_HOME` or `~/.cache`, then `scheduled-jobs-stack/moto-<version>`); else that venv is made with the
 * pinned `moto[server]` from PyPI, once per user and moto version. Nothing is ever written into a project's folder
 * (the package runs inside a user's app, whose folder is theirs). An install that fails is removed, and
 * MotoUnavailableError says what to install.
 * Every server started here is stopped when the process exits, also on Ctrl-C, SIGTERM and a failed test run.
 */
import { type ChildProcess, type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import path from 'node:path';

/** The moto version this package installs when moto_server is not on the PATH (the PATH's moto may be any 5.x). */
export const MOTO_VERSION = '5.2.1';
export const MOTO_PIN = `moto[server]==${MOTO_VERSION}`;
const INSTALL_IT = `pip install "${MOTO_PIN}"  (or pipx install "${MOTO_PIN}"), so that moto_server is on the PATH`;
const READY_POLL_MS = 100;
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

/** No moto_server could be found or installed; the message says what to install. */
export class MotoUnavailableError extends Error {
  /** Always `'MotoUnavailableError'`. */
  override readonly name = 'MotoUnavailableError';
}

export interface MotoServer {
  /** http://127.0.0.1:PORT: the one endpoint of every emulated service. */
  readonly endpoint: string;
  readonly port: number;
  /** Empties every service (tables, queues, buckets, topics). */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** How to run moto_server: the executable and the arguments that come before the server's own. */
export interface MotoCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/** The venv this package installs moto into: per user and moto version, outside every project. */
export function motoCacheVenv(env: NodeJS.ProcessEnv = process.env): string {
  const cacheHome = env.XDG_CACHE_HOME || path.join(env.HOME || homedir(), '.cache');
  return path.join(cacheHome, 'scheduled-jobs-stack', `moto-${MOTO_VERSION}`);
}

/**
 * Finds moto_server (on the PATH, else in the cache venv), installing it into the cache venv when it is nowhere.
 * `log` hears what is installed where (by default on stderr: an install is never silent).
 */
export function ensureMotoServer(
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  where: { env?: NodeJS.ProcessEnv; venv?: string } = {},
): MotoCommand {
  const env = where.env ?? process.env;
  const venv = where.venv ?? motoCacheVenv(env);
  if (answersHelp({ command: 'moto_server', args: [] }, env)) return { command: 'moto_server', args: [] };
  // `python -m moto.server`, not the venv's bin/moto_server: pip writes the venv's path into that script, and the
  // venv is made under another name and then renamed (see installVenv).
  const cached: MotoCommand = { command: path.join(venv, 'bin', 'python'), args: ['-m', 'moto.server'] };
  if (!existsSync(venv)) installVenv(venv, env, log);
  if (answersHelp(cached, env)) return cached;
  throw new MotoUnavailableError(
    `moto_server is not on the PATH, and the moto installed in ${venv} does not run (was its Python removed or ` +
      `upgraded?). Remove that folder to have it installed again:  rm -rf "${venv}"\nor ${INSTALL_IT}.`,
  );
}

function answersHelp(moto: MotoCommand, env: NodeJS.ProcessEnv): boolean {
  return spawnSync(moto.command, [...moto.args, '--help'], { stdio: 'ignore', env }).status === 0;
}

/**
 * Makes the venv with the pinned moto. It is built as `<venv>.partial-<pid>` and renamed into place only once pip
 * succeeded, so `<venv>` is complete whenever it exists, and two processes installing at once (test files start
 * moto in parallel) each finish their own. Whatever a failed install made is removed; so is a partial folder that
 * an install killed half-way (Ctrl-C during pip) left behind.
 */
function installVenv(venv: string, env: NodeJS.ProcessEnv, log: (line: string) => void): void {
  log(`moto_server is not on the PATH: installing ${MOTO_PIN} from PyPI into ${venv} (once per user; a minute) ...`);
  const parent = path.dirname(venv);
  const firstMade = mkdirSync(parent, { recursive: true });
  removeAbandonedInstalls(venv, log);
  const partial = `${venv}.partial-${process.pid}`;
  try {
    run('python3', ['-m', 'venv', partial], env, 'python3 -m venv');
    const pip = ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', MOTO_PIN];
    run(path.join(partial, 'bin', 'python'), pip, env, `pip install ${MOTO_PIN}`);
    publish(partial, venv);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    if (firstMade !== undefined) removeEmptyDirs(parent, firstMade);
    log(`the install failed; removed what it had made (${partial})`);
    throw error;
  }
  log(`installed ${MOTO_PIN} into ${venv} (to remove it: rm -rf "${venv}")`);
}

/** Runs one step of the install; a step that fails is a MotoUnavailableError with the step's own last words. */
function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv, step: string): void {
  const result = spawnSync(command, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status === 0) return;
  throw new MotoUnavailableError(
    'The local run and the integration tests need moto_server (an AWS emulator). It is not on the PATH, and ' +
      `installing ${MOTO_PIN} into this package's cache failed: ${failure(command, step, result)}\n` +
      `Install it yourself:  ${INSTALL_IT}.`,
  );
}

function failure(command: string, step: string, result: SpawnSyncReturns<string>): string {
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return `${command} was not found`;
  const how = result.error?.message ?? (result.signal ? `killed by ${result.signal}` : `exit code ${result.status}`);
  return `${step} failed (${how}):\n${lastLines(`${result.stdout ?? ''}${result.stderr ?? ''}`)}`;
}

/** Renames the finished install into place; when another process was first, keeps theirs. */
function publish(partial: string, venv: string): void {
  try {
    renameSync(partial, venv);
  } catch (error) {
    if (!existsSync(venv)) throw error;
    rmSync(partial, { recursive: true, force: true });
  }
}

/** `<venv>.partial-<pid>` folders whose process is gone: an install killed half-way. */
function removeAbandonedInstalls(venv: string, log: (line: string) => void): void {
  const prefix = `${path.basename(venv)}.partial-`;
  for (const name of readdirSync(path.dirname(venv))) {
    const pid = Number(name.slice(prefix.length));
    if (!name.startsWith(prefix) || !Number.isInteger(pid) || pid <= 0 || isRunning(pid)) continue;
    rmSync(path.join(path.dirname(venv), name), { recursive: true, force: true });
    log(`removed ${name}, left by an install that did not finish`);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes `dir` and its parents up to `top`, each only if empty: the folders the install made for its cache. */
function removeEmptyDirs(dir: string, top: string): void {
  for (let current = dir; current.startsWith(top); current = path.dirname(current)) {
    try {
      rmdirSync(current);
    } catch {
      return; // not empty: another install's, or the user's
    }
  }
}

function lastLines(text: string, count = 12): string {
  return text.trim().split('\n').slice(-count).join('\n');
}

export async function startMotoServer(options: { log?: (line: string) => void } = {}): Promise<MotoServer> {
  const moto = ensureMotoServer(options.log);
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn(moto.command, [...moto.args, '-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const stopOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', stopOnExit);
  const signals = stopOnSignals(child);
  try {
    await waitUntilReady(endpoint, child, () => stderr);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    endpoint,
    port,
    reset: async () => {
      const response = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
      if (!response.ok) throw new Error(`moto reset failed: HTTP ${response.status}`);
    },
    stop: async () => {
      process.removeListener('exit', stopOnExit);
      signals.remove();
      await stopChild(child);
    },
  };
}

/** Ctrl-C or SIGTERM: stop moto, then exit as the signal would have (128 + signal number). */
function stopOnSignals(child: ChildProcess): { remove(): void } {
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((signal) => {
    const handler = (): void => {
      child.kill('SIGKILL');
      process.exit(signal === 'SIGINT' ? 130 : 143);
    };
    process.once(signal, handler);
    return [signal, handler] as const;
  });
  return {
    remove: () => {
      for (const [signal, handler] of handlers) process.removeListener(signal, handler);
    },
  };
}

async function waitUntilReady(endpoint: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`moto_server exited with code ${child.exitCode} at start:\n${stderr()}`);
    try {
      const response = await fetch(`${endpoint}/moto-api/data.json`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
  }
  throw new Error(`moto_server did not answer on ${endpoint} within ${READY_TIMEOUT_MS / 1000} s:\n${stderr()}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/** A port the OS says is free now. Another process could take it before moto binds it; start then fails loudly. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
