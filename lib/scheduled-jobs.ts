/**
 * ScheduledJobs: everything a set of scheduled jobs needs, with least-privilege wiring, as a construct for your own
 * stack. Add workers (a function, a queue, a role, alarms) and jobs (a schedule each) to it:
 *
 *   Scheduler ─▶ trigger ─▶ occurrence row (PENDING) + the job's worker queue ─▶ worker ─▶ report in S3, SUCCEEDED
 *   table stream (transition to SUCCEEDED only) ─▶ notifier ─▶ SNS FIFO "report ready" ─▶ ReportReadyQueue
 *   table stream (final statuses, self-pauses; opt-in) ─▶ events ─▶ EventBridge (state-change-events.ts)
 *   every 5 min: reconciler ─▶ re-enqueue stuck rows on their worker's queue, announce reports never announced
 *   alarms (SNS topic) and a dashboard over all of it (jobs-monitoring.ts)
 *
 * The table, the bucket, the trigger, the notifier, the reconciler and the topic are shared; each worker has its own
 * function, queue, dead-letter queue, role and alarms (job-worker.ts). No function is handed the settings of every
 * job: each schedule carries what the trigger needs of its job, each worker reads its own jobs' settings, and the
 * trigger and the reconciler read one entry per worker (docs/design.md, "Workers").
 *
 * A job that takes its schedules at run time (runtimeSchedules) adds its own schedule group and a template schedule,
 * and the first such job the schedule registry table, which the reconciler then keeps Scheduler in step with
 * (runtime-schedules.ts, docs/runtime-schedules.md).
 */
