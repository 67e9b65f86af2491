/**
 * Notifier Lambda: the occurrences table's stream, filtered by the stack to the transition to SUCCEEDED.
 * Announces each report once (protocol/announce-report.ts), from the record's new image: the stream's view is
 * NEW_AND_OLD_IMAGES, so the row as the transition wrote it is in the record and a fresh record needs no read.
 * Records are handled in order; on a failure the handler reports that record and the rest of the batch, so the
 * stream retries from there. A record whose image cannot be read is reported in the log and the batch goes on:
 * retrying it would never help, and would hold back every record behind it.
 */

import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { SnsAnnouncer } from './aws/announcer';
import { documentClient, snsClient } from './aws/clients';
import { DynamoOccurrenceStore } from './aws/occurrence-store';
import { announceFromStreamImage } from './protocol/announce-report';
import { messageOf } from './protocol/errors';
import { OccurrenceStatus } from './protocol/occurrence';
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
      const image = succeededImage(record, logger);
      if (image === undefined) continue;
      try {
        await announceFromStreamImage(deps, image);
      } catch (error) {
        logger.error('announcement failed; the stream retries from this record', {
          ...keyFields(image),
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

/**
 * The new image of a change to SUCCEEDED, unmarshalled but not yet checked (announceFromStreamImage checks it), or
 * undefined for any other record. The event source filter passes only this transition; it is checked again so a
 * wider filter cannot double-send. An image that cannot be unmarshalled is logged and skipped.
 */
function succeededImage(record: DynamoDBRecord, logger: Logger): Record<string, unknown> | undefined {
  const image = record.dynamodb?.NewImage;
  const before = record.dynamodb?.OldImage;
  if (record.eventName !== 'MODIFY' || image === undefined || before === undefined) return undefined;
  let after: Record<string, unknown>;
  let was: unknown;
  try {
    after = unmarshall(image as StreamImage);
    was = unmarshall(before as StreamImage).status;
  } catch (error) {
    logger.error('unreadable stream record; skipped (the reconciler announces the row if it is SUCCEEDED)', {
      sequenceNumber: record.dynamodb?.SequenceNumber,
      error: messageOf(error),
    });
    return undefined;
  }
  return after.status === OccurrenceStatus.SUCCEEDED && was !== OccurrenceStatus.SUCCEEDED ? after : undefined;
}

const keyFields = (image: Record<string, unknown>) => ({ jobId: image.jobId, scheduledTime: image.scheduledTime });

let deployed: ((event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>) | undefined;
export const handler = (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  deployed ??= createNotifierHandler();
  return deployed(event);
};
