/**
 * Cold-load anchor: the bare trigger's work (bench/anchors/bare-trigger.ts) made idempotent with Powertools for AWS
 * Lambda instead of the occurrence protocol: `makeIdempotent` with a DynamoDB persistence layer, keyed on the whole
 * event ({ jobId, scheduledTime }). Never deployed: bench/cold-load.ts bundles it as the stack bundles the trigger and
 * counts the instructions Node spends loading it.
 *
 * Built on the first invocation, like the trigger and the bare anchor, so that the benchmark compares code loaded,
 * not where each handler builds its clients.
 */
import { makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import {
  type BareTriggerEvent,
  type BareTriggerResult,
  bareClients,
  createBareTriggerHandler,
  requireValue,
} from './bare-trigger';

export interface IdempotentTriggerOptions {
  readonly idempotencyTableName: string;
  /** The client of the persistence layer's own reads and writes. */
  readonly idempotencyClient?: DynamoDBClient;
}

/** Takes Lambda's context as Powertools expects: it bounds an in-progress record by the invocation's remaining time. */
export type IdempotentTriggerHandler = (event: BareTriggerEvent, context: Context) => Promise<BareTriggerResult>;

export function createIdempotentTriggerHandler(
  work: (event: BareTriggerEvent, context: Context) => Promise<BareTriggerResult>,
  options: IdempotentTriggerOptions,
): IdempotentTriggerHandler {
  const persistenceStore = new DynamoDBPersistenceLayer({
    tableName: options.idempotencyTableName,
    awsSdkV3Client: options.idempotencyClient ?? new DynamoDBClient({}),
  });
  return makeIdempotent(work, { persistenceStore });
}

let deployed: IdempotentTriggerHandler | undefined;
export const handler = (event: BareTriggerEvent, context: Context): Promise<BareTriggerResult> => {
  deployed ??= createIdempotentTriggerHandler(createBareTriggerHandler(bareClients()), {
    idempotencyTableName: requireValue(process.env, 'IDEMPOTENCY_TABLE_NAME'),
  });
  return deployed(event, context);
};
