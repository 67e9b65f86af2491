/**
 * Starts and stops moto_server, the AWS emulator the local run and the integration tests use.
 *
 * Where moto comes from, in order: `moto_server` on the PATH; the project's own venv (`.venv/`); a new `.venv/`
 * with the pinned `moto[server]` installed by pip. If none works, MotoUnavailableError says what to install.
 * Every server started here is stopped when the process exits, also on Ctrl-C, SIGTERM and a failed test run.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

/** The moto version the project's venv installs (the PATH's moto may be any 5.x). */
export const MOTO_PIN = 'moto[server]==5.2.1';
/** This repository, or, where this file runs from an installed package, the app that installed it. */
const PROJECT_ROOT = __dirname.includes(`${path.sep}node_modules${path.sep}`)
  ? process.cwd()
  : path.resolve(__dirname, '..', '..');
const VENV = path.join(PROJECT_ROOT, '.venv');
const READY_POLL_MS = 100;
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

export class MotoUnavailableError extends Error {
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

/** Finds moto_server, installing it into `.venv/` when it is nowhere; returns the command to run. */
export function ensureMotoServer(
  log: (line: string) => void = () => undefined,
  where: { env?: NodeJS.ProcessEnv; venv?: string } = {},
): string {
  const env = where.env ?? process.env;
  const venvDir = where.venv ?? VENV;
  const venvMoto = path.join(venvDir, 'bin', 'moto_server');
  const onPath = spawnSync('moto_server', ['--help'], { stdio: 'ignore', env });
  if (onPath.status === 0) return 'moto_server';
  if (existsSync(venvMoto)) return venvMoto;
  log(`moto_server is not on the PATH; installing ${MOTO_PIN} into ${venvDir} ...`);
  const venv = spawnSync('python3', ['-m', 'venv', venvDir], { stdio: 'inherit', env });
  const pip =
    venv.status === 0
      ? spawnSync(path.join(venvDir, 'bin', 'pip'), ['install', '--quiet', MOTO_PIN], { stdio: 'inherit', env })
      : undefined;
  if (pip?.status === 0 && existsSync(venvMoto)) return venvMoto;
  throw new MotoUnavailableError(
    'The local run and the integration tests need moto_server (an AWS emulator), and it could not be installed.\n' +
      `Install it with Python 3 and pip:  pip install "${MOTO_PIN}"  (so that moto_server is on the PATH),\n` +
      `or let this project make its own venv once PyPI is reachable:  python3 -m venv .venv && .venv/bin/pip install "${MOTO_PIN}"`,
  );
}

export async function startMotoServer(options: { log?: (line: string) => void } = {}): Promise<MotoServer> {
  const command = ensureMotoServer(options.log);
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn(command, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
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

// `tsx scripts/local/moto-server.ts`: make sure moto is there (CI runs this before the tests) and say which one.
if (require.main === module) {
  try {
    const command = ensureMotoServer((line) => console.log(line));
    const version = spawnSync(
      command === 'moto_server' ? 'python3' : path.join(VENV, 'bin', 'python'),
      ['-c', 'import moto; print(moto.__version__)'],
      { encoding: 'utf8' },
    );
    console.log(`moto_server: ${command}${version.status === 0 ? ` (moto ${version.stdout.trim()})` : ''}`);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
