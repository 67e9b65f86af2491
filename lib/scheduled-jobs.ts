/**
 * ScheduledJobs: everything a set of scheduled jobs needs, with least-privilege wiring, as a construct for your own
 * stack. Add workers (a function, a queue, a role, alarms) and jobs (a schedule each) to it:
 *
 *   const jobs = new ScheduledJobs(this, 'Jobs', { alarmEmail: 'ops@example.com' });
 *   const exports = jobs.addWorker('exports', { entry: 'src/workers/exports.ts', memorySize: 2048 });
 *   jobs.addJob({ id: 'weekly-export', schedule: 'cron(0 3 ? * MON *)', worker: exports });
 *   jobs.addJob({ id: 'daily-digest', schedule: 'cron(0 6 * * ? *)', entry: 'src/jobs/daily-digest.ts' });
 *
 *   Scheduler ─▶ trigger ─▶ occurrence row (PENDING) + the job's worker queue ─▶ worker ─▶ report in S3, SUCCEEDED
 *   table stream (transition to SUCCEEDED only) ─▶ notifier ─▶ SNS FIFO "report ready" ─▶ ReportReadyQueue
 *   every 5 min: reconciler ─▶ re-enqueue stuck rows on their worker's queue, announce reports never announced
 *   alarms (SNS topic) and a dashboard over all of it (jobs-monitoring.ts)
 *
 * The table, the bucket, the trigger, the notifier, the reconciler and the topic are shared; each worker has its own
 * function, queue, dead-letter queue, role and alarms (job-worker.ts). No function is handed the settings of every
 * job: each schedule carries what the trigger needs of its job, each worker reads its own jobs' settings, and the
 * trigger and the reconciler read one entry per worker (docs/design.md, "Workers").
 */
