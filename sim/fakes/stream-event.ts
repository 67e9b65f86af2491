/** The DynamoDB stream event Lambda would pass the notifier for one row change, numbered in order. */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import type { Row } from './dynamo-expressions';

let sequence = 0;

export function streamEvent(before: Row | undefined, after: Row): DynamoDBStreamEvent {
  return {
    Records: [
      {
        eventName: before ? 'MODIFY' : 'INSERT',
        eventSource: 'aws:dynamodb',
        dynamodb: {
          SequenceNumber: String(++sequence),
          Keys: marshall({ jobId: after.jobId, scheduledTime: after.scheduledTime }) as never,
          NewImage: marshall(after, { removeUndefinedValues: true }) as never,
          OldImage: before ? (marshall(before, { removeUndefinedValues: true }) as never) : undefined,
        },
      },
    ],
  };
}
