/**
 * Plays Lambda's SQS event source for the local run: N pollers long-poll the queue in batches, invoke the worker
 * handler with a real SQSEvent and a Lambda-like context, delete what succeeded and leave the batchItemFailures
 * (or the whole batch, when the handler throws or runs past its timeout) for SQS to deliver again once their
 * visibility timeout ends. The emulator keeps visibility, receive counts and the DLQ redrive, as SQS does.
 */
import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { LOCAL_REGION } from './local-aws';

export type SqsHandler = (event: SQSEvent, context: LambdaContext) => Promise<SQSBatchResponse>;
export type LambdaContext = Pick<
  Context,
  'getRemainingTimeInMillis' | 'logStreamName' | 'awsRequestId' | 'functionName'
> &
  Partial<Pick<Context, 'invokedFunctionArn'>>;

export interface SqsEventSourceOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly handler: SqsHandler;
  readonly functionTimeoutSeconds: number;
  /** As the stack's event source: up to this many messages per invocation. */
  readonly batchSize: number;
  /** Concurrent pollers, each with one invocation at a time (Lambda's concurrency for this queue). */
  readonly pollers: number;
  /** Long-poll wait; whole seconds, as SQS (and the emulator) count them. */
  readonly waitTimeSeconds?: number;
  readonly onInvocation?: (summary: InvocationSummary) => void;
}

export interface InvocationSummary {
  readonly poller: number;
  readonly received: number;
  readonly deleted: number;
  /** Left for redelivery: batchItemFailures, or the whole batch after a throw or a timeout. */
  readonly leftForRedelivery: number;
  readonly error?: string;
}

export class SqsEventSource {
  private running = false;
  private loops: Promise<void>[] = [];
  readonly totals = { invocations: 0, received: 0, deleted: 0, leftForRedelivery: 0 };

  constructor(private readonly options: SqsEventSourceOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loops = Array.from({ length: this.options.pollers }, (_, i) => this.poll(i + 1));
  }

  /** Stops receiving and waits for the invocations in progress to end. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async poll(poller: number): Promise<void> {
    while (this.running) {
      const messages = await receiveBatch(
        this.options.sqs,
        this.options.queueUrl,
        this.options.batchSize,
        this.options.waitTimeSeconds ?? 1,
      );
      // A batch received while stopping is still handled: dropping it would hide it for a visibility timeout.
      if (messages.length === 0) continue;
      const summary = await invokeWithBatch(this.options, messages, poller);
      this.totals.invocations += 1;
      this.totals.received += summary.received;
      this.totals.deleted += summary.deleted;
      this.totals.leftForRedelivery += summary.leftForRedelivery;
      this.options.onInvocation?.(summary);
    }
  }
}

export async function receiveBatch(
  sqs: SQSClient,
  queueUrl: string,
  max: number,
  waitTimeSeconds: number,
): Promise<Message[]> {
  const received = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: max,
      WaitTimeSeconds: waitTimeSeconds,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  return received.Messages ?? [];
}

/**
 * One Lambda invocation for a received batch: the handler's result decides what is deleted, as with
 * ReportBatchItemFailures. A throw, a timeout or an unknown item identifier fails the whole batch, as in Lambda.
 */
export async function invokeWithBatch(
  options: Pick<SqsEventSourceOptions, 'sqs' | 'queueUrl' | 'queueArn' | 'handler' | 'functionTimeoutSeconds'>,
  messages: readonly Message[],
  poller = 1,
): Promise<InvocationSummary> {
  const event = sqsEvent(messages, options.queueArn);
  const context = lambdaContext('worker', options.functionTimeoutSeconds);
  let failed: ReadonlySet<string>;
  let error: string | undefined;
  try {
    const response = await withTimeout(options.handler(event, context), options.functionTimeoutSeconds * 1000);
    const ids = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    const known = new Set(event.Records.map((r) => r.messageId));
    const unknown = [...ids].filter((id) => !known.has(id));
    if (unknown.length > 0) throw new Error(`batchItemFailures names messages not in the batch: ${unknown.join(', ')}`);
    failed = ids;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
    failed = new Set(event.Records.map((r) => r.messageId));
  }
  const done = messages.filter((m) => !failed.has(m.MessageId ?? ''));
  if (done.length > 0) {
    await options.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: options.queueUrl,
        Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
  return {
    poller,
    received: messages.length,
    deleted: done.length,
    leftForRedelivery: messages.length - done.length,
    error,
  };
}

export function lambdaContext(functionName: string, timeoutSeconds: number): LambdaContext {
  const deadline = Date.now() + timeoutSeconds * 1000;
  const requestId = randomUUID();
  return {
    functionName,
    awsRequestId: requestId,
    logStreamName: `local/${functionName}/${requestId.slice(0, 8)}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}

/** The event Lambda's SQS event source builds from received messages. */
export function sqsEvent(messages: readonly Message[], queueArn: string): SQSEvent {
  return { Records: messages.map((m) => sqsRecord(m, queueArn)) };
}

function sqsRecord(message: Message, queueArn: string): SQSRecord {
  const a = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: LOCAL_REGION,
  };
}

/** Lambda stops an invocation at its timeout; the batch is then retried whole. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Task timed out after ${ms / 1000} seconds`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
