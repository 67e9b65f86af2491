import { describe, expect, it } from 'vitest';
import {
  alternativeBills,
  type BillInputs,
  emptyReceivesPerQueueMonth,
  fixedPart,
  HOURS_PER_MONTH,
  logBytesPerMonth,
  metricMonths,
  monthlyBill,
  type OccurrenceFigures,
  PLATFORM_BYTES_PER_INVOCATION,
  RUNTIME_MODEL,
  reconcilerRunMs,
  type Workload,
} from '../../bench/monthly-bill';
import { PRICES, type PriceTable } from '../../bench/prices';

/** Every price $2 per million units (GB-seconds, GB and months included), so each line is 2e-6 × its quantity. */
const FLAT: PriceTable = Object.fromEntries(
  Object.entries(PRICES).map(([k, p]) => [k, { ...p, usd: 2, per: 1e6 }]),
) as PriceTable;
const GB = 1024 ** 3;

const OCCURRENCE: OccurrenceFigures = {
  functions: [
    { fn: 'trigger', invocations: 1, ms: 100, memoryMb: 1024 },
    { fn: 'worker', invocations: 1, ms: 200, memoryMb: 512 },
  ],
  writeUnits: 10,
  readUnits: 1,
  reconcilerReadUnits: 4,
  sqsRequests: 3,
  s3Puts: 1,
  s3Gets: 2,
  snsPublishes: 1,
  snsPayloadBytes: 1000,
  logBytes: 2000,
  rowBytes: 924,
  indexEntryBytes: 412,
};

const INPUTS: BillInputs = {
  occurrence: OCCURRENCE,
  reconciler: {
    runsPerMonth: 10,
    readUnitsPerRun: 160,
    queriesPerRun: 320,
    cpuMsPerRun: 0,
    memoryMb: 1024,
    logBytesPerRun: 300,
  },
  template: {
    alarms: 7,
    alarmMetrics: 8,
    customMetricsAlarmed: 3,
    functions: 5,
    queues: 6,
    schedules: 4,
    tables: 1,
    indexes: 1,
    logGroups: 5,
    logRetentionDays: 30,
    dashboards: 1,
    workers: 2,
    polledQueues: 2,
    pointInTimeRecovery: true,
    platformLogLines: false,
  },
  metrics: { perJob: 3, perWorker: 2, perStack: 1, reconcilerIdle: 1 },
};

const WORKLOAD: Workload = {
  name: 'hand-made',
  jobs: 4,
  occurrencesPerMonth: 1000,
  jobHoursWithData: HOURS_PER_MONTH / 2,
  workerHoursWithData: HOURS_PER_MONTH,
  stackHoursWithData: HOURS_PER_MONTH * 2,
  coldStarts: { trigger: 10, worker: 0, notifier: 0, reconciler: 0 },
  retentionDays: 365 / 12,
  assumptions: 'none',
};

const quantities = (w: Workload = WORKLOAD, inputs: BillInputs = INPUTS) =>
  Object.fromEntries(monthlyBill(w, inputs, FLAT).lines.map((l) => [`${l.group}: ${l.item}`, l.quantity]));

