/**
 * The console end to end, as an operator uses it: this repository's sample app synthesized (`cdk synth`) and run on
 * moto by runLocally with `keep: true` (what `npm run local -- --keep` leaves running: the schedules in moto's
 * Scheduler, the workers polling), the real `occurrences console --local <file> --port 0` command as a process of its
 * own, and Debian's Chromium driving the page. The checks read what the actions changed from the table and from
 * Scheduler, not from the page.
 *
 * Screenshots of the pages go to docs/images/console-*.png with UPDATE_SCREENSHOTS=1, else to a temporary folder.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { GetScheduleCommand, type GetScheduleCommandOutput, SchedulerClient } from '@aws-sdk/client-scheduler';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../../bench/console-process';
import { DynamoJobStateStore } from '../../functions/aws/job-state-store';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { iso, isoSeconds, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { scheduleTimesBetween } from '../../functions/protocol/schedule-times';
import { launchBrowser } from '../../scripts/chromium';
import { SAMPLE_CUSTOMER_SCHEDULES } from '../../scripts/local';
import { type KeptLocalRun, runLocally } from '../../testing';
import { writeLocalRunFile } from '../../testing/local/keep';
import { LOCAL_REGION, localClients } from '../../testing/local/local-aws';

const ROOT = path.resolve(__dirname, '..', '..');
const DIGEST = 'occurrence-digest';
const EXPORT = 'ndjson-export';
const CUSTOMER = 'customer-report';
const DAY = 86_400_000;
const VIEWPORT = { width: 1280, height: 800 };
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? path.join(ROOT, 'docs', 'images')
    : mkdtempSync(path.join(tmpdir(), 'console-screenshots-'));

const work = mkdtempSync(path.join(tmpdir(), 'console-e2e-'));
const assemblyDir = path.join(work, 'cdk.out');
const localFile = path.join(work, 'local-run.json');
let run: KeptLocalRun;
let consoleProcess: RunningConsole;
let readOnlyProcess: RunningConsole;
let browser: Browser;
let context: BrowserContext;
/** The FAILED occurrence the retry test reopens (see failedOccurrence). */
let failedTime: string;
/** The late occurrence the attention test records and the cancel test cancels. */
let lateTime: string;

beforeAll(async () => {
  await promisify(execFile)('npx', ['cdk', 'synth', '--quiet', '-o', assemblyDir], {
    cwd: ROOT,
    env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
  });
  // Each job's next three occurrences fired at once, as `npm run local` fires them: under the sample's overlap policy
  // (skip) one runs and the others are SKIPPED, naming it. The export is cut to 2 MB so that it ends in seconds.
  run = await runLocally({
    assemblyDir,
    count: 3,
    fire: 'at-once',
    copies: 1,
    keep: true,
    environment: { [EXPORT]: { SAMPLE_EXPORT_BYTES: '2000000' } },
    // The sample's per-customer job: two schedules upserted as `npm run local` upserts them.
    runtimeSchedules: SAMPLE_CUSTOMER_SCHEDULES,
  });
  writeLocalRunFile(run, localFile);
  failedTime = await failedOccurrence();
  [consoleProcess, readOnlyProcess] = await Promise.all([
    startConsole(['console', '--local', localFile, '--port', '0']),
    startConsole(['console', '--local', localFile, '--port', '0', '--read-only']),
  ]);
  browser = await launchBrowser();
  context = await signedIn(consoleProcess);
  // Generous: a cold synth and the local run take minutes on a loaded two-core machine.
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([consoleProcess?.stop(), readOnlyProcess?.stop()]);
  await run?.stop();
  rmSync(work, { recursive: true, force: true });
  if (process.env.UPDATE_SCREENSHOTS !== '1') rmSync(SCREENSHOTS, { recursive: true, force: true });
});

/**
 * The sample's jobs do not fail, so the FAILED occurrence is left in the table by the store's own writes, as the
 * trigger and a worker whose last attempt threw leave it: recorded PENDING (create), claimed, failed. The digest's
 * last fire time before now, before the run's own occurrences (its next ones).
 */
