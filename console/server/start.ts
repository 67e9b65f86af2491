/**
 * Serves the console on the loopback address only: a random token, the app (app.ts) on @hono/node-server's request
 * listener, and the page bundled once at start (so a broken bundle fails the start, not the first page view).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { createConsoleApp } from './app';
import type { ConsoleDeps } from './deps';
import { bundlePage, type PageBundle } from './page-bundle';
import { ConsoleSession, newSecret } from './session';

/** The console's port when none is given. */
export const DEFAULT_CONSOLE_PORT = 8765;
/** The only address the console listens on. */
export const CONSOLE_HOST = '127.0.0.1';
/**
 * The most connections open at once: a browser opens six per host, a script a few; a program flooding the port
 * gets its extra connections closed instead of the console's memory.
 */
export const MAX_CONSOLE_CONNECTIONS = 64;

export interface StartConsoleOptions {
  /** @defaultValue DEFAULT_CONSOLE_PORT; 0 picks a free port */
  readonly port?: number;
  /** Refuse every action. @defaultValue false */
  readonly readOnly?: boolean;
  /** The sign-in token, good once. @defaultValue 32 random bytes, base64url */
  readonly token?: string;
  /** @defaultValue MAX_CONSOLE_CONNECTIONS */
  readonly maxConnections?: number;
  /** The page. @defaultValue bundlePage() */
  readonly page?: PageBundle;
}

/** A running console. */
export interface RunningConsole {
  /** `http://127.0.0.1:<port>/?token=<token>`: what the operator opens, once. */
  readonly url: string;
  readonly port: number;
  /** The sign-in token: the first GET /?token= spends it. */
  readonly token: string;
  /** The session cookie's name, random per start. */
  readonly cookieName: string;
  /** Stops listening and ends the open connections. */
  close(): Promise<void>;
}

/** The port is taken by another process (or another console). */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';

  constructor(readonly port: number) {
    super(`port ${port} on ${CONSOLE_HOST} is in use by another program`);
  }
}

/** A fresh sign-in token: 32 random bytes, base64url. */
export const newToken = (): string => newSecret();

export async function startConsole(deps: ConsoleDeps, options: StartConsoleOptions = {}): Promise<RunningConsole> {
  const page = options.page ?? (await bundlePage());
  const token = options.token ?? newToken();
  const session = new ConsoleSession(token);
  const server = createServer();
  server.maxConnections = options.maxConnections ?? MAX_CONSOLE_CONNECTIONS;
  await listen(server, options.port ?? DEFAULT_CONSOLE_PORT);
  const port = (server.address() as AddressInfo).port;
  // The app needs the port (the Host, the Origin), known only once listening; no request can
  // arrive before the URL is printed, and none is handled before the listener is attached.
  const app = createConsoleApp(deps, { port, session, readOnly: options.readOnly ?? false, page });
  server.on('request', getRequestListener(app.fetch));
  return {
    url: `http://${CONSOLE_HOST}:${port}/?token=${token}`,
    port,
    token,
    cookieName: session.cookieName,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(port) : error);
    server.once('error', onError);
    server.listen(port, CONSOLE_HOST, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
