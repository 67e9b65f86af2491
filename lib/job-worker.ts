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
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Duration, Lazy, Stack } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  type JobSettings,
  LAMBDA_MAX_TIMEOUT_SECONDS,
  OUTCOME_RESERVE_SECONDS,
  withoutDefaults,
} from '../functions/protocol/job-settings';
import { DETAILED_WORKER_METRICS, MetricName } from '../functions/protocol/metric-names';
import { REPORT_KEY_PREFIX } from '../functions/protocol/occurrence';
import { quoteValue } from '../functions/protocol/quote-value';
import { SERIES_SEPARATOR } from '../functions/protocol/schedule-key';
import {
  stuckAfterSeconds,
  WORKER_BATCH_SIZE,
  type WorkerLimits,
  workerLimits,
} from '../functions/protocol/worker-limits';
import { ENV } from '../functions/runtime-env';
import { grantKeyUse } from './encryption';
import { allow, type FunctionLogging, jobFunction, runtimeProblems } from './job-function';
import type { JobSchedule } from './job-schedules';
import type { WorkerAlarms } from './jobs-monitoring';
import { deadLetterMessages, functionErrors, functionThrottles, type WorkerMetricName, workerMetric } from './metrics';
import { secureQueue } from './secure-queue';
import { warnOfMissingEndpoints, workerEndpoints } from './worker-vpc';

/**
 * How a worker's function is built. Every member has a default; what is not listed here (the handler, the bundling's
 * format, the log format) the stack sets, because the worker protocol depends on it. Given to `addWorker` (that worker), to a job's
 * `workerOptions` (the worker of its own `entry`) or as `defaultWorkerOptions` (only the workers of jobs with their
 * own `entry`). With `vpc`, the worker must reach DynamoDB, S3 and SQS from its subnets (a NAT or VPC endpoints;
 * `cdk synth` warns of missing endpoints in isolated subnets): docs/vpc.md.
 */
export interface JobWorkerOptions
  extends Pick<
    nodejs.NodejsFunctionProps,
    | 'vpc'
    | 'vpcSubnets'
    | 'securityGroups'
    | 'allowPublicSubnet'
    | 'layers'
    | 'tracing'
    | 'environmentEncryption'
    | 'ephemeralStorageSize'
    | 'reservedConcurrentExecutions'
  > {
  /**
   * The worker's Node.js runtime, Node.js 20 or newer.
   *
   * @default the ScheduledJobs' `runtime` (lambda.Runtime.NODEJS_24_X)
   */
  readonly runtime?: lambda.Runtime;
  /**
   * The worker's execution role, instead of one of its own: assumable by `lambda.amazonaws.com`. The worker's
   * statements (its log group, its rows, reports and queue, the key) are added to it; a role imported with
   * `{ mutable: false }` gets none, and must have them already (docs/platform.md lists them).
   *
   * @default a role of the worker's own, with exactly its grants
   */
  readonly role?: iam.IRole;
  /**
   * The function's memory, in MiB.
   *
   * @default 256
   */
  readonly memorySize?: number;
  /**
   * The function's timeout. Each job's `timeout` must leave 30 s of it to record the outcome.
   *
   * @default the longest job's timeout plus 30 s
   */
  readonly timeout?: Duration;
  /**
   * The processor architecture.
   *
   * @default lambda.Architecture.ARM_64 (Graviton)
   */
  readonly architecture?: lambda.Architecture;
  /**
   * Your own environment variables, beside the ones the stack sets. A `NODE_OPTIONS` of yours is kept, with
   * `--enable-source-maps` added.
   *
   * @default none
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Laid over the stack's bundling options (minified, source maps, the AWS SDK bundled); esbuild's `--conditions`
   * are added to the stack's.
   *
   * @default the stack's bundling options
   */
  readonly bundling?: nodejs.BundlingOptions;
  /**
   * The function's description.
   *
   * @default 'Runs the jobs of worker <workerId> under a lease'
   */
  readonly description?: string;
  /**
   * The function's log group. Give one to share a group, encrypt it or stream it elsewhere.
   *
   * @default a log group of the function's own, kept for `logRetention`
   */
  readonly logGroup?: logs.ILogGroup;
  /**
   * How long the function's own log group keeps its events; not with `logGroup`.
   *
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * The function's log levels (Lambda's own lines and the worker's), laid over the stack's `logging`.
   *
   * @default the ScheduledJobs' `logging`: Lambda's own lines at WARN, the worker's at INFO
   */
  readonly logging?: FunctionLogging;
}