async function failedOccurrence(): Promise<string> {
  const store = new DynamoOccurrenceStore(localClients(run.resources.endpoint).documents, run.resources.tableName);
  const now = Date.now();
  // The digest's fire time of the last day, from its schedule in moto's Scheduler (06:00 Berlin time).
  const deployed = await deployedSchedule(DIGEST);
  const spec = { schedule: deployed.ScheduleExpression ?? '', timeZone: deployed.ScheduleExpressionTimezone };
  const [fired] = scheduleTimesBetween(spec, new Date(now - DAY), new Date(now), 1);
  const scheduledTime = isoSeconds(fired.getTime());
  const key = { jobId: DIGEST, scheduledTime };
  // Recorded a minute and a half ago, claimed ten seconds later, failed after twenty seconds of work.
  const created = await store.create({
    ...key,
    status: OccurrenceStatus.PENDING,
    attempt: 0,
    worker: DIGEST,
    createdAt: iso(now - 90_000),
    deadlineAt: iso(now + DAY),
    ttl: Math.floor(now / 1000) + 30 * 86_400,
  } as Occurrence);
  expect(created.created).toBe(true);
  const leaseId = 'e2e-lease';
  const claim = { leaseId, owner: 'e2e worker', now: now - 80_000, leaseExpiresAt: now, maxAttempts: 1 };
  expect((await store.claim(key, claim)).claimed).toBe(true);
  const error = 'Error: the digest could not read the table (left by the e2e test)';
  await store.fail({ key, leaseId, attempt: 1 }, error, now - 60_000);
  return scheduledTime;
}

/** A browser context with the console's session cookie: the printed address opened once, as an operator does. */
async function signedIn(target: RunningConsole): Promise<BrowserContext> {
  const signed = await browser.newContext({ viewport: VIEWPORT });
  const page = await signed.newPage();
  const response = await page.goto(target.url);
  // The token leaves the address bar: GET /?token= sets the cookie and redirects to /.
  expect(response?.ok()).toBe(true);
  expect(page.url()).toBe(`${target.origin}/`);
  await page.close();
  return signed;
}

/** The session a signed-in context holds: the value of its console cookie (a script sends it as a Bearer). */
async function sessionOf(on: BrowserContext, target: RunningConsole): Promise<string> {
  const cookies = (await on.cookies(target.origin)).filter((c) => c.name.startsWith('occurrences_console_'));
  expect(cookies).toHaveLength(1);
  expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
  expect(cookies[0].name).toMatch(/^occurrences_console_[0-9a-f]{16}$/);
  return cookies[0].value;
}

/** Opens `hash` (a page route) and waits until that page has rendered its data. */
async function open(on: BrowserContext, target: RunningConsole, hash: string, ready: string): Promise<Page> {
  const page = await on.newPage();
  await page.goto(`${target.origin}/${hash}`);
  // The page's error, when it shows one instead, fails the test with its text.
  await page.waitForSelector(`body[data-ready="${ready}"], [data-test="error"]`, { timeout: 30_000 });
  const error = page.locator('[data-test="error"]');
  if ((await error.count()) > 0) expect.fail(`the ${ready} page showed an error: ${await error.first().textContent()}`);
  return page;
}

/** A week around now: the FAILED row of yesterday, the run's own occurrences and the next fire times ahead. */
function timelineHash(jobId: string): string {
  const now = Date.now();
  const range = new URLSearchParams({ from: iso(now - 2 * DAY), to: iso(now + 5 * DAY) });
  return `#/job/${encodeURIComponent(jobId)}?${range}`;
}

function occurrenceHash(jobId: string, scheduledTime: string): string {
  return `#/occurrence/${encodeURIComponent(jobId)}/${encodeURIComponent(scheduledTime)}`;
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
}

