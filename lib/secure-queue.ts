/**
 * Every queue of the stack is encrypted, with SQS-managed keys (no kms:* grants) or the ScheduledJobs' own key
 * (encryptionKey: every sender and receiver is granted its use, lib/encryption.ts), refuses
 * plain HTTP, and keeps messages the SQS maximum of 14 days so a dead letter waits long enough to be looked at.
 */
import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { QUEUE_RETENTION_SECONDS } from '../functions/protocol/job-settings';
import { encryptionKeyOf } from './encryption';

export function secureQueue(
  scope: Construct,
  id: string,
  props: Omit<sqs.QueueProps, 'encryption' | 'encryptionMasterKey' | 'enforceSSL'> = {},
): sqs.Queue {
  const encryptionKey = encryptionKeyOf(scope);
  return new sqs.Queue(scope, id, {
    retentionPeriod: Duration.seconds(QUEUE_RETENTION_SECONDS),
    ...props,
    ...(encryptionKey === undefined
      ? { encryption: sqs.QueueEncryption.SQS_MANAGED }
      : { encryption: sqs.QueueEncryption.KMS, encryptionMasterKey: encryptionKey }),
    enforceSSL: true,
  });
}
