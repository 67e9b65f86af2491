/**
 * Plays Lambda's DynamoDB stream event source for the local run: reads every shard of the occurrences table's
 * stream from its start (TRIM_HORIZON, as the stack's event source), invokes the notifier with batches of records
 * in the shape Lambda gives them, and on batchItemFailures retries from the first failed record, in order.
 */
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { LOCAL_REGION } from './local-aws';

type LambdaImage = NonNullable<NonNullable<DynamoDBRecord['dynamodb']>['NewImage']>;

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;

export interface StreamEventSourceOptions {
  readonly streams: DynamoDBStreamsClient;
  readonly streamArn: string;
  readonly handler: StreamHandler;
  /** As the stack's event source. */
  readonly batchSize: number;
  readonly pollIntervalMs?: number;
  /** Retries of one failing record before the run gives up on it (the stack retries until the record expires). */
  readonly maxRetries?: number;
  readonly onError?: (message: string) => void;
}

export class StreamEventSource {
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly iterators = new Map<string, string | undefined>();
  readonly totals = { invocations: 0, records: 0, failedRecords: 0 };

  constructor(private readonly options: StreamEventSourceOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.poll();
  }

  /** Reads what is in the stream now, then stops. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.drainOnce();
  }

  private async poll(): Promise<void> {
    while (this.running) {
      const handled = await this.drainOnce();
      if (handled === 0) await new Promise((resolve) => setTimeout(resolve, this.options.pollIntervalMs ?? 200));
    }
  }

  /** One pass over every shard; returns the number of records handed to the handler. */
  async drainOnce(): Promise<number> {
    const described = await this.options.streams.send(new DescribeStreamCommand({ StreamArn: this.options.streamArn }));
    let handled = 0;
    for (const shard of described.StreamDescription?.Shards ?? []) {
      const shardId = shard.ShardId ?? '';
      if (!this.iterators.has(shardId)) {
        const start = await this.options.streams.send(
          new GetShardIteratorCommand({
            StreamArn: this.options.streamArn,
            ShardId: shardId,
            ShardIteratorType: 'TRIM_HORIZON',
          }),
        );
        this.iterators.set(shardId, start.ShardIterator);
      }
      const iterator = this.iterators.get(shardId);
      if (iterator === undefined) continue; // a closed shard, read to its end
      const page = await this.options.streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      const records = (page.Records ?? []).map((r) => lambdaRecord(r, this.options.streamArn));
      for (let i = 0; i < records.length; i += this.options.batchSize) {
        await this.deliver(records.slice(i, i + this.options.batchSize));
      }
      handled += records.length;
      this.iterators.set(shardId, page.NextShardIterator);
    }
    return handled;
  }

  /** Delivers a batch in order; a failed record and the ones after it are retried, as the stack's source does. */
  private async deliver(batch: DynamoDBRecord[]): Promise<void> {
    let pending = batch;
    for (let attempt = 0; pending.length > 0; attempt++) {
      this.totals.invocations += 1;
      let response: DynamoDBBatchResponse;
      try {
        response = await this.options.handler({ Records: pending });
      } catch (error) {
        response = { batchItemFailures: [{ itemIdentifier: pending[0].dynamodb?.SequenceNumber ?? '' }] };
        this.options.onError?.(`notifier threw: ${error instanceof Error ? error.message : String(error)}`);
      }
      const firstFailed = pending.findIndex((r) =>
        response.batchItemFailures.some((f) => f.itemIdentifier === r.dynamodb?.SequenceNumber),
      );
      this.totals.records += firstFailed === -1 ? pending.length : firstFailed;
      if (firstFailed === -1) return;
      if (attempt >= (this.options.maxRetries ?? 5)) {
        this.totals.failedRecords += pending.length - firstFailed;
        this.options.onError?.(
          `notifier kept failing on stream record ${pending[firstFailed].dynamodb?.SequenceNumber}; ` +
            `${pending.length - firstFailed} record(s) not delivered`,
        );
        return;
      }
      pending = pending.slice(firstFailed);
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
    }
  }
}

function lambdaRecord(record: StreamRecord, streamArn: string): DynamoDBRecord {
  const d = record.dynamodb ?? {};
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: LOCAL_REGION,
    eventSourceARN: streamArn,
    dynamodb: {
      // Lambda gives whole seconds since the epoch where the SDK gives a Date.
      ApproximateCreationDateTime:
        d.ApproximateCreationDateTime === undefined
          ? undefined
          : Math.floor(d.ApproximateCreationDateTime.getTime() / 1000),
      // The SDK's AttributeValue and the event's are the same JSON; only their TypeScript types differ.
      Keys: d.Keys as LambdaImage | undefined,
      NewImage: d.NewImage as LambdaImage | undefined,
      OldImage: d.OldImage as LambdaImage | undefined,
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType,
    },
  };
}
