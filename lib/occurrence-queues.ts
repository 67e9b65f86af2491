/**
 * The messaging of ScheduledJobs: the job queue that carries occurrences to the worker (with its dead-letter queue),
 * and the FIFO topic and queue that announce finished reports. Built into the given scope, like the other pieces.
 */
import { Duration } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { WorkerLimits } from '../functions/protocol/worker-limits';
import { secureQueue } from './secure-queue';

export interface JobQueues {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
}

/** Hides a received message and redrives it by the limits derived from the jobs (workerLimits). */
export function jobQueues(scope: Construct, limits: WorkerLimits): JobQueues {
  const deadLetterQueue = secureQueue(scope, 'JobDeadLetterQueue');
  const queue = secureQueue(scope, 'JobQueue', {
    visibilityTimeout: Duration.seconds(limits.queueVisibilityTimeoutSeconds),
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: limits.maxReceiveCount },
  });
  return { queue, deadLetterQueue };
}

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
  });
  const queue = secureQueue(scope, 'ReportReadyQueue', { fifo: true });
  topic.addSubscription(new SqsSubscription(queue, { rawMessageDelivery: true }));
  return { topic, queue };
}
