import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { type BareTriggerClients, createBareTriggerHandler } from '../../bench/anchors/bare-trigger';
import { createIdempotentTriggerHandler } from '../../bench/anchors/idempotent-trigger';

const EVENT = { jobId: 'daily-report', scheduledTime: '2026-11-30T06:00:00Z' };
// Only what Powertools reads from the context: the time left, which bounds the in-progress record.
const LAMBDA_CONTEXT = { getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/jobs';

function mockedClients() {
  const config = { region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 's' } };
  const clients: BareTriggerClients = {
    dynamo: DynamoDBDocumentClient.from(new DynamoDBClient(config)),
    sqs: new SQSClient(config),
    tableName: 'occurrences',
    queueUrl: QUEUE_URL,
  };
  const dynamo = mockClient(clients.dynamo);
  const sqs = mockClient(clients.sqs);
  dynamo.on(PutCommand).resolves({});
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
  return { clients, dynamo, sqs };
}

describe('Anchor: bare trigger', () => {
  it('makes one conditional put and one send, nothing else', async () => {
    const { clients, dynamo, sqs } = mockedClients();
    await expect(createBareTriggerHandler(clients)(EVENT)).resolves.toBe('recorded');
    expect(dynamo.calls()).toHaveLength(1);
    expect(dynamo).toHaveReceivedCommandWith(PutCommand, {
      TableName: 'occurrences',
      Item: { ...EVENT, status: 'PENDING' },
      ConditionExpression: 'attribute_not_exists(jobId)',
    });
    expect(sqs.calls()).toHaveLength(1);
    expect(sqs).toHaveReceivedCommandWith(SendMessageCommand, {
      QueueUrl: QUEUE_URL,
      MessageBody: JSON.stringify(EVENT),
    });
  });

  it('sends nothing when the put loses its condition', async () => {
    const { clients, dynamo, sqs } = mockedClients();
    dynamo.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'exists', $metadata: {} }));
    await expect(createBareTriggerHandler(clients)(EVENT)).resolves.toBe('duplicate');
    expect(sqs.calls()).toHaveLength(0);
  });
});

describe('Anchor: idempotent trigger', () => {
  it("wraps the bare trigger's two requests in the persistence layer's put and update", async () => {
    const { clients, dynamo, sqs } = mockedClients();
    const idempotencyClient = new DynamoDBClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 's' },
    });
    const idempotency = mockClient(idempotencyClient);
    idempotency.on(PutItemCommand).resolves({});
    idempotency.on(UpdateItemCommand).resolves({});
    const handler = createIdempotentTriggerHandler(createBareTriggerHandler(clients), {
      idempotencyTableName: 'idempotency',
      idempotencyClient,
    });
    await expect(handler(EVENT, LAMBDA_CONTEXT)).resolves.toBe('recorded');
    expect(idempotency.calls().map((call) => call.args[0].constructor.name)).toEqual([
      'PutItemCommand',
      'UpdateItemCommand',
    ]);
    expect(idempotency).toHaveReceivedCommandWith(PutItemCommand, { TableName: 'idempotency' });
    expect(dynamo.calls()).toHaveLength(1);
    expect(sqs.calls()).toHaveLength(1);
  });
});
