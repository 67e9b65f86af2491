/**
 * Who may talk to the console, and how its answers protect the page. The rules (docs/console.md#security):
 *
 *   Host       127.0.0.1:<port> or localhost:<port>, else 403: a DNS-rebinding page names its own host.
 *   Origin     when present, http://127.0.0.1:<port> or http://localhost:<port>, else 403: a cross-site request.
 *   sign-in    GET /?token=T with the printed token, once: it makes a session id S (32 random bytes, not derived
 *              from T), sets the cookie <name>=S (HttpOnly, SameSite=Lax, Path=/) and redirects to / so the token
 *              leaves the address bar. T is spent: a second GET /?token=T is 401 (or, from the signed-in browser, a
 *              redirect to /), and T is no credential anywhere else.
 *   session    every other request needs the cookie <name>=S or `Authorization: Bearer S`, else 401 (a page at /,
 *              `{ error }` under /api). The cookie's <name> is occurrences_console_<16 random hex> per start: a
 *              program on another local port cannot guess it to shadow it; and when a cookie of that name for a
 *              longer path comes first, the others of the same name are still read, so the page is not locked out.
 *   POST       `Content-Type: application/json`, else 415 (a form cannot send it without a preflight); and, without a
 *              Bearer header, an allowed Origin, else 403.
 *   headers    a strict CSP (the page's own script and style only), nosniff, no referrer, no-store under /api.
 *
 * Secrets are compared in constant time (their SHA-256 digests, so that lengths do not leak either).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { setCookie } from 'hono/cookie';

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The cookie names of this console's sessions start with it; the rest is random per start. */
export const COOKIE_PREFIX = 'occurrences_console_';

/** A fresh cookie name: the prefix and 16 random hex digits. */
export const newCookieName = (): string => `${COOKIE_PREFIX}${randomBytes(8).toString('hex')}`;

/** A fresh secret (the sign-in token, a session id): 32 random bytes, base64url. */
export const newSecret = (): string => randomBytes(32).toString('base64url');

/** The page a browser gets at / without a session. */
const SIGN_IN_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>occurrences console</title></head><body>' +
  '<h1>occurrences console</h1><p>This console needs its token. Open the URL <code>occurrences console</code> ' +
  'printed when it started (<code>Console: http://127.0.0.1:&lt;port&gt;/?token=…</code>).</p></body></html>';

/** The page a browser gets for a sign-in address that was used already. */
const SPENT_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>occurrences console</title></head><body>' +
  '<h1>occurrences console</h1><p>This sign-in address was used already: it signs in once. If it was not you, ' +
  'stop the console. Start it again for a new address.</p></body></html>';

/** Equal secrets, in time that does not depend on where they differ. */
export function sameSecret(given: string, secret: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(secret));
}

/** Every value of the cookie `name` in a Cookie header, in the order the browser sent them (longest path first). */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (header === undefined) return [];
  const values: string[] = [];
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== name) continue;
    let value = pair.slice(at + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    values.push(value);
  }
  return values;
}

/**
 * The console's one sign-in: the printed token until it is used, then the session it became. One per start: a
 * second browser or a script signs in with a console of its own (docs/console.md#security).
 */
export class ConsoleSession {
  private token: string | undefined;
  private id: string | undefined;

  constructor(
    token: string,
    /** The session cookie's name. */
    readonly cookieName: string = newCookieName(),
    private readonly newId: () => string = newSecret,
  ) {
    this.token = token;
  }

  /** The printed token, while it has not been used. */
  get unused(): boolean {
    return this.token !== undefined;
  }

  /** The session id for the token, once; undefined for a wrong or spent token. */
  exchange(given: string): string | undefined {
    if (this.token === undefined || !sameSecret(given, this.token)) return undefined;
    this.token = undefined;
    this.id = this.newId();
    return this.id;
  }

  /** Whether one of the values is the session id. */
  holds(values: readonly string[]): boolean {
    const id = this.id;
    if (id === undefined) return false;
    // Every value is compared, so that the time does not say which one matched.
    return values.map((v) => sameSecret(v, id)).includes(true);
  }
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

/** The Host, Origin, sign-in, session and POST rules above. */
export function sessionGuard(options: { readonly port: number; readonly session: ConsoleSession }): MiddlewareHandler {
  const { port, session } = options;
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const origins = new Set([...hosts].map((h) => `http://${h}`));
  return async (c, next) => {
    const host = c.req.header('host') ?? new URL(c.req.url).host;
    if (!hosts.has(host)) return refuse(c, 403, `a request for host ${host} is refused: use 127.0.0.1:${port}`);
    const origin = c.req.header('origin');
    if (origin !== undefined && !origins.has(origin))
      return refuse(c, 403, `a request from origin ${origin} is refused`);
    const bearer = /^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')?.[1];
    const cookieSession = session.holds(cookieValues(c.req.header('cookie'), session.cookieName));
    const bearerSession = bearer !== undefined && session.holds([bearer]);
    const signedIn = cookieSession || bearerSession;
    const url = new URL(c.req.url);
    if (c.req.method === 'GET' && url.pathname === '/' && url.searchParams.has('token')) {
      // The printed address opened again (from the history, say) by the browser it signed in: nothing to do.
      if (cookieSession) return c.redirect('/', 302);
      const id = session.exchange(url.searchParams.get('token') ?? '');
      if (id === undefined) return c.html(session.unused ? SIGN_IN_PAGE : SPENT_PAGE, 401);
      // Lax, not Strict: a link to the console opened from another site (a chat, an alarm's e-mail) arrives signed
      // in. Cross-site requests still carry no cookie but top-level GETs, and a GET changes nothing.
      setCookie(c, session.cookieName, id, { httpOnly: true, sameSite: 'Lax', path: '/' });
      return c.redirect('/', 302);
    }
    if (!signedIn)
      return refuse(c, 401, 'no session: open the URL the console printed, or send Authorization: Bearer <session>');
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const type = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
      if (type !== 'application/json')
        return refuse(c, 415, `a ${c.req.method} must be Content-Type: application/json`);
      // A valid Bearer is no browser's ambient credential; a cookie is, so a cookie's POST shows where it comes from.
      if (!bearerSession && origin === undefined)
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
