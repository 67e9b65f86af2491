/**
 * The console's session in Chromium against the real server (startConsole on the in-memory world): the printed
 * address signs in once and the cookie holds a session id, not the token; a server on another local port, visited by
 * the same browser, receives the cookie (cookies are not port-scoped) but not the token, and when it plants a cookie
 * of the same name for a longer path, the page still works.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundlePage } from '../../console/server/page-bundle';
import { type RunningConsole, startConsole } from '../../console/server/start';
import { launchBrowser } from '../../scripts/chromium';
import { world } from './server-support';

let browser: Browser;
let running: RunningConsole;
let context: BrowserContext;

beforeAll(async () => {
  running = await startConsole((await world({ clock: { now: () => Date.now() } })).deps, {
    port: 0,
    page: await bundlePage(),
  });
  browser = await launchBrowser();
  context = await browser.newContext();
  const page = await context.newPage();
  expect((await page.goto(running.url))?.ok()).toBe(true);
  await page.close();
});
afterAll(async () => {
  await browser?.close();
  await running?.close();
});

/** A server on another port of 127.0.0.1 that records the Cookie headers it gets and answers with `setCookie`. */
async function otherPort(
  setCookie?: (cookies: string) => string,
): Promise<{ url: string; cookies: string[]; server: Server }> {
  const cookies: string[] = [];
  const server = createServer((req, res) => {
    const got = req.headers.cookie ?? '';
    cookies.push(got);
    res.writeHead(200, { 'Content-Type': 'text/html', ...(setCookie ? { 'Set-Cookie': setCookie(got) } : {}) });
    res.end('<p>another local server</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, cookies, server };
}

const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** Opens the jobs page and resolves with what it rendered: 'jobs', or the sign-in page's heading. */
async function jobsPage(on: BrowserContext): Promise<string> {
  const page = await on.newPage();
  try {
    await page.goto(`http://127.0.0.1:${running.port}/#/jobs`);
    await page.waitForSelector('body[data-ready="jobs"], h1', { timeout: 20_000 });
    const ready = await page.locator('body').getAttribute('data-ready');
    return ready ?? (await page.locator('h1').first().textContent()) ?? '';
  } finally {
    await page.close();
  }
}

describe('the session in a browser', () => {
  it('keeps a session id in a cookie named at random, not the token; the address does not sign in twice', async () => {
    const [cookie] = await context.cookies(`http://127.0.0.1:${running.port}`);
    expect(cookie.name).toBe(running.cookieName);
    expect(cookie.name).toMatch(/^occurrences_console_[0-9a-f]{16}$/);
    expect(cookie.value).not.toBe(running.token);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(await jobsPage(context)).toBe('jobs');
    // Another browser (or whoever read the address) opening it again is refused.
    const other = await browser.newContext();
    const page = await other.newPage();
    const again = await page.goto(running.url);
    expect(again?.status()).toBe(401);
    expect(await page.textContent('body')).toContain('used already');
    await other.close();
  });

  it('gives a server on another port the session id, never the token', async () => {
    const spy = await otherPort();
    try {
      const page = await context.newPage();
      await page.goto(spy.url);
      await page.close();
      expect(spy.cookies.join()).toContain(running.cookieName);
      expect(spy.cookies.join()).not.toContain(running.token);
      const replayed = await fetch(`http://127.0.0.1:${running.port}/api/config`, {
        headers: { authorization: `Bearer ${running.token}` },
      });
      expect(replayed.status).toBe(401);
    } finally {
      await closeServer(spy.server);
    }
  });

  it('recovers from a cookie of the same name that another port plants for a longer path', async () => {
    // The other port learns the name from what the browser sends it, and shadows it under /api and /.
    const shadow = await otherPort((cookies) => {
      const name = /(occurrences_console_[0-9a-f]{16})=/.exec(cookies)?.[1] ?? 'none';
      return `${name}=planted; Path=/api`;
    });
    try {
      const page = await context.newPage();
      await page.goto(shadow.url);
      await page.close();
      const jar = await context.cookies(`http://127.0.0.1:${running.port}/api/jobs`);
      expect(jar.filter((c) => c.name === running.cookieName).map((c) => c.value)).toContain('planted');
      expect(await jobsPage(context)).toBe('jobs');
    } finally {
      await closeServer(shadow.server);
    }
  });
});
