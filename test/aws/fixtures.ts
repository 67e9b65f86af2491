import { ConditionalCheckFailedException, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { iso, type Occurrence, type OccurrenceKey, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { expectedStatusShard } from '../../functions/protocol/table-schema';

export const TABLE = 'occurrences-table';
export const KEY = { jobId: 'daily-report', scheduledTime: '2026-11-30T06:00:00Z' } as const;
export const NOW = Date.parse('2026-11-30T06:00:05.000Z');
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;

export function occurrence(overrides: Partial<Occurrence> = {}): Occurrence {
  return {
    ...KEY,
    status: OccurrenceStatus.PENDING,
    attempt: 0,
    deadlineAt: iso(NOW + 60 * MINUTE),
    createdAt: iso(NOW - 5 * SECOND),
    ttl: Math.floor(NOW / 1000) + 90 * 24 * 3600,
    ...overrides,
  };
}

/**
 * A row seeded directly into a table, with the status index key it has as it stands (the store writes it with every
 * status, and removes it with the announcement); other objects are left as they are.
 */
export function indexed<T extends object>(row: T): T {
  const r = row as Partial<OccurrenceKey> & { status?: unknown };
  if (typeof r.jobId !== 'string' || typeof r.scheduledTime !== 'string' || typeof r.status !== 'string') return row;
  const { statusShard: _, ...rest } = row as T & { statusShard?: string };
  const statusShard = expectedStatusShard(row as unknown as Occurrence);
  // An announced success has left the index: no key.
  return (statusShard === undefined ? rest : { ...rest, statusShard }) as T;
}

/** The exception DynamoDB returns for a failed condition with ReturnValuesOnConditionCheckFailure=ALL_OLD. */
export function conditionFailed(oldRow?: Occurrence): ConditionalCheckFailedException {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: { httpStatusCode: 400 },
    ...(oldRow === undefined ? {} : { Item: marshall(oldRow, { removeUndefinedValues: true }) }),
  });
}

export const throttled = () =>
  new ProvisionedThroughputExceededException({
    message: 'Rate of requests exceeds the allowed throughput',
    $metadata: { httpStatusCode: 400 },
  });

export const validationError = () =>
  Object.assign(new Error('One or more parameter values were invalid'), {
    name: 'ValidationException',
    $metadata: { httpStatusCode: 400 },
  });
