/**
 * The console's page in Chromium against a fake API (page-fake-api.ts): what an operator sees and does, through the
 * page's test hooks (body[data-ready], tr[data-job], tr[data-occurrence], button[data-action], the confirm dialog,
 * the timeline-drawn mark).
 */
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TIMELINE_BARS, TIMELINE_PAGE_BARS } from '../../console/contract';
import { launchBrowser } from '../../scripts/chromium';
import { type FakeApi, startFakeApi } from './page-fake-api';
import {
  CANCEL_NOTE,
  CANCELLED_BY,
  FAILED_TIME,
  NOW,
  OPERATOR_CANCELLED_TIME,
  RUNNING_TIME,
  SKIPPED_TIME,
  YIELDED_TO,
} from './page-fixtures';

let api: FakeApi;
let browser: Browser;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  api = await startFakeApi();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});
afterEach(async () => {
  await page?.context().close();
  api.readOnly = false;
  api.posts.length = 0;
  expect(errors.splice(0)).toEqual([]);
});

async function open(
  hash: string,
  ready: 'jobs' | 'timeline' | 'occurrence' | 'attention' | 'all-timeline',
  options: BrowserContextOptions = {},
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, ...options });
  page = await context.newPage();
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${api.url}/${hash}`);
  await waitForReady(page, ready);
  return page;
}

/** Waits for the page's own signal that it rendered its data (the page code runs in the browser, hence a string). */
function waitForReady(p: Page, ready: 'jobs' | 'timeline' | 'occurrence' | 'attention' | 'all-timeline') {
  // A function, not a string: the page's CSP (no unsafe-eval) refuses Playwright's string predicates.
  return p.waitForFunction(
    (name) => (globalThis as unknown as BrowserGlobals).document.body.dataset.ready === name,
    ready,
    {
      timeout: 20_000,
    },
  );
}

/** What the predicates read in the browser (the tests' own types have no DOM). */
interface BrowserGlobals {
  readonly document: { readonly body: { readonly dataset: Record<string, string | undefined> } };
}

/** The page's hash, decoded. */
const hashOf = (p: Page) => decodeURIComponent(new URL(p.url()).hash);

const weeklyDay = '#/job/weekly-export?from=2026-12-01T08:00:00.000Z&to=2026-12-02T10:00:00.000Z';

describe('the jobs page', () => {
  it('lists every job of the API with its schedule, state and next run', async () => {
    const p = await open('#/jobs', 'jobs');
    const ids = await p.$$eval('tr[data-job]', (rows) => rows.map((row) => row.getAttribute('data-job')));
    expect(ids).toEqual(['weekly-export', 'dense', 'reports']);
    const weekly = await p.textContent('tr[data-job="weekly-export"]');
    expect(weekly).toContain('Every hour');
    expect(weekly).toContain('Europe/Paris');
    expect(weekly).toContain('in 60 min');
    const dense = await p.textContent('tr[data-job="dense"]');
    expect(dense).toContain('Paused');
    expect(dense).toContain('upstream maintenance until 10:00');
    expect(await p.getAttribute('tr[data-job="weekly-export"] a', 'href')).toBe('#/job/weekly-export');
  });

  it("lists a run-time schedules job's schedules a page at a time, each linking to its own timeline", async () => {
    const p = await open('#/jobs', 'jobs');
    await p.click('tr[data-job="reports"] button:has-text("Schedules")');
    await p.waitForSelector('tr[data-schedule="customer-010"]');
    expect(await p.$$('tr[data-schedule]')).toHaveLength(10);
    await p.click('button:has-text("More schedules")');
    await p.waitForSelector('tr[data-schedule="customer-020"]');
    expect(await p.getAttribute('tr[data-schedule="customer-001"] a', 'href')).toBe('#/job/reports?key=customer-001');
  });
});

describe('the attention view', () => {
  const kindsShown = (p: Page) =>
    p.$$eval('tr[data-attention]', (rows) => rows.map((r) => r.getAttribute('data-attention')));

  it('is the front page: FAILED, late, RUNNING, BUFFERED, then paused, each one click from its occurrence', async () => {
    const p = await open('', 'attention');
    expect(await kindsShown(p)).toEqual(['failed', 'late', 'running', 'buffered', 'paused']);
    const text = await p.textContent('table.attention');
    expect(text).toContain('TimeoutError: the export API did not answer in 30 s');
    expect(text).toContain('not started, 30 min past its lateAfter');
    expect(text).toContain('6,200 of 10,000 (62 %), claimed 1 h ago, last heartbeat 20 s ago');
    const paused = await p.textContent('tr[data-attention="paused"]');
    expect(paused).toContain('by alice via console, since');
    expect(paused).toContain('“upstream maintenance until 10:00”');
    expect(await p.getAttribute('tr[data-attention="paused"] a', 'href')).toBe('#/job/dense');
    // The last day, back from the server's now.
    const asked = api.attentionRequests.at(-1);
    const [from, to] = [Date.parse(asked?.get('from') ?? ''), Date.parse(asked?.get('to') ?? '')];
    expect(to - from).toBe(86_400_000 + 1_000);
    expect(Math.abs(from - (NOW - 86_400_000))).toBeLessThan(60_000);
    expect(await p.textContent('[data-test="attention-counts"]')).toContain('All jobs');
    // The jobs list is one click away.
    expect(await p.getAttribute('nav.top-nav a:has-text("Jobs")', 'href')).toBe('#/jobs');
    await p.click('tr[data-attention="failed"] a');
    await waitForReady(p, 'occurrence');
    expect(hashOf(p)).toBe(`#/occurrence/weekly-export/${FAILED_TIME}`);
  });

  it('filters by kind and by job, each choice in the address and in the request', async () => {
    const p = await open('#/', 'attention');
    await p.uncheck('[data-test="attention-kinds"] input[name="running"]');
    await waitForReady(p, 'attention');
    await p.waitForFunction(
      () =>
        !(globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector(
          'tr[data-attention="running"]',
        ),
    );
    expect(await kindsShown(p)).toEqual(['failed', 'late', 'buffered', 'paused']);
    expect(hashOf(p)).toBe('#/?kind=failed,late,buffered,paused');
    expect(api.attentionRequests.at(-1)?.get('kind')).toBe('failed,late,buffered,paused');
    await p.selectOption('select[name="job"]', 'dense');
    await p.waitForFunction(
      () =>
        !(globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector(
          'tr[data-attention="failed"]',
        ),
    );
    expect(await kindsShown(p)).toEqual(['late', 'paused']);
    expect(hashOf(p)).toBe('#/?job=dense&kind=failed,late,buffered,paused');
    expect(api.attentionRequests.at(-1)?.get('job')).toBe('dense');
  });

  it('takes a window: the last hour, the last week, or two UTC times', async () => {
    const p = await open('#/', 'attention');
    await p.click('[data-test="attention-window"] button:has-text("Last hour")');
    await p.waitForFunction(() =>
      (globalThis as unknown as { location: { hash: string } }).location.hash.includes('window=1h'),
    );
    await waitForReady(p, 'attention');
    const hour = api.attentionRequests.at(-1);
    expect(Date.parse(hour?.get('to') ?? '') - Date.parse(hour?.get('from') ?? '')).toBe(3_600_000 + 1_000);
    await p.click('[data-test="attention-window"] button:has-text("Custom")');
    await p.fill('input[name="from"]', '2026-11-20 00:00:00');
    await p.fill('input[name="to"]', '2026-11-21 06:30:00');
    await p.click('form.range-form button[type="submit"]');
    await p.waitForFunction(() =>
      (globalThis as unknown as { location: { hash: string } }).location.hash.includes('2026-11-20'),
    );
    await waitForReady(p, 'attention');
    const custom = api.attentionRequests.at(-1);
    expect([custom?.get('from'), custom?.get('to')]).toEqual(['2026-11-20T00:00:00.000Z', '2026-11-21T06:30:00.000Z']);
    expect(await p.textContent('#attention-title + p')).toContain('2026-11-20 00:00:00 UTC');
  });
});

