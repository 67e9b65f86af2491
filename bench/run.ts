/**
 * `npm run bench`: starts moto, measures figures 1, 2, 3 and 5 of the benchmarks (docs/benchmarks.md), prints them
 * as tables and writes bench/results.json. Figure 4 (cold load, callgrind) is bench/cold-load.ts and the partition
 * model of figure 5 is bench/partition-model.ts; both also print here.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { localClients } from '../testing/local/local-aws';
import { BenchSession } from './bench-session';
import { billFigure, occurrenceFigures, RETENTION_DAYS, reconcilerUsdPerMillion, stackCases } from './bill-figure';
import { formatBulkCreate, measureBulkCreate } from './bulk-create';
import { projected } from './capacity';
import { STATUS_INDEX } from './capacity-ledger';
import {
  type ColdLoadFigures,
  formatTable as formatColdLoad,
  measureColdLoad,
  ValgrindMissingError,
} from './cold-load';
import {
  alternativeModels,
  costPerMillion,
  type MeasuredHappyPath,
  type OccurrenceUsage,
  storagePerMillion,
  totalPerMillion,
} from './cost-model';
import { measureDeployedRuntime } from './emitted-metrics';
import {
  attemptsWithinOneWriteUnit,
  capacityDifference,
  difference,
  itemGrowth,
  lastItem,
  measuredMedians,
  scale,
  usageOf,
} from './figures';
import { type GeneratedInputs, RESULTS_FILE, writeGeneratedDocs } from './generated-docs';
import { itemSize } from './item-size';
import { LAMBDA_TIME_MODEL } from './lambda-time';
import { formatPartitionModel, partitionModel } from './partition-model';
import { benchSettings, type PathResult, runOccurrences, runReconcilerRequeue } from './paths';
import { dollars, PRICES } from './prices';
import { type DeployedReconcilerFigures, measureDeployedReconciler } from './reconciler-deployed';
import { formatKeyedPath, runtimeScheduleModels } from './runtime-schedules';
import { synthesize, templateCounts } from './stack-template';
import {
  printBill,
  printCapacity,
  printCost,
  printDeployedReconciler,
  printGrowth,
  printRequests,
  printTicks,
  type RequestRow,
} from './tables';
import { runTick, type TickResult } from './tick';

const FIGURES = ['requests', 'capacity', 'cost', 'bill', 'tick', 'cold-load', 'partition', 'schedules'] as const;
type Figure = (typeof FIGURES)[number];

export interface BenchOptions {
  readonly only: readonly Figure[];
  readonly ticks: readonly number[];
  readonly pollers: number;
  /** How long a tick of N may take to settle on moto: N × this many milliseconds, at least two minutes. */
  readonly tickMsPerOccurrence: number;
  readonly heartbeatJobMs: number;
  /** Callgrind runs per bundle for the cold load (the median is kept): 3, or 1 with --quick. */
  readonly coldLoadRuns: number;
  /** An earlier run's results whose measured ticks are kept beside this run's (a long tick run apart). */
  readonly ticksFrom?: string;
  /** Schedules the bulk creation on moto makes, per path (run-time schedules). */
  readonly bulkSchedules: number;
  readonly out: string;
}

function parseList(value: string): number[] {
  const list = value.split(',').map((v) => Number(v.trim()));
  if (list.some((n) => !Number.isInteger(n) || n <= 0))
    throw new InvalidArgumentError('a comma-separated list of positive integers');
  return list;
}

function parseFigures(value: string): Figure[] {
  const list = value.split(',').map((v) => v.trim()) as Figure[];
  const unknown = list.filter((f) => !FIGURES.includes(f));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`unknown figure(s) ${unknown.join(', ')}; one of ${FIGURES.join(', ')}`);
  return list;
}