import { CfnOutput, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { JOB_ID_PATTERN, type JobSettings } from '../functions/protocol/job-settings';
import { quoteValue } from '../functions/protocol/quote-value';
import { reconcileThresholds } from '../functions/protocol/worker-limits';
import type { WorkerRoute } from '../functions/protocol/worker-routes';
import { ENV } from '../functions/runtime-env';
import { JobConfigError } from './errors';
import { type ResolvedJobConfig, resolveJobConfig, type ScheduledJobConfig } from './job-config';
import { allow } from './job-function';
import { JobSchedules } from './job-schedules';
import {
  ADD_JOB,
  ALLOW_PAUSE,
  environmentBytes,
  JobWorker,
  type JobWorkerOptions,
  workerJobProblems,
} from './job-worker';
import { JobsMonitoring } from './jobs-monitoring';
import {
  acknowledgeNagFindings,
  acknowledgeOperatorFindings,
  acknowledgeSchedulerRoleFindings,
  acknowledgeWorkerReportFindings,
} from './nag-acknowledgements';
import {
  notifierFunction,
  type OccurrenceResources,
  reconcilerFunction,
  triggerFunction,
} from './occurrence-functions';
import { reportAnnouncements } from './occurrence-queues';
import { occurrenceTable, reportBucket, statusIndexArn } from './occurrence-storage';
import { STACK_OUTPUTS } from './stack-outputs';

export {
  NOTIFIER_TIMEOUT_SECONDS,
  RECONCILER_TIMEOUT_SECONDS,
  succeededTransitionFilter,
  TRIGGER_TIMEOUT_SECONDS,
} from './occurrence-functions';

/**
 * A queue URL at its longest: `https://sqs.<region>.amazonaws.com/<account>/` (about 55 bytes) and the queue name
 * CloudFormation generates, `<stack>-<logical id>-<suffix>` cut to 80.
 */
const QUEUE_URL_MAX_BYTES = 135;

/**
 * What WORKERS may take of the trigger's and the reconciler's environment: Lambda's 4 KB per function, less the
 * reconciler's other variables and their resolved values (about 500 bytes: the table name, the topic ARN, the bucket
 * name, the thresholds, the metrics namespace). About 18 workers with short ids: the environment, not the stack's
 * 500 resources (about 32 workers), bounds the workers of one stack.
 */
export const WORKER_ROUTES_BUDGET_BYTES = 4096 - 700;

/** The shared dead-letter queues, by the name their alarm carries (`dlq-<name>`, beside the workers' `dlq-<id>`). */
const SHARED_QUEUE_NAMES = ['TriggerDeadLetterQueue', 'SchedulerDeadLetterQueue', 'NotifierFailureQueue'] as const;

export interface ScheduledJobsProps {
  /** For the occurrences table and the reports bucket. Default RETAIN: deleting the stack keeps the history. */
  readonly removalPolicy?: RemovalPolicy;
  /** Where alarms are e-mailed; without it, subscribe to `monitoring.alarmTopic` yourself. */
  readonly alarmEmail?: string;
  /** How the worker of a job that gives only `entry` is built (memory, bundling, ...). Default: 256 MB. */
  readonly defaultWorkerOptions?: Omit<JobWorkerOptions, 'entry'>;
}

/** One job: its settings and schedule (ScheduledJobConfig), and what runs it. */
export interface JobProps extends ScheduledJobConfig {
  /** The worker that runs the job: one from addWorker, or its id. */
  readonly worker?: JobWorker | string;
  /**
   * Instead of `worker`: the job's own entry file (it exports `handler = defineJob(...)`); the job gets a small
   * worker of its own, with the job's id (built with `defaultWorkerOptions`).
   */
  readonly entry?: string;
}

/** A job as added: validated, with its defaults, and the worker that runs it. */
export interface AddedJob extends ResolvedJobConfig {
  readonly worker: JobWorker;
}

export class ScheduledJobs extends Construct {
  readonly table: dynamodb.Table;
  readonly reportBucket: s3.Bucket;
  readonly reportReadyTopic: sns.Topic;
  /** Subscribed to the topic with raw delivery, so announcements are kept even before anyone else subscribes. */
  readonly reportReadyQueue: sqs.Queue;
  readonly triggerFunction: nodejs.NodejsFunction;
  /** Scheduler invocations the trigger failed after its async retries. */
  readonly triggerDeadLetterQueue: sqs.Queue;
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

  private readonly workersById = new Map<string, JobWorker>();
  /** The workers built from a job's own entry (defineJob): they run that one job. */
  private readonly singleJobWorkers = new Set<string>();
  private readonly jobsById = new Map<string, AddedJob>();
  private readonly workersScope: Construct;
  /** Given grantOperateJobs: each worker's queue is granted to them as it is added. */
  private readonly operators: iam.IGrantable[] = [];
  /** The role the schedules invoke the trigger with, once a schedule exists. */
  private scheduleTargetRoleArn: string | undefined;
  private readonly defaultWorkerOptions: Omit<JobWorkerOptions, 'entry'>;

  constructor(scope: Construct, id: string, props: ScheduledJobsProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.defaultWorkerOptions = props.defaultWorkerOptions ?? {};

    this.table = occurrenceTable(this, removalPolicy);
    this.reportBucket = reportBucket(this, removalPolicy);
    ({ topic: this.reportReadyTopic, queue: this.reportReadyQueue } = reportAnnouncements(this));

    // One namespace per stack, so that two deployments in one account do not add up each other's counts.
    this.metricsNamespace = `ScheduledJobs/${Stack.of(this).stackName}`;
    const resources: OccurrenceResources = {
      table: this.table,
      reportBucket: this.reportBucket,
      reportReadyTopic: this.reportReadyTopic,
      workersJson: Lazy.string({ produce: () => Stack.of(this).toJsonString(this.workerRoutes()) }),
      metricsNamespace: this.metricsNamespace,
    };
    ({ fn: this.triggerFunction, deadLetterQueue: this.triggerDeadLetterQueue } = triggerFunction(this, resources));
    ({ fn: this.notifierFunction, failureQueue: this.notifierFailureQueue } = notifierFunction(this, resources));
    this.schedules = new JobSchedules(this, 'Schedules', { trigger: this.triggerFunction });
    ({ fn: this.reconcilerFunction, rule: this.reconcilerRule } = reconcilerFunction(
      this,
      resources,
      Lazy.string({
        produce: () => {
          // Without jobs there are no thresholds, and the synth fails on the validation below; the synth resolves
          // the tokens before it validates, so throwing here would hide that message.
          if (this.jobsById.size === 0) return '';
          return JSON.stringify(reconcileThresholds([...this.jobsById.values()].map((j) => j.settings)));
        },
      }),
    ));
    this.workersScope = new Construct(this, 'Workers');

    const sharedQueues: Record<(typeof SHARED_QUEUE_NAMES)[number], sqs.IQueue> = {
      TriggerDeadLetterQueue: this.triggerDeadLetterQueue,
      SchedulerDeadLetterQueue: this.schedules.deadLetterQueue,
      NotifierFailureQueue: this.notifierFailureQueue,
    };
    this.monitoring = new JobsMonitoring(this, 'Monitoring', {
      metricsNamespace: this.metricsNamespace,
      reconciler: this.reconcilerFunction,
      deadLetterQueues: sharedQueues,
      alarmEmail: props.alarmEmail,
    });
    this.node.addValidation({
      validate: () => [
        ...(this.jobsById.size === 0 ? ['ScheduledJobs: add at least one job (addJob)'] : []),
        ...[...this.workersById.values()]
          .filter((w) => w.jobs.length === 0)
          .map((w) => `addWorker(${w.workerId}): the worker runs no job; add one with addJob({ worker }) or remove it`),
      ],
    });
    acknowledgeNagFindings(this);
    this.addStackOutputs();
  }

  /**
   * The names `occurrences` (the CLI) reads from the stack: fixed output keys (STACK_OUTPUTS), so one ScheduledJobs
   * per stack; each worker's queue is an output of its own whose description is the worker id.
   */
  private addStackOutputs(): void {
    const stack = Stack.of(this);
    const other = stack.node.tryFindChild(STACK_OUTPUTS.table);
    if (other !== undefined)
      throw new JobConfigError([
        `ScheduledJobs ${this.node.path}: a stack holds one ScheduledJobs (its outputs are what the occurrences CLI reads); put the other in a stack of its own`,
      ]);
    stackOutput(this, STACK_OUTPUTS.table, this.table.tableName);
    stackOutput(this, STACK_OUTPUTS.bucket, this.reportBucket.bucketName);
    stackOutput(this, STACK_OUTPUTS.scheduleGroup, this.schedules.group.scheduleGroupName);
    stackOutput(this, STACK_OUTPUTS.reportReadyTopic, this.reportReadyTopic.topicArn);
    stackOutput(this, STACK_OUTPUTS.reportReadyQueue, this.reportReadyQueue.queueUrl);
    stackOutput(this, STACK_OUTPUTS.alarmTopic, this.monitoring.alarmTopic.topicArn);
    stackOutput(this, STACK_OUTPUTS.dashboard, this.monitoring.dashboard.dashboardName);
  }

  /** The workers by id, in the order they were added. */
  get workers(): ReadonlyMap<string, JobWorker> {
    return this.workersById;
  }

  /** The jobs by id, in the order they were added. */
  get jobs(): ReadonlyMap<string, AddedJob> {
    return this.jobsById;
  }

  /**
   * A worker: one function (sized and permitted as you say) with its own queue, dead-letter queue, role and alarms,
   * for the jobs that name it. Grant it what its jobs need: `bucket.grantRead(worker)`.
   */
  addWorker(workerId: string, options: JobWorkerOptions): JobWorker {
    return this.newWorker(
      workerId,
      options,
      `addWorker(${typeof workerId === 'string' ? workerId : quoteValue(workerId)})`,
    );
  }

  /** addWorker, with its problems named `where` (a job's own worker names the job's `entry`). */
  private newWorker(workerId: string, options: JobWorkerOptions, where: string): JobWorker {
    const problems: string[] = [];
    if (typeof workerId !== 'string' || !JOB_ID_PATTERN.test(workerId))
      problems.push(`${where}: the worker id must be 1-64 letters, digits, '-' or '_' starting with a letter or digit`);
    else if (this.workersById.has(workerId))
      problems.push(`${where}: a worker with the id ${quoteValue(workerId)} exists already`);
    else if ((SHARED_QUEUE_NAMES as readonly string[]).includes(workerId))
      problems.push(`${where}: the id ${quoteValue(workerId)} is taken by a shared queue's alarm (dlq-${workerId})`);
    else {
      const bytes = this.workerRoutesBytes([...this.workersById.keys(), workerId]);
      if (bytes > WORKER_ROUTES_BUDGET_BYTES)
        problems.push(
          `${where}: with worker ${quoteValue(workerId)}, the ${ENV.workers} of the trigger and the reconciler (one queue ` +
            `URL per worker) would take up to ${bytes} bytes of their environment, more than the ${WORKER_ROUTES_BUDGET_BYTES} ` +
            `that fit beside their other variables in Lambda's 4 KB; run more jobs per worker (addJob({ worker }))`,
        );
    }
    if (typeof options?.entry !== 'string' || options.entry === '')
      problems.push(`${where}.entry: must be the path of the worker's entry file, got ${quoteValue(options?.entry)}`);
    if (problems.length > 0) throw new JobConfigError(problems);

    const worker = new JobWorker(this.workersScope, workerId, options, {
      table: this.table,
      reportBucket: this.reportBucket,
      metricsNamespace: this.metricsNamespace,
    });
    // The trigger enqueues on every worker's queue; the reconciler re-enqueues there.
    allow(this.triggerFunction, ['sqs:SendMessage'], [worker.queue.queueArn]);
    allow(this.reconcilerFunction, ['sqs:SendMessage'], [worker.queue.queueArn]);
    for (const operator of this.operators) grantSend(operator, worker);
    this.monitoring.addWorker(worker);
    this.workersById.set(workerId, worker);
    stackOutput(this, `${STACK_OUTPUTS.workerQueuePrefix}${this.workersById.size}`, worker.queue.queueUrl, workerId);
    return worker;
  }

  /**
   * A job: validated at once (a JobConfigError names every wrong field as `addJob(id).field`), scheduled when
   * enabled, and run by the worker it names, or by a worker of its own built from its `entry`.
   */
  addJob(props: JobProps): AddedJob {
    const { worker: workerRef, entry, ...config } = props;
    const where = `addJob(${typeof config.id === 'string' ? config.id : quoteValue(config.id)})`;
    const resolved = resolveJobConfig(config, where);
    const jobId = resolved.settings.id;
    if (this.jobsById.has(jobId))
      throw new JobConfigError([`${where}.id: a job with the id ${quoteValue(jobId)} exists already`]);
    const worker = this.workerFor(workerRef, entry, resolved.settings, where);
    worker[ADD_JOB](resolved.settings, where);
    const schedule = this.schedules.addJob(resolved, worker.workerId);
    if (schedule !== undefined && this.scheduleTargetRoleArn === undefined) {
      this.scheduleTargetRoleArn = schedule.targetRoleArn;
      for (const operator of this.operators) grantPassRole(operator, schedule.targetRoleArn);
    }
    if (resolved.settings.pauseAfterFailures !== undefined) {
      if (worker.pausingJobs.length === 0) this.monitoring.addPauseAlarm(worker);
      worker[ALLOW_PAUSE](jobId, this.schedules.group.scheduleGroupName, schedule);
    }
    acknowledgeWorkerReportFindings(this, worker, jobId);
    acknowledgeSchedulerRoleFindings(this);
    const added: AddedJob = { ...resolved, worker };
    this.jobsById.set(jobId, added);
    return added;
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
    }).combine(
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
        resourceArns: [this.table.tableArn],
      }),
    );
  }

  /**
   * Lets an operator run `occurrences pause`, `resume`, `run` and `describe` on this stack's jobs (docs/cli.md lists
   * what each needs). Workers and schedules added later are covered too: their queues and the schedules' role are
   * granted as they are added (the returned Grant holds what was granted by this call).
   *
   * @example
   * const oncall = new iam.Role(this, 'Oncall', { assumedBy: new iam.AccountRootPrincipal() });
   * jobs.grantOperateJobs(oncall);
   */
  grantOperateJobs(grantee: iam.IGrantable): iam.Grant {
    this.operators.push(grantee);
    acknowledgeOperatorFindings(this, grantee);
    const stack = Stack.of(this);
    const schedules = stack.formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.schedules.group.scheduleGroupName}/*`,
    });
    const grants = [
      // Every command reads the job's schedule (its worker, deadline, window); pause and resume switch it.
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['scheduler:GetSchedule', 'scheduler:UpdateSchedule'],
        resourceArns: [schedules],
      }),
      // The group's jobs, named when a job id is unknown; ListSchedules has no resource-level permissions.
      iam.Grant.addToPrincipal({ grantee, actions: ['scheduler:ListSchedules'], resourceArns: ['*'] }),
      // The job-state row (read, compare-and-swap), the occurrences run and resume record, describe's key query.
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:Query'],
        resourceArns: [this.table.tableArn],
      }),
      // The stack's outputs name the table, the schedule group and the worker queues.
      iam.Grant.addToPrincipal({ grantee, actions: ['cloudformation:DescribeStacks'], resourceArns: [stack.stackId] }),
      ...[...this.workersById.values()].map((worker) => grantSend(grantee, worker)),
    ];
    if (this.scheduleTargetRoleArn !== undefined) grants.push(grantPassRole(grantee, this.scheduleTargetRoleArn));
    return grants.reduce((all, grant) => all.combine(grant));
  }

  private workerFor(
    ref: JobWorker | string | undefined,
    entry: string | undefined,
    settings: JobSettings,
    where: string,
  ) {
    const jobId = settings.id;
    if (ref !== undefined && entry !== undefined)
      throw new JobConfigError([`${where}: give either worker or entry, not both`]);
    if (ref === undefined) {
      if (entry === undefined)
        throw new JobConfigError([
          `${where}: give worker (from addWorker) or entry (the job's own file, exporting defineJob)`,
        ]);
      const options = { ...this.defaultWorkerOptions, entry };
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
      if (problems.length > 0) throw new JobConfigError(problems);
      const own = this.newWorker(jobId, options, `${where}.entry`);
      this.singleJobWorkers.add(jobId);
      return own;
    }
    const id = typeof ref === 'string' ? ref : ref.workerId;
    const worker = this.workersById.get(id);
    if (worker === undefined || (typeof ref !== 'string' && worker !== ref)) {
      const known = [...this.workersById.keys()].join(', ') || 'none';
      throw new JobConfigError([
        `${where}.worker: no worker ${quoteValue(id)} in this ScheduledJobs (it has: ${known}); add it with addWorker first`,
      ]);
    }
    if (this.singleJobWorkers.has(id))
      throw new JobConfigError([
        `${where}.worker: worker ${quoteValue(id)} was built from job ${quoteValue(id)}'s own entry, and defineJob runs ` +
          'one job; give this job an entry of its own, or put both in a worker from addWorker (defineWorker)',
      ]);
    return worker;
  }

  /**
   * The bytes WORKERS takes with these workers at the longest: each queue URL as long as a queue URL gets
   * (QUEUE_URL_MAX_BYTES), each stuck threshold at its most digits (the visibility timeout is at most 12 h).
   */
  private workerRoutesBytes(workerIds: readonly string[]): number {
    const longest: WorkerRoute = { queueUrl: 'q'.repeat(QUEUE_URL_MAX_BYTES), stuckAfterSeconds: 99_999 };
    return Buffer.byteLength(JSON.stringify(Object.fromEntries(workerIds.map((id) => [id, longest]))));
  }

  /** What the trigger and the reconciler are told of each worker: WORKERS (protocol/worker-routes.ts). */
  private workerRoutes(): Record<string, WorkerRoute> {
    return Object.fromEntries(
      [...this.workersById].map(([id, w]) => [
        id,
        { queueUrl: w.queue.queueUrl, stuckAfterSeconds: w.stuckAfterSeconds() },
      ]),
    );
  }
}

/** run and resume enqueue on the job's worker queue. */
function grantSend(grantee: iam.IGrantable, worker: JobWorker): iam.Grant {
  return iam.Grant.addToPrincipal({ grantee, actions: ['sqs:SendMessage'], resourceArns: [worker.queue.queueArn] });
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

/** A stack output with a fixed key, built in the stack itself so its key is not prefixed by the construct path. */
function stackOutput(jobs: ScheduledJobs, key: string, value: string, description?: string): void {
  new CfnOutput(Stack.of(jobs), key, { value, description });
}
