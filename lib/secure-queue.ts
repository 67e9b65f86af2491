/**
 * Every queue of the stack is encrypted with SQS-managed keys (no KMS key, so no kms:* grants anywhere), refuses
 * plain HTTP, and keeps messages the SQS maximum of 14 days so a dead letter waits long enough to be looked at.
 */
import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { QUEUE_RETENTION_SECONDS } from '../functions/protocol/job-settings';

export function secureQueue(
  scope: Construct,
  id: string,
  props: Omit<sqs.QueueProps, 'encryption' | 'enforceSSL'> = {},
): sqs.Queue {
  return new sqs.Queue(scope, id, {
    retentionPeriod: Duration.seconds(QUEUE_RETENTION_SECONDS),
    ...props,
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
}