import { CfnOutput, type Duration, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { JOB_ID_PATTERN, type JobSettings } from '../functions/protocol/job-settings';
import { REPORT_KEY_PREFIX } from '../functions/protocol/occurrence';
import { quoteValue } from '../functions/protocol/quote-value';
import { reconcileThresholds } from '../functions/protocol/worker-limits';
import { ENV } from '../functions/runtime-env';
import { addCappedJob } from './concurrency-caps';
import { encryptionKeyProblems, grantKeyUse, useEncryptionKey } from './encryption';
import { ValidationError, validatedCall } from './errors';
import { type ResolvedJobConfig, resolveJobConfig, type ScheduledJobConfig } from './job-config';
import { allow, type FunctionLogging, runtimeProblems, useRuntime } from './job-function';
import type { JobInSharedWorkerProps, JobProps, JobWithOwnWorkerProps } from './job-props';
import { jobConfigOf, publicProblems } from './job-props-config';
import { type JobSchedule, JobSchedules, type KeyedJobSchedule, type ScheduleWorker } from './job-schedules';
import {
  ADD_JOB,
  ALLOW_PAUSE,
  entryFileProblems,
  environmentBytes,
  JobWorker,
  type JobWorkerOptions,
  type JobWorkerProps,
  SET_ALARMS,
  workerJobProblems,
  workerPropsProblems,
} from './job-worker';
import { type JobsAlarmsOptions, JobsMonitoring, jobsAlarmsProblems } from './jobs-monitoring';
import { functionErrors, reconcilerRepairs } from './metrics';
import {
  acknowledgeKeyedGroupFindings,
  acknowledgeLateCheckFindings,
  acknowledgeNagFindings,
  acknowledgeRegistryReconcilerFindings,
  acknowledgeRouteLookupFindings,
  acknowledgeSchedulerRoleFindings,
  acknowledgeTracingFindings,
  acknowledgeViewerFindings,
  acknowledgeVpcAccessFindings,
  acknowledgeWorkerReportFindings,
} from './nag-acknowledgements';
import {
  notifierFunction,
  type OccurrenceResources,
  reconcilerFunction,
  triggerFunction,
} from './occurrence-functions';
import {
  occurrenceTable,
  reportBucket,
  reportBucketPropsProblems,
  reportRetentionProblems,
  statusIndexArn,
} from './occurrence-storage';
import { RejectedCalls } from './rejected-calls';
import { reportAnnouncements } from './report-announcements';
import {
  allowReconcileKeyedJob,
  allowReconcileRegistry,
  groupSchedulesArn,
  scheduleRegistryTable,
} from './runtime-schedules';
import { ATTACH, ScheduledJob } from './scheduled-job';
import { configureSchedulerRole } from './scheduler-role';
import { STACK_OUTPUTS } from './stack-outputs';
import {
  type StateChangeEventsOptions,
  type StateChangeEventsPiece,
  stateChangeEventsFunction,
  stateChangeEventsProblems,
} from './state-change-events';

export {
  NOTIFIER_TIMEOUT_SECONDS,
  RECONCILER_TIMEOUT_SECONDS,
  succeededTransitionFilter,
  TRIGGER_TIMEOUT_SECONDS,
} from './occurrence-functions';

/**
 * What the run-time schedules' variables may take of the reconciler's environment: Lambda's 4 KB, less its other
 * variables and their resolved values (about 600 bytes: the table name, the topic ARN, the bucket name, the
 * thresholds, the metrics namespace, the shortest stuck threshold, the schedule group). No variable of any function
 * grows with the number of workers or of jobs with a fixed schedule: each schedule carries its job's route
 * (protocol/worker-routes.ts). REGISTRY_JOBS grows with the jobs that take run-time schedules: about 45 fit.
 */
export const RECONCILER_ENVIRONMENT_BUDGET_BYTES = 4096 - 700;

/**
 * What the schedule registry adds to the reconciler's environment once a job takes run-time schedules, at the
 * longest: REGISTRY_TABLE and the table's name (a reference, counted as a queue URL is, 130 bytes) and SCHEDULE_GROUP
 * and the group's name (at most 64).
 */
export const REGISTRY_ENVIRONMENT_BYTES = 250;

/**
 * What each job with run-time schedules adds to the reconciler's environment: its id in REGISTRY_JOBS (a JSON array
 * of the ids the audit walks), at most 64 characters, two quotes and a comma; the variable's own name is counted once
 * with the first job.
 */
export const KEYED_JOB_ENVIRONMENT_BYTES = 67;
const REGISTRY_JOBS_NAME_BYTES = 16;

/** A `permissionsBoundary` that is not a managed policy, named by `where`. */
function permissionsBoundaryProblems(where: string, boundary: unknown): string[] {
  if (boundary === undefined || typeof (boundary as Partial<iam.IManagedPolicy>)?.managedPolicyArn === 'string')
    return [];
  return [
    `${where}: must be an iam.IManagedPolicy (iam.ManagedPolicy.fromManagedPolicyName(...)), got ${quoteValue(boundary)}`,
  ];
}

/** A `tracing` that is not a lambda.Tracing, named by `where`. */
function tracingProblems(where: string, tracing: unknown): string[] {
  if (tracing === undefined || (Object.values(lambda.Tracing) as unknown[]).includes(tracing)) return [];
  return [`${where}: must be a lambda.Tracing (ACTIVE, PASS_THROUGH or DISABLED), got ${quoteValue(tracing)}`];
}

/** Whether Lambda gives a function with this tracing the X-Ray write permissions (ACTIVE and PASS_THROUGH do). */
const isTraced = (tracing: lambda.Tracing | undefined): boolean =>
  tracing !== undefined && tracing !== lambda.Tracing.DISABLED;

/**
 * The reconciler's late check (functions/protocol/reconcile-late.ts): the stack's schedule group (SCHEDULE_GROUP),
 * ListSchedules (no resource-level permissions) to find its DISABLED schedules, GetSchedule on the group's schedules
 * to read their expression and input (Scheduler's API calls cost nothing), and Query on the table for such a job's
 * newest row.
 */
function allowLateCheck(reconciler: nodejs.NodejsFunction, group: string, table: dynamodb.ITable): void {
  reconciler.addEnvironment(ENV.scheduleGroup, group);
  allow(reconciler, ['dynamodb:Query'], [table.tableArn]);
  allow(reconciler, ['scheduler:ListSchedules'], ['*']);
  // The group's schedules in any partition, region and account: an ARN with CloudFormation's pseudo parameters makes
  // a cdk-nag finding id that aws-cdk-lib 2.252 (the lowest peer) refuses to acknowledge ('::' twice). Scheduler has no resource
  // policies, so no other account's schedule can be read all the same.
  allow(reconciler, ['scheduler:GetSchedule'], [`arn:*:scheduler:*:*:schedule/${group}/*`]);
  acknowledgeLateCheckFindings(reconciler, group);
}

/**
 * The trigger's route lookup (protocol/worker-routes.ts): an event from a run-time schedule projected before schedules
 * carried their route finds it in its job's template, in the stack's group (SCHEDULE_GROUP), with GetSchedule.
 */
function allowRouteLookup(trigger: nodejs.NodejsFunction, group: string): void {
  trigger.addEnvironment(ENV.scheduleGroup, group);
  allow(trigger, ['scheduler:GetSchedule'], [`arn:*:scheduler:*:*:schedule/${group}/*`]);
  acknowledgeRouteLookupFindings(trigger, group);
}

/** The shared dead-letter queues, by the name their alarm carries (`dlq-<name>`, beside the workers' `dlq-<id>`). */
const SHARED_QUEUE_NAMES = [
  'TriggerDeadLetterQueue',
  'SchedulerDeadLetterQueue',
  'NotifierFailureQueue',
  'EventsFailureQueue',
] as const;

/**
 * A ScheduledJobs: the shared table, bucket, trigger, notifier, reconciler and alarms of a set of jobs.
 *
 * @example
 * ```ts
 * const jobs = new ScheduledJobs(this, 'Jobs', { alarms: { emailAddresses: ['ops@example.com'] } });
 * ```
 */
export interface ScheduledJobsProps {
  /**
   * What happens to the occurrences table and the reports bucket when the stack is deleted.
   *
   * @default RemovalPolicy.RETAIN: deleting the stack keeps the history and the reports
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * A customer-managed KMS key for the data at rest: the occurrence and schedule registry tables, the report bucket
   * (SSE-KMS with a bucket key), every queue and dead-letter queue, the SNS topics and the functions' log groups.
   * Every function, role and `grant*` gets `kms:Decrypt` where it reads and `kms:GenerateDataKey` where it writes.
   * A `kms.Key` of your app gets the policy statements CloudWatch Logs and alarms need; a key imported by ARN must
   * have them already (docs/platform.md). Give the key, not an alias. About $1 a month per key, plus $0.03 per
   * 10,000 requests (the bucket key keeps S3's few).
   *
   * @default AWS-managed encryption: DynamoDB's and S3's own keys, SQS-managed SSE, no key for the topics and logs
   */
  readonly encryptionKey?: kms.IKey;
  /**
   * A bucket of your own for the reports, instead of the one the construct makes. The workers write each report once
   * (`If-None-Match: *`) under `reports/`, and every grant names this bucket, as with the made one. What the made bucket
   * has is then yours to set: block public access, an SSL-only bucket policy, encryption (a bucket with a KMS key of
   * its own: give the key as `s3.Bucket.fromBucketAttributes({ encryptionKey })` so the grants include it), its
   * lifecycle and removal policy (`removalPolicy` does not reach it). docs/platform.md.
   *
   * @default a bucket of the construct's own: private, SSL only, encrypted, kept on stack deletion
   */
  readonly reportBucket?: s3.IBucket;
  /**
   * How long the made bucket keeps a report: an expiry rule on `reports/`, in whole days. It must outlive every
   * job's occurrence rows (the job's `retention`, 90 days by default, plus 2 days for DynamoDB's deletion), so that no
   * row links to an expired report; the synth refuses a shorter one. Not with `reportBucket`.
   *
   * @default reports are kept until you delete them ($0.023 per GB-month in S3 Standard)
   */
  readonly reportRetention?: Duration;
  /**
   * S3 versioning on the made bucket: a deleted report can be recovered. With `reportRetention`, an expired report's
   * noncurrent version is removed a day later. Not with `reportBucket`.
   *
   * @default false (the reports are write-once already: a second write of a report is refused)
   */
  readonly versioned?: boolean;
  /**
   * The Node.js runtime of every function of the stack: the trigger, the notifier, the reconciler, the events
   * function and each worker (a worker's own `runtime` wins). Node.js 20 or newer; the functions are bundled for it.
   *
   * @default lambda.Runtime.NODEJS_24_X
   */
  readonly runtime?: lambda.Runtime;
  /**
   * A permissions boundary on every IAM role the construct makes: each function's, and the role Scheduler invokes
   * the trigger with. Applied with `iam.PermissionsBoundary.of`; a worker's own `role` is yours to bound. It must
   * allow what the grants allow (docs/platform.md lists the services).
   *
   * @default none
   */
  readonly permissionsBoundary?: iam.IManagedPolicy;
  /**
   * The alarms: where they go, their thresholds, or none at all.
   *
   * @default every alarm, at its first occurrence, to a new SNS topic without subscriptions
   */
  readonly alarms?: JobsAlarmsOptions;
  /**
   * Whether to add a CloudWatch dashboard (the alarms' status, every worker's occurrences, retries, function and
   * queues, the reconciler's repairs) and its `DashboardName` stack output. A dashboard costs $3 a month; the alarms
   * do not need it, and `occurrences console` shows every job's runs at no cost.
   *
   * @default false
   */
  readonly dashboard?: boolean;
  /**
   * The default of every job's `jobMetrics`: whether its metrics are also written per job, with the dimensions
   * `{ service, jobId }`, for `job.metric()` and alarms of your own. Each (metric, job) pair written is a custom metric
   * at $0.30 a month: about $0.90 a month for a job that runs at least hourly. Without them a job's metrics count in
   * its worker's (`{ service, worker }`), which the stack's alarms watch, and the occurrence rows name the job.
   *
   * @default false
   */
  readonly jobMetrics?: boolean;
  /**
   * Whether each worker also writes OccurrencesStarted, OccurrencesSucceeded and JobDuration with `{ service, worker }`
   * (for `worker.metric()`, the dashboard's graphs, alarms of your own). No alarm of the stack reads them, and each
   * is a custom metric at $0.30 a month per worker that runs at least hourly (about $0.90 for the three); the alarms
   * on failures do not need them. A worker whose `metric()` is asked for one of them writes them whatever this says.
   *
   * @default - the value of `dashboard`: on with the dashboard, which graphs them; off otherwise
   */
  readonly detailedMetrics?: boolean;
  /**
   * The log levels of every function of the stack, the workers' too (a worker's own `logging` is laid over it), in
   * Lambda's JSON log format.
   *
   * @default Lambda's own lines (START, END, REPORT) at WARN, so none on a happy invocation; the functions' at INFO
   */
  readonly logging?: FunctionLogging;
  /**
   * Lambda tracing of every function of the stack: the trigger, the notifier, the reconciler and each worker (a
   * worker's own `tracing` wins). `lambda.Tracing.ACTIVE` traces with X-Ray: each worker attempt's trace is linked to
   * the trace of the trigger that recorded its occurrence (docs/tracing.md), and the functions' roles get the X-Ray
   * write permissions. X-Ray: up to $15 per million occurrences when every one is sampled (docs/tracing.md).
   *
   * @default none: Lambda's PassThrough (no X-Ray segments and no X-Ray permissions; the logs still carry the trace ids)
   */
  readonly tracing?: lambda.Tracing;
  /**
   * How the worker of a job that gives only `entry` is built; a job's own `workerOptions` are laid over these.
   * Workers from `addWorker` do not take them: give those their options (`vpc`, `memorySize`, ...) in `addWorker`.
   * A worker in a VPC must reach DynamoDB, S3 and SQS (docs/vpc.md).
   *
   * @default 256 MB, ARM_64, the job's timeout plus 30 s
   */
  readonly defaultWorkerOptions?: JobWorkerOptions;
  /**
   * The stack outputs the `occurrences` CLI reads (the table, the bucket, the schedule group, each worker's
   * queue) are named with this prefix, so that several ScheduledJobs fit in one stack: give each its own and pass it
   * to the CLI as `--output-prefix`.
   *
   * @default '' (the outputs are `OccurrenceTableName`, `ReportBucketName`, ...)
   */
  readonly outputPrefix?: string;
  /**
   * Whether to add the stack outputs at all. Without them the CLI cannot find the stack's resources by its name.
   *
   * @default true
   */
  readonly stackOutputs?: boolean;
  /**
   * Whether to put an EventBridge event for each occurrence that ends (SUCCEEDED, FAILED, SKIPPED, CANCELLED) and
   * each job that pauses itself after its failures, for rules of your own (Slack, PagerDuty, a function):
   * `true` for the default bus, or the bus and the console's address. A function on the table's stream puts them;
   * docs/events.md has the schema, an example rule to Slack and the cost: $1.03 to $1.33 per million events, $1.00
   * of it EventBridge's.
   *
   * @default false: no events function, no cost
   */
  readonly stateChangeEvents?: boolean | StateChangeEventsOptions;
}

/** The functions, queues, schedules and alarms every job shares: built with the first worker, not before. */
interface SharedPieces {
  readonly trigger: { readonly fn: nodejs.NodejsFunction; readonly deadLetterQueue: sqs.Queue };
  readonly notifier: { readonly fn: nodejs.NodejsFunction; readonly failureQueue: sqs.Queue };
  readonly events: StateChangeEventsPiece | undefined;
  readonly reconciler: { readonly fn: nodejs.NodejsFunction; readonly rule: events.Rule };
  readonly schedules: JobSchedules;
  readonly monitoring: JobsMonitoring;
  readonly workersScope: Construct;
}

/**
 * Scheduled jobs that run once per occurrence: EventBridge Scheduler, a trigger that records each occurrence once,
 * a queue and a leased worker per worker, write-once reports in S3, an announcement per report, alarms and a
 * dashboard. Add workers (`addWorker`) and jobs (`addJob`) to it.
 *
 * Nothing is bundled until the first worker is added, and every job is validated before its worker is built, so a
 * configuration error arrives at once, as a {@link ValidationError} naming the call and the property.
 *
 * @example
 * ```ts
 * const jobs = new ScheduledJobs(this, 'Jobs', { alarms: { emailAddresses: ['ops@example.com'] } });
 * jobs.addJob('daily-digest', {
 *   schedule: ScheduleExpression.cron({ minute: '0', hour: '6', timeZone: TimeZone.EUROPE_BERLIN }),
 *   entry: path.join(__dirname, 'jobs', 'daily-digest.ts'),
 *   timeout: Duration.minutes(2),
 * });
 * ```
 */
export class ScheduledJobs extends Construct {
  /** The occurrence rows: one per job and scheduled time, plus each job's running slot and state. */
  readonly table: dynamodb.Table;
  /** The reports, written once each at `reports/<jobId>/<scheduledTime>.<ext>`. */
  readonly reportBucket: s3.IBucket;
  /** Announces each report once (FIFO); subscribe your own SQS FIFO queue, or read `reportReadyQueue`. */
  readonly reportReadyTopic: sns.Topic;
  /** Subscribed to the topic with raw delivery, so announcements are kept even before anyone else subscribes. */
  readonly reportReadyQueue: sqs.Queue;
  /** The CloudWatch namespace of the functions' metrics: `ScheduledJobs/<stack name>`. */
  readonly metricsNamespace: string;

  private readonly props: ScheduledJobsProps;
  private readonly outputPrefix: string;
  private readonly workersById = new Map<string, JobWorker>();
  /** The workers built from a job's own entry (defineJob): they run that one job. */
  private readonly singleJobWorkers = new Set<string>();
  private readonly jobsById = new Map<string, ScheduledJob>();
  /** The addJob and addWorker calls rejected so far: the synth throws their problems together. */
  private readonly rejected = new RejectedCalls();
  /** What a rejected addWorker returned, so that the jobs naming it add no problem of their own about it. */
  private readonly standInWorkers = new Set<JobWorker>();
  /** Given grantOperateJobs: each worker's queue is granted to them as it is added. */
  private readonly operators: iam.IGrantable[] = [];
  /** Given grantViewJobs (or grantOperateJobs): the schedule registry is granted to them when it is built. */
  private readonly viewers: iam.IGrantable[] = [];
  /** The role the schedules invoke the trigger with, once a schedule exists. */
  private scheduleTargetRoleArn: string | undefined;
  private built: SharedPieces | undefined;
  private readonly removalPolicy: RemovalPolicy;
  /** The schedule registry, built with the first job that takes run-time schedules. */
  private registry: dynamodb.Table | undefined;
  /** How many addJob calls were rejected: their handles' construct ids. */
  private rejectedJobs = 0;
  /** The ids of the jobs with run-time schedules, in the order added: the reconciler's REGISTRY_JOBS. */
  private readonly keyedJobIds: string[] = [];

  constructor(scope: Construct, id: string, props: ScheduledJobsProps = {}) {
    super(scope, id);
    this.props = props;
    this.outputPrefix = props.outputPrefix ?? '';
    validatedCall(ScheduledJobs, () => this.checkProps());
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.removalPolicy = removalPolicy;
    // Before anything is built: every resource under this construct takes the key (lib/encryption.ts), every function
    // the runtime; the boundary reaches every role made under it (and the schedules' role: configureSchedulerRole).
    if (props.encryptionKey !== undefined) useEncryptionKey(this, props.encryptionKey);
    if (props.runtime !== undefined) useRuntime(this, props.runtime);
    if (props.permissionsBoundary !== undefined) iam.PermissionsBoundary.of(this).apply(props.permissionsBoundary);
    this.table = occurrenceTable(this, removalPolicy);
    this.reportBucket =
      props.reportBucket ??
      reportBucket(this, removalPolicy, { retention: props.reportRetention, versioned: props.versioned });
    ({ topic: this.reportReadyTopic, queue: this.reportReadyQueue } = reportAnnouncements(this));
    // One namespace per stack, so that two deployments in one account do not add up each other's counts.
    this.metricsNamespace = `ScheduledJobs/${Stack.of(this).stackName}`;
    this.node.addValidation({
      validate: () => {
        // The calls the app made that were rejected, all of them, before anything is bundled (deferred-bundling.ts);
        // thrown rather than returned, so that the app's error is the ValidationError with its problems.
        if (this.rejected.size > 0) throw this.rejected.error();
        return [
          ...this.idleProblems(),
          ...reportRetentionProblems(
            `ScheduledJobs ${this.node.path}`,
            this.props.reportRetention,
            [...this.workersById.values()].flatMap((w) => w.settings),
          ),
        ];
      },
    });
    if (props.stackOutputs !== false) this.addStackOutputs();
  }

  /** A ScheduledJobs without jobs, a worker without jobs: found at synth, when the app has added everything. */
  private idleProblems(): string[] {
    return [
      ...(this.jobsById.size === 0 ? [`ScheduledJobs ${this.node.path}: add at least one job (addJob)`] : []),
      ...[...this.workersById.values()]
        .filter((w) => w.jobs.length === 0)
        .map((w) => `addWorker(${w.workerId}): the worker runs no job; add one with addJob({ worker }) or remove it`),
    ];
  }

  /** The props' own problems, before anything is built. */
  private checkProps(): void {
    const problems = [
      ...jobsAlarmsProblems(this.props.alarms),
      ...stateChangeEventsProblems(`ScheduledJobs ${this.node.path}.stateChangeEvents`, this.props.stateChangeEvents),
      ...tracingProblems(`ScheduledJobs ${this.node.path}.tracing`, this.props.tracing),
      ...encryptionKeyProblems(`ScheduledJobs ${this.node.path}.encryptionKey`, this.props.encryptionKey),
      ...reportBucketPropsProblems(`ScheduledJobs ${this.node.path}`, this.props),
      ...runtimeProblems(`ScheduledJobs ${this.node.path}.runtime`, this.props.runtime),
      ...permissionsBoundaryProblems(
        `ScheduledJobs ${this.node.path}.permissionsBoundary`,
        this.props.permissionsBoundary,
      ),
    ];
    if (problems.length > 0) throw new ValidationError(problems);
    const prefix = this.outputPrefix;
    if (typeof prefix !== 'string' || !/^[A-Za-z0-9]{0,64}$/.test(prefix))
      throw new ValidationError([
        `ScheduledJobs ${this.node.path}.outputPrefix: must be up to 64 letters or digits (a CloudFormation output name), got ${quoteValue(prefix)}`,
      ]);
    const other = Stack.of(this).node.tryFindChild(`${prefix}${STACK_OUTPUTS.table}`);
    if (this.props.stackOutputs !== false && other !== undefined)
      throw new ValidationError([
        `ScheduledJobs ${this.node.path}.outputPrefix: the stack has outputs named with the prefix ${quoteValue(prefix)} already ` +
          '(another ScheduledJobs); give each ScheduledJobs of a stack its own outputPrefix',
      ]);
  }

  /** The shared functions, schedules and alarms, built on first use (the first worker, or a property read). */
  private shared(): SharedPieces {
    this.built ??= this.buildShared();
    return this.built;
  }

  private buildShared(): SharedPieces {
    const resources: OccurrenceResources = {
      table: this.table,
      reportBucket: this.reportBucket,
      reportReadyTopic: this.reportReadyTopic,
      metricsNamespace: this.metricsNamespace,
      logging: this.props.logging,
      tracing: this.props.tracing,
    };
    const trigger = triggerFunction(this, resources);
    const notifier = notifierFunction(this, resources);
    const events = this.buildStateChangeEvents();
    const schedules = new JobSchedules(this, 'Schedules', { trigger: trigger.fn });
    const reconciler = reconcilerFunction(
      this,
      resources,
      Lazy.string({
        produce: () => {
          // Without jobs there are no thresholds, and the synth fails on the validation; the synth resolves the
          // tokens before it validates, so throwing here would hide that message.
          if (this.jobsById.size === 0) return '';
          return JSON.stringify(reconcileThresholds([...this.workersById.values()].flatMap((w) => w.settings)));
        },
      }),
      Lazy.string({
        produce: () =>
          // Without workers the synth fails on the validation (see above).
          this.workersById.size === 0
            ? ''
            : String(Math.min(...[...this.workersById.values()].map((w) => w.stuckAfterSeconds()))),
      }),
    );
    allowLateCheck(reconciler.fn, schedules.group.scheduleGroupName, this.table);
    allowRouteLookup(trigger.fn, schedules.group.scheduleGroupName);
    if (isTraced(this.props.tracing)) {
      for (const fn of [trigger.fn, notifier.fn, reconciler.fn, ...(events === undefined ? [] : [events.fn])])
        acknowledgeTracingFindings(fn);
    }
    // By SHARED_QUEUE_NAMES: the name their alarm carries.
    const sharedQueues: Record<string, sqs.IQueue> = {
      TriggerDeadLetterQueue: trigger.deadLetterQueue,
      SchedulerDeadLetterQueue: schedules.deadLetterQueue,
      NotifierFailureQueue: notifier.failureQueue,
      ...(events === undefined ? {} : { EventsFailureQueue: events.failureQueue }),
    };
    const monitoring = JobsMonitoring.create(this, 'Monitoring', {
      metricsNamespace: this.metricsNamespace,
      dashboard: this.props.dashboard,
      reconciler: reconciler.fn,
      deadLetterQueues: sharedQueues,
      alarms: this.props.alarms,
    });
    const pieces = {
      trigger,
      notifier,
      events,
      reconciler,
      schedules,
      monitoring,
      workersScope: new Construct(this, 'Workers'),
    };
    this.built = pieces;
    acknowledgeNagFindings(this);
    if (this.props.stackOutputs !== false) this.addSharedStackOutputs(pieces);
    return pieces;
  }

  /** Invoked by every schedule; records the occurrence once and enqueues it on its worker's queue. */
  get triggerFunction(): nodejs.NodejsFunction {
    return this.shared().trigger.fn;
  }

  /** Scheduler invocations the trigger failed after its async retries. */
  get triggerDeadLetterQueue(): sqs.Queue {
    return this.shared().trigger.deadLetterQueue;
  }

  /** Reads the table's stream and announces each report once. */
  get notifierFunction(): nodejs.NodejsFunction {
    return this.shared().notifier.fn;
  }

  /** Where the stream event source puts descriptions of batches the notifier failed for good. */
  get notifierFailureQueue(): sqs.Queue {
    return this.shared().notifier.failureQueue;
  }

  /**
   * The state-change events (`stateChangeEvents`): the function on the table's stream, its failure queue and the
   * bus it puts events on; undefined when the stack was not asked for them.
   */
  get stateChangeEvents(): StateChangeEventsPiece | undefined {
    return this.shared().events;
  }

  /** The events function, with the stack's table, bucket and logging, when `stateChangeEvents` asks for it. */
  private buildStateChangeEvents(): StateChangeEventsPiece | undefined {
    const asked = this.props.stateChangeEvents;
    if (asked === undefined || asked === false) return undefined;
    return stateChangeEventsFunction(
      this,
      {
        table: this.table,
        bucketName: this.reportBucket.bucketName,
        metricsNamespace: this.metricsNamespace,
        logging: this.props.logging,
        tracing: this.props.tracing,
      },
      asked === true ? {} : asked,
    );
  }

  /** Re-enqueues stuck occurrences and announces unannounced reports, every five minutes. */
  get reconcilerFunction(): nodejs.NodejsFunction {
    return this.shared().reconciler.fn;
  }

  /** The rule that runs the reconciler. */
  get reconcilerRule(): events.Rule {
    return this.shared().reconciler.rule;
  }

  /** The schedule group and the jobs' schedules. @internal */
  get schedules(): JobSchedules {
    return this.shared().schedules;
  }

  /** The schedule group of the jobs' schedules (one per ScheduledJobs). */
  get scheduleGroup(): ScheduleGroup {
    return this.shared().schedules.group;
  }

  /**
   * The schedule registry: one row per schedule of the jobs that take their schedules at run time, the source of
   * truth their Scheduler schedules are projected from (docs/runtime-schedules.md). Built with the first such job;
   * undefined while there is none. Grant access to one job's rows with `ScheduledJob.grantManageSchedules`.
   */
  get scheduleRegistry(): dynamodb.ITable | undefined {
    return this.registry;
  }

  /**
   * The alarms (`monitoring.sharedAlarms`, `monitoring.workerAlarms(workerId)`), their topic, and the dashboard.
   */
  get monitoring(): JobsMonitoring {
    return this.shared().monitoring;
  }

  /**
   * Repairs the reconciler made (stuck occurrences re-enqueued, reports announced late): each means something
   * upstream dropped an occurrence.
   */
  metricReconcilerRepairs(props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric {
    return reconcilerRepairs(this.metricsNamespace, props);
  }

  /** Reconciler invocations that failed. */
  metricReconcilerErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return functionErrors(this.reconcilerFunction, props);
  }

  /**
   * The names `occurrences` (the CLI) reads from the stack (STACK_OUTPUTS, after the outputPrefix); each worker's
   * queue is an output of its own whose description is the worker id.
   */
  private addStackOutputs(): void {
    this.stackOutput(STACK_OUTPUTS.table, this.table.tableName);
    this.stackOutput(STACK_OUTPUTS.bucket, this.reportBucket.bucketName);
    this.stackOutput(STACK_OUTPUTS.reportReadyTopic, this.reportReadyTopic.topicArn);
    this.stackOutput(STACK_OUTPUTS.reportReadyQueue, this.reportReadyQueue.queueUrl);
  }

  private addSharedStackOutputs(pieces: SharedPieces): void {
    this.stackOutput(STACK_OUTPUTS.scheduleGroup, pieces.schedules.group.scheduleGroupName);
    const topic = pieces.monitoring.alarmTopic;
    if (topic !== undefined) this.stackOutput(STACK_OUTPUTS.alarmTopic, topic.topicArn);
    const dashboard = pieces.monitoring.dashboard;
    if (dashboard !== undefined) this.stackOutput(STACK_OUTPUTS.dashboard, dashboard.dashboardName);
  }

  /** A stack output built in the stack itself, so its key is the prefix and the name, not the construct path. */
  private stackOutput(key: string, value: string, description?: string): void {
    new CfnOutput(Stack.of(this), `${this.outputPrefix}${key}`, { value, description });
  }

  /** The workers by id, in the order they were added. */
  get workers(): ReadonlyMap<string, JobWorker> {
    return this.workersById;
  }

  /** The jobs by id, in the order they were added. */
  get jobs(): ReadonlyMap<string, ScheduledJob> {
    return this.jobsById;
  }

  /**
   * A worker: one function (sized and permitted as you say) with its own queue, dead-letter queue, role and alarms,
   * for the jobs that name it (`addJob(id, { worker })`). Grant it what its jobs need: `bucket.grantRead(worker)`.
   *
   * @param workerId - 1 to 64 letters, digits, '-' or '_': the `worker` of its occurrences' rows and its metrics'
   *   dimension.
   * @example
   * ```ts
   * const exportsWorker = jobs.addWorker('exports', {
   *   entry: path.join(__dirname, 'workers', 'exports.ts'), // export const handler = defineWorker({ jobs: { ... } })
   *   memorySize: 2048,
   *   timeout: Duration.minutes(15),
   * });
   * dataBucket.grantRead(exportsWorker);
   * ```
   */
  addWorker(workerId: string, props: JobWorkerProps): JobWorker {
    try {
      return this.newWorker(
        workerId,
        props,
        `addWorker(${typeof workerId === 'string' ? workerId : quoteValue(workerId)})`,
      );
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      this.rejected.record(error, this.addWorker);
      return this.standInWorker(workerId);
    }
  }

  /**
   * What a rejected addWorker returns: a worker that is never deployed (the synth throws first) but that the app can
   * grant to and name in its jobs as it would the real one, so that it carries on to its next call.
   */
  private standInWorker(workerId: unknown): JobWorker {
    const constructId = `Rejected${this.standInWorkers.size + 1}`;
    const worker = JobWorker.create(
      this.shared().workersScope,
      typeof workerId === 'string' ? workerId : String(workerId),
      { entry: '' },
      {
        table: this.table,
        reportBucket: this.reportBucket,
        metricsNamespace: this.metricsNamespace,
      },
      constructId,
    );
    this.standInWorkers.add(worker);
    return worker;
  }

  /**
   * addWorker, with its problems named `where` (a job's own worker names the job's `entry`). A job's own worker is
   * built under the job (`ownJobScope` makes it, once the checks passed) with the id `Default`, which logical IDs leave
   * out: its resources keep the IDs they had as `Workers/<id>` before jobs were constructs.
   */
  private newWorker(
    workerId: string,
    props: JobWorkerProps,
    where: string,
    ownJobScope?: (workers: Construct) => Construct,
  ): JobWorker {
    const problems: string[] = [];
    if (typeof workerId !== 'string' || !JOB_ID_PATTERN.test(workerId))
      problems.push(`${where}: the worker id must be 1-64 letters, digits, '-' or '_' starting with a letter or digit`);
    else if (this.workersById.has(workerId))
      problems.push(`${where}: a worker with the id ${quoteValue(workerId)} exists already`);
    else if ((SHARED_QUEUE_NAMES as readonly string[]).includes(workerId))
      problems.push(`${where}: the id ${quoteValue(workerId)} is taken by a shared queue's alarm (dlq-${workerId})`);
    problems.push(...workerPropsProblems(props, where));
    if (problems.length > 0) throw new ValidationError(problems);

    const shared = this.shared();
    const scope = ownJobScope?.(shared.workersScope) ?? shared.workersScope;
    const worker = JobWorker.create(
      scope,
      workerId,
      props,
      {
        table: this.table,
        reportBucket: this.reportBucket,
        metricsNamespace: this.metricsNamespace,
        detailedMetrics: this.props.detailedMetrics ?? this.props.dashboard === true,
        logging: this.props.logging,
        tracing: this.props.tracing,
      },
      ownJobScope === undefined ? workerId : 'Default',
    );
    // The trigger enqueues on every worker's queue; the reconciler re-enqueues there.
    allow(shared.trigger.fn, ['sqs:SendMessage'], [worker.queue.queueArn]);
    allow(shared.reconciler.fn, ['sqs:SendMessage'], [worker.queue.queueArn]);
    for (const operator of this.operators) grantSend(operator, worker);
    shared.monitoring.addWorker(worker);
    worker[SET_ALARMS](shared.monitoring.workerAlarms(workerId));
    if (props.vpc !== undefined) acknowledgeVpcAccessFindings(worker);
    if (isTraced(props.tracing ?? this.props.tracing)) acknowledgeTracingFindings(worker.function);
    this.workersById.set(workerId, worker);
    if (this.props.stackOutputs !== false)
      this.stackOutput(`${STACK_OUTPUTS.workerQueuePrefix}${this.workersById.size}`, worker.queue.queueUrl, workerId);
    return worker;
  }

  /**
   * A job: validated at once (a {@link ValidationError} names every wrong property as `addJob(id).property`),
   * scheduled when enabled, and run by the shared `worker` it names or by a worker of its own built from its `entry`.
   *
   * @param jobId - 1 to 64 letters, digits, '-' or '_': the job's schedule name, the partition of its rows, the
   *   prefix of its reports.
   * @example
   * ```ts
   * const weekly = jobs.addJob('weekly-export', {
   *   schedule: ScheduleExpression.cron({ minute: '0', hour: '3', weekDay: 'MON', timeZone: TimeZone.EUROPE_BERLIN }),
   *   worker: exportsWorker,
   *   timeout: Duration.minutes(9),
   *   overlap: OverlapPolicy.BUFFER_ONE,
   *   jobMetrics: true, // for the alarm on its own metric below
   * });
   * new cloudwatch.Alarm(this, 'WeeklyExportFailed', { metric: weekly.metricFailed(), threshold: 1, evaluationPeriods: 1 });
   * ```
   */
  addJob(jobId: string, props: JobWithOwnWorkerProps): ScheduledJob;
  /** A job run by a shared worker from `addWorker` (its `worker`). One overload per kind, so that the compiler's
   * message for a job with neither `worker` nor `entry` names both. */
  addJob(jobId: string, props: JobInSharedWorkerProps): ScheduledJob;
  /** A job's props of either kind, as a value typed JobProps. */
  addJob(jobId: string, props: JobProps): ScheduledJob;
  addJob(jobId: string, props: JobProps): ScheduledJob {
    try {
      return this.newJob(jobId, props);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      this.rejected.record(error, this.addJob);
      // A handle with nothing under it (the synth throws first), so that the app carries on to its next call.
      return ScheduledJob.create(this, `RejectedJob${++this.rejectedJobs}`, {
        jobId,
        metricsNamespace: this.metricsNamespace,
        reportBucket: this.reportBucket,
        jobMetrics: false,
        runtimeSchedules: false,
        rejected: () => this.rejected.error(),
      });
    }
  }

  private newJob(jobId: string, props: JobProps): ScheduledJob {
    const where = `addJob(${typeof jobId === 'string' ? jobId : quoteValue(jobId)})`;
    const translated = jobConfigOf(jobId, props, where);
    if (translated.problems !== undefined) throw new ValidationError(translated.problems);
    // The stack's default where the job gives none; written into the settings only when on (the default is off).
    const jobMetrics = translated.config.jobMetrics ?? this.props.jobMetrics;
    const resolved = this.resolve({ ...translated.config, jobMetrics }, where);
    if (this.jobsById.has(jobId))
      throw new ValidationError([`${where}: a job with the id ${quoteValue(jobId)} exists already`]);
    if (resolved.runtimeSchedules) this.checkRoomForKeyedJob(where);
    const parts = {
      jobId,
      metricsNamespace: this.metricsNamespace,
      reportBucket: this.reportBucket,
      jobMetrics: resolved.settings.jobMetrics,
      runtimeSchedules: resolved.runtimeSchedules,
    };
    // A job with an entry holds its own worker (built under it, once checked: workerFor); a job of a shared worker is
    // that worker's child. Either way its schedule is built under it.
    let job: ScheduledJob | undefined;
    const worker = this.workerFor(props, resolved.settings, where, (scope) => {
      job = ScheduledJob.create(scope, jobId, parts);
      return job;
    });
    job ??= ScheduledJob.create(worker, `Job-${jobId}`, parts);
    worker[ADD_JOB](resolved.settings, { runtimeSchedules: resolved.runtimeSchedules });
    const schedules = this.shared().schedules;
    const keyed = resolved.runtimeSchedules ? this.addKeyedJob(resolved, worker, job) : undefined;
    const schedule: JobSchedule | undefined = keyed ?? schedules.addJob(resolved, scheduleWorkerOf(worker), job);
    // The stack's role, which the fixed schedules pass; a run-time-schedule job's role is its own (grantManageSchedules).
    if (keyed === undefined && schedule !== undefined && this.scheduleTargetRoleArn === undefined) {
      this.scheduleTargetRoleArn = schedule.targetRoleArn;
      configureSchedulerRole(this, schedule.targetRoleArn, this.props);
      for (const operator of this.operators) grantPassRole(operator, schedule.targetRoleArn);
    }
    if (resolved.settings.pauseAfterFailures !== undefined) {
      this.monitoring.addPauseAlarm();
      // A job with run-time schedules pauses a series, not a schedule of the app's: its pause only records the
      // state row (its template never fires; its keys' schedules are the registry's to switch).
      worker[ALLOW_PAUSE](jobId, schedules.group.scheduleGroupName, keyed === undefined ? schedule : undefined);
    }
    addCappedJob(resolved.settings, worker, this.shared().reconciler.fn, this.table);
    acknowledgeWorkerReportFindings(this, worker, jobId);
    acknowledgeSchedulerRoleFindings(this);
    job[ATTACH]({
      worker,
      schedule: schedules.schedules.get(jobId),
      runtimeSchedules:
        keyed === undefined || this.registry === undefined
          ? undefined
          : { jobId, registry: this.registry, schedules: keyed },
    });
    this.jobsById.set(jobId, job);
    if (job.runtimeSchedules) for (const operator of this.operators) job.grantManageSchedules(operator);
    return job;
  }

  /**
   * A job that takes its schedules at run time: its group and template (JobSchedules.addKeyedJob), the registry
   * with the first such job, and the reconciler's access to the job's group and template.
   */
  private addKeyedJob(resolved: ResolvedJobConfig, worker: JobWorker, job: ScheduledJob): KeyedJobSchedule {
    const shared = this.shared();
    const keyed = shared.schedules.addKeyedJob(resolved, scheduleWorkerOf(worker), this.removalPolicy, job);
    this.keyedJobIds.push(resolved.settings.id);
    if (this.registry === undefined) {
      const registry = this.buildRegistry(shared);
      this.registry = registry;
      for (const viewer of this.viewers) grantReadRegistry(viewer, registry);
    }
    allowReconcileKeyedJob(shared.reconciler.fn, keyed);
    acknowledgeKeyedGroupFindings(shared.reconciler.fn, keyed.group.scheduleGroupName, resolved.settings.id);
    return keyed;
  }

  /**
   * The schedule registry, and what the reconciler needs to repair its projection: the table's name (REGISTRY_TABLE)
   * (the shared group's, SCHEDULE_GROUP, where it reads each job's template by the job id, is set for the late
   * check already: allowLateCheck), the whole table, both indexes and ListSchedules (each job's role to hand to
   * Scheduler is granted with the job: allowReconcileKeyedJob); and the trigger's read of one row.
   */
  private buildRegistry(shared: SharedPieces): dynamodb.Table {
    const registry = scheduleRegistryTable(this, this.removalPolicy);
    // The trigger reads a run-time schedule's row before it records an occurrence (runtime-schedule-guard.ts): one
    // eventually consistent GetItem, and nothing else of the registry.
    shared.trigger.fn.addEnvironment(ENV.registryTable, registry.tableName);
    allow(shared.trigger.fn, ['dynamodb:GetItem'], [registry.tableArn]);
    const reconciler = shared.reconciler.fn;
    reconciler.addEnvironment(ENV.registryTable, registry.tableName);
    // Every job with run-time schedules, the ones added after this too: the audit walks their groups in turn.
    reconciler.addEnvironment(ENV.registryJobs, Lazy.string({ produce: () => JSON.stringify(this.keyedJobIds) }));
    allowReconcileRegistry(reconciler, registry);
    acknowledgeRegistryReconcilerFindings(reconciler);
    if (this.props.stackOutputs !== false) this.stackOutput(STACK_OUTPUTS.scheduleRegistryTable, registry.tableName);
    return registry;
  }

  /** The job configuration checked and with its defaults, its problems named by the props' own names. */
  private resolve(config: ScheduledJobConfig, where: string): ResolvedJobConfig {
    try {
      return resolveJobConfig(config, where);
    } catch (error) {
      if (error instanceof ValidationError) throw new ValidationError(publicProblems(error.problems, where));
      throw error;
    }
  }

  /**
   * Lets `grantee` read the reports of every job (GetObject on `reports/*`), as a consumer of the report-ready
   * announcements does.
   */
  grantReadReports(grantee: iam.IGrantable): iam.Grant {
    return this.reportBucket.grantRead(grantee, `${REPORT_KEY_PREFIX}*`);
  }

  /**
   * Lets a job read the occurrence rows (the status index and the rows themselves), as the sample digest does.
   * Read-only: the writes are the protocol's, each granted to its own function.
   */
  grantReadOccurrences(grantee: iam.IGrantable): iam.Grant {
    // Query on the table (one job's rows) and on the status index by name, not Table.grant's `index/*`: the table
    // has one index, and the wildcard would also reach any index added later.
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:Query'],
      resourceArns: [this.table.tableArn, statusIndexArn(this.table)],
    })
      .combine(
        iam.Grant.addToPrincipal({
          grantee,
          actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
          resourceArns: [this.table.tableArn],
        }),
      )
      .combine(grantKeyUse(grantee, this.table.encryptionKey, 'read'));
  }

  /**
   * Lets someone see the jobs without changing anything: `occurrences list`, `show`, `watch`, `describe`,
   * `schedules list|get` and `occurrences console --read-only` (its pages and the reports' downloads). Read-only:
   * Scheduler's Get and List on the stack's schedule group, Query and Get on the occurrences table and its status index,
   * Query and Get on the schedule registry (when a job takes run-time schedules, also when added later), GetObject on
   * the reports (`reports/*`), and DescribeStacks on this stack (the outputs name the rest). grantOperateJobs includes it.
   *
   * @example
   * ```ts
   * const support = new iam.Role(this, 'Support', { assumedBy: new iam.AccountRootPrincipal() });
   * jobs.grantViewJobs(support);
   * ```
   */
  grantViewJobs(grantee: iam.IGrantable): iam.Grant {
    this.viewers.push(grantee);
    acknowledgeViewerFindings(this, grantee);
    const stack = Stack.of(this);
    const grants = [
      // Every page and command reads the job's schedule (its expression, worker, deadline); the group names the jobs.
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['scheduler:GetSchedule'],
        resourceArns: [this.groupSchedulesArn()],
      }),
      // ListSchedules has no resource-level permissions.
      iam.Grant.addToPrincipal({ grantee, actions: ['scheduler:ListSchedules'], resourceArns: ['*'] }),
      // One job's rows (a Query on the key), a row, several rows, and the rows of a status (the status index).
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
        resourceArns: [this.table.tableArn],
      }),
      iam.Grant.addToPrincipal({ grantee, actions: ['dynamodb:Query'], resourceArns: [statusIndexArn(this.table)] }),
      // The reports, to download from the console; only what the workers write.
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['s3:GetObject'],
        resourceArns: [this.reportBucket.arnForObjects(`${REPORT_KEY_PREFIX}*`)],
      }),
      // The stack's outputs name the table, the bucket, the schedule group and the worker queues.
      iam.Grant.addToPrincipal({ grantee, actions: ['cloudformation:DescribeStacks'], resourceArns: [stack.stackId] }),
      // Under a customer-managed key: the rows and the reports are decrypted with it.
      grantKeyUse(grantee, this.table.encryptionKey, 'read'),
      grantKeyUse(grantee, this.reportBucket.encryptionKey, 'read'),
    ];
    if (this.registry !== undefined) grants.push(grantReadRegistry(grantee, this.registry));
    return grants.reduce((all, grant) => all.combine(grant));
  }

  /** `arn:*:scheduler:*:*:schedule/<the stack's group>/*`: each job's schedule, named by its job id (groupSchedulesArn). */
  private groupSchedulesArn(): string {
    return groupSchedulesArn(this.schedules.group.scheduleGroupName);
  }

  /**
   * Lets an operator run `occurrences pause`, `resume`, `run`, `retry` and `backfill` on this stack's jobs, and act in
   * `occurrences console` (docs/cli.md lists what each needs), with everything grantViewJobs gives, and manage the run-time schedules of the jobs that take them (each job's
   * `ScheduledJob.grantManageSchedules`). Workers, schedules and such jobs added later are covered too: their queues,
   * the schedules' role and their schedules are granted as they are added (the returned Grant holds what was granted
   * by this call).
   *
   * @example
   * ```ts
   * const oncall = new iam.Role(this, 'Oncall', { assumedBy: new iam.AccountRootPrincipal() });
   * jobs.grantOperateJobs(oncall);
   * ```
   */
  grantOperateJobs(grantee: iam.IGrantable): iam.Grant {
    this.operators.push(grantee);
    const grants = [
      // An operator sees what they act on: the console's pages, list, show, watch and the reports.
      this.grantViewJobs(grantee),
      // Pause and resume switch the job's schedule (grantViewJobs reads it).
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['scheduler:UpdateSchedule'],
        resourceArns: [this.groupSchedulesArn()],
      }),
      // The job-state row's compare-and-swap, the occurrences run, resume and backfill record, retry's reopen.
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['dynamodb:UpdateItem', 'dynamodb:PutItem'],
        resourceArns: [this.table.tableArn],
      }),
      // Under a customer-managed key: the writes above and the messages below.
      grantKeyUse(grantee, this.table.encryptionKey, 'write'),
      ...[...this.workersById.values()].map((worker) => grantSend(grantee, worker)),
    ];
    if (this.scheduleTargetRoleArn !== undefined) grants.push(grantPassRole(grantee, this.scheduleTargetRoleArn));
    for (const job of this.jobsById.values()) if (job.runtimeSchedules) grants.push(job.grantManageSchedules(grantee));
    return grants.reduce((all, grant) => all.combine(grant));
  }

  /**
   * The worker that will run the job, checked to be able to (its timeout, its environment): the job's own, built
   * only once the check passed, or the shared one it names.
   */
  private workerFor(
    props: JobProps,
    settings: JobSettings,
    where: string,
    ownJobScope: (workers: Construct) => Construct,
  ): JobWorker {
    const jobId = settings.id;
    const { worker: ref, entry } = props as { worker?: unknown; entry?: unknown };
    if (ref !== undefined && entry !== undefined)
      throw new ValidationError([`${where}: give either worker or entry, not both`]);
    if (ref === undefined) {
      if (typeof entry !== 'string' || entry === '')
        throw new ValidationError([
          `${where}: give worker (from addWorker) or entry (the job's own file, exporting defineJob)` +
            (entry === undefined ? '' : `; entry must be a file path, got ${quoteValue(entry)}`),
        ]);
      const entryProblems = entryFileProblems(entry, `${where}.entry`);
      if (entryProblems.length > 0) throw new ValidationError(entryProblems);
      const options: JobWorkerProps = { ...this.props.defaultWorkerOptions, ...props.workerOptions, entry };
      // Checked before the worker is built: a rejected job leaves no worker behind.
      const problems = workerJobProblems(
        {
          workerId: jobId,
          givenTimeoutSeconds: options.timeout?.toSeconds(),
          userEnvironmentBytes: environmentBytes(options.environment),
          settings: [],
        },
        settings,
        where,
      );
      if (problems.length > 0) throw new ValidationError(publicProblems(problems, where));
      const own = this.newWorker(jobId, options, `${where}.entry`, ownJobScope);
      this.singleJobWorkers.add(jobId);
      return own;
    }
    // A worker whose addWorker was rejected: its problems are reported already, and this job's own are found above.
    if (ref instanceof JobWorker && this.standInWorkers.has(ref)) throw new ValidationError([]);
    const worker = ref instanceof JobWorker ? this.workersById.get(ref.workerId) : undefined;
    if (worker === undefined || worker !== ref) {
      const known = [...this.workersById.keys()].join(', ') || 'none';
      throw new ValidationError([
        `${where}.worker: must be a worker of this ScheduledJobs (it has: ${known}), from addWorker; got ${ref instanceof JobWorker ? `worker ${quoteValue(ref.workerId)} of another ScheduledJobs` : quoteValue(ref)}`,
      ]);
    }
    if (this.singleJobWorkers.has(worker.workerId))
      throw new ValidationError([
        `${where}.worker: worker ${quoteValue(worker.workerId)} was built from job ${quoteValue(worker.workerId)}'s own entry, and defineJob runs ` +
          'one job; give this job an entry of its own, or put both in a worker from addWorker (defineWorker)',
      ]);
    const problems = workerJobProblems(worker, settings, where);
    if (problems.length > 0) throw new ValidationError(publicProblems(problems, where));
    return worker;
  }

  /**
   * A job with run-time schedules adds its id to the reconciler's REGISTRY_JOBS (and the first one the registry's
   * variables): refused, before anything is built, when they would overflow the reconciler's environment.
   */
  private checkRoomForKeyedJob(where: string): void {
    const jobs = this.keyedJobIds.length + 1;
    const bytes = REGISTRY_ENVIRONMENT_BYTES + REGISTRY_JOBS_NAME_BYTES + jobs * KEYED_JOB_ENVIRONMENT_BYTES;
    if (bytes > RECONCILER_ENVIRONMENT_BUDGET_BYTES)
      throw new ValidationError([
        `${where}.runtimeSchedules: the schedule registry's ${ENV.registryTable}, ${ENV.scheduleGroup} and ` +
          `${ENV.registryJobs} (${jobs} job ids) would take up to ${bytes} bytes of the reconciler's environment, ` +
          `more than the ${RECONCILER_ENVIRONMENT_BUDGET_BYTES} left beside its other variables in Lambda's 4 KB; ` +
          'give the job a fixed schedule, or put it in another ScheduledJobs',
      ]);
  }
}

