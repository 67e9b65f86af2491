/**
 * Events Lambda (opt-in, ScheduledJobsProps.stateChangeEvents): the occurrences table's stream, filtered by the
 * stack to terminal transitions and to a job pausing itself after failures, put on EventBridge as one event each
 * (protocol/occurrence-events.ts maps a record; aws/event-publisher.ts puts them).
 *
 *   stream batch ─▶ map each record (none | event | malformed) ─▶ PutEvents in order, ten a call
 *               ─▶ the first record not put, and every one after it, back to the stream (batchItemFailures)
 *
 * A function of its own rather than the notifier's: it is made only when asked for, an EventBridge outage holds back
 * these events and not the "report ready" announcements (a stream event source retries a shard's records in order),
 * and each one has its own filter, retries and failure queue. Two readers of one stream is DynamoDB's
 * recommended maximum per shard: docs/events.md says so for users who add their own.
 *
 * A record that cannot be read (an image that is no occurrence) is logged with its sequence number and skipped, as
 * the notifier does: retrying it would never help, and would hold back every record behind it.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { EventBridgePublisher, type PutEventsClient, sdkPutEventsClient } from './aws/event-publisher';
import { messageOf } from './protocol/errors';
import {
  type EventMappingOptions,
  eventOfChange,
  type MappedChange,
  type StateChangeEvent,
  tableOfStreamArn,
} from './protocol/occurrence-events';
import type { Logger } from './protocol/ports';
import { powertoolsLogger } from './runtime/powertools-logger';
import { ENV, requireEnv } from './runtime-env';

export interface EventsHandlerOptions extends EventMappingOptions {
  /** PutEvents; default the SDK's EventBridgeClient. */
  readonly client?: PutEventsClient;
  /** The bus's name or ARN; default the EVENT_BUS_NAME the stack sets. */
  readonly eventBusName?: string;
  readonly logger?: Logger;
  /** Waits between PutEvents retries (tests pass one that does not wait). */
  readonly sleep?: (ms: number) => Promise<void>;
}

type StreamImage = Parameters<typeof unmarshall>[0];
type EventsHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;

export function createEventsHandler(options: EventsHandlerOptions = {}): EventsHandler {
  const logger = options.logger ?? powertoolsLogger('events');
  const mapping: EventMappingOptions = {
    bucketName: options.bucketName ?? process.env[ENV.bucketName],
    consoleUrl: options.consoleUrl ?? (process.env[ENV.consoleUrl] || undefined),
  };
  const eventBusName = options.eventBusName ?? requireEnv(ENV.eventBusName);
  const publisher = new EventBridgePublisher(options.client ?? sdkPutEventsClient(), {
    eventBusName,
    sleep: options.sleep,
  });

  return async (event) => {
    const pending: { record: DynamoDBRecord; event: StateChangeEvent }[] = [];
    for (const record of event.Records) {
      const mapped = mapRecord(record, mapping);
      if (mapped.kind === 'event') pending.push({ record, event: mapped.event });
      if (mapped.kind === 'malformed') {
        logger.error('unreadable stream record; no event for it, the rest of the batch goes on', {
          sequenceNumber: record.dynamodb?.SequenceNumber,
          keys: record.dynamodb?.Keys,
          problem: mapped.problem,
        });
      }
    }
    if (pending.length === 0) return { batchItemFailures: [] };
    const result = await publisher.publish(pending.map((p) => p.event));
    if (result.failure === undefined) return { batchItemFailures: [] };
    const first = pending[result.put];
    logger.error('state-change event not put; the stream retries from its record', {
      sequenceNumber: first.record.dynamodb?.SequenceNumber,
      detailType: first.event.detailType,
      eventId: first.event.detail.eventId,
      jobId: first.event.detail.jobId,
      kind: result.failure.kind,
      code: result.failure.code,
      error: result.failure.message,
      put: result.put,
    });
    // The stream retries from the lowest sequence number reported; every record from it on is named.
    const from = event.Records.indexOf(first.record);
    return {
      batchItemFailures: event.Records.slice(from).map((r) => ({ itemIdentifier: r.dynamodb?.SequenceNumber ?? '' })),
    };
  };
}

/** The event of one stream record, its images unmarshalled; an image that cannot be unmarshalled is malformed. */
export function mapRecord(record: DynamoDBRecord, options: EventMappingOptions): MappedChange {
  const table = tableOfStreamArn(record.eventSourceARN);
  if (table === undefined) {
    return { kind: 'malformed', problem: `eventSourceARN ${String(record.eventSourceARN)} is not a table stream` };
  }
  const { NewImage, OldImage, ApproximateCreationDateTime } = record.dynamodb ?? {};
  try {
    return eventOfChange(
      {
        eventName: record.eventName ?? '',
        newImage: NewImage === undefined ? undefined : unmarshall(NewImage as StreamImage),
        oldImage: OldImage === undefined ? undefined : unmarshall(OldImage as StreamImage),
        table,
        recordedAt: new Date((ApproximateCreationDateTime ?? 0) * 1000).toISOString(),
      },
      options,
    );
  } catch (error) {
    return { kind: 'malformed', problem: messageOf(error) };
  }
}

let deployed: EventsHandler | undefined;
export const handler: EventsHandler = (event) => {
  deployed ??= createEventsHandler();
  return deployed(event);
};