describe('the timeline', () => {
  it('shows a SKIPPED-for-overlap occurrence with its reason and the time it yielded to', async () => {
    const p = await open(weeklyDay, 'timeline');
    const row = p.locator(`tr[data-occurrence="${SKIPPED_TIME}"]`);
    expect(await row.getAttribute('data-status')).toBe('SKIPPED');
    expect(await row.getAttribute('data-skip-reason')).toBe('overlap');
    const text = await row.textContent();
    expect(text).toContain('overlap');
    expect(text).toContain(`yielded to ${YIELDED_TO.slice(0, 10)} ${YIELDED_TO.slice(11, 19)} UTC`);
    expect(await p.locator(`tr[data-occurrence="${FAILED_TIME}"]`).getAttribute('data-status')).toBe('FAILED');
  });

  it('keeps the range in the URL: + zooms in around the centre, → pans later by half the range', async () => {
    const p = await open(weeklyDay, 'timeline');
    await p.keyboard.press('+');
    await p.waitForURL((url) => url.hash.includes('from=2026-12-01T14%3A30'));
    expect(hashOf(p)).toBe('#/job/weekly-export?from=2026-12-01T14:30:00.000Z&to=2026-12-02T03:30:00.000Z');
    await p.keyboard.press('ArrowRight');
    await p.waitForURL((url) => url.hash.includes('to=2026-12-02T10%3A00'));
    expect(hashOf(p)).toBe('#/job/weekly-export?from=2026-12-01T21:00:00.000Z&to=2026-12-02T10:00:00.000Z');
  });

  it('steps from the newest range when keys come faster than the page redraws', async () => {
    const p = await open(weeklyDay, 'timeline');
    // Two zooms at once: a quarter of 26 h around 21:00, not the same half twice.
    // Four key presses in one task, before any hashchange is handled (a real fast typist can beat a redraw too).
    await p.evaluate(() => {
      const { document, KeyboardEvent } = globalThis as unknown as {
        document: { body: { dispatchEvent(event: unknown): void } };
        KeyboardEvent: new (type: string, init: { key: string; bubbles: boolean }) => unknown;
      };
      for (const key of ['+', '+', '-', '+'])
        document.body.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
    });
    await p.waitForURL((url) => url.hash.includes('from=2026-12-01T17%3A45'));
    expect(hashOf(p)).toBe('#/job/weekly-export?from=2026-12-01T17:45:00.000Z&to=2026-12-02T00:15:00.000Z');
  });

  it('opens an occurrence on a click of its bar', async () => {
    const p = await open(weeklyDay, 'timeline');
    const canvas = p.locator('canvas[data-test="timeline"]');
    const box = await canvas.boundingBox();
    if (box === null) throw new Error('no canvas');
    // 2026-12-01 10:00 + 10 min, in the first lane: a SUCCEEDED bar.
    const x =
      12 +
      ((Date.parse('2026-12-01T10:10:00Z') - Date.parse('2026-12-01T08:00:00Z')) / (26 * 3_600_000)) * (box.width - 24);
    await p.mouse.move(box.x + x, box.y + 20 + 9);
    await p.waitForSelector('.tooltip');
    expect(await p.textContent('.tooltip')).toContain('2026-12-01 10:00:00 UTC');
    await p.mouse.click(box.x + x, box.y + 20 + 9);
    await waitForReady(p, 'occurrence');
    expect(hashOf(p)).toBe('#/occurrence/weekly-export/2026-12-01T10:00:00Z');
  });

  it('draws 10,000 occurrences as they load a page at a time, binned by pixel column, then stops and says so', async () => {
    const p = await open('#/job/dense?from=2026-11-25T00:00:00.000Z&to=2026-12-02T12:00:00.000Z', 'timeline');
    type Drawn = { bars: number; binned: boolean; ms: number; at: number };
    const marks = await p.evaluate(() =>
      performance
        .getEntriesByName('timeline-drawn')
        .map((mark) => ({ ...(mark as unknown as { detail: object }).detail, at: mark.startTime }) as Drawn),
    );
    const last = marks[marks.length - 1];
    expect(last.bars).toBe(MAX_TIMELINE_BARS);
    expect(last.binned).toBe(true);
    // Drawn as the pages arrived, not once at the end.
    expect(marks.filter((mark) => mark.bars > 0).length).toBeGreaterThan(5);
    console.log(
      `10,000 bars: layout and draw ${last.ms.toFixed(1)} ms; drawn complete ${last.at.toFixed(0)} ms after navigation`,
    );
    // The range holds 10,500: the page stops at MAX_TIMELINE_BARS (ten pages) and asks for a narrower range.
    expect(await p.textContent('[data-test="capped"]')).toContain('choose a narrower range');
    expect(api.timelineRequests.filter((q) => q.get('job') === 'dense')).toHaveLength(
      MAX_TIMELINE_BARS / TIMELINE_PAGE_BARS,
    );
    expect(await p.$$('tr[data-occurrence]')).toHaveLength(100);
    await p.click('button.more');
    expect(await p.$$('tr[data-occurrence]')).toHaveLength(200);
  });

  it("shows a binned column's counts by status on hover, and zooms in to it on a click", async () => {
    const p = await open('#/job/dense?from=2026-11-25T00:00:00.000Z&to=2026-12-02T12:00:00.000Z', 'timeline');
    const box = await p.locator('canvas[data-test="timeline"]').boundingBox();
    if (box === null) throw new Error('no canvas');
    // A column a day before NOW: about seven per-minute occurrences each.
    const x = 12 + ((NOW - 86_400_000 - Date.parse('2026-11-25T00:00:00Z')) / (7.5 * 86_400_000)) * (box.width - 24);
    await p.mouse.move(box.x + x, box.y + 20 + 60);
    await p.waitForSelector('.tooltip');
    const tip = (await p.textContent('.tooltip')) ?? '';
    expect(tip).toMatch(/\d+ occurrences/);
    expect(tip).toMatch(/Succeeded: \d+/);
    expect(tip).toContain('Click to zoom in');
    await p.mouse.click(box.x + x, box.y + 20 + 60);
    await waitForReady(p, 'timeline');
    const url = new URL(p.url().replace('#', ''));
    const width = Date.parse(url.searchParams.get('to') ?? '') - Date.parse(url.searchParams.get('from') ?? '');
    // Forty columns' worth of the week: about five hours, around the column clicked.
    expect(width).toBeGreaterThan(4 * 3_600_000);
    expect(width).toBeLessThan(6 * 3_600_000);
    expect(Math.abs(Date.parse(url.searchParams.get('from') ?? '') + width / 2 - (NOW - 86_400_000))).toBeLessThan(
      15 * 60_000,
    );
  });
});

