/**
 * A worker: a group of jobs that share one function (its memory, timeout, architecture, environment and bundling),
 * one job queue with its own dead-letter queue, and one IAM role. The queue's visibility timeout and redrive limit
 * are derived from this worker's own jobs (worker-limits.ts), so a 10-minute export and a 10-second digest in two
 * workers do not stretch each other's timing, and a poison message of one parks in its own worker's DLQ.
 *
 * A worker is IGrantable: `dataBucket.grantRead(worker)` gives its function, and only its function, the access.
 * Jobs are added to it after it is built (ScheduledJobs.addJob), so what depends on them (the timeout when none is
 * given, the visibility timeout, the redrive limit, the settings in JOB_SETTINGS) is a Lazy value resolved at synth.
 */
import { Duration, Lazy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  type JobSettings,
  LAMBDA_MAX_TIMEOUT_SECONDS,
  OUTCOME_RESERVE_SECONDS,
  withoutDefaults,
} from '../functions/protocol/job-settings';
import { REPORT_KEY_PREFIX } from '../functions/protocol/occurrence';
import { quoteValue } from '../functions/protocol/quote-value';
import {
  stuckAfterSeconds,
  WORKER_BATCH_SIZE,
  type WorkerLimits,
  workerLimits,
} from '../functions/protocol/worker-limits';
import { ENV } from '../functions/runtime-env';
import { JobConfigError } from './errors';
import { allow, jobFunction } from './job-function';
import type { JobSchedule } from './job-schedules';
import { secureQueue } from './secure-queue';

/** How a worker's function is built; everything but `entry` has a default. */
export interface JobWorkerOptions {
  /**
   * The worker's entry file (TypeScript or JavaScript, bundled by NodejsFunction in your app). It must export
   * `handler`: `defineWorker({ jobs: { ... } })` for several jobs, or `defineJob({ ... })` for one (`<package>/runtime`).
   */
  readonly entry: string;
  /** Default 256 MB. */
  readonly memorySize?: number;
  /**
   * The function timeout. Default: the longest job's timeoutSeconds plus 30 s to record the outcome. When given, each
   * job's timeoutSeconds must leave those 30 s.
   */
  readonly timeout?: Duration;
  /** Default ARM_64 (Graviton). */
  readonly architecture?: lambda.Architecture;
  /** Your own variables, beside the ones the stack sets. */
  readonly environment?: Readonly<Record<string, string>>;
  /** Laid over the stack's bundling options (minified, source maps, the SDK bundled). */
  readonly bundling?: nodejs.BundlingOptions;
  readonly description?: string;
  /** Caps concurrent invocations of this worker; default: unreserved. */
  readonly reservedConcurrentExecutions?: number;
}

/** What every worker of a ScheduledJobs works on; built by ScheduledJobs. */
export interface WorkerResources {
  readonly table: dynamodb.ITable;
  readonly reportBucket: s3.IBucket;
  readonly metricsNamespace: string;
}

/**
 * Lambda's 4 KB of environment variables per function, less what the stack's own variables and their resolved
 * names take (about 500 bytes; a queue URL alone is up to 130).
 */
export const WORKER_ENVIRONMENT_BUDGET_BYTES = 4096 - 700;

/**
 * How ScheduledJobs adds a job to a worker: a symbol the package's index does not export, so that a job cannot be
 * added to a worker behind ScheduledJobs' back (without its schedule, its duplicate check and its thresholds).
 */
export const ADD_JOB: unique symbol = Symbol('JobWorker.addJob');

/** How ScheduledJobs lets a worker pause a job of its own after its failures; not exported either, as ADD_JOB. */
export const ALLOW_PAUSE: unique symbol = Symbol('JobWorker.allowPause');

/** What decides whether a worker can take one more job. */
export interface WorkerCapacity {
  readonly workerId: string;
  readonly givenTimeoutSeconds?: number;
  readonly userEnvironmentBytes: number;
  readonly settings: readonly JobSettings[];
}

/** The bytes of a worker's own environment variables. */
export function environmentBytes(environment: Readonly<Record<string, string>> = {}): number {
  return Object.entries(environment).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
}