export function parseOptions(argv: readonly string[]): BenchOptions {
  const program = new Command('bench')
    .description('Requests, capacity units, cost and a many-occurrence tick, against moto')
    .option('--quick', 'a tick of 10 only, a shorter heartbeat job, one callgrind run per bundle', false)
    .option('--only <figures>', `some of ${FIGURES.join(',')}`, parseFigures)
    .option('--ticks <list>', 'occurrences per tick (default 10,100; 1000 takes moto minutes)', parseList)
    .option('--pollers <n>', 'worker pollers in the tick', (v) => parseList(v)[0], 4)
    .option(
      '--tick-ms-per-occurrence <ms>',
      'how long a tick may take to settle, per occurrence (moto on two cores: about 1 s each at N = 1,000)',
      (v) => parseList(v)[0],
      2_000,
    )
    .option('--ticks-from <file>', "keep an earlier run's measured ticks (e.g. --only tick --ticks 1000 run apart)")
    .option('--bulk-schedules <n>', 'schedules the bulk creation on moto makes per path', (v) => parseList(v)[0])
    .option('--out <file>', 'where the results go', RESULTS_FILE)
    .exitOverride()
    .parse(argv, { from: 'user' });
  const o = program.opts<{
    quick: boolean;
    only?: Figure[];
    ticks?: number[];
    pollers: number;
    tickMsPerOccurrence: number;
    ticksFrom?: string;
    bulkSchedules?: number;
    out: string;
  }>();
  return {
    only: o.only ?? [...FIGURES],
    // N = 1,000 takes moto several minutes on two cores: ask for it with --ticks 10,100,1000.
    ticks: o.ticks ?? (o.quick ? [10] : [10, 100]),
    pollers: o.pollers,
    tickMsPerOccurrence: o.tickMsPerOccurrence,
    ticksFrom: o.ticksFrom,
    heartbeatJobMs: o.quick ? 5_000 : 9_000,
    coldLoadRuns: o.quick ? 1 : 3,
    bulkSchedules: o.bulkSchedules ?? (o.quick ? 100 : 500),
    out: o.out,
  };
}

export interface Paths {
  readonly happy: PathResult;
  readonly happyRuns: readonly PathResult[];
  readonly heartbeats: PathResult;
  readonly duplicate: PathResult;
  readonly lateDuplicate: PathResult;
  readonly failedOnce: PathResult;
  readonly reconciler: Awaited<ReturnType<typeof runReconcilerRequeue>>;
}

async function measurePaths(session: BenchSession, options: BenchOptions): Promise<Paths> {
  // The first occurrence pays for the clients' first connections; the figures use the ones after it.
  await runOccurrences(session, 'warm-up', {});
  // Three happy paths: their counts agree; the cost takes each handler's median duration over them.
  const happyRuns: PathResult[] = [];
  for (let i = 0; i < 3; i++) happyRuns.push(await runOccurrences(session, 'happy path', {}));
  const happy = happyRuns[happyRuns.length - 1];
  const counts = new Set(happyRuns.map((r) => JSON.stringify(Object.entries(r.requests.handler).sort())));
  if (counts.size > 1) console.warn(`the happy path's requests differ between runs: ${[...counts].join(' / ')}`);
  const heartbeats = await runOccurrences(session, 'happy path with heartbeats', { jobMs: options.heartbeatJobMs });
  const duplicate = await runOccurrences(session, 'duplicate trigger', { copies: 2 });
  const lateDuplicate = await runOccurrences(session, 'late duplicate trigger', { lateDuplicate: true });
  const failedOnce = await runOccurrences(session, 'one failed attempt', { failures: 1 });
  const reconciler = await runReconcilerRequeue(session);
  return { happy, happyRuns, heartbeats, duplicate, lateDuplicate, failedOnce, reconciler };
}

function requestRows(p: Paths): RequestRow[] {
  const beats =
    (p.heartbeats.requests.handler['DynamoDB.UpdateItem'] ?? 0) -
    (p.happy.requests.handler['DynamoDB.UpdateItem'] ?? 0);
  const rec = p.reconciler;
  return [
    {
      what: 'happy path (per occurrence)',
      handler: p.happy.requests.handler,
      eventSource: p.happy.requests['event-source'],
    },
    {
      what: `each heartbeat (${beats} in a ${benchSettings().heartbeatSeconds} s-heartbeat job)`,
      handler: scale(difference(p.heartbeats.requests.handler, p.happy.requests.handler), Math.max(1, beats)),
      eventSource: {},
    },
    {
      what: 'a duplicate trigger at once (row still PENDING)',
      handler: difference(p.duplicate.requests.handler, p.happy.requests.handler),
      eventSource: difference(p.duplicate.requests['event-source'], p.happy.requests['event-source']),
    },
    {
      what: 'a duplicate trigger after the occurrence finished',
      handler: difference(p.lateDuplicate.requests.handler, p.happy.requests.handler),
      eventSource: {},
    },
    {
      what: 'each failed attempt',
      handler: difference(p.failedOnce.requests.handler, p.happy.requests.handler),
      eventSource: difference(p.failedOnce.requests['event-source'], p.happy.requests['event-source']),
    },
    { what: 'reconciler run, nothing stuck (per run)', handler: rec.idleRun.requests.handler, eventSource: {} },
    {
      what: 'each re-enqueue by the reconciler',
      handler: difference(rec.requeueRun.requests.handler, rec.idleRun.requests.handler),
      eventSource: {},
    },
  ];
}

