import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import { DependencyError } from '../../functions/protocol/errors';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/occurrences';

const sqsMock = mockClient(SQSClient);
let queue: SqsWorkQueue;

beforeEach(() => {
  sqsMock.reset();
  queue = new SqsWorkQueue(new SQSClient({ region: 'eu-west-1' }), QUEUE_URL);
});

const visibilitySentFor = async (seconds: number): Promise<number | undefined> => {
  sqsMock.reset();
  sqsMock.on(ChangeMessageVisibilityCommand).resolves({});
  await queue.hide('receipt-1', seconds);
  return sqsMock.commandCalls(ChangeMessageVisibilityCommand)[0]!.args[0].input.VisibilityTimeout;
};

describe('SqsWorkQueue.send', () => {
  it('sends the body to the queue URL', async () => {
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    const body = JSON.stringify({ v: 1, jobId: 'daily-report', scheduledTime: '2026-11-30T06:00:00Z' });
    await queue.send(body);
    expect(sqsMock).toHaveReceivedCommandTimes(SendMessageCommand, 1);
    expect(sqsMock).toHaveReceivedCommandWith(SendMessageCommand, { QueueUrl: QUEUE_URL, MessageBody: body });
  });

  it('throws a classified DependencyError when sending fails', async () => {
    sqsMock
      .on(SendMessageCommand)
      .rejects(
        Object.assign(new Error('throttled'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }),
      );
    const error = await queue.send('{}').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'transient', operation: 'enqueue occurrence' });
  });

  it('a permission error is fatal', async () => {
    sqsMock
      .on(SendMessageCommand)
      .rejects(
        Object.assign(new Error('denied'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 403 } }),
      );
    await expect(queue.send('{}')).rejects.toMatchObject({ name: 'DependencyError', kind: 'fatal' });
  });
});

describe('SqsWorkQueue.hide', () => {
  it('changes the visibility of the received message on the queue', async () => {
    sqsMock.on(ChangeMessageVisibilityCommand).resolves({});
    await queue.hide('receipt-1', 30);
    expect(sqsMock).toHaveReceivedCommandWith(ChangeMessageVisibilityCommand, {
      QueueUrl: QUEUE_URL,
      ReceiptHandle: 'receipt-1',
      VisibilityTimeout: 30,
    });
  });

  it('rounds a fractional delay up, so the message never reappears early', async () => {
    expect(await visibilitySentFor(12.001)).toBe(13);
    expect(await visibilitySentFor(0.2)).toBe(1);
  });

  it('clamps to the SQS range 0..43200 seconds', async () => {
    expect(await visibilitySentFor(-5)).toBe(0);
    expect(await visibilitySentFor(43_200)).toBe(43_200);
    expect(await visibilitySentFor(43_200.5)).toBe(43_200);
    expect(await visibilitySentFor(100_000)).toBe(43_200);
  });

  it('throws a classified DependencyError when the change fails', async () => {
    sqsMock
      .on(ChangeMessageVisibilityCommand)
      .rejects(
        Object.assign(new Error('bad handle'), { name: 'ReceiptHandleIsInvalid', $metadata: { httpStatusCode: 400 } }),
      );
    const error = await queue.hide('receipt-1', 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'fatal', operation: 'hide message' });
  });

  it('a 5xx from SQS is transient', async () => {
    sqsMock
      .on(ChangeMessageVisibilityCommand)
      .rejects(Object.assign(new Error('oops'), { name: 'InternalError', $metadata: { httpStatusCode: 500 } }));
    await expect(queue.hide('receipt-1', 10)).rejects.toMatchObject({ name: 'DependencyError', kind: 'transient' });
  });
});
