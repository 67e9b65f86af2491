/**
 * What a local run reads back once its rows have settled: the committed reports, the announcements on the queues
 * subscribed to the stack's topics, and what each worker's dead-letter queue holds.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Occurrence } from '../../functions/protocol/occurrence';
import { ENV } from '../../functions/runtime-env';
import type { LocalApp } from './app-model';
import type { ResolveContext } from './intrinsics';
import type { LoadedFunction } from './load-functions';
import type { LocalClients } from './local-aws';

/** The reports of the SUCCEEDED rows, from the bucket their worker writes to (REPORT_BUCKET_NAME). */
export async function readReports(
  clients: LocalClients,
  functions: ReadonlyMap<string, LoadedFunction>,
  rows: readonly (Occurrence | undefined)[],
): Promise<Map<number, string>> {
  const buckets = [...functions.values()].map((f) => f.env[ENV.bucketName]).filter((b) => b !== undefined);
  const reports = new Map<number, string>();
  for (const [i, row] of rows.entries()) {
    if (row?.reportKey === undefined || buckets.length === 0) continue;
    const object = await clients.s3.send(new GetObjectCommand({ Bucket: buckets[0], Key: row.reportKey }));
    reports.set(i, (await object.Body?.transformToString()) ?? '');
  }
  return reports;
}

/** Takes every message off the queues subscribed to the stack's topics (the report-ready announcements). */
export async function drainSubscribedQueues(
  app: LocalApp,
  context: ResolveContext,
  clients: LocalClients,
): Promise<unknown[]> {
  const bodies: unknown[] = [];
  for (const subscription of app.subscriptions) {
    const url = context.resources.get(subscription.queue)?.ref;
    // Bounded: a queue of at most 100 batches of 10.
    for (let i = 0; i < 100 && url !== undefined; i++) {
      const received = await clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
      );
      const messages = received.Messages ?? [];
      if (messages.length === 0) break;
      for (const m of messages) {
        bodies.push(parseOrText(m.Body ?? ''));
        await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
      }
    }
  }
  return bodies;
}

/** Messages in each worker queue's dead-letter queue, visible or not. */
export async function deadLetterCounts(
  app: LocalApp,
  context: ResolveContext,
  clients: LocalClients,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const worker of app.workers) {
    const queue = app.queues.find((q) => q.logicalId === worker.queue);
    const target = (queue?.redrivePolicy as { deadLetterTargetArn?: unknown } | undefined)?.deadLetterTargetArn;
    const dlqId = (target as { 'Fn::GetAtt'?: string[] } | undefined)?.['Fn::GetAtt']?.[0];
    const url = dlqId === undefined ? undefined : context.resources.get(dlqId)?.ref;
    if (url === undefined) continue;
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    const a = attributes.Attributes ?? {};
    counts[worker.workerId] =
      Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0);
  }
  return counts;
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