function heartbeatCount(p: Paths): number {
  return Math.max(
    1,
    (p.heartbeats.requests.handler['DynamoDB.UpdateItem'] ?? 0) -
      (p.happy.requests.handler['DynamoDB.UpdateItem'] ?? 0),
  );
}

function capacityRows(p: Paths) {
  return [
    { what: 'happy path (per occurrence)', units: p.happy.capacity },
    { what: 'each heartbeat', units: capacityDifference(p.heartbeats.capacity, p.happy.capacity, heartbeatCount(p)) },
    { what: 'a duplicate trigger at once', units: capacityDifference(p.duplicate.capacity, p.happy.capacity) },
    { what: 'a late duplicate trigger', units: capacityDifference(p.lateDuplicate.capacity, p.happy.capacity) },
    { what: 'each failed attempt', units: capacityDifference(p.failedOnce.capacity, p.happy.capacity) },
    { what: 'reconciler run, nothing stuck', units: p.reconciler.idleRun.capacity },
    {
      what: 'each re-enqueue',
      units: capacityDifference(p.reconciler.requeueRun.capacity, p.reconciler.idleRun.capacity),
    },
  ];
}

/**
 * Figure 4 and the partition model are other files' work: loaded when present, so the runner needs no change when
 * they land. Each must export the named function; its result goes into results.json as it is.
 */
/** The partition model of one tick at N = 10,000 and 100,000, printed and returned for results.json. */
function modelPartitions() {
  const rows = partitionModel();
  console.log('\nOne tick on DynamoDB, modelled (write units per second on the busiest partition):');
  console.log(formatPartitionModel(rows));
  return rows;
}

/**
 * Run-time schedules (issue 22): the models, with this run's measured durations and log bytes when the cost figure
 * ran, and the bulk creation on moto.
 */
async function runtimeSchedules(session: BenchSession, options: BenchOptions, measured?: MeasuredHappyPath) {
  const models = runtimeScheduleModels(measured);
  // The model's occurrence, run on moto: one key's schedule with the largest input, after a warm-up of its own.
  const keyed = { scheduleKey: '6f1c2a4e-8b3d-4c5e-9f7a-1b2c3d4e5f60', input: { report: 'x'.repeat(2_035) } };
  await runOccurrences(session, 'keyed warm-up', { keyed });
  const keyedPath = await runOccurrences(session, 'keyed happy path', { keyed });
  console.log(
    `\nOne occurrence of a keyed schedule with a 2,048-byte input, on moto (the model above: 20 WRU, 0.5 RRU):`,
  );
  console.log(formatKeyedPath(keyedPath));
  console.log(`\nBulk creation on moto (${options.bulkSchedules} schedules a path, 8 at once, 2 KB inputs):`);
  const clients = localClients(session.moto.endpoint);
  const bulk = await measureBulkCreate(clients, () => session.moto.reset(), {
    schedules: options.bulkSchedules,
    concurrency: 8,
    inputBytes: 2_048,
  });
  console.log(formatBulkCreate(bulk));
  return {
    models,
    keyedHappyPath: {
      requests: keyedPath.requests.handler,
      capacity: keyedPath.capacity,
      writes: keyedPath.writes.map(({ after: _after, ...w }) => w),
    },
    bulkCreate: bulk,
    measuredHappyPath: measured,
  };
}

/** The deployed reconciler over a seeded window of finished rows (about a minute on moto). */
async function deployedReconciler(session: BenchSession): Promise<DeployedReconcilerFigures> {
  console.log('\nThe reconciler at its deployed settings: seeding 100 hourly jobs of finished occurrences...');
  const figures = await measureDeployedReconciler(session);
  printDeployedReconciler(figures);
  return figures;
}

/** Figure 3's line for the reconciler's reads of finished rows, per occurrence over all the runs that see it. */
function reconcilerLine(r: DeployedReconcilerFigures) {
  return {
    item: 'reconciler (deployed settings)',
    quantity: r.readUnitsPerOccurrence,
    unit: 'RRU',
    usdPerMillion: reconcilerUsdPerMillion(r, PRICES),
  };
}

/** The happy path's finished row, as the table keeps it until its TTL (and its index entry, if it keeps one). */
function keptRow(p: Paths) {
  const final = lastItem(p.happy);
  const indexed = final?.[STATUS_INDEX.partitionKey] !== undefined;
  return {
    rowBytes: final ? itemSize(final) : 0,
    indexEntryBytes: final && indexed ? itemSize(projected(final, STATUS_INDEX)) : 0,
  };
}

