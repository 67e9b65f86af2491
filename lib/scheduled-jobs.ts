/**
 * ScheduledJobs: everything one set of scheduled jobs needs, with least-privilege wiring.
 *
 *   Scheduler ─▶ trigger ─▶ occurrence row (PENDING) + job queue ─▶ worker ─▶ report in S3, row SUCCEEDED
 *   table stream (transition to SUCCEEDED only) ─▶ notifier ─▶ SNS FIFO "report ready" ─▶ ReportReadyQueue
 *   every 5 min: reconciler ─▶ re-enqueue stuck rows (status index), announce reports never announced
 *   alarms (SNS topic) and a dashboard over all of it (jobs-monitoring.ts)
 *
 * Each piece is named in a file of its own: the storage (occurrence-storage.ts), the queues and the announcement
 * topic (occurrence-queues.ts), the four functions with their grants (occurrence-functions.ts), the schedules
 * (job-schedules.ts) and the monitoring (jobs-monitoring.ts). The storage, queue and function pieces build into this
 * construct's scope rather than one of their own, so the resources keep the logical IDs the deployed stacks have.
 */
import * as path from 'node:path';
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { reconcileThresholds } from '../functions/protocol/worker-limits';
import { type ResolvedJobs, resolveJobConfigs, type ScheduledJobConfig } from './job-config';
import { JobSchedules } from './job-schedules';
import { JobsMonitoring } from './jobs-monitoring';
import { acknowledgeNagFindings } from './nag-acknowledgements';
import {
  notifierFunction,
  type OccurrenceResources,
  reconcilerFunction,
  triggerFunction,
  workerFunction,
} from './occurrence-functions';
import { jobQueues, reportAnnouncements } from './occurrence-queues';
import { occurrenceTable, reportBucket } from './occurrence-storage';

export {
  NOTIFIER_TIMEOUT_SECONDS,
  RECONCILER_TIMEOUT_SECONDS,
  succeededTransitionFilter,
  TRIGGER_TIMEOUT_SECONDS,
  WORKER_MEMORY_MB,
} from './occurrence-functions';

export interface ScheduledJobsProps {
  readonly jobs: readonly ScheduledJobConfig[];
  /** For the occurrences table and the reports bucket. Default RETAIN: deleting the stack keeps the history. */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * The worker's entry file; it must export `handler`. Point it at your own file that registers your jobs.
   * Default: functions/worker.ts of this project.
   */
  readonly workerEntry?: string;
  /**
   * The job ids the worker entry registers. When given, synth fails for a scheduled job without an implementation,
   * instead of the worker failing on its first message after the deployment.
   */
  readonly implementedJobIds?: readonly string[];
  /** Where alarms are e-mailed (the app reads it from `-c alarmEmail=...`); without it, subscribe to alarmTopic yourself. */
  readonly alarmEmail?: string;
}

export class ScheduledJobs extends Construct {
  /** The jobs as validated at synth, with their defaults applied, and the worker limits derived from them. */
  readonly resolvedJobs: ResolvedJobs;
  readonly table: dynamodb.Table;
  readonly jobQueue: sqs.Queue;
  readonly jobDeadLetterQueue: sqs.Queue;
  readonly reportBucket: s3.Bucket;
  readonly reportReadyTopic: sns.Topic;
  /** Subscribed to the topic with raw delivery, so announcements are kept even before anyone else subscribes. */
  readonly reportReadyQueue: sqs.Queue;
  readonly triggerFunction: nodejs.NodejsFunction;
  /** Scheduler invocations the trigger failed after its async retries. */
  readonly triggerDeadLetterQueue: sqs.Queue;
  readonly workerFunction: nodejs.NodejsFunction;
  readonly notifierFunction: nodejs.NodejsFunction;
  /** Where the stream event source puts descriptions of batches the notifier failed for good. */
  readonly notifierFailureQueue: sqs.Queue;
  readonly schedules: JobSchedules;
  /** Re-enqueues stuck occurrences and announces unannounced reports, every RECONCILE_EVERY_MINUTES. */
  readonly reconcilerFunction: nodejs.NodejsFunction;
  readonly reconcilerRule: events.Rule;
  /** The CloudWatch namespace of the functions' metrics (POWERTOOLS_METRICS_NAMESPACE). */
  readonly metricsNamespace: string;
  /** Alarms, their SNS topic, and the dashboard. */
  readonly monitoring: JobsMonitoring;

  constructor(scope: Construct, id: string, props: ScheduledJobsProps) {
    super(scope, id);
    const resolved = resolveJobConfigs(props.jobs, props.implementedJobIds);
    this.resolvedJobs = resolved;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    this.table = occurrenceTable(this, removalPolicy);
    ({ queue: this.jobQueue, deadLetterQueue: this.jobDeadLetterQueue } = jobQueues(this, resolved.limits));
    this.reportBucket = reportBucket(this, removalPolicy);
    ({ topic: this.reportReadyTopic, queue: this.reportReadyQueue } = reportAnnouncements(this));

    // One namespace per stack, so that two deployments in one account do not add up each other's counts.
    this.metricsNamespace = `ScheduledJobs/${Stack.of(this).stackName}`;
    const resources: OccurrenceResources = {
      table: this.table,
      jobQueue: this.jobQueue,
      reportBucket: this.reportBucket,
      reportReadyTopic: this.reportReadyTopic,
      jobSettingsJson: JSON.stringify(resolved.settings),
      metricsNamespace: this.metricsNamespace,
    };
    ({ fn: this.triggerFunction, deadLetterQueue: this.triggerDeadLetterQueue } = triggerFunction(this, resources));
    this.workerFunction = workerFunction(this, resources, {
      entry: props.workerEntry ?? path.join(__dirname, '..', 'functions', 'worker.ts'),
      limits: resolved.limits,
    });
    ({ fn: this.notifierFunction, failureQueue: this.notifierFailureQueue } = notifierFunction(this, resources));
    this.schedules = new JobSchedules(this, 'Schedules', { jobs: resolved.jobs, trigger: this.triggerFunction });
    ({ fn: this.reconcilerFunction, rule: this.reconcilerRule } = reconcilerFunction(
      this,
      resources,
      reconcileThresholds(resolved.settings),
    ));

    this.monitoring = new JobsMonitoring(this, 'Monitoring', {
      jobIds: resolved.settings.map((s) => s.id),
      metricsNamespace: this.metricsNamespace,
      worker: this.workerFunction,
      reconciler: this.reconcilerFunction,
      deadLetterQueues: {
        JobDeadLetterQueue: this.jobDeadLetterQueue,
        TriggerDeadLetterQueue: this.triggerDeadLetterQueue,
        SchedulerDeadLetterQueue: this.schedules.deadLetterQueue,
        NotifierFailureQueue: this.notifierFailureQueue,
      },
      alarmEmail: props.alarmEmail,
    });
    acknowledgeNagFindings(this);
  }
}
