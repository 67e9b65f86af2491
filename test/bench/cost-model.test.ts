import { describe, expect, it } from 'vitest';
import { STEP_FUNCTIONS_RUN } from '../../bench/alternative-models';
import {
  alternativeModels,
  atRestPerScheduleMonth,
  auditRunCost,
  COMMIT_POINT_WRITES,
  costPerMillion,
  KEYED_OCCURRENCE_ASSUMPTIONS,
  keyedOccurrenceUsage,
  MEASURED_HAPPY_PATH,
  monthlyWeeklyReports,
  type OccurrenceUsage,
  storagePerMillion,
  totalPerMillion,
  upsertCost,
} from '../../bench/cost-model';
import { itemSize } from '../../bench/item-size';
import { dollars, PRICES, type PriceTable } from '../../bench/prices';
import { auditRun, registryRow } from '../../bench/registry-model';

/** Every price $2 per million units (GB-seconds and GB included), so each line is 2 × its quantity. */
const FLAT: PriceTable = Object.fromEntries(
  Object.entries(PRICES).map(([k, p]) => [k, { ...p, usd: 2, per: 1e6 }]),
) as PriceTable;

const USAGE: OccurrenceUsage = {
  schedulerInvocations: 1,
  lambda: [{ fn: 'worker', invocations: 1, ms: 500, memoryMb: 512 }],
  dynamoWriteUnits: 10,
  dynamoReadUnits: 1,
  sqsStandardRequests: 3,
  s3Puts: 1,
  s3Gets: 1,
  snsFifoPublishes: 1,
  snsPayloadBytes: 1024 ** 3,
  logBytes: 2 * 1024 ** 3,
};

describe('Function: costPerMillion', () => {
  it('prices each quantity per occurrence by the table, per million occurrences', () => {
    const lines = costPerMillion(USAGE, FLAT);
    const byItem = Object.fromEntries(lines.map((l) => [l.item, l.usdPerMillion]));
    expect(byItem['Lambda duration: worker (512 MB)']).toBeCloseTo(2 * 0.25);
    expect(byItem['DynamoDB writes (table + index)']).toBeCloseTo(20);
    expect(byItem['SQS standard (job queue)']).toBeCloseTo(6);
    expect(byItem['SNS FIFO payload']).toBeCloseTo(2);
    expect(byItem['CloudWatch Logs ingestion']).toBeCloseTo(4);
    // 1 + 1 + 0.25 + 10 + 1 + 3 + 1 + 1 + 1 + 1 (payload GB) + 1 (delivery) + 2 (log GB) units, $2 each.
    expect(totalPerMillion(lines)).toBeCloseTo(2 * 23.25);
  });

  it('uses the list prices as given: S3 PUT $5, a write unit $0.625 per million', () => {
    const lines = costPerMillion({ ...USAGE, snsPayloadBytes: 0, logBytes: 0 }, PRICES);
    const byItem = Object.fromEntries(lines.map((l) => [l.item, l.usdPerMillion]));
    expect(byItem['S3 PUT']).toBeCloseTo(5);
    expect(byItem['DynamoDB writes (table + index)']).toBeCloseTo(6.25);
    expect(byItem['Scheduler invocations']).toBeCloseTo(1);
  });
});

describe('Function: storagePerMillion', () => {
  it('keeps the row and its index entry, each with 100 bytes of overhead, for the retention, and backs the row up', () => {
    const row = { rowBytes: 924, indexEntryBytes: 412, retentionDays: 730 / 24, pointInTimeRecovery: true };
    const [storage, backup] = storagePerMillion(row, FLAT);
    // One month: (1,024 + 512) bytes of storage, 1,024 of backup, per occurrence; $2 per GB-month, a million times.
    expect(storage.usdPerMillion).toBeCloseTo((2 * (1024 + 512)) / 1024 ** 3, 9);
    expect(backup.usdPerMillion).toBeCloseTo((2 * 1024) / 1024 ** 3, 9);
  });

  it('prices 90 days at the list prices: $0.25 and $0.20 a GB-month, about $0.98 per million for a 1.1 KB row', () => {
    const row = { rowBytes: 1_100, indexEntryBytes: 0, retentionDays: 90, pointInTimeRecovery: true };
    const total = totalPerMillion(storagePerMillion(row, PRICES));
    expect(total).toBeCloseTo((1_200 / 1024 ** 3) * (90 / (730 / 24)) * 0.45 * 1e6, 9);
    expect(storagePerMillion({ ...row, pointInTimeRecovery: false }, PRICES)).toHaveLength(1);
  });
});