/**
 * Figure 3 all in: the occurrence's requests, units and Lambda time (from measured CPU), the reconciler's reads of
 * finished rows, and the row's storage and backup over a default job's retention, PITR as the template has it.
 */
function allInLines(p: Paths, usage: OccurrenceUsage, reconciler: DeployedReconcilerFigures) {
  const pointInTimeRecovery = templateCounts(synthesize(stackCases()[1].shape)).pointInTimeRecovery;
  return [
    ...costPerMillion(usage, PRICES),
    reconcilerLine(reconciler),
    ...storagePerMillion({ ...keptRow(p), retentionDays: RETENTION_DAYS, pointInTimeRecovery }, PRICES),
  ];
}

/** Figure 6: the deployed runtime's metrics and logs, the stacks' templates, the bills. */
async function bill(
  p: Paths,
  usage: OccurrenceUsage,
  reconciler: DeployedReconcilerFigures,
  runtime: Awaited<ReturnType<typeof measureDeployedRuntime>>,
) {
  const figure = billFigure(occurrenceFigures(usage, reconciler, runtime, keptRow(p)), reconciler, runtime, PRICES);
  const lines = allInLines(p, usage, reconciler);
  const logsDeployed = dollars(PRICES.logsIngestionGb, runtime.logBytesPerOccurrence / 1024 ** 3) * 1e6;
  printBill(figure, { total: totalPerMillion(lines), reconciler: reconcilerUsdPerMillion(reconciler, PRICES) });
  console.log(
    `Deployed runtime, one occurrence: ${runtime.logLinesPerOccurrence} lines, ${runtime.logBytesPerOccurrence} bytes to CloudWatch Logs ($${logsDeployed.toFixed(2)} per million without Lambda's own lines), INFO: ${runtime.infoLines.join('; ')}; custom metrics: ${runtime.counts.perJob} per job, ${runtime.counts.perWorker} per worker, ${runtime.counts.perStack} per stack, ${runtime.counts.reconcilerIdle} of the idle reconciler.`,
  );
  return { ...figure, runtime, logsUsdPerMillionDeployed: logsDeployed };
}

/** Figure 3's measured durations and log bytes, as the run-time schedules' cost takes them. */
function measuredHappyPath(usage: OccurrenceUsage): MeasuredHappyPath {
  const ms = (fn: string) => usage.lambda.find((l) => l.fn.startsWith(fn))?.ms ?? 0;
  return {
    triggerMs: ms('trigger'),
    workerMs: ms('worker'),
    notifierMs: ms('notifier'),
    logBytes: usage.logBytes,
    snsPayloadBytes: usage.snsPayloadBytes,
  };
}

/**
 * Figure 4. Callgrind counts instructions, so the figure does not depend on the machine's load; two runs at once
 * keep the default bench to a few minutes. Without valgrind the other figures are kept and the bench says what to
 * install (the caller exits 1).
 */
async function coldLoad(runs: number): Promise<ColdLoadFigures | { missing: string }> {
  console.log(`\nCold load (callgrind, ${runs} run(s) per bundle, median above an empty module; about ${runs} min):`);
  try {
    const figures = await measureColdLoad({ runs, jobs: 2 });
    console.log(formatColdLoad(figures));
    return figures;
  } catch (error) {
    if (!(error instanceof ValgrindMissingError)) throw error;
    console.error(error.message);
    return { missing: error.message };
  }
}

/** The measured ticks of an earlier run's results file, with when and how long that run took. */
function earlierTicks(file: string) {
  const earlier = JSON.parse(readFileSync(file, 'utf8')) as {
    machine: { date: string };
    benchSeconds: number;
    tick?: { measured?: TickResult[] };
  };
  if (earlier.tick?.measured === undefined) throw new InvalidArgumentError(`${file} has no measured tick`);
  return { date: earlier.machine.date, benchSeconds: earlier.benchSeconds, measured: earlier.tick.measured };
}

