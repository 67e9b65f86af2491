/**
 * Notifier Lambda: the occurrences table's stream, filtered by the stack to the transition to SUCCEEDED.
 * Announces each report once (protocol/announce-report.ts). Records are handled in order; on a failure the
 * handler reports that record and the rest of the batch, so the stream retries from there.
 */

import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { SnsAnnouncer } from './aws/announcer';
import { documentClient, snsClient } from './aws/clients';
import { DynamoOccurrenceStore } from './aws/occurrence-store';
import { announceReport } from './protocol/announce-report';
import { messageOf } from './protocol/errors';
import { type Occurrence, OccurrenceStatus } from './protocol/occurrence';
import type { Announcer, Clock, Logger, OccurrenceStore } from './protocol/ports';
import { systemClock } from './protocol/ports';
import { powertoolsLogger } from './runtime/powertools-logger';
import { ENV, requireEnv } from './runtime-env';

export interface NotifierOptions {
  readonly store?: OccurrenceStore;
  readonly announcer?: Announcer;
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly bucketName?: string;
}

type StreamImage = Parameters<typeof unmarshall>[0];

export function createNotifierHandler(
  options: NotifierOptions = {},
): (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse> {
  const logger = options.logger ?? powertoolsLogger('notifier');
  const deps = {
    logger,
    clock: options.clock ?? systemClock,
    store: options.store ?? new DynamoOccurrenceStore(documentClient(), requireEnv(ENV.tableName)),
    announcer: options.announcer ?? new SnsAnnouncer(snsClient(), requireEnv(ENV.topicArn)),
    bucketName: options.bucketName ?? requireEnv(ENV.bucketName),
  };
  return async (event) => {
    for (const [i, record] of event.Records.entries()) {
      const image = record.dynamodb?.NewImage;
      const before = record.dynamodb?.OldImage;
      if (record.eventName !== 'MODIFY' || image === undefined || before === undefined) continue;
      const changed = unmarshall(image as StreamImage) as Occurrence;
      const was = (unmarshall(before as StreamImage) as Occurrence).status;
      // The event source filter passes only this transition; check again so a wider filter cannot double-send.
      if (changed.status !== OccurrenceStatus.SUCCEEDED || was === OccurrenceStatus.SUCCEEDED) continue;
      try {
        await announceReport(deps, changed);
      } catch (error) {
        logger.error('announcement failed; the stream retries from this record', {
          jobId: changed.jobId,
          scheduledTime: changed.scheduledTime,
          error: messageOf(error),
        });
        return {
          batchItemFailures: event.Records.slice(i).map((r) => ({ itemIdentifier: r.dynamodb?.SequenceNumber ?? '' })),
        };
      }
    }
    return { batchItemFailures: [] };
  };
}

let deployed: ((event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>) | undefined;
export const handler = (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  deployed ??= createNotifierHandler();
  return deployed(event);
};