describe('every job on one time axis', () => {
  it('draws an hourly job as bars over a day and a per-minute one as buckets; at 31 days the hourly one too', async () => {
    const p = await open('#/timeline?window=1d', 'all-timeline');
    await expect(p.getAttribute('[data-row="weekly-export"] canvas', 'data-marks')).resolves.toBe('bars');
    await expect(p.getAttribute('[data-row="dense"] canvas', 'data-marks')).resolves.toBe('buckets');
    // As many buckets as fit 5 pixels each, in the range the window makes: 80 % back from now.
    const asked = api.timelinesRequests.at(-1);
    const from = Date.parse(asked?.get('from') ?? '');
    const to = Date.parse(asked?.get('to') ?? '');
    expect(to - from).toBe(86_400_000);
    expect(Math.abs(to - 0.2 * 86_400_000 - NOW)).toBeLessThan(60_000);
    const box = await p.locator('[data-row="dense"] canvas').boundingBox();
    expect(Number(asked?.get('buckets'))).toBe(Math.floor((box?.width ?? 0) / 5));
    await p.locator('button[aria-pressed="false"]', { hasText: '31 days' }).click();
    await waitForReady(p, 'all-timeline');
    await p.waitForFunction(
      () => (globalThis as unknown as { location: { hash: string } }).location.hash === '#/timeline?window=31d',
    );
    await p.locator('[data-row="weekly-export"] canvas[data-marks="buckets"]').waitFor();
  });

  it("opens an occurrence on a click of its bar, and shows a bucket's counts on hover", async () => {
    const p = await open('#/timeline?window=1d', 'all-timeline');
    const asked = api.timelinesRequests.at(-1);
    const from = Date.parse(asked?.get('from') ?? '');
    const to = Date.parse(asked?.get('to') ?? '');
    const dense = p.locator('[data-row="dense"] canvas');
    const denseBox = await dense.boundingBox();
    if (denseBox === null) throw new Error('the dense row is drawn');
    // An hour ago: the per-minute job's bucket there holds a few runs.
    const hourAgo = ((NOW - 3_600_000 - from) / (to - from)) * denseBox.width;
    await dense.hover({ position: { x: hourAgo, y: denseBox.height - 4 } });
    await expect(p.locator('[role="tooltip"]').textContent()).resolves.toMatch(/Succeeded: \d+/);
    const weekly = p.locator('[data-row="weekly-export"] canvas');
    const box = await weekly.boundingBox();
    if (box === null) throw new Error('the weekly row is drawn');
    const x = ((Date.parse(FAILED_TIME) - from) / (to - from)) * box.width + 1;
    await weekly.click({ position: { x, y: box.height / 2 } });
    await p.waitForFunction(() =>
      (globalThis as unknown as { location: { hash: string } }).location.hash.startsWith('#/occurrence/'),
    );
    expect(hashOf(p)).toBe(`#/occurrence/weekly-export/${FAILED_TIME}`);
  });
});