describe('Function: monthlyBill', () => {
  it('multiplies each per-occurrence figure by the occurrences of the month, one line each', () => {
    const q = quantities();
    expect(q['Scheduler: invocations']).toBe(1000);
    // 2 invocations an occurrence and the reconciler's 10 runs.
    expect(q['Lambda: requests (with the reconciler)']).toBe(2010);
    // 1000 × (0.1 s × 1 GB + 0.2 s × 0.5 GB) + 10 runs × ceil(320 / 16) × 8 ms × 1 GB.
    expect(q['Lambda: duration (without the job)']).toBeCloseTo(200 + 10 * 0.16, 9);
    // 10 trigger cold starts of 300 ms at 1 GB.
    expect(q['Lambda: INIT of cold starts (modelled)']).toBeCloseTo(3, 9);
    expect(q['DynamoDB: writes (table + index)']).toBe(10_000);
    expect(q['DynamoDB: reads of the occurrences']).toBe(1000);
    expect(q["DynamoDB: reconciler's reads of finished rows"]).toBe(4000);
    expect(q["DynamoDB: reconciler's idle queries (10 runs)"]).toBe(1600);
    expect(q['SQS: job queues: sends, receives, deletes']).toBe(3000);
    expect(q["SQS: Lambda's pollers' empty receives (2 queues, modelled)"]).toBe(2 * 657_000);
    expect(q['S3: report PUT']).toBe(1000);
    expect(q['S3: GET/HEAD']).toBe(2000);
    expect(q['SNS FIFO: publishes']).toBe(1000);
    expect(q['SNS FIFO: payload']).toBeCloseTo(1e6 / GB, 12);
    expect(q['SNS FIFO: deliveries to the FIFO queue']).toBe(1000);
    // 7 alarms, one of them metric math over two metrics: CloudWatch bills 8 alarm metrics.
    expect(q['CloudWatch: alarms (7, billed by the 8 metrics they read)']).toBe(8);
    expect(q['CloudWatch: dashboards']).toBe(1);
    // A month's log bytes kept 30 days of a 30.4-day month.
    expect(q['CloudWatch: Logs storage (5 log groups, 30 days, uncompressed)']).toBeCloseTo(
      (logBytesPerMonth(WORKLOAD, INPUTS) / GB) * (30 / (730 / 24)),
      12,
    );
  });

  it('keeps a month of rows for a retention of a month: table and index bytes with 100 bytes each of overhead', () => {
    const q = quantities();
    const storageKey = Object.keys(q).find((k) => k.startsWith('DynamoDB: storage'));
    expect(storageKey).toContain('1,000 rows');
    // 1000 rows × ((924 + 100) + (412 + 100)) bytes.
    expect(q[storageKey as string]).toBeCloseTo((1000 * (1024 + 512)) / GB, 12);
    expect(q['DynamoDB: continuous backup (PITR) of the table']).toBeCloseTo((1000 * 1024) / GB, 12);
  });

  it('stores no index entry for a row that leaves the index, and no backup without PITR', () => {
    const inputs = {
      ...INPUTS,
      occurrence: { ...OCCURRENCE, indexEntryBytes: 0 },
      template: { ...INPUTS.template, pointInTimeRecovery: false },
    };
    const q = quantities(WORKLOAD, inputs);
    const storageKey = Object.keys(q).find((k) => k.startsWith('DynamoDB: storage')) as string;
    expect(q[storageKey]).toBeCloseTo((1000 * 1024) / GB, 12);
    expect(q['DynamoDB: continuous backup (PITR) of the table']).toBeUndefined();
  });

  it('prices every line at its price and totals them, extra lines included', () => {
    const extra = [{ group: 'Registry', item: 'at rest', quantity: 1, unit: 'x', usd: 0.5 }];
    const bill = monthlyBill({ ...WORKLOAD, extra }, INPUTS, FLAT);
    for (const l of bill.lines.filter((x) => x.group !== 'Registry')) expect(l.usd).toBeCloseTo(2e-6 * l.quantity, 12);
    expect(bill.total).toBeCloseTo(
      bill.lines.reduce((s, l) => s + l.usd, 0),
      12,
    );
    expect(bill.lines.at(-1)).toEqual(extra[0]);
    expect(bill.lines).toHaveLength(23);
  });

  it('prices alarms and dashboards at their list prices', () => {
    const bill = monthlyBill(WORKLOAD, INPUTS, PRICES);
    const usd = (item: string) => bill.lines.find((l) => l.item.startsWith(item))?.usd;
    expect(usd('alarms')).toBeCloseTo(0.8, 9);
    expect(usd('dashboards')).toBeCloseTo(3, 9);
  });
});

describe('Function: metricMonths', () => {
  it('prorates each metric by the hours with data: per job, per worker, per stack, and the reconciler in full', () => {
    // 3 × 4 jobs × 1/2 + 2 × 2 workers × 1 + 1 × 1 (capped) + 1.
    expect(metricMonths(WORKLOAD, INPUTS.metrics, 2)).toBe(6 + 4 + 1 + 1);
  });

  it('counts a daily job 30.4 hours of 730', () => {
    const daily = { ...WORKLOAD, jobHoursWithData: 730 / 24, workerHoursWithData: 0, stackHoursWithData: 0 };
    const m = { perJob: 1, perWorker: 0, perStack: 0, reconcilerIdle: 0 };
    expect(metricMonths({ ...daily, jobs: 24 }, m, 1)).toBeCloseTo(1, 9);
  });
});

