import { describe, expect, it } from 'vitest';
import { alternativeModels, costPerMillion, type OccurrenceUsage, totalPerMillion } from '../../bench/cost-model';
import { PRICES, type PriceTable } from '../../bench/prices';

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

describe('Function: alternativeModels', () => {
  it('puts Step Functions Standard at no less than $100 per million and durable functions at $32 plus the rest', () => {
    const [sfn, durable, idempotency] = alternativeModels(PRICES, { lambdaJobFunctionPerMillion: 0 });
    expect(sfn.usdPerMillion).toBeGreaterThanOrEqual(100);
    // 4 × $8 + Scheduler $1 + S3 PUT $5 + SNS FIFO publish $0.30.
    expect(durable.usdPerMillion).toBeCloseTo(32 + 1 + 5 + 0.3);
    // 4 writes × $0.625 + the same three.
    expect(idempotency.usdPerMillion).toBeCloseTo(2.5 + 1 + 5 + 0.3);
  });
});
