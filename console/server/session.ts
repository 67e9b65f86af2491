/**
 * Who may talk to the console, and how its answers protect the page. The rules (docs/console.md):
 *
 *   Host       127.0.0.1:<port> or localhost:<port>, else 403: a DNS-rebinding page names its own host.
 *   Origin     when present, http://127.0.0.1:<port> or http://localhost:<port>, else 403: a cross-site request.
 *   session    GET /?token=T with the printed token sets the cookie occurrences_console_<port>=T (HttpOnly,
 *              SameSite=Strict, Path=/) and redirects to / so the token leaves the address bar; every other request
 *              needs that cookie or `Authorization: Bearer T`, else 401 (a page at /, `{ error }` under /api).
 *   POST       `Content-Type: application/json`, else 415 (a form cannot send it without a preflight); and, without a
 *              Bearer header, an allowed Origin, else 403.
 *   headers    a strict CSP (the page's own script and style only), nosniff, no referrer, no-store under /api.
 *
 * Tokens are compared in constant time (their SHA-256 digests, so that lengths do not leak either).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The session cookie's name: one per port, so two consoles on one machine keep their own. */
export const cookieName = (port: number): string => `occurrences_console_${port}`;

/** The page a browser gets at / without a session. */
const SIGN_IN_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>occurrences console</title></head><body>' +
  '<h1>occurrences console</h1><p>This console needs its token. Open the URL <code>occurrences console</code> ' +
  'printed when it started (<code>Console: http://127.0.0.1:&lt;port&gt;/?token=…</code>).</p></body></html>';

/** Equal tokens, in time that does not depend on where they differ. */
export function sameToken(given: string, token: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** The headers every answer carries. */
export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const headers = c.res.headers;
    headers.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    headers.set('X-Content-Type-Options', 'nosniff');
    headers.set('Referrer-Policy', 'no-referrer');
    if (c.req.path === '/api' || c.req.path.startsWith('/api/') || c.req.path === '/')
      headers.set('Cache-Control', 'no-store');
  };
}

/** The Host, Origin, session and POST rules above. */
export function sessionGuard(options: { readonly port: number; readonly token: string }): MiddlewareHandler {
  const { port, token } = options;
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const origins = new Set([...hosts].map((h) => `http://${h}`));
  const name = cookieName(port);
  return async (c, next) => {
    const host = c.req.header('host') ?? new URL(c.req.url).host;
    if (!hosts.has(host)) return refuse(c, 403, `a request for host ${host} is refused: use 127.0.0.1:${port}`);
    const origin = c.req.header('origin');
    if (origin !== undefined && !origins.has(origin))
      return refuse(c, 403, `a request from origin ${origin} is refused`);
    const url = new URL(c.req.url);
    if (c.req.method === 'GET' && url.pathname === '/' && url.searchParams.has('token')) {
      if (!sameToken(url.searchParams.get('token') ?? '', token)) return refuse(c, 401, 'wrong token');
      setCookie(c, name, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      return c.redirect('/', 302);
    }
    const bearer = /^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')?.[1];
    const cookie = getCookie(c, name);
    const signedIn =
      (bearer !== undefined && sameToken(bearer, token)) || (cookie !== undefined && sameToken(cookie, token));
    if (!signedIn)
      return refuse(c, 401, 'no session: open the URL the console printed, or send Authorization: Bearer <token>');
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const type = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
      if (type !== 'application/json')
        return refuse(c, 415, `a ${c.req.method} must be Content-Type: application/json`);
      if (bearer === undefined && origin === undefined)
        return refuse(c, 403, `a ${c.req.method} without an Authorization header must carry an Origin header`);
    }
    await next();
    return undefined;
  };
}

function refuse(c: Context, status: 401 | 403 | 415, error: string): Response {
  if (c.req.path === '/api' || c.req.path.startsWith('/api/')) return c.json({ error }, status);
  if (status === 401 && c.req.path === '/') return c.html(SIGN_IN_PAGE, 401);
  return c.text(error, status);
}