describe('Function: logBytesPerMonth', () => {
  it("adds the reconciler's runs, and Lambda's own lines only when its system log level lets them through", () => {
    expect(logBytesPerMonth(WORKLOAD, INPUTS)).toBe(2000 * 1000 + 300 * 10);
    const loud = { ...INPUTS, template: { ...INPUTS.template, platformLogLines: true } };
    expect(logBytesPerMonth(WORKLOAD, loud)).toBe(2000 * 1000 + 300 * 10 + 2010 * PLATFORM_BYTES_PER_INVOCATION);
  });
});

describe('the runtime model', () => {
  it('costs an idle polled queue five 20-second long polls at a time, all month: 657,000 requests', () => {
    expect(emptyReceivesPerQueueMonth()).toBe(657_000);
    expect(RUNTIME_MODEL.pollersPerQueue).toBe(5);
  });

  it('runs the reconciler in rounds of 16 queries', () => {
    expect(reconcilerRunMs({ ...INPUTS.reconciler, queriesPerRun: 64 })).toBe(4 * RUNTIME_MODEL.dynamoRequestMs);
    expect(reconcilerRunMs({ ...INPUTS.reconciler, queriesPerRun: 65 })).toBe(5 * RUNTIME_MODEL.dynamoRequestMs);
  });

  it("adds the reconciler's measured CPU at its memory's share of a vCPU (1,769 MB a vCPU)", () => {
    // 1 s of CPU at 256 MB: 256 / 1,769 of a vCPU, so 6.91 s; and 8 rounds of queries.
    const run = { ...INPUTS.reconciler, queriesPerRun: 128, cpuMsPerRun: 1000, memoryMb: 256 };
    expect(reconcilerRunMs(run)).toBeCloseTo(1000 * (1769 / 256) + 8 * RUNTIME_MODEL.dynamoRequestMs, 9);
  });
});

describe('Function: fixedPart', () => {
  it('sums the lines that do not grow with occurrences: metrics, alarms, dashboards, idle polls', () => {
    const bill = monthlyBill(WORKLOAD, INPUTS, FLAT);
    const expected = 2e-6 * (12 + 8 + 1 + 2 * 657_000);
    expect(fixedPart(bill)).toBeCloseTo(expected, 12);
    const noTraffic = monthlyBill({ ...WORKLOAD, occurrencesPerMonth: 0 }, INPUTS, FLAT);
    expect(fixedPart(noTraffic)).toBeCloseTo(expected, 12);
  });
});

describe('Function: alternativeBills', () => {
  it('prices each alternative per run from its own unit, with the common Scheduler, PUT and publish', () => {
    const [sfn, durable, temporal, plain] = alternativeBills(
      { ...WORKLOAD, coldStarts: { trigger: 0, worker: 0, notifier: 0, reconciler: 0 } },
      OCCURRENCE,
      FLAT,
    );
    // Per run: Scheduler 1, PUT 1, publish 1, delivery 1; the worker's request 1 and 0.1 GB-s.
    const common = 4;
    const fn = 1 + 0.1;
    expect(plain.usd).toBeCloseTo(2e-6 * 1000 * (common + fn), 12);
    // 4 transitions and 4 durable operations a run: the execution's start and three steps.
    expect(sfn.usd).toBeCloseTo(2e-6 * 1000 * (4 + common + fn), 12);
    expect(durable.usd).toBeCloseTo(2e-6 * 1000 * (4 + common + fn), 12);
    // Temporal: the larger of the plan's minimum (1 month) and 4 actions a fire (3 before the activity), a Fargate
    // worker all month, no Scheduler.
    const fargate = 730 * 2e-6 * (0.25 + 0.5);
    expect(temporal.usd).toBeCloseTo(Math.max(2e-6, 2e-6 * 4000) + fargate + 2e-6 * 1000 * 3, 12);
  });

  it('charges Temporal Cloud its plan minimum at list prices', () => {
    const temporal = alternativeBills(WORKLOAD, OCCURRENCE, PRICES).find((a) => a.name === 'Temporal Cloud');
    expect(temporal?.usd).toBeGreaterThan(100);
  });
});
