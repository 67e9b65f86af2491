/**
 * Figure 3: dollars per million occurrences from what one occurrence used (measured on moto) and one price table
 * (bench/prices.ts). Beside it, the same work on three alternatives, as models: their request counts are not
 * measured here, they follow from how each one bills.
 */

import { DURABLE_FUNCTIONS_RUN, describeRun, STEP_FUNCTIONS_RUN, TEMPORAL_RUN } from './alternative-models';
import { itemSize } from './item-size';
import { KEYED_TICK_ASSUMPTIONS, type KeyedTickAssumptions, keyedRowWriteUnits } from './partition-model';
import { dollars, type PriceTable } from './prices';
import { type AuditRun, RECONCILER_RUNS_PER_MONTH, registryRow, upsertUnits } from './registry-model';

export interface LambdaUse {
  readonly fn: string;
  readonly invocations: number;
  /** Billed duration per occurrence, summed over its invocations (modelled: bench/lambda-time.ts). */
  readonly ms: number;
  readonly memoryMb: number;
  /** Measured: CPU milliseconds at a full core, the wall milliseconds on moto, the requests it made (per occurrence). */
  readonly cpuMs?: number;
  readonly motoMs?: number;
  readonly requests?: number;
}

/** What one occurrence uses, on average. */
export interface OccurrenceUsage {
  readonly schedulerInvocations: number;
  readonly lambda: readonly LambdaUse[];
  readonly dynamoWriteUnits: number;
  readonly dynamoReadUnits: number;
  readonly sqsStandardRequests: number;
  readonly s3Puts: number;
  /** GET and HEAD. */
  readonly s3Gets: number;
  readonly snsFifoPublishes: number;
  readonly snsPayloadBytes: number;
  readonly logBytes: number;
}

export interface CostLine {
  readonly item: string;
  readonly quantity: number;
  readonly unit: string;
  readonly usdPerMillion: number;
}

const MILLION = 1e6;
const GB = 1024 ** 3;

/** Each line: the dollars one million occurrences spend on it. */
export function costPerMillion(usage: OccurrenceUsage, prices: PriceTable): CostLine[] {
  const line = (item: string, quantity: number, unit: string, usd: number): CostLine => ({
    item,
    quantity,
    unit,
    usdPerMillion: usd * MILLION,
  });
  const lines: CostLine[] = [
    line(
      'Scheduler invocations',
      usage.schedulerInvocations,
      'invocation',
      dollars(prices.schedulerInvocation, usage.schedulerInvocations),
    ),
  ];
  for (const fn of usage.lambda) {
    lines.push(
      line(`Lambda requests: ${fn.fn}`, fn.invocations, 'request', dollars(prices.lambdaRequest, fn.invocations)),
    );
    const gbSeconds = (fn.ms / 1000) * (fn.memoryMb / 1024);
    lines.push(
      line(
        `Lambda duration: ${fn.fn} (${fn.memoryMb} MB)`,
        gbSeconds,
        'GB-s',
        dollars(prices.lambdaGbSecondArm, gbSeconds),
      ),
    );
  }
  lines.push(
    line(
      'DynamoDB writes (table + index)',
      usage.dynamoWriteUnits,
      'WRU',
      dollars(prices.dynamoWriteRequestUnit, usage.dynamoWriteUnits),
    ),
    line('DynamoDB reads', usage.dynamoReadUnits, 'RRU', dollars(prices.dynamoReadRequestUnit, usage.dynamoReadUnits)),
    line(
      'SQS standard (job queue)',
      usage.sqsStandardRequests,
      'request',
      dollars(prices.sqsStandardRequest, usage.sqsStandardRequests),
    ),
    line('S3 PUT', usage.s3Puts, 'request', dollars(prices.s3Put, usage.s3Puts)),
    line('S3 GET/HEAD', usage.s3Gets, 'request', dollars(prices.s3Get, usage.s3Gets)),
    line('SNS FIFO publish', usage.snsFifoPublishes, 'request', dollars(prices.snsFifoPublish, usage.snsFifoPublishes)),
    line(
      'SNS FIFO payload',
      usage.snsPayloadBytes / GB,
      'GB',
      dollars(prices.snsFifoPayloadGb, usage.snsPayloadBytes / GB),
    ),
    line(
      'SNS FIFO delivery to the FIFO queue',
      usage.snsFifoPublishes,
      'message',
      dollars(prices.snsFifoDeliveryToSqs, usage.snsFifoPublishes),
    ),
    line('CloudWatch Logs ingestion', usage.logBytes / GB, 'GB', dollars(prices.logsIngestionGb, usage.logBytes / GB)),
  );
  return lines;
}

