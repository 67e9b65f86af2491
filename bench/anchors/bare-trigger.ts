/**
 * Cold-load anchor: the least a trigger can be. One conditional PutItem with the DynamoDB document client and one
 * SendMessage with the SQS client, the clients built as functions/aws/clients.ts builds them. No validation beyond
 * two strings, no logger, no metrics. Never deployed: bench/cold-load.ts bundles it as the stack bundles the trigger
 * and counts the instructions Node spends loading it.
 *
 * Like the trigger, it builds its clients on the first invocation, not at module load, so that the benchmark compares
 * the code each handler loads rather than where each one builds its clients.
 */

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';

export interface BareTriggerEvent {
  readonly jobId: string;
  readonly scheduledTime: string;
}

export type BareTriggerResult = 'recorded' | 'duplicate';

export interface BareTriggerClients {
  readonly dynamo: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly tableName: string;
  readonly queueUrl: string;
}

/** The same constructor options as functions/aws/clients.ts. */
export function bareClients(env: NodeJS.ProcessEnv = process.env): BareTriggerClients {
  return {
    dynamo: DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } }),
    sqs: new SQSClient({}),
    tableName: requireValue(env, 'OCCURRENCE_TABLE_NAME'),
    queueUrl: requireValue(env, 'JOB_QUEUE_URL'),
  };
}

export function createBareTriggerHandler(
  clients: BareTriggerClients,
): (event: BareTriggerEvent) => Promise<BareTriggerResult> {
  return async (event) => {
    const { jobId, scheduledTime } = event;
    if (typeof jobId !== 'string' || typeof scheduledTime !== 'string')
      throw new Error('expected jobId and scheduledTime');
    try {
      await clients.dynamo.send(
        new PutCommand({
          TableName: clients.tableName,
          Item: { jobId, scheduledTime, status: 'PENDING' },
          ConditionExpression: 'attribute_not_exists(jobId)',
        }),
      );
    } catch (error) {
      // The SDK names the error; checking the name keeps the SDK's error classes out of the bundle's reachable code.
      if ((error as { name?: unknown }).name === 'ConditionalCheckFailedException') return 'duplicate';
      throw error;
    }
    await clients.sqs.send(
      new SendMessageCommand({ QueueUrl: clients.queueUrl, MessageBody: JSON.stringify({ jobId, scheduledTime }) }),
    );
    return 'recorded';
  };
}

export function requireValue(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new Error(`environment variable ${name} is not set`);
  return value;
}

let deployed: ((event: BareTriggerEvent) => Promise<BareTriggerResult>) | undefined;
export const handler = (event: BareTriggerEvent): Promise<BareTriggerResult> => {
  deployed ??= createBareTriggerHandler(bareClients());
  return deployed(event);
};
