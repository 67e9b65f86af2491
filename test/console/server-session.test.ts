/**
 * The console's session rules (console/server/session.ts): the token, the cookie it becomes, the Host and Origin
 * checks against DNS rebinding and cross-site requests, JSON-only POSTs, read-only mode, and the headers every
 * answer carries.
 */
import { describe, expect, it } from 'vitest';
import { ACTIONS } from '../../console/server/actions';
import { CONTENT_SECURITY_POLICY } from '../../console/server/session';
import { appOf, errorOf, ORIGIN, PORT, post, signedIn, TOKEN, world } from './server-support';

const at = (path: string) => `http://127.0.0.1:${PORT}${path}`;

describe('the session', () => {
  it('answers 401 without a token: JSON under /api, a page at / that says to open the printed URL', async () => {
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

  it('answers 401 to a wrong token, in the URL, the cookie or the Authorization header', async () => {
    const app = appOf((await world()).deps);
    expect((await app.request(at('/?token=nope'))).status).toBe(401);
    expect((await app.request(at('/?token=nope'))).headers.get('set-cookie')).toBeNull();
    expect(
      (await signedIn(app, '/api/config', { headers: { cookie: `occurrences_console_${PORT}=nope` } })).status,
    ).toBe(401);
    expect((await app.request(at('/api/config'), { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    // The cookie of another console (another port) is not this one's.
    expect(
      (await signedIn(app, '/api/config', { headers: { cookie: `occurrences_console_1234=${TOKEN}` } })).status,
    ).toBe(401);
  });

  it('turns the printed token into an HttpOnly, SameSite=Strict cookie and redirects to / without it', async () => {
    const app = appOf((await world()).deps);
    const answer = await app.request(at(`/?token=${TOKEN}`));
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/');
    const cookie = answer.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(new RegExp(`^occurrences_console_${PORT}=${TOKEN};`));
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\//);
    const page = await app.request(at('/'), { headers: { cookie: cookie.split(';')[0] } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script src="/assets/console.js"></script>');
    expect((await app.request(at('/api/config'), { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('refuses a foreign Host with 403, token or not (DNS rebinding), and accepts localhost:<port>', async () => {
    const app = appOf((await world()).deps);
    const foreign = await app.request(`http://evil.example:${PORT}/api/config`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(foreign.status).toBe(403);
    expect(await errorOf(foreign)).toMatch(/host evil\.example/);
    const otherPort = await app.request('http://127.0.0.1:9999/api/config', {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(otherPort.status).toBe(403);
    const local = await app.request(`http://localhost:${PORT}/api/config`, {
      headers: { authorization: `Bearer ${TOKEN}` },
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
    expect(w.switched).toEqual([]);
    // A Bearer header is no browser's ambient credential: it needs no Origin.
    const bearer = await app.request(at('/api/actions/pause'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
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