describe('actions', () => {
  it('pauses a job through the confirmation: it says what will happen and POSTs the note as JSON', async () => {
    const p = await open('#/jobs', 'jobs');
    await p.click('tr[data-job="weekly-export"] button[data-action="pause"]');
    const dialog = p.locator('dialog[data-test="confirm"]');
    await dialog.waitFor();
    expect(await p.locator('button[data-test="confirm-action"]').isDisabled()).toBe(true);
    await p.fill('dialog textarea', 'quarterly freeze');
    expect(await dialog.textContent()).toContain(
      'Pause weekly-export: its schedule is disabled and runs stop until resumed. Note: “quarterly freeze”.',
    );
    await p.click('button[data-test="confirm-action"]');
    await p.waitForSelector('[data-test="action-result"]:has-text("paused")');
    expect(api.posts).toEqual([
      {
        path: '/api/actions/pause',
        contentType: 'application/json',
        body: { jobId: 'weekly-export', note: 'quarterly freeze' },
      },
    ]);
    expect(await p.textContent('[data-test="action-result"]')).toContain('weekly-export is paused');
  });

  it('sends nothing when the confirmation is cancelled with Escape', async () => {
    const p = await open('#/jobs', 'jobs');
    await p.click('tr[data-job="dense"] button[data-action="resume"]');
    await p.locator('dialog[data-test="confirm"]').waitFor();
    await p.keyboard.press('Escape');
    await p.locator('dialog[data-test="confirm"]').waitFor({ state: 'detached' });
    expect(api.posts).toEqual([]);
  });

  it('retries plainly, and offers force only when the server says the status needs it', async () => {
    const p = await open(`#/occurrence/weekly-export/${encodeURIComponent(FAILED_TIME)}`, 'occurrence');
    await p.click('button[data-action="retry"]');
    expect(await p.locator('button[data-test="retry-force"]').count()).toBe(0);
    await p.click('button[data-test="confirm-action"]');
    await p.waitForSelector('button[data-test="retry-force"]');
    await p.click('button[data-test="retry-force"]');
    expect(await p.textContent('dialog')).toContain('with force');
    await p.click('button[data-test="confirm-action"]');
    await p.waitForSelector('[data-test="action-result"]:has-text("enqueued")');
    expect(api.posts.map((post) => post.body)).toEqual([
      { jobId: 'weekly-export', scheduledTime: FAILED_TIME },
      { jobId: 'weekly-export', scheduledTime: FAILED_TIME, force: true },
    ]);
  });

  it('cancels a running occurrence with a note, after saying its worker stops at its next heartbeat; no cancel on a finished one', async () => {
    const failed = await open(`#/occurrence/weekly-export/${encodeURIComponent(FAILED_TIME)}`, 'occurrence');
    expect(await failed.locator('button[data-action="cancel"]').count()).toBe(0);
    const p = await open(`#/occurrence/weekly-export/${encodeURIComponent(RUNNING_TIME)}`, 'occurrence');
    await p.click('button[data-action="cancel"]');
    expect(await p.textContent('dialog')).toContain('its worker stops at its next heartbeat and commits no report');
    await p.fill('dialog textarea[name="note"]', 'upstream broken');
    await p.click('button[data-test="confirm-action"]');
    await p.waitForSelector('[data-test="action-result"]:has-text("cancelled")');
    expect(api.posts.map((post) => post.body)).toEqual([
      { jobId: 'weekly-export', scheduledTime: RUNNING_TIME, note: 'upstream broken' },
    ]);
  });

  it('backfills only after showing the dry run in the confirmation', async () => {
    const p = await open(weeklyDay, 'timeline');
    await p.click('button[data-action="backfill"]');
    await p.waitForSelector('[data-test="backfill-preview"]');
    expect(await p.textContent('dialog')).toContain('records 4 fire times');
    await p.click('button[data-test="confirm-action"]');
    await p.waitForSelector('[data-test="action-result"]:has-text("recorded")');
    expect(api.posts.map((post) => post.body.dryRun)).toEqual([true, false]);
    expect(api.posts[1].body).toMatchObject({
      jobId: 'weekly-export',
      from: '2026-12-01T08:00:00.000Z',
      to: new Date(NOW).toISOString(),
      overlap: 'bufferAll',
    });
  });

  it('renders no action control in read-only mode, on any page', async () => {
    api.readOnly = true;
    for (const [hash, ready] of [
      ['#/jobs', 'jobs'],
      [weeklyDay, 'timeline'],
      [`#/occurrence/weekly-export/${encodeURIComponent(FAILED_TIME)}`, 'occurrence'],
    ] as const) {
      const p = await open(hash, ready);
      expect(await p.$$('button[data-action]')).toEqual([]);
      expect(await p.textContent('[data-test="read-only"]')).toBe('read-only');
      await p.context().close();
    }
  });
});

