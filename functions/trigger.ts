/**
 * Trigger Lambda: invoked by EventBridge Scheduler with { jobId, scheduledTime }. Records the occurrence and
 * enqueues it (protocol/record-occurrence.ts). An invalid event is logged and rejected with nothing written; the
 * error makes Lambda keep the event in the trigger's dead-letter queue for inspection.
 */
import { documentClient, sqsClient } from './aws/clients';
import { DynamoOccurrenceStore } from './aws/occurrence-store';
import { SqsWorkQueue } from './aws/work-queue';
import { messageOf } from './protocol/errors';
import { type JobSettings, parseJobSettingsList } from './protocol/job-settings';
import type { Clock, Logger, OccurrenceStore, WorkQueue } from './protocol/ports';
import { systemClock } from './protocol/ports';
import { recordOccurrence, type TriggerResult } from './protocol/record-occurrence';
import { ENV, requireEnv } from './runtime-env';
import { jsonLogger } from './runtime/json-logger';

export interface TriggerOptions {
  readonly settings?: ReadonlyMap<string, JobSettings>;
  readonly store?: OccurrenceStore;
  readonly queue?: WorkQueue;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

export function createTriggerHandler(options: TriggerOptions = {}): (event: unknown) => Promise<TriggerResult> {
  const jobs = options.settings ?? parseJobSettingsList(process.env[ENV.jobSettings], ENV.jobSettings);
  const logger = options.logger ?? jsonLogger({ fn: 'trigger' });
  const deps = {
    jobs,
    logger,
    clock: options.clock ?? systemClock,
    store: options.store ?? new DynamoOccurrenceStore(documentClient(), requireEnv(ENV.tableName)),
    queue: options.queue ?? new SqsWorkQueue(sqsClient(), requireEnv(ENV.queueUrl)),
  };
  return async (event) => {
    try {
      return await recordOccurrence(deps, event);
    } catch (error) {
      logger.error('trigger failed', { event, error: messageOf(error) });
      throw error;
    }
  };
}

let deployed: ((event: unknown) => Promise<TriggerResult>) | undefined;
export const handler = (event: unknown): Promise<TriggerResult> => (deployed ??= createTriggerHandler())(event);