/** What keeps a worker from running one more job: its given timeout, its environment budget. */
export function workerJobProblems(worker: WorkerCapacity, settings: JobSettings, where: string): string[] {
  const problems: string[] = [];
  const timeout = worker.givenTimeoutSeconds;
  // A cancelOther start waits until the lease of the run it cancelled runs out before its job runs (job-slot.ts).
  const cancelWait = settings.overlap === 'cancelOther' ? settings.leaseSeconds : 0;
  const needed = settings.timeoutSeconds + cancelWait + OUTCOME_RESERVE_SECONDS;
  const limit = timeout ?? LAMBDA_MAX_TIMEOUT_SECONDS;
  if (needed > limit) {
    const wait = cancelWait > 0 ? ` plus leaseSeconds (${cancelWait} s, the wait of overlap cancelOther)` : '';
    problems.push(
      `${where}.timeoutSeconds: ${settings.timeoutSeconds} s${wait} plus ${OUTCOME_RESERVE_SECONDS} s to record the outcome ` +
        `exceeds ${timeout === undefined ? "Lambda's maximum timeout" : 'the timeout'} of worker ${quoteValue(worker.workerId)} (${limit} s); ` +
        `shorten the job or give the worker a longer timeout`,
    );
  }
  const bytes = Buffer.byteLength(settingsJson([...worker.settings, settings])) + worker.userEnvironmentBytes;
  if (bytes > WORKER_ENVIRONMENT_BUDGET_BYTES) {
    problems.push(
      `${where}.worker: the settings of worker ${quoteValue(worker.workerId)}'s ${worker.settings.length + 1} jobs ` +
        `(and its own environment) would take ${bytes} bytes of its environment, more than the ` +
        `${WORKER_ENVIRONMENT_BUDGET_BYTES} that fit beside the stack's variables; put this job in another worker (addWorker)`,
    );
  }
  return problems;
}

/** What the worker reads at cold start: its own jobs' settings, defaults left out. */
function settingsJson(settings: readonly JobSettings[]): string {
  return JSON.stringify(settings.map(withoutDefaults));
}

export class JobWorker extends Construct implements iam.IGrantable {
  /** The worker id: the `worker` of its occurrences' rows, and its dimension in the alarms' metrics. */
  readonly workerId: string;
  readonly function: nodejs.NodejsFunction;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly grantPrincipal: iam.IPrincipal;
  private readonly jobSettings: JobSettings[] = [];
  private readonly jobIds: string[] = [];
  readonly givenTimeoutSeconds?: number;
  readonly userEnvironmentBytes: number;
  private readonly reportBucket: s3.IBucket;
  /**
   * Get/Put on reports/<jobId>/*, one resource per job as jobs are added. PutObject also covers the multipart upload
   * of a streamed report; AbortMultipartUpload lets a next holder abort the upload a lost lease left behind.
   */
  private readonly reportObjects = new iam.PolicyStatement({
    actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'],
  });
  /** Get/UpdateSchedule on the schedules of its jobs with pauseAfterFailures, added with the first such job. */
  private scheduleSwitch: iam.PolicyStatement | undefined;
  private readonly passedRoles = new Set<string>();
  /** The ids of its jobs that pause themselves after failures (pauseAfterFailures). */
  private readonly pausingJobIds: string[] = [];

  constructor(scope: Construct, workerId: string, options: JobWorkerOptions, resources: WorkerResources) {
    super(scope, workerId);
    this.workerId = workerId;
    this.reportBucket = resources.reportBucket;
    this.givenTimeoutSeconds = options.timeout?.toSeconds();
    if (this.givenTimeoutSeconds !== undefined && this.givenTimeoutSeconds > LAMBDA_MAX_TIMEOUT_SECONDS) {
      throw new JobConfigError([
        `addWorker(${workerId}).timeout: must be at most ${LAMBDA_MAX_TIMEOUT_SECONDS} s (Lambda's limit), got ${this.givenTimeoutSeconds} s`,
      ]);
    }
    this.userEnvironmentBytes = environmentBytes(options.environment);
    this.deadLetterQueue = secureQueue(this, 'DeadLetterQueue');
    this.queue = this.jobQueue();
    this.function = this.workerFunction(options, resources);
    this.grantPrincipal = this.function.grantPrincipal;
    this.grantOwnRowsAndReports(resources.table);
    // The release of the running slot sends the buffered head's message to this queue (docs/schedule-policies.md).
    allow(this.function, ['sqs:SendMessage'], [this.queue.queueArn]);
    // Grants exactly the consume actions, ChangeMessageVisibility included (retries wait as hidden messages).
    this.function.addEventSource(
      new SqsEventSource(this.queue, { batchSize: WORKER_BATCH_SIZE, reportBatchItemFailures: true }),
    );
  }

