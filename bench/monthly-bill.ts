/**
 * The monthly bill of a whole stack: what one occurrence uses (measured, figure 3 and the deployed reconciler), what
 * the stack holds whatever it runs (alarms, dashboards, polled queues, functions: counted in its synthesized
 * template, bench/stack-template.ts), and the custom metrics its functions emit (metric names and dimension sets
 * captured from the deployed runtime, bench/emitted-metrics.ts), priced with bench/prices.ts. Beside each stack, the
 * same workload elsewhere, as models.
 */
import { DURABLE_FUNCTIONS_RUN, describeRun, STEP_FUNCTIONS_RUN, TEMPORAL_RUN } from './alternative-models';
import { vcpuShare } from './lambda-time';
import { dollars, type PriceTable } from './prices';

/** Hours in a month, as AWS prorates by (365 × 24 / 12). */
export const HOURS_PER_MONTH = 730;
export const DAYS_PER_MONTH = HOURS_PER_MONTH / 24;
const GB = 1024 ** 3;
/** DynamoDB adds 100 bytes to every item of a table and of an index for storage. */
const ITEM_STORAGE_OVERHEAD_BYTES = 100;

/**
 * Modelled, not measured (no AWS account here): Lambda's SQS event source keeps five long polls of 20 s open on each
 * queue it reads (https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html#events-sqs-scaling), each an SQS
 * request, whether or not messages come; and the INIT phase of a cold start, billed for on-demand functions since
 * 2025-08, as milliseconds at the function's memory (Node.js 20 on arm64, 256 MB: a bundle of 400-650 KB; figure 4
 * counts the worker's load 1.5 × the trigger's, so it gets 1.5 × the time).
 */
export const RUNTIME_MODEL = {
  pollersPerQueue: 5,
  longPollSeconds: 20,
  initMs: { trigger: 300, worker: 450, notifier: 300, reconciler: 350 } as Record<string, number>,
  /** One reconciler DynamoDB Query or BatchGetItem, deployed (moto's are 10-100 × slower), milliseconds. */
  dynamoRequestMs: 8,
  /** The reader's queries in flight at once (functions/aws/occurrence-reader.ts QUERY_CONCURRENCY). */
  queryConcurrency: 16,
} as const;

/** One function's use per occurrence, and its memory. */
export interface FunctionUse {
  readonly fn: 'trigger' | 'worker' | 'notifier';
  readonly invocations: number;
  readonly ms: number;
  readonly memoryMb: number;
}

/** What one occurrence uses (measured on moto; the job's own compute left out, as in figure 3). */
export interface OccurrenceFigures {
  readonly functions: readonly FunctionUse[];
  readonly writeUnits: number;
  readonly readUnits: number;
  /** The deployed reconciler's read units over all the runs that see the occurrence. */
  readonly reconcilerReadUnits: number;
  readonly sqsRequests: number;
  readonly s3Puts: number;
  readonly s3Gets: number;
  readonly snsPublishes: number;
  readonly snsPayloadBytes: number;
  /** Bytes the functions write to CloudWatch Logs for one occurrence: their lines and the EMF metric lines. */
  readonly logBytes: number;
  /** The finished row, as kept until its TTL: its bytes in the table and, if it stays indexed, in the index. */
  readonly rowBytes: number;
  readonly indexEntryBytes: number;
}

/** The reconciler's run whatever the traffic (the idle run: every shard queried). */
export interface ReconcilerFixed {
  readonly runsPerMonth: number;
  readonly readUnitsPerRun: number;
  readonly queriesPerRun: number;
  /** CPU milliseconds of an idle run at a full core (measured; 0 when not). */
  readonly cpuMsPerRun: number;
  readonly memoryMb: number;
  readonly logBytesPerRun: number;
}

/** What the stack's template holds (bench/stack-template.ts). */
export interface TemplateCounts {
  readonly alarms: number;
  /**
   * What CloudWatch bills alarms by: one alarm metric per metric an alarm reads (a metric-math alarm over two metrics
   * bills two, the expression none).
   */
  readonly alarmMetrics: number;
  /** Distinct custom metrics (namespace, name, dimensions) the alarms read. */
  readonly customMetricsAlarmed: number;
  readonly functions: number;
  readonly queues: number;
  readonly schedules: number;
  readonly tables: number;
  readonly indexes: number;
  readonly logGroups: number;
  /** The longest retention of the functions' log groups, in days (0: kept forever). */
  readonly logRetentionDays: number;
  readonly dashboards: number;
  readonly workers: number;
  /** Queues a Lambda event source polls (the workers' job queues). */
  readonly polledQueues: number;
  readonly pointInTimeRecovery: boolean;
  /** Whether Lambda writes its START, END and REPORT lines (system log level INFO or DEBUG, or no logging config). */
  readonly platformLogLines: boolean;
}