/** The finished row as kept until its TTL, for the storage an occurrence costs. */
export interface KeptRow {
  readonly rowBytes: number;
  /** 0 when the finished row leaves the index (an announced occurrence has no status entry). */
  readonly indexEntryBytes: number;
  readonly retentionDays: number;
  readonly pointInTimeRecovery: boolean;
}

/** Days in a month, as AWS prorates (365 × 24 / 12 hours). */
const DAYS_A_MONTH = 730 / 24;

/**
 * What one occurrence's row costs at rest over its life: its bytes (and its index entry's), each with DynamoDB's 100
 * bytes of overhead, for `retentionDays`, and the table's continuous backup of the row for as long.
 */
export function storagePerMillion(row: KeptRow, prices: PriceTable): CostLine[] {
  const months = row.retentionDays / DAYS_A_MONTH;
  const tableGbMonths = ((row.rowBytes + ITEM_STORAGE_OVERHEAD_BYTES) / GB) * months;
  const indexGbMonths =
    row.indexEntryBytes === 0 ? 0 : ((row.indexEntryBytes + ITEM_STORAGE_OVERHEAD_BYTES) / GB) * months;
  const lines: CostLine[] = [
    {
      item: `DynamoDB storage, the row kept ${row.retentionDays} days (table + index)`,
      quantity: tableGbMonths + indexGbMonths,
      unit: 'GB-month',
      usdPerMillion: dollars(prices.dynamoStorageGbMonth, tableGbMonths + indexGbMonths) * MILLION,
    },
  ];
  if (row.pointInTimeRecovery)
    lines.push({
      item: `DynamoDB continuous backup (PITR) of the row, ${row.retentionDays} days`,
      quantity: tableGbMonths,
      unit: 'GB-month',
      usdPerMillion: dollars(prices.dynamoPitrGbMonth, tableGbMonths) * MILLION,
    });
  return lines;
}

export function totalPerMillion(lines: readonly CostLine[]): number {
  return lines.reduce((sum, l) => sum + l.usdPerMillion, 0);
}

export interface AlternativeModel {
  readonly name: string;
  readonly usdPerMillion: number;
  readonly how: string;
}

/**
 * The alternatives, each doing the same work (scheduled start, run the job once, write the report, announce) as
 * far as its billing goes. Models, not measurements; the job's own compute is left out of all of them, as of ours.
 */