function machine() {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    cores: cpus.length,
    cpu: cpus[0]?.model,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const wants = (f: Figure) => options.only.includes(f);
  const results: Record<string, unknown> = { machine: machine(), options };
  const started = performance.now();
  const needsMoto =
    wants('requests') || wants('capacity') || wants('cost') || wants('bill') || wants('tick') || wants('schedules');
  const session = needsMoto ? await BenchSession.start() : undefined;
  try {
    if (session && (wants('requests') || wants('capacity') || wants('cost') || wants('bill'))) {
      const p = await measurePaths(session, options);
      const reconciler = wants('cost') || wants('bill') ? await deployedReconciler(session) : undefined;
      if (reconciler) results.reconcilerDeployed = reconciler;
      if (wants('requests')) {
        const rows = requestRows(p);
        printRequests(rows);
        results.requests = { rows, emptyReceivesDuringHappyPath: p.happy.emptyReceives };
      }
      if (wants('capacity')) {
        const rows = capacityRows(p);
        const final = lastItem(p.failedOnce);
        const growth = final ? itemGrowth(final, [1, 5, 20]) : [];
        printCapacity(rows);
        printGrowth(growth, attemptsWithinOneWriteUnit(growth));
        results.capacity = { rows, growth, writes: p.happy.writes.map(({ after: _after, ...w }) => w) };
      }
      // The log bytes are the deployed runtime's (Powertools' lines and EMF, captured from the handlers' stdout), at
      // the stack's default system log level WARN: no START, END or REPORT lines. The local run's bytes with
      // LOG_MODEL's additions were the figure before issue 24.
      const runtime = wants('cost') || wants('bill') ? await measureDeployedRuntime(session) : undefined;
      const measuredUsage = usageOf(p.happy, measuredMedians(p.happyRuns));
      const usage = runtime ? { ...measuredUsage, logBytes: runtime.logBytesPerOccurrence } : measuredUsage;
      if (wants('cost') && reconciler) {
        const lines = allInLines(p, usage, reconciler);
        console.log(`\n${LAMBDA_TIME_MODEL}`);
        // The alternatives run the job in one function: ours is the worker's requests and duration.
        const worker = lines.filter((l) => l.item.includes('worker')).reduce((s, l) => s + l.usdPerMillion, 0);
        const alternatives = alternativeModels(PRICES, { lambdaJobFunctionPerMillion: worker });
        printCost(lines, totalPerMillion(lines), alternatives);
        results.cost = {
          usage,
          lines,
          totalPerMillion: totalPerMillion(lines),
          lambdaTimeModel: LAMBDA_TIME_MODEL,
          alternatives,
          prices: PRICES,
        };
      }
      if (wants('bill') && reconciler && runtime) results.bill = await bill(p, usage, reconciler, runtime);
    }
    if (session && wants('tick')) {
      const ticks: TickResult[] = [];
      for (const n of options.ticks) {
        const limitMs = Math.max(120_000, n * options.tickMsPerOccurrence);
        console.log(
          `\nA tick of ${n} at once, ${options.pollers} pollers (up to ${Math.round(limitMs / 1000)} s to settle)...`,
        );
        const tick = await runTick(session, n, options.pollers, limitMs);
        console.log(
          `  ${tick.unsettled === 0 ? 'settled' : `${tick.unsettled} of ${n} NOT settled`} after ${Math.round(tick.wallMs / 1000)} s`,
        );
        ticks.push(tick);
      }
      const earlier = options.ticksFrom === undefined ? undefined : earlierTicks(options.ticksFrom);
      printTicks([...ticks, ...(earlier?.measured ?? [])]);
      results.tick = {
        measured: ticks,
        earlierRun: earlier,
        partitionModel: wants('partition') ? modelPartitions() : undefined,
      };
    } else if (wants('partition')) {
      results.tick = { partitionModel: modelPartitions() };
    }
    if (session && wants('schedules')) {
      const usage = (results.cost as { usage?: OccurrenceUsage } | undefined)?.usage;
      results.runtimeSchedules = await runtimeSchedules(session, options, usage && measuredHappyPath(usage));
    }
    if (wants('cold-load')) {
      const figures = await coldLoad(options.coldLoadRuns);
      results.coldLoad = figures;
      if ('missing' in figures) process.exitCode = 1;
    }
  } finally {
    await session?.stop();
  }
  results.benchSeconds = (performance.now() - started) / 1000;
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(
    `\n${path.relative(process.cwd(), options.out)} written; the bench took ${Math.round((performance.now() - started) / 1000)} s.`,
  );
  // The docs' generated tables follow the committed results: rewritten only from a whole run into bench/results.json.
  if (path.resolve(options.out) === RESULTS_FILE && results.cost !== undefined && results.bill !== undefined) {
    const changed = writeGeneratedDocs(results as unknown as GeneratedInputs);
    console.log(`docs/benchmarks.md's generated tables ${changed ? 'rewritten' : 'unchanged'}.`);
  }
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error instanceof Error ? `${error.name}: ${error.message}` : error);
    process.exit(1);
  });
}
