/**
 * The console's benchmark (docs/benchmarks.md, "Console"): a job's timeline with 10,000 occurrences in range, in
 * Debian's Chromium, against the real `occurrences console` process on moto.
 *
 * - **Render time**: from the navigation's start to the page's `timeline-drawn` mark with every bar (the page marks
 *   each time it draws the canvas; its startTime counts from the navigation), the median of `--runs` fresh page loads
 *   after one warm-up. The **anchor** is the same page and job over a range of 100 occurrences, measured the same way
 *   in the same run: the ratio says what the 10,000 cost over the page's fixed cost (the bundle, the config and job
 *   requests), whatever the machine. The time the page's own /api/timeline fetches took is printed beside it.
 * - **DynamoDB per page view**: the requests the console process sent (counted by a proxy between it and moto, as
 *   AWS would bill them) and the read units: what the server reported (`readUnits` of each /api answer) and what
 *   DynamoDB (moto) said in ConsumedCapacity, for the jobs page, the timeline of 10,000 and one occurrence's page.
 *
 *   npm run bench:console [-- --runs 5] [--occurrences 10000] [--out bench/console-results.json]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../scripts/chromium';
import { startMotoServer } from '../testing/local/moto-server';
import { type RunningConsole, startConsole } from './console-process';
import { type SeededJob, seedJobHistory } from './console-seed';
import { CountingProxy, countByOperation } from './counting-proxy';

/** The anchor's range: the newest 100 of the seeded occurrences. */
const ANCHOR_BARS = 100;
const MINUTE = 60_000;

interface Options {
  readonly runs: number;
  readonly occurrences: number;
  readonly out?: string;
}

/** The page's mark, as the browser has it (this file is compiled without the DOM's types). */
interface DrawnMark {
  readonly startTime: number;
  readonly detail?: { readonly bars?: number };
}
/** A resource timing entry of the page, as the browser has it. */
interface Fetched {
  readonly startTime: number;
  readonly responseEnd: number;
}

/** One page load of a timeline. */
export interface TimelineLoad {
  /** Navigation start to the `timeline-drawn` mark that drew every bar, ms. */
  readonly drawnMs: number;
  /** Bars in that mark. */
  readonly bars: number;
  /** Navigation start to the first `timeline-drawn` mark with any bar (the first page of the range drawn), ms. */
  readonly firstDrawnMs: number;
  /** Bars in that first mark. */
  readonly firstBars: number;
  /** First /api/timeline request's start to the last one's end, ms (the page's JSON fetches). */
  readonly fetchMs: number;
  /** The last /api/timeline answer's end to the mark: the page's own work on the bars after they arrived, ms. */
  readonly afterFetchMs: number;
  /** /api/timeline requests the page made. */
  readonly timelineRequests: number;
}

/** What one page view cost in DynamoDB and the console's other AWS calls. */
export interface PageViewCost {
  readonly page: string;
  /** DynamoDB requests the console process sent, by operation. */
  readonly dynamodb: Record<string, number>;
  readonly dynamodbRequests: number;
  /** Read units the server reported in its answers (`readUnits`). */
  readonly reportedReadUnits: number;
  /** Capacity units DynamoDB (moto) reported in ConsumedCapacity, when the console asked for them. */
  readonly consumedCapacityUnits: number | undefined;
  /** The read units DynamoDB would bill for those requests, modelled from the items read (counting-proxy.ts). */
  readonly modelledReadUnits: number;
  /** The other AWS requests (Scheduler, ...), by service and operation. */
  readonly other: Record<string, number>;
  /** The console's /api requests the page made. */
  readonly apiRequests: readonly string[];
}

function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      runs: { type: 'string', default: '5' },
      occurrences: { type: 'string', default: '10000' },
      out: { type: 'string' },
    },
  });
  const whole = (name: string, value: string) => {
    if (!/^\d+$/.test(value) || Number(value) < 1) throw new Error(`--${name} must be a whole number, got ${value}`);
    return Number(value);
  };
  return { runs: whole('runs', values.runs), occurrences: whole('occurrences', values.occurrences), out: values.out };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function timelineHash(job: SeededJob, from: string): string {
  return `#/job/${encodeURIComponent(job.jobId)}?${new URLSearchParams({ from, to: job.to })}`;
}

