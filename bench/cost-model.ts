/**
 * Figure 3: dollars per million occurrences from what one occurrence used (measured on moto) and one price table
 * (bench/prices.ts). Beside it, the same work on three alternatives, as models: their request counts are not
 * measured here, they follow from how each one bills.
 */
import { dollars, type PriceTable } from './prices';

export interface LambdaUse {
  readonly fn: string;
  readonly invocations: number;
  /** Billed duration per occurrence, summed over its invocations (Lambda rounds each up to 1 ms). */
  readonly ms: number;
  readonly memoryMb: number;
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
  const sfnTransitions = 4;
  const durableOperations = 4;
  const idempotencyWrites = 2;
  const progressWrites = 2;
  return [
    {
      name: 'Step Functions Standard',
      usdPerMillion: perMillion(
        dollars(prices.stepFunctionsStandardTransition, sfnTransitions) + scheduler + reportPut + announce,
      ),
      how: `≥ ${sfnTransitions} state transitions a run (start, run job, write report, announce) at $25/M, plus Scheduler, the report PUT and the publish; the job's Lambda on top`,
    },
    {
      name: 'Lambda durable functions',
      usdPerMillion:
        perMillion(dollars(prices.lambdaDurableOperation, durableOperations) + scheduler + reportPut + announce) +
        ours.lambdaJobFunctionPerMillion,
      how: `${durableOperations} durable operations a run (start, run step, report step, announce step) at $8/M, plus the function's Lambda requests and duration (ours, measured), Scheduler, the report PUT and the publish`,
    },
    {
      name: 'Powertools idempotency (Scheduler → one Lambda)',
      usdPerMillion:
        perMillion(
          dollars(prices.dynamoWriteRequestUnit, idempotencyWrites + progressWrites) + scheduler + reportPut + announce,
        ) + ours.lambdaJobFunctionPerMillion,
      how: `${idempotencyWrites} writes per new key (INPROGRESS put, COMPLETED update) plus a separate progress record (${progressWrites} writes), 1 WRU each; Lambda as ours; no queue, no lease extension, no retry of a crashed run before the record expires`,
    },
  ];
}
