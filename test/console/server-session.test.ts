/**
 * The console's session rules (console/server/session.ts): the token, the cookie it becomes, the Host and Origin
 * checks against DNS rebinding and cross-site requests, JSON-only POSTs, read-only mode, and the headers every
 * answer carries.
 */
import { describe, expect, it } from 'vitest';
import { ACTIONS } from '../../console/server/actions';
import { CONTENT_SECURITY_POLICY, ConsoleSession, cookieValues } from '../../console/server/session';
import { appOf, COOKIE, errorOf, ORIGIN, PORT, post, SESSION, signedIn, TOKEN, world } from './server-support';

const at = (path: string) => `http://127.0.0.1:${PORT}${path}`;

describe('the session', () => {
  it('answers 401 without a session: JSON under /api, a page at / that says to open the printed URL', async () => {
    const app = appOf((await world()).deps);
    const api = await app.request(at('/api/config'));
    expect(api.status).toBe(401);
    expect(await errorOf(api)).toMatch(/no session/);
    const page = await app.request(at('/'));
    expect(page.status).toBe(401);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain('Open the URL');
    expect((await app.request(at('/assets/console.js'))).status).toBe(401);
  });

  it('answers 401 to a wrong token in the URL, and to a wrong session in the cookie or the Authorization header', async () => {
    const fresh = appOf((await world()).deps, { signedIn: false });
    expect((await fresh.request(at('/?token=nope'))).status).toBe(401);
    expect((await fresh.request(at('/?token=nope'))).headers.get('set-cookie')).toBeNull();
    // A wrong guess does not spend the token.
    expect((await fresh.request(at(`/?token=${TOKEN}`))).status).toBe(302);
    const app = appOf((await world()).deps);
    expect((await signedIn(app, '/api/config', { headers: { cookie: `${COOKIE}=nope` } })).status).toBe(401);
    expect((await app.request(at('/api/config'), { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    // The session under another cookie name (another console's, or a guess) is not this console's cookie.
    expect(
      (await signedIn(app, '/api/config', { headers: { cookie: `occurrences_console_${PORT}=${SESSION}` } })).status,
    ).toBe(401);
  });

  it('exchanges the printed token once for a session id in an HttpOnly, SameSite=Lax cookie, and redirects to /', async () => {
    const app = appOf((await world()).deps, { signedIn: false });
    const answer = await app.request(at(`/?token=${TOKEN}`));
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/');
    const cookie = answer.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(new RegExp(`^${COOKIE}=${SESSION};`));
    expect(cookie).not.toContain(TOKEN);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    const page = await app.request(at('/'), { headers: { cookie: cookie.split(';')[0] } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script src="/assets/console.js"></script>');
    expect((await app.request(at('/api/config'), { headers: { authorization: `Bearer ${SESSION}` } })).status).toBe(
      200,
    );
  });

  it('refuses the token at its second use, in the URL or as a Bearer, and lets the signed-in browser reopen it', async () => {
    const app = appOf((await world()).deps, { signedIn: false });
    expect((await app.request(at(`/?token=${TOKEN}`))).status).toBe(302);
    const again = await app.request(at(`/?token=${TOKEN}`));
    expect(again.status).toBe(401);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(await again.text()).toContain('used already');
    // The token was never a credential but for its one exchange: a script replaying it as a Bearer is refused.
    expect((await app.request(at('/api/config'), { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(401);
    expect((await signedIn(app, '/api/config', { headers: { cookie: `${COOKIE}=${TOKEN}` } })).status).toBe(401);
    // The printed address opened again from the history of the browser it signed in: back to the page, no error.
    const reopened = await signedIn(app, `/?token=${TOKEN}`);
    expect(reopened.status).toBe(302);
    expect(reopened.headers.get('location')).toBe('/');
  });

  it('recovers from a shadowing cookie: a same-named cookie sent first (a longer path) does not lock the page out', async () => {
    const app = appOf((await world()).deps);
    // What the browser sends once another local port set `<name>=x; Path=/api`: the longer path first.
    const shadowed = `${COOKIE}=planted-by-another-port; other=1; ${COOKIE}=${SESSION}`;
    expect((await signedIn(app, '/api/config', { headers: { cookie: shadowed } })).status).toBe(200);
    expect((await signedIn(app, '/', { headers: { cookie: shadowed } })).status).toBe(200);
    expect((await signedIn(app, '/api/config', { headers: { cookie: `${COOKIE}=planted` } })).status).toBe(401);
  });

  it('names the cookie with a random part per start, and makes the session id unrelated to the token', () => {
    const names = new Set(Array.from({ length: 20 }, () => new ConsoleSession(TOKEN).cookieName));
    expect(names.size).toBe(20);
    for (const name of names) expect(name).toMatch(/^occurrences_console_[0-9a-f]{16}$/);
    const session = new ConsoleSession(TOKEN);
    const id = session.exchange(TOKEN);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(id).not.toBe(TOKEN);
    expect(session.exchange(TOKEN)).toBeUndefined();
  });

  it('reads every value of a cookie name, unquoted, and none of another name', () => {
    expect(cookieValues('a=1; b=2; a="3"', 'a')).toEqual(['1', '3']);
    expect(cookieValues('ab=1', 'a')).toEqual([]);
    expect(cookieValues(undefined, 'a')).toEqual([]);
  });

  it('refuses a foreign Host with 403, session or not (DNS rebinding), and accepts localhost:<port>', async () => {
    const app = appOf((await world()).deps);
    const foreign = await app.request(`http://evil.example:${PORT}/api/config`, {
      headers: { authorization: `Bearer ${SESSION}` },
    });
    expect(foreign.status).toBe(403);
    expect(await errorOf(foreign)).toMatch(/host evil\.example/);
    const otherPort = await app.request('http://127.0.0.1:9999/api/config', {
      headers: { authorization: `Bearer ${SESSION}` },
    });
    expect(otherPort.status).toBe(403);
    const local = await app.request(`http://localhost:${PORT}/api/config`, {
      headers: { authorization: `Bearer ${SESSION}` },
    });
    expect(local.status).toBe(200);
  });

  it('refuses a foreign Origin with 403, on a GET as on a POST', async () => {
    const app = appOf((await world()).deps);
    const get = await signedIn(app, '/api/jobs', { headers: { origin: 'http://evil.example' } });
    expect(get.status).toBe(403);
    expect(await errorOf(get)).toMatch(/origin http:\/\/evil\.example/);
    const postFromElsewhere = await signedIn(app, '/api/actions/pause', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: `http://127.0.0.1:${PORT + 1}` },
      body: JSON.stringify({ jobId: 'hourly-report', note: 'x' }),
    });
    expect(postFromElsewhere.status).toBe(403);
  });

  it('answers 415 to a POST that is not JSON, and 403 to a cookie POST without an Origin', async () => {
    const w = await world();
    const app = appOf(w.deps);
    const form = await signedIn(app, '/api/actions/pause', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
      body: 'jobId=hourly-report&note=x',
    });
    expect(form.status).toBe(415);
    const plain = await signedIn(app, '/api/actions/pause', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: ORIGIN },
      body: '{}',
    });
    expect(plain.status).toBe(415);
    const noOrigin = await signedIn(app, '/api/actions/pause', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jobId: 'hourly-report', note: 'x' }),
    });
    expect(noOrigin.status).toBe(403);
    // A wrong Bearer beside the cookie does not stand in for the Origin.
    const wrongBearer = await signedIn(app, '/api/actions/pause', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer nope' },
      body: JSON.stringify({ jobId: 'hourly-report', note: 'x' }),
    });
    expect(wrongBearer.status).toBe(403);
    expect(w.switched).toEqual([]);
    // A Bearer header is no browser's ambient credential: it needs no Origin.
    const bearer = await app.request(at('/api/actions/pause'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${SESSION}` },
      body: JSON.stringify({ jobId: 'hourly-report', note: 'x' }),
    });
    expect(bearer.status).toBe(200);
  });

  it('refuses every action with 403 in read-only mode, changes nothing, and says so in /api/config', async () => {
    const w = await world();
    const app = appOf(w.deps, { readOnly: true });
    expect(((await (await signedIn(app, '/api/config')).json()) as { readOnly: boolean }).readOnly).toBe(true);
    for (const action of ACTIONS) {
      const answer = await post(app, action, { jobId: 'hourly-report', note: 'x' });
      expect(answer.status, action).toBe(403);
      expect(await answer.json()).toEqual({ error: 'the console was started with --read-only: actions are refused' });
    }
    expect(w.switched).toEqual([]);
    expect(w.queue.sent).toEqual([]);
    expect(w.audit).toEqual([]);
  });

  it('sends the CSP, nosniff and no-referrer on every answer, and no-store under /api', async () => {
    const app = appOf((await world()).deps);
    for (const answer of [
      await signedIn(app, '/api/config'),
      await app.request(at('/api/config')),
      await signedIn(app, '/'),
    ]) {
      expect(answer.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
    }
    expect((await signedIn(app, '/api/jobs')).headers.get('cache-control')).toBe('no-store');
    const script = await signedIn(app, '/assets/console.js');
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await script.text()).toBe('console.log("page")');
  });
});