/** Loads the timeline in a fresh page and waits for the mark that drew `bars` bars. */
async function loadTimeline(
  context: BrowserContext,
  origin: string,
  hash: string,
  bars: number,
): Promise<TimelineLoad> {
  const page = await context.newPage();
  try {
    await page.goto(`${origin}/${hash}`);
    const handle = await page.waitForFunction(
      (want) => {
        const mark = performance
          .getEntriesByName('timeline-drawn')
          .find((m) => (m as unknown as DrawnMark).detail?.bars === want) as unknown as DrawnMark | undefined;
        if (mark === undefined) return undefined;
        const first = performance
          .getEntriesByName('timeline-drawn')
          .find((m) => ((m as unknown as DrawnMark).detail?.bars ?? 0) > 0) as unknown as DrawnMark;
        const fetches = performance
          .getEntriesByType('resource')
          .filter((r) => r.name.includes('/api/timeline')) as unknown as Fetched[];
        const start = Math.min(...fetches.map((f) => f.startTime));
        const end = Math.max(...fetches.map((f) => f.responseEnd));
        return {
          drawnMs: mark.startTime,
          bars: mark.detail?.bars ?? 0,
          firstDrawnMs: first.startTime,
          firstBars: first.detail?.bars ?? 0,
          fetchMs: end - start,
          afterFetchMs: mark.startTime - end,
          timelineRequests: fetches.length,
        };
      },
      bars,
      { timeout: 180_000, polling: 100 },
    );
    return (await handle.jsonValue()) as TimelineLoad;
  } finally {
    await page.close();
  }
}

async function measureRender(
  context: BrowserContext,
  origin: string,
  hash: string,
  bars: number,
  runs: number,
): Promise<TimelineLoad[]> {
  await loadTimeline(context, origin, hash, bars); // warm-up: the server's first answers, the browser's caches
  const loads: TimelineLoad[] = [];
  for (let i = 0; i < runs; i++) loads.push(await loadTimeline(context, origin, hash, bars));
  return loads;
}

/** Opens a page, waits until it rendered its data and the network is quiet, and returns what it cost. */
async function pageView(
  context: BrowserContext,
  proxy: CountingProxy,
  origin: string,
  name: string,
  hash: string,
  ready: (page: Page) => Promise<unknown>,
): Promise<PageViewCost> {
  const page = await context.newPage();
  const answers: Promise<number>[] = [];
  const apiRequests: string[] = [];
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (!url.pathname.startsWith('/api/')) return;
    apiRequests.push(`${url.pathname}${url.search}`);
    answers.push(
      response.json().then(
        (body: { readUnits?: number }) => body.readUnits ?? 0,
        () => 0,
      ),
    );
  });
  proxy.take();
  proxy.modelReads = true;
  try {
    await page.goto(`${origin}/${hash}`);
    await ready(page);
    await page.waitForLoadState('networkidle');
  } finally {
    proxy.modelReads = false;
    await page.close();
  }
  const requests = proxy.take();
  const dynamo = requests.filter((r) => r.service === 'DynamoDB');
  const units = dynamo.filter((r) => r.capacityUnits !== undefined);
  return {
    page: name,
    dynamodb: countByOperation(dynamo),
    dynamodbRequests: dynamo.length,
    reportedReadUnits: (await Promise.all(answers)).reduce((a, b) => a + b, 0),
    consumedCapacityUnits: units.length === 0 ? undefined : units.reduce((s, r) => s + (r.capacityUnits ?? 0), 0),
    modelledReadUnits: dynamo.reduce((s, r) => s + (r.modelledReadUnits ?? 0), 0),
    other: countByOperation(requests.filter((r) => r.service !== 'DynamoDB')),
    apiRequests,
  };
}

async function signIn(browser: Browser, target: RunningConsole): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(target.url); // sets the session cookie, redirects to /
  await page.close();
  return context;
}

const ms = (value: number) => `${Math.round(value)} ms`;