/** The worker as its jobs' schedules name it: its id and route, the threshold as of the synth (Lazy). */
function scheduleWorkerOf(worker: JobWorker): ScheduleWorker {
  return {
    workerId: worker.workerId,
    queueUrl: worker.queue.queueUrl,
    stuckAfterSeconds: Lazy.number({ produce: () => worker.stuckAfterSeconds() }),
  };
}

/** The schedule registry's rows, read: `schedules list|get` and the console's schedules of a job. */
function grantReadRegistry(grantee: iam.IGrantable, registry: dynamodb.ITable): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['dynamodb:GetItem', 'dynamodb:Query'],
    resourceArns: [registry.tableArn],
  }).combine(grantKeyUse(grantee, registry.encryptionKey, 'read'));
}

function grantSend(grantee: iam.IGrantable, worker: JobWorker): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['sqs:SendMessage'],
    resourceArns: [worker.queue.queueArn],
  }).combine(grantKeyUse(grantee, worker.queue.encryptionMasterKey, 'write'));
}

/** UpdateSchedule (pause, resume) hands the schedule's target role to Scheduler again; only to Scheduler. */
function grantPassRole(grantee: iam.IGrantable, roleArn: string): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['iam:PassRole'],
    resourceArns: [roleArn],
    conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
  });
}