/** A worker: its entry file and how its function is built. */
export interface JobWorkerProps extends JobWorkerOptions {
  /**
   * The worker's entry file (TypeScript or JavaScript, bundled by NodejsFunction in your app). It exports `handler`:
   * `defineWorker({ jobs: { ... } })` from `scheduled-jobs-stack/runtime` for several jobs, or `defineJob({ ... })`
   * for one.
   */
  readonly entry: string;
}

/** What every worker of a ScheduledJobs works on; built by ScheduledJobs. */
export interface WorkerResources {
  readonly table: dynamodb.ITable;
  readonly reportBucket: s3.IBucket;
  readonly metricsNamespace: string;
  /** Whether the worker writes the detailed metrics (ScheduledJobsProps.detailedMetrics); default: no. */
  readonly detailedMetrics?: boolean;
  /** The stack's log levels (ScheduledJobsProps.logging), under the worker's own `logging`. */
  readonly logging?: FunctionLogging;
  /** The stack's Lambda tracing (ScheduledJobsProps.tracing), unless the worker gives its own `tracing`. */
  readonly tracing?: lambda.Tracing;
}

/** The worker's item actions on its own jobs' occurrence partitions (the claim protocol's reads and writes). */
const OWN_ROW_ACTIONS = ['dynamodb:GetItem', 'dynamodb:UpdateItem'];

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

/** How ScheduledJobs hands a worker its alarms, once JobsMonitoring has built them; not exported either. */
export const SET_ALARMS: unique symbol = Symbol('JobWorker.setAlarms');

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

/** The problems of a worker's own props, before it is built (and bundled). */
export function workerPropsProblems(props: JobWorkerProps, where: string): string[] {
  if (typeof props !== 'object' || props === null) return [`${where}: the worker's props must be an object`];
  const problems: string[] = [];
  problems.push(...entryFileProblems(props.entry, where.endsWith('.entry') ? where : `${where}.entry`));
  if (props.timeout !== undefined) {
    if (!(props.timeout instanceof Duration))
      problems.push(
        `${where}.timeout: must be a Duration such as Duration.minutes(10), got ${quoteValue(props.timeout)}`,
      );
    else if (props.timeout.toSeconds({ integral: false }) > LAMBDA_MAX_TIMEOUT_SECONDS)
      problems.push(
        `${where}.timeout: must be at most ${LAMBDA_MAX_TIMEOUT_SECONDS} s (Lambda's limit), got ${props.timeout.toSeconds({ integral: false })} s`,
      );
  }
  if (
    props.memorySize !== undefined &&
    !(Number.isInteger(props.memorySize) && props.memorySize >= 128 && props.memorySize <= 10_240)
  )
    problems.push(
      `${where}.memorySize: must be a whole number of MiB from 128 to 10240, got ${quoteValue(props.memorySize)}`,
    );
  problems.push(...runtimeProblems(`${where}.runtime`, props.runtime));
  if (props.role !== undefined && typeof (props.role as Partial<iam.IRole>)?.roleArn !== 'string')
    problems.push(`${where}.role: must be an iam.IRole, got ${quoteValue(props.role)}`);
  if (props.logGroup !== undefined && props.logRetention !== undefined)
    problems.push(
      `${where}.logRetention: give logRetention or logGroup, not both (a given log group keeps its own retention)`,
    );
  if (props.vpc === undefined && (props.vpcSubnets !== undefined || props.securityGroups !== undefined))
    problems.push(`${where}.vpcSubnets: vpcSubnets and securityGroups need vpc`);
  return problems;
}

/**
 * The problems of an entry file, found at the call rather than by esbuild at synth: not a path, not a JavaScript or
 * TypeScript file (what NodejsFunction bundles), or no such file. NodejsFunction resolves it from the directory the
 * app runs in, and so does this check.
 */
