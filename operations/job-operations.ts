/**
 * The adapters the operator actions run on, built in one call from what a deployed ScheduledJobs names: its table,
 * its schedule group and its worker queues (the stack's outputs). The same adapters the occurrences CLI builds
 * (bin/occurrences/target.ts), without its flags and stack lookup.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type JobCatalogue, SchedulerJobCatalogue, unknownJobMessage } from '../bin/occurrences/catalogue';
import { DynamoJobStateStore } from '../functions/aws/job-state-store';
import { OperatorOccurrenceReader } from '../functions/aws/occurrence-reader';
import { OperatorOccurrenceStore } from '../functions/aws/occurrence-store';
import { SchedulerScheduleSwitch } from '../functions/aws/schedule-switch';
import { SqsWorkQueue } from '../functions/aws/work-queue';
import type { CancelDeps } from '../functions/protocol/cancel-occurrence';
import { InvalidInputError, ScheduledJobsError } from '../functions/protocol/errors';
import type { DeployedJob, JobStateStore, OccurrenceHistory } from '../functions/protocol/job-control';
import { ScheduleNotFoundError } from '../functions/protocol/manage-schedule';
import type { ManualRetryDeps } from '../functions/protocol/manual-retry';
import { SCHEDULED_TIME_RANGE } from '../functions/protocol/occurrence';
import { type Clock, type Logger, type ScheduleSwitch, systemClock, type WorkQueue } from '../functions/protocol/ports';
import type { TriggerDeps } from '../functions/protocol/record-occurrence';
import type { OperatorOccurrenceReader as OccurrenceReads } from './adapters';
import { memoizedOperator, operatorName } from './operator-identity';
import { connectScheduleOperations, deployedScheduleOf, getSchedule, type ScheduleOperations } from './schedules';

/** The AWS SDK clients the adapters use; each one not given is created with the SDK's default configuration. */
export interface OperationsClients {
  /** For the occurrences table (wrapped in a document client). @defaultValue `new DynamoDBClient({})` */
  readonly dynamoDb?: DynamoDBClient;
  /** For the jobs' schedules. @defaultValue `new SchedulerClient({})` */
  readonly scheduler?: SchedulerClient;
  /** For the worker queues. @defaultValue `new SQSClient({})` */
  readonly sqs?: SQSClient;
  /** For the operator's identity (GetCallerIdentity). @defaultValue `new STSClient({})` */
  readonly sts?: STSClient;
}

/** What the operator actions work on: the names a deployed ScheduledJobs puts in its stack outputs. */
export interface OperationsTarget {
  /** The occurrences table (the stack output `OccurrenceTableName`, with its prefix). */
  readonly tableName: string;
  /** The jobs' schedule group (the stack output `ScheduleGroupName`, with its prefix). */
  readonly scheduleGroupName: string;
  /**
   * Each worker's job queue URL, by worker id (the stack outputs `WorkerQueue<n>`: value the URL, description the
   * worker id). Resume (its catch-up), run now and retry enqueue on the queue of the job's worker; pause and
   * describe need none.
   * @defaultValue none
   */
  readonly workerQueueUrls?: Readonly<Record<string, string>>;
  /**
   * The AWS SDK clients to use, for a region, credentials or an endpoint of their own.
   * @defaultValue clients with the SDK's default configuration (region and credentials from the environment)
   */
  readonly clients?: OperationsClients;
  /**
   * The schedule registry (the stack output `ScheduleRegistryTableName`), for `job(jobId, scheduleKey)`: one
   * schedule of a job that takes schedules at run time. @defaultValue none (`job` then takes no key)
   */
  readonly registryTableName?: string;
  /** The time the actions record. @defaultValue the system clock */
  readonly clock?: Clock;
  /** Where recording an occurrence logs. @defaultValue a logger that writes nothing */
  readonly logger?: Logger;
}

/**
 * The adapters of one deployed ScheduledJobs, in the shape the operator actions take them: pass the whole object
 * as the first argument of pauseJob, resumeJob, runJobNow and describeJob, `retryDeps(job)` to retryOccurrence and `cancelDeps()` to cancelOccurrence.
 */
export interface JobOperations {
  /** The job-state rows (pause fields, the overlap slot), read and written with compare-and-swap. */
  readonly states: JobStateStore;
  /** The time the actions record. */
  readonly clock: Clock;
  /** Turns a job's schedule off (pause) and on (resume). */
  readonly schedules: ScheduleSwitch;
  /** One job's occurrences, newest first (describe, and the phase of a `rate(...)` schedule on resume). */
  readonly history: OccurrenceHistory;
  /** What records and enqueues an occurrence, as the trigger does (resume's catch-up, run now). */
  readonly trigger: TriggerDeps;
  /** The deployed jobs, read from the schedule group: one schedule per enabled job. */
  readonly catalogue: JobCatalogue;
  /** The occurrences table's reads (by status, by job), for an operator's own reports. */
  readonly occurrences: OccurrenceReads;
  /**
   * The deployed job `jobId`: its schedule and its route, as resumeJob, runJobNow, describeJob and planBackfill take
   * it. With `scheduleKey`, one schedule of a job deployed with `runtimeSchedules: true`, read from the registry: its
   * occurrences carry the key and the schedule's input, as when that schedule fires.
   * @throws JobNotFoundError when the schedule group has no schedule of that name (disabled or not deployed).
   * @throws ScheduleNotFoundError when the registry holds no schedule of `scheduleKey` for the job.
   * @throws InvalidInputError when a key is given for a job with a fixed schedule, or without `registryTableName`.
   */
  job(jobId: string, scheduleKey?: string): Promise<DeployedJob>;
  /** What retryOccurrence needs to retry an occurrence of `job`. */
  retryDeps(job: DeployedJob): ManualRetryDeps;
  /** What cancelOccurrence needs to cancel an occurrence of any of the jobs (bulkCancel runs it per row). */
  cancelDeps(): CancelDeps;
  /**
   * Who is acting, as every write records it: `<os user>@<host> (<STS caller ARN>)`, or the OS user alone when STS
   * fails (operator-identity.ts). STS is asked once per JobOperations.
   */
  operator(): Promise<string>;
}

