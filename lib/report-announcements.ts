/**
 * The announcements of ScheduledJobs: the FIFO topic and queue that announce finished reports. Built into the given
 * scope, like the other pieces. (Each worker's job queue is its own: lib/job-worker.ts.)
 */
import * as sns from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { encryptionKeyOf } from './encryption';
import { secureQueue } from './secure-queue';

export interface ReportAnnouncements {
  readonly topic: sns.Topic;
  /** Subscribed to the topic with raw delivery, so announcements are kept even before anyone else subscribes. */
  readonly queue: sqs.Queue;
}

export function reportAnnouncements(scope: Construct): ReportAnnouncements {
  // FIFO so that subscribers see each occurrence's announcement once (the notifier passes a deduplication id)
  // and in order per message group; a FIFO topic delivers only to SQS queues, hence the queue below.
  const topic = new sns.Topic(scope, 'ReportReadyTopic', {
    fifo: true,
    contentBasedDeduplication: false,
    enforceSSL: true,
    masterKey: encryptionKeyOf(scope),
  });
  const queue = secureQueue(scope, 'ReportReadyQueue', { fifo: true });
  topic.addSubscription(new SqsSubscription(queue, { rawMessageDelivery: true }));
  return { topic, queue };
}
