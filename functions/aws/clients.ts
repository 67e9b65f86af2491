/**
 * SDK clients, created once per Lambda container. They honour the SDK's standard settings (region, credentials,
 * AWS_ENDPOINT_URL and its per-service variants), so the same code runs against AWS and a local emulator.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

let dynamo: DynamoDBDocumentClient | undefined;
let s3: S3Client | undefined;
let sqs: SQSClient | undefined;
let sns: SNSClient | undefined;

export const documentClient = (): DynamoDBDocumentClient =>
  (dynamo ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  }));

export const s3Client = (env: NodeJS.ProcessEnv = process.env): S3Client =>
  // A local emulator serves every bucket on one host: it needs path-style addresses.
  (s3 ??= new S3Client({ forcePathStyle: Boolean(env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL) }));

export const sqsClient = (): SQSClient => (sqs ??= new SQSClient({}));
export const snsClient = (): SNSClient => (sns ??= new SNSClient({}));
