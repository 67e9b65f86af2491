/**
 * The job queue on SQS.
 */
import { ChangeMessageVisibilityCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { WorkQueue } from '../protocol/ports';
import { currentTraceHeader } from '../runtime/trace-context';
import { asDependencyError } from './classify-error';

/** One worker's job queue on SQS (WorkQueue). */
export class SqsWorkQueue implements WorkQueue {
  /**
   * @param traceHeader - the sender's X-Ray trace header, carried by each message (runtime/trace-context.ts);
   *   default: the current Lambda invocation's
   */
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
    private readonly traceHeader: () => string | undefined = currentTraceHeader,
  ) {}

  /** Sends one message (SendMessage), with the sender's trace header as its AWSTraceHeader when there is one. */
  async send(messageBody: string): Promise<void> {
    const header = this.traceHeader();
    try {
      await this.client.send(
        new SendMessageCommand({
          QueueUrl: this.queueUrl,
          MessageBody: messageBody,
          ...(header === undefined
            ? {}
            : { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: header } } }),
        }),
      );
    } catch (error) {
      throw asDependencyError('enqueue occurrence', error);
    }
  }

  /** Keeps a received message hidden for `seconds` from now (ChangeMessageVisibility). */
  async hide(receiptHandle: string, seconds: number): Promise<void> {
    try {
      await this.client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: this.queueUrl,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: Number.isFinite(seconds) ? Math.min(Math.max(0, Math.ceil(seconds)), 43_200) : 0,
        }),
      );
    } catch (error) {
      throw asDependencyError('hide message', error);
    }
  }
}

/**
 * One SqsWorkQueue per URL, made on first use: the trigger and the reconciler are told no worker's queue, each event
 * or row names its own (protocol/worker-routes.ts).
 */
export function queuesByUrl(client: () => SQSClient): (queueUrl: string) => WorkQueue {
  const byUrl = new Map<string, WorkQueue>();
  return (queueUrl) => {
    let queue = byUrl.get(queueUrl);
    if (queue === undefined) {
      queue = new SqsWorkQueue(client(), queueUrl);
      byUrl.set(queueUrl, queue);
    }
    return queue;
  };
}