export function entryFileProblems(entry: unknown, where: string): string[] {
  if (typeof entry !== 'string' || entry === '')
    return [`${where}: must be the path of the entry file, got ${quoteValue(entry)}`];
  if (!/\.(jsx?|tsx?|cjs|cts|mjs|mts)$/.test(entry))
    return [`${where}: must be a JavaScript or TypeScript file (.ts, .js, .mts, .mjs, ...), got ${quoteValue(entry)}`];
  const file = path.resolve(entry);
  if (!existsSync(file))
    return [
      `${where}: no file at ${quoteValue(file)}${file === entry ? '' : ` (${quoteValue(entry)} from ${quoteValue(process.cwd())})`}; ` +
        'give its path, for example path.join(__dirname, ...)',
    ];
  return [];
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

/**
 * A worker: one Lambda function with its own queue, dead-letter queue, role and alarms, that runs the jobs added to
 * it. Built by `ScheduledJobs.addWorker` (shared by several jobs) or by `addJob` with an `entry` (the job's own).
 * It is `iam.IGrantable`: grant it what its jobs read, and only its function gets the access.
 *
 * @example
 * ```ts
 * const exportsWorker = jobs.addWorker('exports', { entry: 'src/workers/exports.ts', memorySize: 2048 });
 * dataBucket.grantRead(exportsWorker);
 * new cloudwatch.Alarm(this, 'ExportsLeasesLost', {
 *   metric: exportsWorker.metricLeasesLost(),
 *   threshold: 1,
 *   evaluationPeriods: 1,
 * });
 * ```
 */
export class JobWorker extends Construct implements iam.IGrantable {
  /** The worker id: the `worker` of its occurrences' rows, and its dimension in the alarms' metrics. */
  readonly workerId: string;
  /** The worker's function. */
  readonly function: nodejs.NodejsFunction;
  /** The worker's queue: the trigger, the reconciler and the operator actions send its occurrences here. */
  readonly queue: sqs.Queue;
  /** Where a message of this worker that failed every receive is parked; its alarm needs a person. */
  readonly deadLetterQueue: sqs.Queue;
  /** The function's role. */
  readonly grantPrincipal: iam.IPrincipal;
  private readonly metricsNamespace: string;
  private workerAlarms: WorkerAlarms = {};
  private readonly jobSettings: JobSettings[] = [];
  private readonly jobIds: string[] = [];
  /**
   * The entry file the worker's function is bundled from, as given (checkWorkerJobs of the testing kit loads it).
   */
  readonly entry: string;
  /** @internal */
  readonly givenTimeoutSeconds?: number;
  /** @internal */
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
  /** The occurrence table, for the grant on the series of its jobs that take run-time schedules. */
  private readonly table: dynamodb.ITable;
  /** The ids of its jobs that take their schedules at run time (runtimeSchedules). */
  private readonly keyedJobIds: string[] = [];

  /**
   * Built by ScheduledJobs (`addWorker`, or `addJob` with an `entry`), which validates the props first.
   *
   * @internal
   */
  static create(
    scope: Construct,
    workerId: string,
    props: JobWorkerProps,
    resources: WorkerResources,
    constructId: string = workerId,
  ): JobWorker {
    return new JobWorker(scope, constructId, workerId, props, resources);
  }

  private constructor(
    scope: Construct,
    constructId: string,
    workerId: string,
    props: JobWorkerProps,
    resources: WorkerResources,
  ) {
    super(scope, constructId);
    this.workerId = workerId;
    this.entry = props.entry;
    this.reportBucket = resources.reportBucket;
    this.table = resources.table;
    this.metricsNamespace = resources.metricsNamespace;
    this.givenTimeoutSeconds = props.timeout?.toSeconds();
    this.userEnvironmentBytes = environmentBytes(props.environment);
    this.deadLetterQueue = secureQueue(this, 'DeadLetterQueue');
    this.queue = this.jobQueue();
    this.function = this.workerFunction(props, resources);
    this.grantPrincipal = this.function.grantPrincipal;
    this.grantOwnRowsAndReports(resources.table);
    // The release of the running slot sends the buffered head's message to this queue (docs/schedule-policies.md).
    allow(this.function, ['sqs:SendMessage'], [this.queue.queueArn]);
    if (props.vpc !== undefined) {
      const tracing = props.tracing ?? resources.tracing;
      warnOfMissingEndpoints(this, workerId, props.vpc, props.vpcSubnets, () =>
        workerEndpoints({ pausing: this.pausingJobIds.length > 0, tracing }),
      );
    }
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

  private workerFunction(props: JobWorkerProps, resources: WorkerResources): nodejs.NodejsFunction {
    const { entry, description, memorySize, environment, timeout: _timeout, logging, ...passed } = props;
    return jobFunction(this, 'Function', {
      ...passed,
      tracing: passed.tracing ?? resources.tracing,
      logging: {
        systemLogLevel: logging?.systemLogLevel ?? resources.logging?.systemLogLevel,
        applicationLogLevel: logging?.applicationLogLevel ?? resources.logging?.applicationLogLevel,
      },
      entry,
      description: description ?? `Runs the jobs of worker ${this.workerId} under a lease`,
      timeoutSeconds: Lazy.number({ produce: () => this.limits().functionTimeoutSeconds }),
      memorySize: memorySize ?? 256,
      environment: {
        ...environment,
        [ENV.tableName]: resources.table.tableName,
        [ENV.queueUrl]: this.queue.queueUrl,
        [ENV.bucketName]: resources.reportBucket.bucketName,
        [ENV.workerId]: this.workerId,
        [ENV.jobSettings]: Lazy.string({ produce: () => settingsJson(this.settings) }),
        [ENV.metricsNamespace]: resources.metricsNamespace,
        ...(resources.detailedMetrics === true ? { [ENV.detailedMetrics]: 'true' } : {}),
      },
    });
  }

  /** The claim protocol's writes, on this worker's own jobs' rows and reports only. */
  private grantOwnRowsAndReports(table: dynamodb.ITable): void {
    // The table's partition key is the job id. GetItem: the running slot's holder and the job-state row, read by the
    // worker that decides an occurrence's overlap policy.
    this.function.addToRolePolicy(
      new iam.PolicyStatement({
        actions: OWN_ROW_ACTIONS,
        resources: [table.tableArn],
        conditions: {
          'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': Lazy.list({ produce: () => this.jobIds }) },
        },
      }),
    );
    this.function.addToRolePolicy(this.reportObjects);
    // Under a customer-managed key: the rows, the reports (SSE-KMS), the buffered head's message. The queue's receive
    // is granted by the event source.
    grantKeyUse(this.function, table.encryptionKey, 'write');
    grantKeyUse(this.function, this.reportBucket.encryptionKey, 'write');
    // Without ListBucket, HeadObject/GetObject of a missing key answers 403 instead of 404.
    allow(this.function, ['s3:ListBucket'], [this.reportBucket.bucketArn]);
  }

  /** The settings of its jobs, in the order they were added. @internal */
  get settings(): readonly JobSettings[] {
    return this.jobSettings;
  }

  /** The ids of the jobs this worker runs, in the order they were added. */
  get jobs(): readonly string[] {
    return this.jobIds;
  }

  /**
   * Adds a job's settings (ScheduledJobs.addJob, which has checked workerJobProblems first, naming the job's props).
   *
   * @internal
   */
  [ADD_JOB](settings: JobSettings, options: { readonly runtimeSchedules?: boolean } = {}): void {
    this.jobSettings.push(settings);
    this.jobIds.push(settings.id);
    // reports/{jobId}/{scheduleKey}/... of a job with run-time schedules is under this prefix too.
    this.reportObjects.addResources(this.reportBucket.arnForObjects(`${REPORT_KEY_PREFIX}${settings.id}/*`));
    if (options.runtimeSchedules === true) this.addKeyedJob(settings.id);
  }

  /**
   * A job with run-time schedules has one occurrence partition per schedule key, its *series* `jobId#scheduleKey`
   * (functions/protocol/schedule-key.ts), beside the job's own partition `jobId` (the job-state row): a second
   * statement, added with the first such job, lets the worker reach `jobId#*` of those jobs only. A job id has no
   * '#', so `jobId#*` matches no other job's partition. The two statements are alternatives: DynamoDB checks one
   * leading key per item request, which either allows.
   */
  private addKeyedJob(jobId: string): void {
    if (this.keyedJobIds.length === 0)
      this.function.addToRolePolicy(
        new iam.PolicyStatement({
          actions: OWN_ROW_ACTIONS,
          resources: [this.table.tableArn],
          conditions: {
            'ForAllValues:StringLike': {
              'dynamodb:LeadingKeys': Lazy.list({
                produce: () => this.keyedJobIds.map((id) => `${id}${SERIES_SEPARATOR}*`),
              }),
            },
          },
        }),
      );
    this.keyedJobIds.push(jobId);
  }

  /** The ids of its jobs that pause themselves after pauseAfterFailures FAILED occurrences in a row. @internal */
  get pausingJobs(): readonly string[] {
    return this.pausingJobIds;
  }

  /**
   * Lets the worker pause a job of its own after its failures (ScheduledJobs.addJob, for a job with
   * pauseAfterFailures): it disables the job's schedule in `group`, by reading it and writing it back (GetSchedule,
   * UpdateSchedule, which passes the target's role again). `schedule`: undefined for a job without one (disabled in
   * the app), whose pause only records the job-state row.
   * @internal
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

  /**
   * One of the metrics the jobs of this worker emit, over all of them (dimensions `{ service, worker }`). Asking for
   * OccurrencesStarted, OccurrencesSucceeded or JobDuration turns this worker's detailed metrics on (as
   * `detailedMetrics` of ScheduledJobsProps does for every worker), so the metric returned has data; each is a custom
   * metric at $0.30 a month.
   *
   * @param metricName - a name from docs/operating.md's metrics table, such as `OccurrencesFailed`.
   * @default statistic Sum (Maximum for JobDuration), period 5 minutes
   */
  metric(metricName: WorkerMetricName, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    if (DETAILED_WORKER_METRICS.has(metricName)) this.function.addEnvironment(ENV.detailedMetrics, 'true');
    return workerMetric(this.metricsNamespace, this.workerId, metricName, props);
  }

  /** Occurrences of this worker's jobs recorded FAILED (out of attempts or past the deadline). */
  metricFailedOccurrences(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.OccurrencesFailed, props);
  }

  /** Occurrences of this worker's jobs recorded SUCCEEDED; turns the worker's detailed metrics on (see `metric`). */
  metricSucceededOccurrences(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.OccurrencesSucceeded, props);
  }

  /** Leases this worker lost to another (it stopped without writing). */
  metricLeasesLost(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(MetricName.LeasesLost, props);
  }

  /** Invocations of this worker's function that failed (crash, timeout, out of memory). */
  metricErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return functionErrors(this.function, props);
  }

  /** Invocations of this worker's function that were throttled. */
  metricThrottles(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return functionThrottles(this.function, props);
  }

  /** Messages parked in this worker's dead-letter queue (the most seen in the period). */
  metricDeadLetters(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return deadLetterMessages(this.deadLetterQueue, props);
  }

  /**
   * This worker's alarms, each undefined when turned off (`alarms` of ScheduledJobsProps): its dead letters,
   * function errors and throttles. FAILED occurrences, lost leases, late occurrences and pauses after failures alarm
   * once per stack (`monitoring.sharedAlarms`).
   */
  get alarms(): WorkerAlarms {
    return this.workerAlarms;
  }

  /** @internal */
  [SET_ALARMS](alarms: WorkerAlarms): void {
    this.workerAlarms = alarms;
  }

  /** The function timeout, visibility timeout and redrive limit, from the jobs added so far. @internal */
  limits(): WorkerLimits {
    return workerLimits(this.jobSettings, this.givenTimeoutSeconds);
  }

  /** How long the reconciler lets an occurrence of this worker wait before it re-enqueues it. @internal */
  stuckAfterSeconds(): number {
    return stuckAfterSeconds(this.limits());
  }
}