/** Custom metrics the functions emit, by what multiplies them (bench/emitted-metrics.ts). */
export interface MetricSeriesCounts {
  /** Series whose dimensions name a job: one each per job. */
  readonly perJob: number;
  /** Series whose dimensions name a worker: one each per worker. */
  readonly perWorker: number;
  /** Series of the stack as a whole (the trigger's, the notifier's), emitted by occurrences. */
  readonly perStack: number;
  /** The reconciler's series on a run with nothing to fix (every 5 minutes: every hour of the month). */
  readonly reconcilerIdle: number;
}

/** A stack's workload: how many jobs and workers, how often they fire, how the fires bunch up. */
export interface Workload {
  readonly name: string;
  readonly jobs: number;
  readonly occurrencesPerMonth: number;
  /** Hours of the month in which one job fires (daily: 30.4, hourly: 730), for its per-job metrics. */
  readonly jobHoursWithData: number;
  /** Hours in which a worker's jobs fire, and any job of the stack. */
  readonly workerHoursWithData: number;
  readonly stackHoursWithData: number;
  /** Cold starts per month, by function (modelled: see each stack's assumptions). */
  readonly coldStarts: Readonly<Record<'trigger' | 'worker' | 'notifier' | 'reconciler', number>>;
  /** Days an occurrence row is kept (its TTL): the rows held are occurrences a day × these days. */
  readonly retentionDays: number;
  readonly assumptions: string;
  /** Lines priced elsewhere (the run-time schedules' registry at rest). */
  readonly extra?: readonly BillLine[];
}

export interface BillLine {
  readonly group: string;
  readonly item: string;
  readonly quantity: number;
  readonly unit: string;
  readonly usd: number;
}

export interface Bill {
  readonly workload: string;
  readonly lines: readonly BillLine[];
  readonly total: number;
}

export interface BillInputs {
  readonly occurrence: OccurrenceFigures;
  readonly reconciler: ReconcilerFixed;
  readonly template: TemplateCounts;
  readonly metrics: MetricSeriesCounts;
}

/** The itemised month of one stack. */
export function monthlyBill(w: Workload, inputs: BillInputs, prices: PriceTable): Bill {
  const lines = [
    ...schedulerLines(w),
    ...lambdaLines(w, inputs),
    ...dynamoLines(w, inputs),
    ...queueLines(w, inputs),
    ...observabilityLines(w, inputs),
  ].map(({ price, ...l }) => ({ ...l, usd: dollars(prices[price], l.quantity) }));
  const all = [...lines, ...(w.extra ?? [])];
  return { workload: w.name, lines: all, total: all.reduce((sum, l) => sum + l.usd, 0) };
}

type PricedLine = Omit<BillLine, 'usd'> & { readonly price: keyof PriceTable };

function schedulerLines(w: Workload): PricedLine[] {
  const n = w.occurrencesPerMonth;
  return [{ group: 'Scheduler', item: 'invocations', quantity: n, unit: 'invocation', price: 'schedulerInvocation' }];
}

/** GB-seconds of `ms` at `memoryMb`. */
const gbSeconds = (ms: number, memoryMb: number) => (ms / 1000) * (memoryMb / 1024);

/**
 * The reconciler's run time, modelled: its measured CPU at its memory's share of a vCPU (bench/lambda-time.ts), plus
 * its queries in rounds of `queryConcurrency`, one deployed round trip a round (moto's own time is not DynamoDB's).
 */
export function reconcilerRunMs(r: ReconcilerFixed): number {
  const waiting = Math.ceil(r.queriesPerRun / RUNTIME_MODEL.queryConcurrency) * RUNTIME_MODEL.dynamoRequestMs;
  return r.cpuMsPerRun / vcpuShare(r.memoryMb) + waiting;
}

