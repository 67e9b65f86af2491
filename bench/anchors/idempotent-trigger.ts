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

export function createIdempotentTriggerHandler(
  work: (event: BareTriggerEvent) => Promise<BareTriggerResult>,
  options: IdempotentTriggerOptions,
): (event: BareTriggerEvent) => Promise<BareTriggerResult> {
  const persistenceStore = new DynamoDBPersistenceLayer({
    tableName: options.idempotencyTableName,
    awsSdkV3Client: options.idempotencyClient ?? new DynamoDBClient({}),
  });
  return makeIdempotent(work, { persistenceStore });
}

let deployed: ((event: BareTriggerEvent) => Promise<BareTriggerResult>) | undefined;
export const handler = (event: BareTriggerEvent): Promise<BareTriggerResult> => {
  deployed ??= createIdempotentTriggerHandler(createBareTriggerHandler(bareClients()), {
    idempotencyTableName: requireValue(process.env, 'IDEMPOTENCY_TABLE_NAME'),
  });
  return deployed(event);
};