function printRender(big: TimelineLoad[], anchor: TimelineLoad[], occurrences: number): void {
  const row = (what: string, loads: TimelineLoad[]) =>
    `| ${what} | ${loads.map((l) => Math.round(l.drawnMs)).join(', ')} | ${ms(median(loads.map((l) => l.drawnMs)))} | ${ms(median(loads.map((l) => l.fetchMs)))} (${loads[0]?.timelineRequests} requests) | ${ms(median(loads.map((l) => l.afterFetchMs)))} | ${ms(median(loads.map((l) => l.firstDrawnMs)))} (${loads[0]?.firstBars} bars) |`;
  console.log(`\nTime to first render of a timeline, navigation start to the timeline-drawn mark with every bar:`);
  console.log(
    '| range | runs (ms) | median | its /api/timeline fetches, median | last answer to drawn, median | first bars drawn, median |',
  );
  console.log('|---|---|---|---|---|---|');
  console.log(row(`${occurrences.toLocaleString('en')} occurrences`, big));
  console.log(row(`anchor: ${ANCHOR_BARS} occurrences`, anchor));
  const ratio = median(big.map((l) => l.drawnMs)) / median(anchor.map((l) => l.drawnMs));
  console.log(`ratio to the anchor: ${ratio.toFixed(2)}`);
}

function printCosts(costs: readonly PageViewCost[]): void {
  console.log('\nDynamoDB per page view (requests counted between the console and moto; read units):');
  console.log(
    '| page | DynamoDB requests | by operation | read units (server) | read units (modelled) | ConsumedCapacity (moto) | other AWS requests | /api requests |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const c of costs) {
    const ops = Object.entries(c.dynamodb)
      .map(([op, n]) => `${n} ${op.replace('DynamoDB.', '')}`)
      .join(', ');
    const other =
      Object.entries(c.other)
        .map(([op, n]) => `${n} ${op}`)
        .join(', ') || 'none';
    const consumed = c.consumedCapacityUnits === undefined ? 'not reported' : String(c.consumedCapacityUnits);
    console.log(
      `| ${c.page} | ${c.dynamodbRequests} | ${ops} | ${c.reportedReadUnits} | ${c.modelledReadUnits} | ${consumed} | ${other} | ${c.apiRequests.length} |`,
    );
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const started = performance.now();
  const moto = await startMotoServer();
  const proxy = await CountingProxy.start(moto.endpoint);
  let target: RunningConsole | undefined;
  let browser: Browser | undefined;
  try {
    console.log(`seeding ${options.occurrences} occurrences of one per-minute job on moto (BatchWriteItem)...`);
    const job = await seedJobHistory(moto.endpoint, proxy.endpoint, options.occurrences, Date.now());
    target = await startConsole(['console', '--local', job.localFile, '--port', '0']);
    browser = await launchBrowser();
    const context = await signIn(browser, target);
    const anchorFrom = new Date(Date.parse(job.to) - ANCHOR_BARS * MINUTE).toISOString();
    const bigHash = timelineHash(job, job.from);
    const anchorHash = timelineHash(job, anchorFrom);

    console.log(`rendering: ${options.runs} runs of each after a warm-up...`);
    const big = await measureRender(context, target.origin, bigHash, options.occurrences, options.runs);
    const anchor = await measureRender(context, target.origin, anchorHash, ANCHOR_BARS, options.runs);
    printRender(big, anchor, options.occurrences);

    const newest = job.times[job.times.length - 1];
    const costs = [
      await pageView(context, proxy, target.origin, 'jobs', '#/', (p) => p.waitForSelector('body[data-ready="jobs"]')),
      await pageView(
        context,
        proxy,
        target.origin,
        `timeline of ${options.occurrences.toLocaleString('en')}`,
        bigHash,
        (p) =>
          p.waitForFunction(
            (want) =>
              performance
                .getEntriesByName('timeline-drawn')
                .some((m) => (m as unknown as DrawnMark).detail?.bars === want),
            options.occurrences,
            { timeout: 180_000 },
          ),
      ),
      await pageView(
        context,
        proxy,
        target.origin,
        'occurrence',
        `#/occurrence/${encodeURIComponent(job.jobId)}/${encodeURIComponent(newest)}`,
        (p) => p.waitForSelector('body[data-ready="occurrence"]'),
      ),
    ];
    printCosts(costs);
    const ratio = median(big.map((l) => l.drawnMs)) / median(anchor.map((l) => l.drawnMs));
    if (options.out !== undefined) {
      const results = { date: new Date().toISOString(), options, render: { big, anchor, ratio }, pageViews: costs };
      writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
    }
    console.log(`\nthe bench took ${Math.round((performance.now() - started) / 1000)} s.`);
  } finally {
    await browser?.close();
    await target?.stop();
    await proxy.stop();
    await moto.stop();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? `${error.name}: ${error.message}` : error);
    process.exit(1);
  });
}