function lambdaLines(w: Workload, { occurrence, reconciler }: BillInputs): PricedLine[] {
  const n = w.occurrencesPerMonth;
  const requests = occurrence.functions.reduce((s, f) => s + f.invocations * n, 0) + reconciler.runsPerMonth;
  const duration =
    occurrence.functions.reduce((s, f) => s + gbSeconds(f.ms * n, f.memoryMb), 0) +
    gbSeconds(reconcilerRunMs(reconciler) * reconciler.runsPerMonth, reconciler.memoryMb);
  const memoryOf = (fn: string) =>
    occurrence.functions.find((f) => f.fn === fn)?.memoryMb ?? (fn === 'reconciler' ? reconciler.memoryMb : 256);
  const init = Object.entries(w.coldStarts).reduce(
    (s, [fn, starts]) => s + gbSeconds(starts * (RUNTIME_MODEL.initMs[fn] ?? 300), memoryOf(fn)),
    0,
  );
  return [
    {
      group: 'Lambda',
      item: 'requests (with the reconciler)',
      quantity: requests,
      unit: 'request',
      price: 'lambdaRequest',
    },
    {
      group: 'Lambda',
      item: 'duration (without the job)',
      quantity: duration,
      unit: 'GB-s',
      price: 'lambdaGbSecondArm',
    },
    {
      group: 'Lambda',
      item: 'INIT of cold starts (modelled)',
      quantity: init,
      unit: 'GB-s',
      price: 'lambdaGbSecondArm',
    },
  ];
}

function dynamoLines(w: Workload, { occurrence: o, reconciler: r, template: t }: BillInputs): PricedLine[] {
  const n = w.occurrencesPerMonth;
  const rowsKept = (n / DAYS_PER_MONTH) * w.retentionDays;
  const tableGb = (rowsKept * (o.rowBytes + ITEM_STORAGE_OVERHEAD_BYTES)) / GB;
  const indexGb = o.indexEntryBytes === 0 ? 0 : (rowsKept * (o.indexEntryBytes + ITEM_STORAGE_OVERHEAD_BYTES)) / GB;
  const lines: PricedLine[] = [
    {
      group: 'DynamoDB',
      item: 'writes (table + index)',
      quantity: o.writeUnits * n,
      unit: 'WRU',
      price: 'dynamoWriteRequestUnit',
    },
    {
      group: 'DynamoDB',
      item: 'reads of the occurrences',
      quantity: o.readUnits * n,
      unit: 'RRU',
      price: 'dynamoReadRequestUnit',
    },
    {
      group: 'DynamoDB',
      item: "reconciler's reads of finished rows",
      quantity: o.reconcilerReadUnits * n,
      unit: 'RRU',
      price: 'dynamoReadRequestUnit',
    },
    {
      group: 'DynamoDB',
      item: `reconciler's idle queries (${r.runsPerMonth.toFixed(0)} runs)`,
      quantity: r.readUnitsPerRun * r.runsPerMonth,
      unit: 'RRU',
      price: 'dynamoReadRequestUnit',
    },
    {
      group: 'DynamoDB',
      item: `storage: ${Math.round(rowsKept).toLocaleString('en-US')} rows kept ${w.retentionDays} days, table + index`,
      quantity: tableGb + indexGb,
      unit: 'GB-month',
      price: 'dynamoStorageGbMonth',
    },
  ];
  if (t.pointInTimeRecovery)
    lines.push({
      group: 'DynamoDB',
      item: 'continuous backup (PITR) of the table',
      quantity: tableGb,
      unit: 'GB-month',
      price: 'dynamoPitrGbMonth',
    });
  return lines;
}

/** SQS requests a polled queue costs a month with nothing in it (modelled, RUNTIME_MODEL). */
export function emptyReceivesPerQueueMonth(): number {
  return (RUNTIME_MODEL.pollersPerQueue * HOURS_PER_MONTH * 3600) / RUNTIME_MODEL.longPollSeconds;
}