describe('the occurrence page', () => {
  it('shows progress with the rate and time left from two readings, polling while the row is live', async () => {
    const p = await open(`#/occurrence/weekly-export/${encodeURIComponent('2026-12-02T07:00:00Z')}`, 'occurrence');
    // The fake adds 200 items every 2 s reading: 100/s, and 10,000 - 6,400 left at the second reading: 36 s.
    await p.waitForSelector('[data-test="rate"]:text-is("100/s")', { timeout: 10_000 });
    expect(await p.textContent('[data-test="time-left"]')).toMatch(/^about 3\d s$/);
    expect(await p.textContent('main')).toContain('worker-7');
  });

  it('links the committed report for download', async () => {
    const p = await open(`#/occurrence/weekly-export/${encodeURIComponent('2026-12-02T06:00:00Z')}`, 'occurrence');
    expect(await p.getAttribute('[data-test="report-link"]', 'href')).toBe(
      '/api/report?job=weekly-export&time=2026-12-02T06%3A00%3A00Z',
    );
    expect(await p.textContent('main')).toContain('TimeoutError');
  });

  it('offers retry only where the library would reopen the row: FAILED, and none of the others', async () => {
    const failed = await open(occurrenceAt(FAILED_TIME), 'occurrence');
    expect(await failed.locator('button[data-action="retry"]').count()).toBe(1);
    for (const time of [RUNNING_TIME, YIELDED_TO, SKIPPED_TIME, OPERATOR_CANCELLED_TIME]) {
      const p = await open(occurrenceAt(time), 'occurrence');
      expect(await p.locator('button[data-action="retry"]').count(), time).toBe(0);
      // Run now stays: the page still has its actions.
      expect(await p.locator('button[data-action="run"]').count(), time).toBe(1);
      await p.context().close();
    }
  });

  it('says who cancelled an occurrence and why, as text; and which occurrence cancelled another', async () => {
    const p = await open(occurrenceAt(OPERATOR_CANCELLED_TIME), 'occurrence');
    const line = await p.textContent('[data-test="cancelled"]');
    expect(line).toContain(`Cancelled by ${CANCELLED_BY} at 2026-12-02 06:36:00 UTC`);
    expect(await p.textContent('[data-test="cancel-note"]')).toBe(CANCEL_NOTE);
    expect(await p.locator('[data-test="cancelled"] b').count()).toBe(0);
    const fields = await p.textContent('[data-test="row-fields"]');
    expect(fields).toContain('Why cancelled');
    await p.context().close();
    const other = await open(occurrenceAt('2026-12-02T04:00:00Z'), 'occurrence');
    expect(await other.textContent('[data-test="cancelled"]')).toContain(
      'by the occurrence of 2026-12-02 04:30:00 UTC (overlap policy cancelOther)',
    );
  });

  it('folds a long error to its first line, and unfolds it on a click', async () => {
    const p = await open(occurrenceAt(FAILED_TIME), 'occurrence');
    const fold = p.locator('[data-test="row-fields"] [data-test="error-fold"]');
    expect(await fold.locator('summary').textContent()).toBe('TimeoutError: the export API did not answer in 30 s');
    const full = fold.locator('pre');
    expect(await full.isVisible()).toBe(false);
    const before = await p.evaluate(() => (globalThis as unknown as ScrollGlobals).document.body.scrollHeight);
    await fold.locator('summary').click();
    expect(await full.isVisible()).toBe(true);
    expect(await full.textContent()).toContain('at exportPage (jobs/export.ts:42:13)');
    const after = await p.evaluate(() => (globalThis as unknown as ScrollGlobals).document.body.scrollHeight);
    // Folded, the 5,000 characters took no room: unfolded, they take at least a few lines more.
    expect(after).toBeGreaterThan(before + 50);
  });

  it('writes times in ISO UTC, 24 hours, the From and To inputs included, in a 12-hour locale and another zone', async () => {
    const p = await open(weeklyDay, 'timeline', { locale: 'en-US', timezoneId: 'America/New_York' });
    expect(await p.inputValue('input[name="from"]')).toBe('2026-12-01 08:00:00');
    expect(await p.inputValue('input[name="to"]')).toBe('2026-12-02 10:00:00');
    expect(await p.textContent('main')).not.toMatch(/\b(AM|PM)\b/);
    await p.fill('input[name="from"]', '2026-12-01 20:00:00');
    await p.click('form.range-form button[type="submit"]');
    await p.waitForFunction(() => (globalThis as unknown as ScrollGlobals).location.hash.includes('T20%3A00'));
    expect(hashOf(p)).toContain('from=2026-12-01T20:00:00.000Z');
    // A locale's own form is refused, not misread.
    await p.fill('input[name="to"]', '12/02/2026, 10:00:00 AM');
    expect(await p.isDisabled('form.range-form button[type="submit"]')).toBe(true);
  });
});

const occurrenceAt = (time: string) => `#/occurrence/weekly-export/${encodeURIComponent(time)}`;

/** What the predicates above read in the browser. */
interface ScrollGlobals {
  readonly document: { readonly body: { readonly scrollHeight: number } };
  readonly location: { readonly hash: string };
}