  /** Hides a received message and redrives it by the limits derived from this worker's jobs, known at synth. */
  private jobQueue(): sqs.Queue {
    return secureQueue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(Lazy.number({ produce: () => this.limits().queueVisibilityTimeoutSeconds })),
      deadLetterQueue: {
        queue: this.deadLetterQueue,
        maxReceiveCount: Lazy.number({ produce: () => this.limits().maxReceiveCount }),
      },
    });
  }

  private workerFunction(options: JobWorkerOptions, resources: WorkerResources): nodejs.NodejsFunction {
    return jobFunction(this, 'Function', {
      entry: options.entry,
      description: options.description ?? `Runs the jobs of worker ${this.workerId} under a lease`,
      timeoutSeconds: Lazy.number({ produce: () => this.limits().functionTimeoutSeconds }),
      memorySize: options.memorySize ?? 256,
      architecture: options.architecture,
      bundling: options.bundling,
      reservedConcurrentExecutions: options.reservedConcurrentExecutions,
      environment: {
        ...options.environment,
        [ENV.tableName]: resources.table.tableName,
        [ENV.queueUrl]: this.queue.queueUrl,
        [ENV.bucketName]: resources.reportBucket.bucketName,
        [ENV.workerId]: this.workerId,
        [ENV.jobSettings]: Lazy.string({ produce: () => settingsJson(this.settings) }),
        [ENV.metricsNamespace]: resources.metricsNamespace,
      },
    });
  }

  /** The claim protocol's writes, on this worker's own jobs' rows and reports only. */
  private grantOwnRowsAndReports(table: dynamodb.ITable): void {
    // The table's partition key is the job id. GetItem: the running slot's holder and the job-state row, read by the
    // worker that decides an occurrence's overlap policy.
    this.function.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: {
          'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': Lazy.list({ produce: () => this.jobIds }) },
        },
      }),
    );
    this.function.addToRolePolicy(this.reportObjects);
    // Without ListBucket, HeadObject/GetObject of a missing key answers 403 instead of 404.
    allow(this.function, ['s3:ListBucket'], [this.reportBucket.bucketArn]);
  }

  /** The settings of its jobs, in the order they were added. */
  get settings(): readonly JobSettings[] {
    return this.jobSettings;
  }

  /** The ids of the jobs this worker runs, in the order they were added. */
  get jobs(): readonly string[] {
    return this.jobIds;
  }

  /** Adds a job's settings (ScheduledJobs.addJob); throws JobConfigError naming the field when it cannot run it. */
  [ADD_JOB](settings: JobSettings, where: string): void {
    const problems = workerJobProblems(this, settings, where);
    if (problems.length > 0) throw new JobConfigError(problems);
    this.jobSettings.push(settings);
    this.jobIds.push(settings.id);
    this.reportObjects.addResources(this.reportBucket.arnForObjects(`${REPORT_KEY_PREFIX}${settings.id}/*`));
  }

  /** The ids of its jobs that pause themselves after pauseAfterFailures FAILED occurrences in a row. */
  get pausingJobs(): readonly string[] {
    return this.pausingJobIds;
  }

  /**
   * Lets the worker pause a job of its own after its failures (ScheduledJobs.addJob, for a job with
   * pauseAfterFailures): it disables the job's schedule in `group`, by reading it and writing it back (GetSchedule,
   * UpdateSchedule, which passes the target's role again). `schedule`: undefined for a job without one (disabled in
   * the app), whose pause only records the job-state row.
   */
  [ALLOW_PAUSE](jobId: string, group: string, schedule: JobSchedule | undefined): void {
    if (this.pausingJobIds.length === 0) this.function.addEnvironment(ENV.scheduleGroup, group);
    this.pausingJobIds.push(jobId);
    if (schedule === undefined) return;
    if (this.scheduleSwitch === undefined) {
      this.scheduleSwitch = new iam.PolicyStatement({ actions: ['scheduler:GetSchedule', 'scheduler:UpdateSchedule'] });
      this.function.addToRolePolicy(this.scheduleSwitch);
    }
    this.scheduleSwitch.addResources(schedule.scheduleArn);
    const role = Stack.of(this).resolve(schedule.targetRoleArn);
    const key = JSON.stringify(role);
    if (this.passedRoles.has(key)) return;
    this.passedRoles.add(key);
    // UpdateSchedule hands the target's role to Scheduler again; only to Scheduler.
    this.function.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [schedule.targetRoleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
  }

  /** The function timeout, visibility timeout and redrive limit, from the jobs added so far. */
  limits(): WorkerLimits {
    return workerLimits(this.jobSettings, this.givenTimeoutSeconds);
  }

  /** How long the reconciler lets an occurrence of this worker wait before it re-enqueues it. */
  stuckAfterSeconds(): number {
    return stuckAfterSeconds(this.limits());
  }
}