describe('Function: alternativeModels', () => {
  it('prices each alternative from the one run model the monthly bill uses', () => {
    const [sfn, durable, temporal, idempotency] = alternativeModels(PRICES, { lambdaJobFunctionPerMillion: 0 });
    // 4 transitions × $25 + Scheduler $1 + S3 PUT $5 + SNS FIFO publish $0.30.
    expect(sfn.usdPerMillion).toBeCloseTo(100 + 1 + 5 + 0.3);
    expect(sfn.how).toContain(`≥ ${STEP_FUNCTIONS_RUN.unitsPerRun} state transitions`);
    // A Temporal schedule's fire is 3 actions before the activity: at least 4 × $50, the PUT and the publish.
    expect(temporal.usdPerMillion).toBeCloseTo(200 + 5 + 0.3);
    // 4 × $8 + Scheduler $1 + S3 PUT $5 + SNS FIFO publish $0.30.
    expect(durable.usdPerMillion).toBeCloseTo(32 + 1 + 5 + 0.3);
    // 4 writes × $0.625 + the same three.
    expect(idempotency.usdPerMillion).toBeCloseTo(2.5 + 1 + 5 + 0.3);
  });
});

describe('Run-time schedules: cost', () => {
  it('an occurrence of a keyed schedule with a 2 KB input bills 24 write units with one heartbeat', () => {
    const usage = keyedOccurrenceUsage();
    // 4 row writes, the commit point and 1 heartbeat at 3 units, the series' slot 2, the index 4.
    expect(usage.dynamoWriteUnits).toBe(6 * 3 + 2 + 4);
    const worker = usage.lambda.find((l) => l.fn.startsWith('worker'));
    expect(worker?.ms).toBe(60_000 + MEASURED_HAPPY_PATH.workerMs);
    const noJob = keyedOccurrenceUsage({ ...KEYED_OCCURRENCE_ASSUMPTIONS, jobSeconds: 0 });
    expect(noJob.dynamoWriteUnits).toBe(5 * 3 + 2 + 4);
  });

  it('the commit point adds one row write and no index write: 3 units for a 2 KB-input row', () => {
    const usage = keyedOccurrenceUsage();
    const dollarsPerMillion = (units: number) => dollars(PRICES.dynamoWriteRequestUnit, units) * 1e6;
    expect(COMMIT_POINT_WRITES).toBe(1);
    // On the small row of a fixed schedule the commit point bills 1 WRU: $0.625 per million occurrences.
    expect(dollarsPerMillion(1)).toBeCloseTo(0.625);
    expect(dollarsPerMillion(usage.dynamoWriteUnits) - dollarsPerMillion(usage.dynamoWriteUnits - 3)).toBeCloseTo(
      1.875,
    );
  });

  it('a schedule at rest costs Scheduler nothing; the registry its bytes twice (table and audit index) and backup', () => {
    const run = auditRun(100_000, 0);
    const flatRest = atRestPerScheduleMonth(0, { run, usdPerRun: 0 }, FLAT);
    expect(flatRest.scheduler).toBe(2 / 1e6); // FLAT prices even the free schedule at $2 per million
    const rest = atRestPerScheduleMonth(0, { run, usdPerRun: 0 }, PRICES);
    expect(rest.scheduler).toBe(0);
    const gb = (itemSize(registryRow(0)) + 100) / 1024 ** 3;
    expect(rest.registryStorage).toBeCloseTo(gb * (2 * 0.25 + 0.2), 15);
    const shared = atRestPerScheduleMonth(0, { run, usdPerRun: 1 }, PRICES);
    expect(shared.audit).toBeCloseTo(8_640 / 100_000, 12);
  });

  it('an upsert costs its six write units and one read', () => {
    expect(upsertCost(0, PRICES)).toBeCloseTo(6 * 0.625e-6 + 0.125e-6, 15);
    expect(upsertCost(2_048, PRICES)).toBeCloseTo(18 * 0.625e-6 + 0.125e-6, 15);
  });

  it('an audit run costs its read units, the Lambda time and one request, and nothing for ListSchedules', () => {
    const run = auditRun(1_000_000, 0);
    const expected = (run.queryReadUnits + run.sweepReadUnits) * 0.125e-6 + run.seconds * 0.25 * 0.0000133334 + 0.2e-6;
    expect(auditRunCost(run, PRICES)).toBeCloseTo(expected, 15);
  });

  it('100,000 weekly reports are 434,821 occurrences a month', () => {
    const rest = { scheduler: 0, registryStorage: 1e-6, audit: 1e-5, total: 1.1e-5 };
    const month = monthlyWeeklyReports(100_000, { withJob: 1e-4, withoutJob: 2e-5 }, rest, 1_000, 91, PRICES);
    expect(Math.round(month.occurrencesPerMonth)).toBe(434_821);
    expect(month.occurrences).toBeCloseTo(month.occurrencesPerMonth * 1e-4, 9);
    expect(month.atRest).toBeCloseTo(1.1, 9);
    // 1.3 M rows kept 91 days: 1,100 bytes each, with the table's backup; announced, they have no index entry.
    const tableGb = (1_300_000 * 1_100) / 1024 ** 3;
    expect(month.occurrenceStorage).toBeCloseTo(tableGb * 0.25 + tableGb * 0.2, 9);
    expect(month.total).toBeCloseTo(month.occurrences + month.atRest + month.occurrenceStorage, 9);
  });
});