function queueLines(w: Workload, { occurrence: o, template: t }: BillInputs): PricedLine[] {
  const n = w.occurrencesPerMonth;
  return [
    {
      group: 'SQS',
      item: 'job queues: sends, receives, deletes',
      quantity: o.sqsRequests * n,
      unit: 'request',
      price: 'sqsStandardRequest',
    },
    {
      group: 'SQS',
      item: `Lambda's pollers' empty receives (${t.polledQueues} queues, modelled)`,
      quantity: t.polledQueues * emptyReceivesPerQueueMonth(),
      unit: 'request',
      price: 'sqsStandardRequest',
    },
    { group: 'S3', item: 'report PUT', quantity: o.s3Puts * n, unit: 'request', price: 's3Put' },
    { group: 'S3', item: 'GET/HEAD', quantity: o.s3Gets * n, unit: 'request', price: 's3Get' },
    { group: 'SNS FIFO', item: 'publishes', quantity: o.snsPublishes * n, unit: 'request', price: 'snsFifoPublish' },
    {
      group: 'SNS FIFO',
      item: 'payload',
      quantity: (o.snsPayloadBytes * n) / GB,
      unit: 'GB',
      price: 'snsFifoPayloadGb',
    },
    {
      group: 'SNS FIFO',
      item: 'deliveries to the FIFO queue',
      quantity: o.snsPublishes * n,
      unit: 'message',
      price: 'snsFifoDeliveryToSqs',
    },
  ];
}

/**
 * Custom metric-months: CloudWatch prorates a metric by the hours in which it received data, so a metric emitted in
 * every hour counts fully and a daily job's metric 30 of 730 hours.
 */
export function metricMonths(w: Workload, m: MetricSeriesCounts, workers: number): number {
  const share = (hours: number) => Math.min(1, hours / HOURS_PER_MONTH);
  return (
    m.perJob * w.jobs * share(w.jobHoursWithData) +
    m.perWorker * workers * share(w.workerHoursWithData) +
    m.perStack * share(w.stackHoursWithData) +
    m.reconcilerIdle
  );
}

/** Bytes a month to CloudWatch Logs: the occurrences', the reconciler's runs', and Lambda's own lines if it writes them. */
export function logBytesPerMonth(w: Workload, { occurrence: o, reconciler: r, template: t }: BillInputs): number {
  const invocations = o.functions.reduce((s, f) => s + f.invocations, 0) * w.occurrencesPerMonth + r.runsPerMonth;
  const platform = t.platformLogLines ? invocations * PLATFORM_BYTES_PER_INVOCATION : 0;
  return o.logBytes * w.occurrencesPerMonth + r.logBytesPerRun * r.runsPerMonth + platform;
}

/** Months a month's log bytes stay stored: the retention, or a year when the groups keep them forever. */
export function logMonthsKept(retentionDays: number): number {
  return (retentionDays === 0 ? 365 : retentionDays) / DAYS_PER_MONTH;
}

/** Modelled: Lambda's START, END and REPORT lines of one invocation (figures.ts LOG_MODEL). */
export const PLATFORM_BYTES_PER_INVOCATION = 330;

function observabilityLines(w: Workload, inputs: BillInputs): PricedLine[] {
  const t = inputs.template;
  return [
    {
      group: 'CloudWatch',
      item: 'custom metrics (prorated by hours with data)',
      quantity: metricMonths(w, inputs.metrics, t.workers),
      unit: 'metric-month',
      price: 'customMetricMonth',
    },
    {
      group: 'CloudWatch',
      item: `alarms (${t.alarms}, billed by the ${t.alarmMetrics} metrics they read)`,
      quantity: t.alarmMetrics,
      unit: 'alarm metric-month',
      price: 'cloudwatchAlarmStandard',
    },
    {
      group: 'CloudWatch',
      item: 'dashboards',
      quantity: t.dashboards,
      unit: 'dashboard-month',
      price: 'cloudwatchDashboard',
    },
    {
      group: 'CloudWatch',
      item: 'Logs ingestion',
      quantity: logBytesPerMonth(w, inputs) / GB,
      unit: 'GB',
      price: 'logsIngestionGb',
    },
    {
      group: 'CloudWatch',
      item: `Logs storage (${t.logGroups} log groups, ${t.logRetentionDays} days, uncompressed)`,
      quantity: (logBytesPerMonth(w, inputs) / GB) * logMonthsKept(t.logRetentionDays),
      unit: 'GB-month',
      price: 'logsStorageGbMonth',
    },
  ];
}

/** The lines that do not grow with occurrences: what a job or worker costs by being there. */
export const FIXED_ITEMS = ['custom metrics', 'alarms', 'dashboards', "pollers' empty receives"];

