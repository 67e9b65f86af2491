/**
 * The one price table of the bench: us-east-1 list prices, each with its source page and the date it is as of.
 * None was re-checked when this file was written (the machine has no internet): re-check them against the pages
 * before quoting a figure outside this repository.
 */
export interface Price {
  /** US dollars per `per` units of `unit`. */
  readonly usd: number;
  readonly per: number;
  readonly unit: string;
  readonly source: string;
  readonly checked: string;
}

const NOT_RECHECKED = (asOf: string) => `not re-checked here (no internet); list price as of ${asOf}`;
const LAMBDA = 'https://aws.amazon.com/lambda/pricing/';
const DYNAMODB = 'https://aws.amazon.com/dynamodb/pricing/on-demand/';
const SQS = 'https://aws.amazon.com/sqs/pricing/';
const S3 = 'https://aws.amazon.com/s3/pricing/';
const SNS = 'https://aws.amazon.com/sns/pricing/';
const CLOUDWATCH = 'https://aws.amazon.com/cloudwatch/pricing/';

export const PRICES = {
  schedulerInvocation: {
    usd: 1,
    per: 1e6,
    unit: 'Scheduler invocation',
    source: 'https://aws.amazon.com/eventbridge/pricing/',
    checked: NOT_RECHECKED('2025-06'),
  },
  lambdaRequest: { usd: 0.2, per: 1e6, unit: 'Lambda request', source: LAMBDA, checked: NOT_RECHECKED('2025-06') },
  /** The stack's functions are arm64 (lib/job-function.ts FUNCTION_ARCHITECTURE). */
  lambdaGbSecondArm: {
    usd: 0.0000133334,
    per: 1,
    unit: 'GB-second, arm64',
    source: LAMBDA,
    checked: NOT_RECHECKED('2025-06'),
  },
  dynamoWriteRequestUnit: {
    usd: 0.625,
    per: 1e6,
    unit: 'on-demand write request unit',
    source: DYNAMODB,
    checked: NOT_RECHECKED('2024-11 (the on-demand price cut)'),
  },
  dynamoStorageGbMonth: {
    usd: 0.25,
    per: 1,
    unit: 'GB-month of DynamoDB Standard table storage (tables and indexes; 100 bytes of overhead per item)',
    source: DYNAMODB,
    checked: NOT_RECHECKED('2025-06'),
  },
  dynamoPitrGbMonth: {
    usd: 0.2,
    per: 1,
    unit: 'GB-month of DynamoDB continuous backup (point-in-time recovery) of the table',
    source: DYNAMODB,
    checked: NOT_RECHECKED('2025-06'),
  },
  schedulerScheduleMonth: {
    usd: 0,
    per: 1,
    unit: 'Scheduler schedule at rest, a month',
    source: 'https://aws.amazon.com/eventbridge/pricing/ (Scheduler bills invocations only)',
    checked: NOT_RECHECKED('2025-06'),
  },
  schedulerApiRequest: {
    usd: 0,
    per: 1e6,
    unit: 'Scheduler API request (CreateSchedule, UpdateSchedule, ListSchedules, ...)',
    source: 'https://aws.amazon.com/eventbridge/pricing/ (Scheduler bills invocations only)',
    checked: NOT_RECHECKED('2025-06'),
  },
  dynamoReadRequestUnit: {
    usd: 0.125,
    per: 1e6,
    unit: 'on-demand read request unit',
    source: DYNAMODB,
    checked: NOT_RECHECKED('2024-11 (the on-demand price cut)'),
  },
  sqsStandardRequest: {
    usd: 0.4,
    per: 1e6,
    unit: 'SQS standard request (64 KB chunk)',
    source: SQS,
    checked: NOT_RECHECKED('2025-06'),
  },
  sqsFifoRequest: {
    usd: 0.5,
    per: 1e6,
    unit: 'SQS FIFO request (64 KB chunk)',
    source: SQS,
    checked: NOT_RECHECKED('2025-06'),
  },
  s3Put: {
    usd: 0.005,
    per: 1e3,
    unit: 'S3 Standard PUT, COPY, POST, LIST',
    source: S3,
    checked: NOT_RECHECKED('2025-06'),
  },
  s3Get: {
    usd: 0.0004,
    per: 1e3,
    unit: 'S3 Standard GET, SELECT and all other requests (HEAD)',
    source: S3,
    checked: NOT_RECHECKED('2025-06'),
  },
  snsFifoPublish: {
    usd: 0.3,
    per: 1e6,
    unit: 'SNS FIFO publish request',
    source: SNS,
    checked: NOT_RECHECKED('2025-06'),
  },
  snsFifoPayloadGb: {
    usd: 0.017,
    per: 1,
    unit: 'GB of SNS FIFO publish payload',
    source: SNS,
    checked: NOT_RECHECKED('2025-06'),
  },
  snsFifoDeliveryToSqs: {
    usd: 0.01,
    per: 1e6,
    unit: 'SNS FIFO message delivered to an SQS FIFO subscription',
    source: SNS,
    checked: NOT_RECHECKED('2025-06'),
  },
  logsIngestionGb: {
    usd: 0.5,
    per: 1,
    unit: 'GB of CloudWatch Logs (Standard) ingested',
    source: CLOUDWATCH,
    checked: NOT_RECHECKED('2025-06'),
  },
  logsStorageGbMonth: {
    usd: 0.03,
    per: 1,
    unit: 'GB-month of CloudWatch Logs archived (compressed; the bill counts the bytes uncompressed, an upper bound)',
    source: CLOUDWATCH,
    checked: NOT_RECHECKED('2025-06'),
  },
  customMetricMonth: {
    usd: 0.3,
    per: 1,
    unit: 'custom metric-month (first 10,000)',
    source: CLOUDWATCH,
    checked: NOT_RECHECKED('2025-06'),
  },
  cloudwatchAlarmStandard: {
    usd: 0.1,
    per: 1,
    unit: 'standard-resolution alarm metric-month (one metric per alarm)',
    source: CLOUDWATCH,
    checked: NOT_RECHECKED('2025-06'),
  },
  cloudwatchDashboard: {
    usd: 3,
    per: 1,
    unit: 'dashboard-month (beyond the first 3 free; the bill counts every one)',
    source: CLOUDWATCH,
    checked: NOT_RECHECKED('2025-06'),
  },
  temporalCloudAction: {
    usd: 50,
    per: 1e6,
    unit: 'Temporal Cloud action (first tier, Essentials plan)',
    source: 'https://temporal.io/pricing',
    checked: NOT_RECHECKED('2025-06'),
  },
  temporalCloudEssentialsMonth: {
    usd: 100,
    per: 1,
    unit: 'Temporal Cloud Essentials plan, monthly minimum',
    source: 'https://temporal.io/pricing',
    checked: NOT_RECHECKED('2025-06'),
  },
  fargateArmVcpuHour: {
    usd: 0.03238,
    per: 1,
    unit: 'Fargate vCPU-hour, Linux/ARM (an always-on Temporal worker)',
    source: 'https://aws.amazon.com/fargate/pricing/',
    checked: NOT_RECHECKED('2025-06'),
  },
  fargateArmGbHour: {
    usd: 0.00356,
    per: 1,
    unit: 'Fargate GB-hour, Linux/ARM',
    source: 'https://aws.amazon.com/fargate/pricing/',
    checked: NOT_RECHECKED('2025-06'),
  },
  stepFunctionsStandardTransition: {
    usd: 25,
    per: 1e6,
    unit: 'Step Functions Standard state transition',
    source: 'https://aws.amazon.com/step-functions/pricing/',
    checked: NOT_RECHECKED('2025-06; also in the design notes'),
  },
  lambdaDurableOperation: {
    usd: 8,
    per: 1e6,
    unit: 'Lambda durable functions operation',
    source: LAMBDA,
    checked: NOT_RECHECKED('2025-12 (launch); also in the design notes'),
  },
} as const satisfies Record<string, Price>;

export type PriceTable = Readonly<Record<keyof typeof PRICES, Price>>;

/** The dollars of `quantity` units at `price`. */
export function dollars(price: Price, quantity: number): number {
  return (price.usd / price.per) * quantity;
}