export function alternativeModels(
  prices: PriceTable,
  ours: { lambdaJobFunctionPerMillion: number },
): AlternativeModel[] {
  const perMillion = (usd: number) => usd * MILLION;
  const scheduler = dollars(prices.schedulerInvocation, 1);
  const reportPut = dollars(prices.s3Put, 1);
  const announce = dollars(prices.snsFifoPublish, 1);
  const idempotencyWrites = 2;
  const progressWrites = 2;
  const common = scheduler + reportPut + announce;
  return [
    {
      name: 'Step Functions Standard',
      usdPerMillion: perMillion(
        dollars(prices.stepFunctionsStandardTransition, STEP_FUNCTIONS_RUN.unitsPerRun) + common,
      ),
      how: `${describeRun(STEP_FUNCTIONS_RUN)} at $25/M, plus Scheduler, the report PUT and the publish; the job's Lambda on top`,
    },
    {
      name: 'Lambda durable functions',
      usdPerMillion:
        perMillion(dollars(prices.lambdaDurableOperation, DURABLE_FUNCTIONS_RUN.unitsPerRun) + common) +
        ours.lambdaJobFunctionPerMillion,
      how: `${describeRun(DURABLE_FUNCTIONS_RUN)} at $8/M, plus the function's Lambda requests and duration (ours, modelled from measured CPU), Scheduler, the report PUT and the publish`,
    },
    {
      name: 'Temporal Cloud',
      usdPerMillion: perMillion(dollars(prices.temporalCloudAction, TEMPORAL_RUN.unitsPerRun) + reportPut + announce),
      how: `${describeRun(TEMPORAL_RUN)} at $50/M, plus the report PUT and the publish; no Scheduler; the worker that runs the activity and the plan's monthly minimum on top (the monthly bill has them)`,
    },
    {
      name: 'Powertools idempotency (Scheduler → one Lambda)',
      usdPerMillion:
        perMillion(dollars(prices.dynamoWriteRequestUnit, idempotencyWrites + progressWrites) + common) +
        ours.lambdaJobFunctionPerMillion,
      how: `${idempotencyWrites} writes per new key (INPROGRESS put, COMPLETED update) plus a separate progress record (${progressWrites} writes), 1 WRU each; Lambda as ours; no queue, no lease extension, no retry of a crashed run before the record expires`,
    },
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Run-time schedules (issue 22): an occurrence of one schedule key, a schedule at rest, an upsert, an audit run.
// ---------------------------------------------------------------------------------------------------------------

/**
 * What one happy-path occurrence measured (figure 3, `npm run bench` of 2026-12-01, bench/results.json
 * `cost.usage`): the handlers' billed milliseconds on moto, log bytes with the deployed model, the publish's bytes.
 * `npm run bench` passes this run's own when it measured them.
 */
export interface MeasuredHappyPath {
  readonly triggerMs: number;
  readonly workerMs: number;
  readonly notifierMs: number;
  readonly logBytes: number;
  readonly snsPayloadBytes: number;
}

export const MEASURED_HAPPY_PATH: MeasuredHappyPath = {
  triggerMs: 46,
  workerMs: 102,
  notifierMs: 36,
  logBytes: 4_031,
  snsPayloadBytes: 690,
};

export interface KeyedOccurrenceAssumptions {
  readonly tick: KeyedTickAssumptions;
  /** The job's own run time, billed as worker duration. */
  readonly jobSeconds: number;
  readonly workerMemoryMb: number;
  readonly measured: MeasuredHappyPath;
}

export const KEYED_OCCURRENCE_ASSUMPTIONS: KeyedOccurrenceAssumptions = {
  tick: KEYED_TICK_ASSUMPTIONS,
  jobSeconds: KEYED_TICK_ASSUMPTIONS.jobSeconds,
  workerMemoryMb: 256,
  measured: MEASURED_HAPPY_PATH,
};

/**
 * One occurrence of a schedule key with its input: the happy path of figure 1 (10 requests) with the larger row.
 * Every write of the row is charged on the row (the four of the protocol, the commit point, and each heartbeat: an
 * UpdateItem bills the larger of the item before and after, so the commit point costs what a heartbeat does); the
 * series' running slot, a small row, 1 unit a take and a release; the index HAPPY_PATH_INDEX_WRITE_UNITS (its entries
 * hold no input, nor committingLease: the commit point writes none); the whole job's pause check, at most one
 * eventually consistent read.
 */
export function keyedOccurrenceUsage(a: KeyedOccurrenceAssumptions = KEYED_OCCURRENCE_ASSUMPTIONS): OccurrenceUsage {
  const u = keyedRowWriteUnits(a.tick);
  const heartbeats = Math.floor(a.jobSeconds / a.tick.heartbeatSeconds);
  const m = a.measured;
  return {
    schedulerInvocations: 1,
    lambda: [
      { fn: 'trigger', invocations: 1, ms: m.triggerMs, memoryMb: 256 },
      {
        fn: `worker (a ${a.jobSeconds}-s job)`,
        invocations: 1,
        ms: a.jobSeconds * 1000 + m.workerMs,
        memoryMb: a.workerMemoryMb,
      },
      { fn: 'notifier', invocations: 1, ms: m.notifierMs, memoryMb: 256 },
    ],
    dynamoWriteUnits:
      u.insert +
      u.claim +
      COMMIT_POINT_WRITES * u.heartbeat +
      u.complete +
      u.notify +
      heartbeats * u.heartbeat +
      2 +
      HAPPY_PATH_INDEX_WRITE_UNITS,
    dynamoReadUnits: 0.5,
    sqsStandardRequests: 3,
    s3Puts: 1,
    s3Gets: 0,
    snsFifoPublishes: 1,
    snsPayloadBytes: m.snsPayloadBytes + a.tick.scheduleKeyLength * 2,
    logBytes: m.logBytes,
  };
}

/**
 * The worker's commit point (issue 25): one fenced UpdateItem of the RUNNING row just before the report's put, so that
 * an operator's cancel never races the commit. It changes no projected attribute, so the index writes nothing for it.
 */
export const COMMIT_POINT_WRITES = 1;

/**
 * The status index's write units of one happy-path occurrence: the OPEN entry's put, the claim's and the completion's
 * update in place, the announcement's delete (6 with a key per status, before issue 24). Figure 2 measures it.
 */
export const HAPPY_PATH_INDEX_WRITE_UNITS = 4;

const GB_BYTES = 1024 ** 3;
/** DynamoDB adds 100 bytes to every item of a table and of an index for storage. */
const ITEM_STORAGE_OVERHEAD_BYTES = 100;

export interface AtRestCost {
  readonly scheduler: number;
  /** The row in the table and in `byAuditBucket` (projection ALL), and the table's continuous backup. */
  readonly registryStorage: number;
  /** The reconciler's audit and sweep, shared by the job's schedules. */
  readonly audit: number;
  readonly total: number;
}

/** Dollars per schedule and month while it fires nowhere: Scheduler charges nothing, the registry its bytes. */
export function atRestPerScheduleMonth(
  inputBytes: number,
  audit: { readonly run: AuditRun; readonly usdPerRun: number },
  prices: PriceTable,
): AtRestCost {
  const stored = (itemSize(registryRow(inputBytes)) + ITEM_STORAGE_OVERHEAD_BYTES) / GB_BYTES;
  const registryStorage = dollars(prices.dynamoStorageGbMonth, 2 * stored) + dollars(prices.dynamoPitrGbMonth, stored);
  const scheduler = dollars(prices.schedulerScheduleMonth, 1);
  const auditShare = (audit.usdPerRun * RECONCILER_RUNS_PER_MONTH) / audit.run.schedules;
  return { scheduler, registryStorage, audit: auditShare, total: scheduler + registryStorage + auditShare };
}

/** One reconciler run's audit of K buckets and its sweep: read units and the reconciler's Lambda time. */
export function auditRunCost(run: AuditRun, prices: PriceTable, memoryMb = 256): number {
  const gbSeconds = run.seconds * (memoryMb / 1024);
  return (
    dollars(prices.dynamoReadRequestUnit, run.queryReadUnits + run.sweepReadUnits) +
    dollars(prices.lambdaGbSecondArm, gbSeconds) +
    dollars(prices.lambdaRequest, 1) +
    dollars(prices.schedulerApiRequest, run.listPages)
  );
}

/** Dollars of one upsert of a new or changed schedule: its registry writes (Scheduler's calls are not billed). */
export function upsertCost(inputBytes: number, prices: PriceTable): number {
  const units = upsertUnits(inputBytes);
  return (
    dollars(prices.dynamoWriteRequestUnit, units.totalWriteUnits) +
    dollars(prices.dynamoReadRequestUnit, units.readUnits)
  );
}

export interface MonthlyReports {
  readonly schedules: number;
  readonly occurrencesPerMonth: number;
  readonly occurrences: number;
  readonly occurrencesWithoutJob: number;
  readonly atRest: number;
  /**
   * The occurrence rows kept until their TTL (retentionDays), with the table's backup; an announced occurrence has no
   * index entry.
   */
  readonly occurrenceStorage: number;
  readonly total: number;
}

/** Weeks in a month, on average. */
export const WEEKS_PER_MONTH = 365.25 / 7 / 12;

/** A month of `schedules` weekly reports (one occurrence a week each). */
export function monthlyWeeklyReports(
  schedules: number,
  perOccurrence: { readonly withJob: number; readonly withoutJob: number },
  atRest: AtRestCost,
  rowBytes: number,
  retentionDays: number,
  prices: PriceTable,
): MonthlyReports {
  const occurrencesPerMonth = schedules * WEEKS_PER_MONTH;
  const kept = schedules * (retentionDays / 7);
  // An announced occurrence leaves the status index: the rows kept take table storage only.
  const tableGb = (kept * (rowBytes + ITEM_STORAGE_OVERHEAD_BYTES)) / GB_BYTES;
  const occurrenceStorage = dollars(prices.dynamoStorageGbMonth, tableGb) + dollars(prices.dynamoPitrGbMonth, tableGb);
  const occurrences = occurrencesPerMonth * perOccurrence.withJob;
  return {
    schedules,
    occurrencesPerMonth,
    occurrences,
    occurrencesWithoutJob: occurrencesPerMonth * perOccurrence.withoutJob,
    atRest: schedules * atRest.total,
    occurrenceStorage,
    total: occurrences + schedules * atRest.total + occurrenceStorage,
  };
}
