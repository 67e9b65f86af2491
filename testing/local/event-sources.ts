/**
 * The event sources of a local run, as Lambda's event source mappings would poll them: each worker queue's pollers
 * (batches filtered by the mapping's FilterCriteria, batchItemFailures honoured only with ReportBatchItemFailures)
 * and each table stream's reader, until stopped.
 */
import type { DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { LocalApp } from './app-model';
import { passesFilters, sqsRecordForFilter } from './event-filter';
import type { ResolveContext } from './intrinsics';
import type { LoadedFunction } from './load-functions';
import type { LocalClients } from './local-aws';
import { lambdaContext, SqsEventSource } from './sqs-event-source';
import { StreamEventSource } from './stream-event-source';

/** The worker queues' and the table streams' event sources, polling until stopped. */
export function startSources(
  app: LocalApp,
  context: ResolveContext,
  clients: LocalClients,
  functions: ReadonlyMap<string, LoadedFunction>,
  pollers: number,
): { stop(): Promise<void> } {
  const queueSources = app.workers.map((worker) => {
    const fn = functions.get(worker.function) as LoadedFunction;
    const queue = context.resources.get(worker.queue);
    return new SqsEventSource({
      sqs: clients.sqs,
      queueUrl: queue?.ref ?? '',
      queueArn: queue?.attributes.Arn ?? '',
      functionTimeoutSeconds: fn.spec.timeoutSeconds,
      batchSize: Math.min(worker.batchSize, 10),
      pollers,
      handler: async (event, lambda) => {
        // Lambda deletes the messages its filter drops, without an invocation.
        const records = event.Records.filter((r) => passesFilters(sqsRecordForFilter(r), worker.filters));
        if (records.length === 0) return { batchItemFailures: [] };
        const response = (await fn.invoke({ ...event, Records: records } satisfies SQSEvent, lambda)) as
          | SQSBatchResponse
          | undefined;
        // Without ReportBatchItemFailures Lambda reads no response: the batch succeeded as it did not throw.
        return worker.reportBatchItemFailures && response?.batchItemFailures !== undefined
          ? response
          : { batchItemFailures: [] };
      },
    });
  });
  const streamSources = app.streamSources.map((source) => {
    const fn = functions.get(source.function) as LoadedFunction;
    return new StreamEventSource({
      streams: clients.streams,
      streamArn: context.resources.get(source.table)?.attributes.StreamArn ?? '',
      batchSize: source.batchSize,
      maxRetries:
        source.maximumRetryAttempts === undefined || source.maximumRetryAttempts < 0
          ? undefined
          : source.maximumRetryAttempts,
      handler: async (event) => {
        const records = event.Records.filter((r) => passesFilters(r, source.filters));
        if (records.length === 0) return { batchItemFailures: [] };
        const response = await fn.invoke(
          { Records: records } satisfies DynamoDBStreamEvent,
          lambdaContext(fn.label, fn.spec.timeoutSeconds),
        );
        const failures = (response as { batchItemFailures?: { itemIdentifier: string }[] } | undefined)
          ?.batchItemFailures;
        return { batchItemFailures: source.reportBatchItemFailures && failures !== undefined ? failures : [] };
      },
    });
  });
  for (const source of [...queueSources, ...streamSources]) source.start();
  return {
    stop: async () => {
      await Promise.all(queueSources.map((s) => s.stop()));
      await Promise.all(streamSources.map((s) => s.stop()));
    },
  };
}