export function fixedPart(bill: Bill): number {
  return bill.lines.filter((l) => FIXED_ITEMS.some((f) => l.item.includes(f))).reduce((s, l) => s + l.usd, 0);
}

// ---------------------------------------------------------------------------------------------------------------
// The same workload elsewhere (models, each with its assumptions).
// ---------------------------------------------------------------------------------------------------------------

export interface AlternativeBill {
  readonly name: string;
  readonly usd: number;
  readonly assumptions: string;
}

/** What every alternative still pays per run: the schedule's invocation, the report's PUT, the announcement. */
function commonPerRun(prices: PriceTable): number {
  return (
    dollars(prices.schedulerInvocation, 1) +
    dollars(prices.s3Put, 1) +
    dollars(prices.snsFifoPublish, 1) +
    dollars(prices.snsFifoDeliveryToSqs, 1)
  );
}

/** One Lambda function doing the job's run (our worker's measured time without the job) with its cold starts. */
function oneFunctionPerRun(o: OccurrenceFigures, prices: PriceTable): number {
  const worker = o.functions.find((f) => f.fn === 'worker');
  const ms = worker?.ms ?? 0;
  return dollars(prices.lambdaRequest, 1) + dollars(prices.lambdaGbSecondArm, gbSeconds(ms, worker?.memoryMb ?? 256));
}

function initCost(w: Workload, prices: PriceTable, memoryMb = 256): number {
  return dollars(prices.lambdaGbSecondArm, gbSeconds(w.coldStarts.worker * RUNTIME_MODEL.initMs.worker, memoryMb));
}

/** An always-on Temporal worker: the smallest Fargate task, 0.25 vCPU and 0.5 GB. */
const TEMPORAL_WORKER = { vcpu: 0.25, gb: 0.5 };

export function alternativeBills(w: Workload, o: OccurrenceFigures, prices: PriceTable): AlternativeBill[] {
  const n = w.occurrencesPerMonth;
  const common = commonPerRun(prices) * n;
  const fn = oneFunctionPerRun(o, prices) * n + initCost(w, prices);
  const temporalUsage = dollars(prices.temporalCloudAction, TEMPORAL_RUN.unitsPerRun * n);
  const temporalWorker =
    HOURS_PER_MONTH *
    (dollars(prices.fargateArmVcpuHour, TEMPORAL_WORKER.vcpu) + dollars(prices.fargateArmGbHour, TEMPORAL_WORKER.gb));
  return [
    {
      name: 'Step Functions Standard',
      usd: dollars(prices.stepFunctionsStandardTransition, STEP_FUNCTIONS_RUN.unitsPerRun * n) + common + fn,
      assumptions: `Scheduler starts a 3-state machine: ${describeRun(STEP_FUNCTIONS_RUN)} at $25/M; the job's Lambda as our worker without the job, with its cold starts; no alarms, no dashboard, execution history kept by the service`,
    },
    {
      name: 'Lambda durable functions',
      usd: dollars(prices.lambdaDurableOperation, DURABLE_FUNCTIONS_RUN.unitsPerRun * n) + common + fn,
      assumptions: `Scheduler invokes one durable function: ${describeRun(DURABLE_FUNCTIONS_RUN)} at $8/M, no waits (one invocation); Lambda as our worker without the job; data-retention charges left out (a few KB a run)`,
    },
    {
      name: 'Temporal Cloud',
      usd:
        Math.max(dollars(prices.temporalCloudEssentialsMonth, 1), temporalUsage) +
        temporalWorker +
        (common - dollars(prices.schedulerInvocation, n)),
      assumptions: `a Temporal schedule per job (per customer in the third stack), ${describeRun(TEMPORAL_RUN)} at $50/M, the Essentials plan's $100 a month minimum; one always-on worker on Fargate (0.25 vCPU, 0.5 GB, arm64); the report PUT and the publish as ours; no Scheduler`,
    },
    {
      name: 'plain Scheduler → Lambda',
      usd: common + fn,
      assumptions:
        'Scheduler invokes the job function, which writes the report and publishes: no occurrence row, no idempotency (a duplicate fire runs the job twice), no lease, no retry after a crash beyond Lambda async retries, no reconciler; no alarms',
    },
  ];
}