async function deployedSchedule(jobId: string): Promise<GetScheduleCommandOutput> {
  const scheduler = new SchedulerClient({
    endpoint: run.resources.endpoint,
    region: LOCAL_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    return await scheduler.send(new GetScheduleCommand({ GroupName: run.resources.scheduleGroupName, Name: jobId }));
  } finally {
    scheduler.destroy();
  }
}

/** The job's schedule's state in Scheduler: ENABLED or DISABLED. */
async function scheduleState(jobId: string): Promise<string | undefined> {
  return (await deployedSchedule(jobId)).State;
}

/**
 * Fills the note when given, confirms the action the page's dialog describes, and returns the dialog's sentence and the
 * outcome it showed once the server answered; an error the dialog shows fails the test with its text.
 */
async function confirmAction(page: Page, note?: string): Promise<{ said: string; result: string }> {
  const dialog = page.locator('dialog[data-test="confirm"]');
  await dialog.waitFor({ state: 'visible' });
  if (note !== undefined) await dialog.locator('textarea[name="note"]').fill(note);
  const said = (await dialog.locator('[data-test="confirm-sentence"]').textContent()) ?? '';
  await dialog.locator('button[data-test="confirm-action"]').click();
  const answered = dialog.locator('[data-test="action-result"] strong, [data-test="error"]');
  await answered.first().waitFor({ state: 'visible', timeout: 30_000 });
  const error = await dialog.locator('[data-test="error"]').count();
  if (error > 0) expect.fail(`the action failed: ${await dialog.locator('[data-test="error"]').textContent()}`);
  return { said, result: (await dialog.locator('[data-test="action-result"]').textContent()) ?? '' };
}

/** GET /api/jobs of the console with this Host header (fetch does not let a caller set Host). */
function statusWithHost(host: string, headers: Readonly<Record<string, string>>): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: consoleProcess.port, path: '/api/jobs', headers: { ...headers, Host: host } },
      (res) => {
        res.resume();
        resolve(res.statusCode);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** An action through the console's API, as the page posts it: the session as a Bearer, its own Origin. */
async function consoleAction(action: string, body: object): Promise<Response> {
  const session = await sessionOf(context, consoleProcess);
  return fetch(`${consoleProcess.origin}/api/actions/${action}`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${session}`,
      Origin: consoleProcess.origin,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify(body),
  });
}

/** Polls `read` (the table, Scheduler) until `done` holds of it, at most 30 s. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 120 && !done(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    value = await read();
  }
  return value;
}

describe('the console against a kept local run of the sample app, in Chromium', () => {
  it("the jobs page lists the sample's jobs", async () => {
    const page = await open(context, consoleProcess, '#/jobs', 'jobs');
    await expect(page.locator(`tr[data-job="${DIGEST}"]`).count()).resolves.toBe(1);
    await expect(page.locator(`tr[data-job="${EXPORT}"]`).count()).resolves.toBe(1);
    // Its schedule in words and time zone, and the overlap policy its deployed schedule names (the sample's default).
    await expect(page.locator(`tr[data-job="${DIGEST}"]`).textContent()).resolves.toMatch(
      /At 06:00.*Europe\/Berlin.*skip/s,
    );
    await screenshot(page, 'console-jobs');
    await page.close();
  });

  it('opens on the attention view: FAILED, late, RUNNING (resumable, with progress), BUFFERED, then the paused job, in that order', async () => {
    const store = new DynamoOccurrenceStore(localClients(run.resources.endpoint).documents, run.resources.tableName);
    const now = Date.now();
    const recorded = (jobId: string, agoMs: number, status: OccurrenceStatus = OccurrenceStatus.PENDING) => ({
      jobId,
      scheduledTime: isoSeconds(Math.floor((now - agoMs) / 1000) * 1000),
      status,
      attempt: 0,
      worker: jobId,
      createdAt: iso(now - agoMs),
      deadlineAt: iso(now + DAY),
      ttl: Math.floor(now / 1000) + 30 * 86_400,
    });
    // Never enqueued: recorded 20 minutes ago, and not started (past the expected start of a job without lateAfter).
    const late = recorded(EXPORT, 20 * 60_000);
    expect((await store.create(late as Occurrence)).created).toBe(true);
    lateTime = late.scheduledTime;
    // The resumable export, claimed 40 minutes ago by a worker still at it: 60 % done, its last heartbeat 20 s ago.
    const running = recorded(EXPORT, 40 * 60_000);
    expect((await store.create(running as Occurrence)).created).toBe(true);
    const claim = {
      leaseId: 'e2e-running',
      owner: 'e2e worker',
      now: now - 40 * 60_000,
      leaseExpiresAt: now + DAY,
      maxAttempts: 3,
    };
    expect((await store.claim(running, claim)).claimed).toBe(true);
    await localClients(run.resources.endpoint).documents.send(
      new UpdateCommand({
        TableName: run.resources.tableName,
        Key: { jobId: EXPORT, scheduledTime: running.scheduledTime },
        UpdateExpression:
          'SET #progress = :progress, #runStartedAt = :started, #segment = :segment, #heartbeatAt = :beat',
        ConditionExpression: '#leaseId = :lease',
        ExpressionAttributeNames: {
          '#progress': 'progress',
          '#runStartedAt': 'runStartedAt',
          '#segment': 'segment',
          '#heartbeatAt': 'heartbeatAt',
          '#leaseId': 'leaseId',
        },
        ExpressionAttributeValues: {
          ':progress': { done: 60, total: 100, at: iso(now - 20_000) },
          ':started': iso(now - 40 * 60_000),
          ':segment': 1,
          ':beat': iso(now - 20_000),
          ':lease': 'e2e-running',
        },
      }),
    );
    // Waiting for the run before it, by its overlap policy; two minutes old.
    const buffered = recorded(DIGEST, 2 * 60_000, OccurrenceStatus.BUFFERED);
    expect((await store.create(buffered as Occurrence)).created).toBe(true);
    // The per-customer job paused through the console's own action, with why.
    const note = 'e2e: hold the customer reports during the migration';
    expect((await consoleAction('pause', { jobId: CUSTOMER, note })).status).toBe(200);
    try {
      const page = await open(context, consoleProcess, '', 'attention');
      const kinds = await page.$$eval('tr[data-attention]', (rows) =>
        rows.map((r) => `${r.getAttribute('data-attention')} ${r.getAttribute('data-job')}`),
      );
      expect(kinds).toEqual([
        `failed ${DIGEST}`,
        `late ${EXPORT}`,
        `running ${EXPORT}`,
        `buffered ${DIGEST}`,
        `paused ${CUSTOMER}`,
      ]);
      await expect(page.locator('tr[data-attention="failed"]').textContent()).resolves.toContain(
        'the digest could not read the table',
      );
      await expect(page.getAttribute('tr[data-attention="failed"] a', 'href')).resolves.toBe(
        `#/occurrence/${DIGEST}/${encodeURIComponent(failedTime)}`,
      );
      const runningText = await page.locator('tr[data-attention="running"]').textContent();
      expect(runningText).toContain('60 of 100 (60 %)');
      expect(runningText).toMatch(/claimed 40 min/);
      const pausedText = await page.locator('tr[data-attention="paused"]').textContent();
      expect(pausedText).toMatch(/by .* via console/);
      expect(pausedText).toContain(note);
      expect(pausedText).toMatch(/since \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{3})? UTC/);
      await screenshot(page, 'console-attention');
      await page.close();
    } finally {
      expect((await consoleAction('resume', { jobId: CUSTOMER })).status).toBe(200);
    }
  });

  it('cancelled with a note on its page, an occurrence says who cancelled it and why, and offers no retry', async () => {
    const page = await open(context, consoleProcess, occurrenceHash(EXPORT, lateTime), 'occurrence');
    await page.locator('button[data-action="cancel"]').click();
    const { result } = await confirmAction(page, 'e2e: superseded by the manual export');
    expect(result).toMatch(/cancel/i);
    await page.reload();
    await page.waitForSelector('body[data-ready="occurrence"]');
    await page.locator('[data-test="cancelled"]').waitFor();
    const cancelled = await page.locator('[data-test="cancelled"]').textContent();
    expect(cancelled).toMatch(/Cancelled by .* via console/);
    await expect(page.locator('[data-test="cancel-note"]').textContent()).resolves.toBe(
      'e2e: superseded by the manual export',
    );
    // The library refuses to retry a CANCELLED occurrence: the page offers none.
    await expect(page.locator('button[data-action="retry"]').count()).resolves.toBe(0);
    await page.close();
    // Nor on a SUCCEEDED one of the run.
    const succeeded = run.rows.find((r) => r.jobId === DIGEST && r.status === 'SUCCEEDED');
    expect(succeeded).toBeDefined();
    const done = await open(
      context,
      consoleProcess,
      occurrenceHash(DIGEST, succeeded?.scheduledTime ?? ''),
      'occurrence',
    );
    await expect(done.locator('button[data-action="retry"]').count()).resolves.toBe(0);
    await done.close();
  });

  it('the all-jobs timeline puts every job on one axis, the per-customer job as one row that opens into its keys', async () => {
    const page = await open(context, consoleProcess, '#/timeline?window=7d', 'all-timeline');
    for (const job of [DIGEST, EXPORT, CUSTOMER])
      await expect(page.locator(`.at-row[data-row="${job}"]`).count()).resolves.toBe(1);
    // The digest's FAILED, BUFFERED and SKIPPED and the run's occurrences in a week: each row says its counts in words.
    await expect(page.getAttribute(`.at-row[data-row="${DIGEST}"] canvas`, 'aria-label')).resolves.toMatch(
      /1 failed.*1 buffered/,
    );
    await expect(page.locator(`.at-row[data-row="${CUSTOMER}"]`).textContent()).resolves.toMatch(/2 keys/);
    await page.locator(`.at-row[data-row="${CUSTOMER}"] button[aria-expanded]`).click();
    await page.locator('.at-row[data-schedule="customer-42"]').waitFor({ timeout: 15_000 });
    await expect(page.locator('.at-row[data-schedule="customer-77"]').count()).resolves.toBe(1);
    await screenshot(page, 'console-timeline');
    await page.close();
  });

  it('a timeline shows a SKIPPED occurrence with its reason and the occurrence it yielded to', async () => {
    const skipped = run.rows.find((r) => r.jobId === DIGEST && r.status === 'SKIPPED');
    const yieldedTo = skipped?.row?.yieldedTo as string;
    expect(skipped?.row?.skipReason).toBe('overlap');
    const page = await open(context, consoleProcess, timelineHash(DIGEST), 'timeline');
    const row = page.locator(`tr[data-occurrence="${skipped?.scheduledTime}"]`);
    await expect(row.getAttribute('data-status')).resolves.toBe('SKIPPED');
    await expect(row.getAttribute('data-skip-reason')).resolves.toBe('overlap');
    const text = await row.textContent();
    expect(text).toMatch(/overlap/);
    expect(text).toContain(`yielded to ${yieldedTo.slice(0, 10)} ${yieldedTo.slice(11, 19)} UTC`);
    await expect(page.locator('canvas[data-test="timeline"]').count()).resolves.toBe(1);
    const drawn = await page.evaluate(() => performance.getEntriesByName('timeline-drawn').length);
    expect(drawn).toBeGreaterThan(0);
    await screenshot(page, 'console-job-timeline');
    await page.close();
  });

  it('the per-customer job shows its keys; Run now on its page asks for a key and runs that schedule', async () => {
    const jobs = await open(context, consoleProcess, '#/jobs', 'jobs');
    // The keys are listed under the job once shown and their page of the registry has loaded.
    await jobs.locator(`tr[data-job="${CUSTOMER}"] button[aria-expanded]`).click();
    await jobs.locator('tr[data-schedule="customer-42"]').waitFor({ timeout: 15_000 });
    await expect(jobs.locator('tr[data-schedule="customer-77"]').count()).resolves.toBe(1);
    await jobs.close();
    const page = await open(context, consoleProcess, timelineHash(CUSTOMER), 'timeline');
    await page.locator('button[data-action="run"]').click();
    const dialog = page.locator('dialog[data-test="confirm"]');
    await dialog.waitFor({ state: 'visible' });
    // No key yet: the action cannot be confirmed.
    await expect(dialog.locator('button[data-test="confirm-action"]').isDisabled()).resolves.toBe(true);
    await dialog.locator('input[data-field="scheduleKey"]').fill('customer-77');
    const { result } = await confirmAction(page);
    expect(result).toMatch(/customer-report#customer-77 .* recorded and enqueued/);
    const recorded = consoleProcess.audit().find((a) => a.action === 'run' && a.outcome === 'recorded');
    expect(recorded).toBeDefined();
    await page.close();
  });

  it('retry of a FAILED occurrence reopens its row, recorded as the operator', async () => {
    const page = await open(context, consoleProcess, occurrenceHash(DIGEST, failedTime), 'occurrence');
    await expect(page.locator('body').textContent()).resolves.toContain('the digest could not read the table');
    await screenshot(page, 'console-occurrence');
    await page.locator('button[data-action="retry"]').click();
    const { result } = await confirmAction(page);
    expect(result).toMatch(/reopen/i);
    const store = new DynamoOccurrenceStore(localClients(run.resources.endpoint).documents, run.resources.tableName);
    const row = await eventually(
      () => store.get({ jobId: DIGEST, scheduledTime: failedTime }),
      (r) => r?.history?.some((h) => h.outcome === 'reopened') === true,
    );
    expect(row?.history?.map((h) => h.outcome).slice(0, 2)).toEqual(['failed', 'reopened']);
    expect(consoleProcess.audit()).toContainEqual(
      expect.objectContaining({ action: 'retry', outcome: 'reopened', by: expect.stringMatching(/via console/) }),
    );
    await page.close();
  });

  it("pause with a note disables the job's schedule and records who and why; resume enables it", async () => {
    const states = new DynamoJobStateStore(localClients(run.resources.endpoint).documents, run.resources.tableName);
    const page = await open(context, consoleProcess, timelineHash(EXPORT), 'timeline');
    await page.locator('button[data-action="pause"]').click();
    const paused = await confirmAction(page, 'e2e: hold the export during the migration');
    expect(paused.said).toMatch(/disable|pause/i);
    expect(await scheduleState(EXPORT)).toBe('DISABLED');
    const state = await states.read(EXPORT);
    expect(state?.pauseNote).toBe('e2e: hold the export during the migration');
    expect(state?.pausedBy).toMatch(/ via console/);

    await page.reload();
    await page.waitForSelector('body[data-ready="timeline"]');
    await page.locator('button[data-action="resume"]').click();
    await confirmAction(page);
    expect(await scheduleState(EXPORT)).toBe('ENABLED');
    expect((await states.read(EXPORT))?.pausedAt).toBeUndefined();
    expect(consoleProcess.audit().map((a) => a.action)).toEqual(expect.arrayContaining(['pause', 'resume']));
    await page.close();
  });

  it('--read-only shows no action and refuses a POST with 403', async () => {
    const readOnly = await signedIn(readOnlyProcess);
    const session = await sessionOf(readOnly, readOnlyProcess);
    for (const [hash, ready] of [
      ['#/jobs', 'jobs'],
      [timelineHash(DIGEST), 'timeline'],
      [occurrenceHash(DIGEST, failedTime), 'occurrence'],
    ]) {
      const page = await open(readOnly, readOnlyProcess, hash, ready);
      await expect(page.locator('button[data-action]').count()).resolves.toBe(0);
      await page.close();
    }
    await readOnly.close();
    const response = await fetch(`${readOnlyProcess.origin}/api/actions/pause`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${session}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ jobId: DIGEST, note: 'refused' }),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: expect.stringMatching(/--read-only/) });
    expect(await scheduleState(DIGEST)).toBe('ENABLED');
  });

  it('a request without the session is 401 and the token signs in once; a foreign Origin or Host is 403', async () => {
    const api = `${consoleProcess.origin}/api/jobs`;
    const page = await fetch(`${consoleProcess.origin}/`);
    expect(page.status).toBe(401);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('Console: http://127.0.0.1');
    expect((await fetch(api)).status).toBe(401);
    expect((await fetch(api, { headers: { Authorization: 'Bearer not-the-token' } })).status).toBe(401);
    const session = await sessionOf(context, consoleProcess);
    // The cookie carries a session id of its own, not the printed token, which died at its first use.
    expect(session).not.toBe(consoleProcess.token);
    expect((await fetch(api, { headers: { Authorization: `Bearer ${consoleProcess.token}` } })).status).toBe(401);
    const again = await fetch(consoleProcess.url, { redirect: 'manual' });
    expect(again.status).toBe(401);
    expect(await again.text()).toContain('used already');
    const bearer = { Authorization: `Bearer ${session}` };
    expect((await fetch(api, { headers: bearer })).status).toBe(200);
    expect((await fetch(api, { headers: { ...bearer, Origin: 'http://evil.example' } })).status).toBe(403);
    const post = await fetch(`${consoleProcess.origin}/api/actions/pause`, {
      method: 'POST',
      headers: { ...bearer, Origin: 'http://evil.example', 'Content-Type': 'application/json' },
      body: JSON.stringify({ jobId: DIGEST, note: 'cross-site' }),
    });
    expect(post.status).toBe(403);
    expect(await scheduleState(DIGEST)).toBe('ENABLED');
    // A name that resolves to 127.0.0.1 in a hostile page (DNS rebinding) arrives with its own Host.
    expect(await statusWithHost(`evil.example:${consoleProcess.port}`, bearer)).toBe(403);
    expect(await statusWithHost(`localhost:${consoleProcess.port}`, bearer)).toBe(200);
  });
});
