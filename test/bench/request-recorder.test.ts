import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { RequestRecorder, recordRequests } from '../../bench/request-recorder';

/** A fake HTTP layer: answers each attempt with the next of `answers` (status and JSON body). */
function fakeHandler(answers: Array<{ status: number; body: unknown }>) {
  let i = 0;
  return {
    sent: 0,
    async handle() {
      this.sent += 1;
      const answer = answers[Math.min(i++, answers.length - 1)];
      return {
        response: {
          statusCode: answer.status,
          headers: { 'content-type': 'application/x-amz-json-1.0' },
          body: new TextEncoder().encode(JSON.stringify(answer.body)),
        },
      };
    },
  };
}

const config = { region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } };

describe('Function: recordRequests', () => {
  it('records one request per HTTP attempt, retries included, with service and operation', async () => {
    const handler = fakeHandler([
      { status: 500, body: { __type: 'InternalServerError', message: 'boom' } },
      { status: 200, body: { Item: { pk: { S: 'a' } } } },
    ]);
    const client = new DynamoDBClient({ ...config, requestHandler: handler, retryStrategy: undefined });
    const recorder = new RequestRecorder();
    recordRequests(client, recorder, 'handler');

    const out = await client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }));

    expect(out.Item).toEqual({ pk: { S: 'a' } });
    expect(handler.sent).toBe(2);
    expect(recorder.requests.map((r) => [r.service, r.operation, r.role, r.status])).toEqual([
      ['DynamoDB', 'GetItem', 'handler', 500],
      ['DynamoDB', 'GetItem', 'handler', 200],
    ]);
  });

  it('passes the DynamoDB exchange to the observer and leaves the response readable by the SDK', async () => {
    const handler = fakeHandler([{ status: 200, body: { Item: { pk: { S: 'a' }, n: { N: '1' } } } }]);
    const client = new DynamoDBClient({ ...config, requestHandler: handler });
    const recorder = new RequestRecorder();
    const seen: unknown[] = [];
    recorder.dynamoObserver = { after: async (exchange) => void seen.push(exchange) };
    recordRequests(client, recorder, 'handler');

    const out = await client.send(
      new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } }, ConsistentRead: true }),
    );

    expect(out.Item?.n).toEqual({ N: '1' });
    expect(seen).toEqual([
      {
        operation: 'GetItem',
        request: { TableName: 't', Key: { pk: { S: 'a' } }, ConsistentRead: true },
        response: { Item: { pk: { S: 'a' }, n: { N: '1' } } },
        status: 200,
      },
    ]);
  });

  it('tells the role from the queue, counts received messages, and records nothing while paused', async () => {
    const handler = fakeHandler([
      {
        status: 200,
        body: { Messages: [{ MessageId: '1', Body: 'x', MD5OfBody: '9dd4e461268c8034f5c8564e155c67a6' }] },
      },
    ]);
    const client = new SQSClient({ ...config, requestHandler: handler });
    const recorder = new RequestRecorder();
    recordRequests(client, recorder, (_service, _operation, queueUrl) =>
      queueUrl === 'https://q/jobs' ? 'event-source' : 'driver',
    );

    await client.send(new ReceiveMessageCommand({ QueueUrl: 'https://q/jobs' }));
    await recorder.whilePaused(() => client.send(new ReceiveMessageCommand({ QueueUrl: 'https://q/jobs' })));
    await client.send(new ReceiveMessageCommand({ QueueUrl: 'https://q/other' }));

    expect(recorder.requests.map((r) => [r.service, r.operation, r.role, r.messages])).toEqual([
      ['SQS', 'ReceiveMessage', 'event-source', 1],
      ['SQS', 'ReceiveMessage', 'driver', 1],
    ]);
  });
});