/** The schedule group has no schedule for the job: it is disabled in the app, or not deployed at all. */
export class JobNotFoundError extends ScheduledJobsError {
  /** The error's name, kept through bundling and minification. */
  override readonly name = 'JobNotFoundError';

  /**
   * @param jobId - the job that was looked up.
   * @param message - which jobs the group has.
   */
  constructor(
    /** The job that was looked up. */
    readonly jobId: string,
    message: string,
  ) {
    super(message);
  }
}

/** The registry's name, needed for a key; an InvalidInputError saying where to find it otherwise. */
function registryTableOf(target: OperationsTarget, jobId: string): string {
  if (target.registryTableName !== undefined) return target.registryTableName;
  throw new InvalidInputError('job', [
    `a schedule key of job ${jobId} needs registryTableName in connectJobOperations (the stack output ScheduleRegistryTableName)`,
  ]);
}

/**
 * One schedule of a job that takes schedules at run time, as a deployed job (the template's route, the registry's
 * expression, state and input); refused for a job with a fixed schedule and for a key the registry does not hold.
 */
export async function scheduleOfJob(
  template: DeployedJob,
  scheduleKey: string,
  registry: () => ScheduleOperations,
): Promise<DeployedJob> {
  if (template.runtimeScheduleGroup === undefined)
    throw new InvalidInputError('job', [
      `job ${template.id} has a fixed schedule; only a job deployed with runtimeSchedules has schedule keys`,
    ]);
  const schedule = await getSchedule(registry(), template.id, scheduleKey);
  if (schedule === undefined) throw new ScheduleNotFoundError(template.id, scheduleKey);
  return deployedScheduleOf(template, schedule);
}

const silent: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * The adapters of one deployed ScheduledJobs, for pauseJob, resumeJob, runJobNow, describeJob and retryOccurrence.
 * Nothing is read until an action runs.
 *
 * @param target - the table, the schedule group and the worker queues (the stack's outputs), and optional clients.
 * @returns the adapters, to pass to the actions.
 *
 * @example
 * ```ts
 * import { connectJobOperations, pauseJob, resumeJob } from 'scheduled-jobs-stack/operations';
 *
 * const ops = connectJobOperations({
 *   tableName: 'Jobs-OccurrenceTable1234',
 *   scheduleGroupName: 'Jobs-Schedules1234',
 *   workerQueueUrls: { exports: 'https://sqs.eu-central-1.amazonaws.com/123456789012/Jobs-exports' },
 * });
 * await pauseJob(ops, 'weekly-export', { note: 'database migration', by: 'alice' });
 * const resumed = await resumeJob(ops, await ops.job('weekly-export'), { by: 'alice' });
 * ```
 */
export function connectJobOperations(target: OperationsTarget): JobOperations {
  const dynamo = target.clients?.dynamoDb ?? new DynamoDBClient({});
  const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const scheduler = target.clients?.scheduler ?? new SchedulerClient({});
  let sqs: SQSClient | undefined;
  const queues = new Map<string, WorkQueue>(
    Object.entries(target.workerQueueUrls ?? {}).map(([worker, url]) => {
      sqs ??= target.clients?.sqs ?? new SQSClient({});
      return [worker, new SqsWorkQueue(sqs, url)];
    }),
  );
  const clock = target.clock ?? systemClock;
  const store = new OperatorOccurrenceStore(documents, target.tableName);
  const occurrences = new OperatorOccurrenceReader(documents, target.tableName);
  const catalogue = new SchedulerJobCatalogue(scheduler, target.scheduleGroupName);
  const { earliest: from, latest: to } = SCHEDULED_TIME_RANGE;
  const identity = memoizedOperator({
    callerArn: async () => {
      const sts = target.clients?.sts ?? new STSClient({});
      return (await sts.send(new GetCallerIdentityCommand({}))).Arn;
    },
    warn: (text) => (target.logger ?? silent).warn(text),
  });
  return {
    states: new DynamoJobStateStore(documents, target.tableName),
    clock,
    schedules: new SchedulerScheduleSwitch(scheduler, target.scheduleGroupName),
    // Over the whole key range, which never includes the job-state row.
    history: { newestFirst: (series, limit) => occurrences.listJobNewestFirst(series, { from, to, limit }) },
    trigger: { store, queues, clock, logger: target.logger ?? silent },
    catalogue,
    occurrences,
    async job(jobId, scheduleKey) {
      const job = await catalogue.job(jobId);
      if (job === undefined) throw new JobNotFoundError(jobId, await unknownJobMessage(catalogue, jobId));
      if (scheduleKey === undefined) return job;
      return scheduleOfJob(job, scheduleKey, () =>
        connectScheduleOperations({
          registryTableName: registryTableOf(target, jobId),
          scheduleGroupName: target.scheduleGroupName,
          clients: { dynamoDb: dynamo, scheduler },
          clock,
        }),
      );
    },
    retryDeps: (job) => ({ store, queues, clock, jobs: new Map([[job.id, job.route]]) }),
    cancelDeps: () => ({ store, clock, newId: randomUUID }),
    operator: async () => operatorName(await identity()),
  };
}
