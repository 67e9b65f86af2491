/**
 * Which table, bucket, jobs and worker queues the CLI works on, and the SDK clients to reach them. All of it comes
 * from the deployed stack, never from an app's source: the CLI serves any app that deploys a ScheduledJobs.
 *
 * Names come from flags first (`--table`, `--bucket`, `--schedule-group`, `--worker-queue <workerId>=<url>`),
 * otherwise from the CloudFormation outputs of the stack (`--stack`, default `ScheduledJobs`; the keys are
 * lib/stack-outputs.ts behind the ScheduledJobs' `outputPrefix`, which `--output-prefix` names, default none: a stack
 * may hold several ScheduledJobs, each with outputs of its own prefix). The stack is read only when a name that is
 * needed was not given. The jobs are the schedules of the schedule group (catalogue.ts); each worker's queue is an
 * output `<prefix>WorkerQueue<n>` whose description is the worker id. Region and credentials come from the SDK's default chain
 * (`--region` overrides). With `--endpoint` (or AWS_ENDPOINT_URL) every client talks to that endpoint, the local
 * emulator; there the region defaults to the one `npm run local` uses and dummy credentials are used when none are
 * configured, because the emulator accepts any.
 */
import { CloudFormationClient, DescribeStacksCommand, type Output } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { asDependencyError } from '../../functions/aws/classify-error';
import { DynamoJobStateStore } from '../../functions/aws/job-state-store';
import { OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { SchedulerScheduleSwitch } from '../../functions/aws/schedule-switch';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import { SCHEDULED_TIME_RANGE } from '../../functions/protocol/occurrence';
import type { JobStateStore, OccurrenceHistory, ScheduleSwitch, WorkQueue } from '../../functions/protocol/ports';
import { quoteValue } from '../../functions/protocol/quote-value';
import { STACK_OUTPUTS } from '../../lib/stack-outputs';
import { type DeployedJob, type JobCatalogue, SchedulerJobCatalogue } from './catalogue';
import { UsageError } from './errors';

export const DEFAULT_STACK = 'ScheduledJobs';
/** The emulator's region when nothing else says which: the one scripts/local creates the resources in. */
export const EMULATOR_REGION = 'us-east-1';

export interface TargetOptions {
  readonly stack?: string;
  /** The `outputPrefix` of the ScheduledJobs whose outputs name what the CLI works on; default '' (none). */
  readonly outputPrefix?: string;
  readonly table?: string;
  readonly bucket?: string;
  readonly scheduleGroup?: string;
  /** The schedule registry (a kept local run names it; the `schedules` commands read it). */
  readonly registryTable?: string;
  /** `--worker-queue`: queue URL by worker id. */
  readonly workerQueues?: ReadonlyMap<string, string>;
  readonly endpoint?: string;
  readonly region?: string;
}

/** Each worker's job queue, by worker id, and where the CLI found them (for the message when one is missing). */
export interface WorkerQueues {
  readonly byWorker: ReadonlyMap<string, WorkQueue>;
  /** `stack ScheduledJobs's outputs`, `--worker-queue`, or both. */
  readonly source: string;
}

export interface Target {
  readonly tableName: string;
  readonly bucketName?: string;
  readonly reader: OperatorOccurrenceReader;
  readonly store: OperatorOccurrenceStore;
  /** The job-state rows (pause, resume, run, describe). */
  readonly states: JobStateStore;
  /** The deployed jobs; only when the command needs them (retry, backfill, the operator actions). */
  readonly jobs?: JobCatalogue;
  /** Turns the jobs' schedules off and on (pause, resume); with the jobs. */
  readonly schedules?: ScheduleSwitch;
  /** Only when the command needs them (retry, backfill without --dry-run). */
  readonly queues?: WorkerQueues;
  readonly where: string;
  /** The document client the reader, store and states share (the console meters its reads on it). */
  readonly documents?: DynamoDBDocumentClient;
  /** The endpoint, region and credentials the clients were made with, for a command's other clients (STS, S3). */
  readonly clientConfig?: ClientConfig;
}

export interface Needs {
  /** The deployed jobs: the schedule group. */
  readonly jobs?: boolean;
  /** The worker queues, to enqueue. */
  readonly queues?: boolean;
  /** Wanted to show where a report is; not worth failing for. */
  readonly bucket?: boolean;
  /**
   * The deployed jobs when a flag or the stack names the schedule group, to tell an unknown job from one that has not
   * fired yet (list, watch); not worth failing for, nor worth reading a stack no flag names.
   */
  readonly knownJobs?: boolean;
}

export async function resolveTarget(
  options: TargetOptions,
  needs: Needs,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Target> {
  const config = clientConfig(options, env);
  const names = await resolveNames(options, needs, config);
  const dynamo = new DynamoDBClient(config);
  const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const sqs = needs.queues ? new SQSClient(config) : undefined;
  const wantsJobs = needs.jobs || needs.knownJobs;
  const scheduler = wantsJobs && names.scheduleGroup !== undefined ? new SchedulerClient(config) : undefined;
  return {
    tableName: names.table,
    bucketName: names.bucket,
    reader: new OperatorOccurrenceReader(documents, names.table),
    store: new OperatorOccurrenceStore(documents, names.table),
    states: new DynamoJobStateStore(documents, names.table),
    jobs: scheduler && names.scheduleGroup ? new SchedulerJobCatalogue(scheduler, names.scheduleGroup) : undefined,
    schedules:
      needs.jobs && scheduler && names.scheduleGroup
        ? new SchedulerScheduleSwitch(scheduler, names.scheduleGroup)
        : undefined,
    queues:
      sqs && names.queues
        ? {
            byWorker: new Map([...names.queues.urls].map(([worker, url]) => [worker, new SqsWorkQueue(sqs, url)])),
            source: names.queues.source,
          }
        : undefined,
    where: config.endpoint === undefined ? `table ${names.table}` : `table ${names.table} at ${config.endpoint}`,
    documents,
    clientConfig: config,
  };
}

/**
 * The jobs of a target resolved with `{ jobs: true }`. resolveTarget never returns such a target without them (it
 * throws a UsageError instead); only a `connect` passed in by a test could, and that is a bug in the test.
 */
export function catalogueOf(target: Target): JobCatalogue {
  if (target.jobs === undefined) throw new Error(`no job catalogue in the target for ${target.where}`);
  return target.jobs;
}

/** The schedule switch of a target resolved with `{ jobs: true }`; see catalogueOf. */
export function schedulesOf(target: Target): ScheduleSwitch {
  if (target.schedules === undefined) throw new Error(`no schedule switch in the target for ${target.where}`);
  return target.schedules;
}

/** One job's newest occurrences over the whole key range, which never includes its job-state row ('#job'). */
export function historyOf(target: Target): OccurrenceHistory {
  const { earliest: from, latest: to } = SCHEDULED_TIME_RANGE;
  return { newestFirst: (series, limit) => target.reader.listJobNewestFirst(series, { from, to, limit }) };
}

/** The queues of a target resolved with `{ queues: true }`; see catalogueOf. */
export function queuesOf(target: Target): WorkerQueues {
  if (target.queues === undefined) throw new Error(`no worker queues in the target for ${target.where}`);
  return target.queues;
}

/** The queue of the worker that runs `job`; a UsageError that says how to name it when it is unknown. */
export function queueFor(queues: WorkerQueues, job: DeployedJob): WorkQueue {
  const queue = queues.byWorker.get(job.route.worker);
  if (queue !== undefined) return queue;
  const known = [...queues.byWorker.keys()];
  throw new UsageError(
    `the queue of worker ${quoteValue(job.route.worker)}, which runs job ${quoteValue(job.id)}, is unknown ` +
      `(queues known from ${queues.source}: ${known.join(', ') || 'none'}); ` +
      `pass --worker-queue ${job.route.worker}=<queue URL>`,
  );
}

interface Names {
  readonly table: string;
  readonly bucket?: string;
  readonly scheduleGroup?: string;
  readonly queues?: { readonly urls: ReadonlyMap<string, string>; readonly source: string };
}

/** The names from the flags; the stack's outputs are read only for a needed one that was not given. */
async function resolveNames(options: TargetOptions, needs: Needs, config: ClientConfig): Promise<Names> {
  const flagQueues = options.workerQueues ?? new Map<string, string>();
  const missing = [
    options.table === undefined && '--table',
    needs.jobs && options.scheduleGroup === undefined && '--schedule-group',
    needs.queues && flagQueues.size === 0 && '--worker-queue',
  ].filter((flag): flag is string => typeof flag === 'string');
  const stack = options.stack ?? DEFAULT_STACK;
  const prefix = options.outputPrefix ?? '';
  const key = (output: string): string => `${prefix}${output}`;
  const required = missing.length > 0;
  // Optional names are looked up in a stack only when it is read anyway, or named by --stack.
  const optional =
    (needs.bucket && options.bucket === undefined) ||
    (needs.knownJobs && options.scheduleGroup === undefined && options.stack !== undefined);
  const outputs =
    required || optional
      ? await stackOutputs(new CloudFormationClient(config), stack, {
          required: required || options.stack !== undefined,
          flags: missing,
          prefix,
        })
      : undefined;
  const table = options.table ?? outputs?.values[key(STACK_OUTPUTS.table)];
  const bucket = options.bucket ?? outputs?.values[key(STACK_OUTPUTS.bucket)];
  const scheduleGroup = options.scheduleGroup ?? outputs?.values[key(STACK_OUTPUTS.scheduleGroup)];
  if (table === undefined) {
    const hint = otherPrefixes(outputs, prefix);
    throw missingOutput('the occurrences table', stack, key(STACK_OUTPUTS.table), '--table', hint);
  }
  if (needs.jobs && scheduleGroup === undefined) {
    throw missingOutput("the jobs' schedule group", stack, key(STACK_OUTPUTS.scheduleGroup), '--schedule-group');
  }
  let queues: Names['queues'];
  if (needs.queues) {
    // The flags name a worker's queue instead of the stack's output for that worker.
    const urls = new Map([...(outputs?.workerQueues ?? []), ...flagQueues]);
    if (urls.size === 0) {
      throw new UsageError(
        `the worker queues are unknown: stack ${stack} has no output ${key(STACK_OUTPUTS.workerQueuePrefix)}<n>; ` +
          'pass --worker-queue <workerId>=<queue URL> or --stack',
      );
    }
    const ofStack = prefix === '' ? `stack ${stack}'s outputs` : `stack ${stack}'s outputs ${prefix}*`;
    const sources = [outputs && ofStack, flagQueues.size > 0 && '--worker-queue'].filter(Boolean);
    queues = { urls, source: sources.join(' and ') };
  }
  return { table, bucket, scheduleGroup, queues };
}

function missingOutput(what: string, stack: string, output: string, flag: string, hint = ''): UsageError {
  return new UsageError(`${what} is unknown: stack ${stack} has no output ${output}${hint}; pass ${flag} or --stack`);
}

/**
 * When the stack has no ScheduledJobs under `prefix` but has some under others (a wrong or missing `--output-prefix`),
 * the prefixes it has, to follow the missing output in its error; otherwise nothing.
 */
function otherPrefixes(outputs: StackOutputs | undefined, prefix: string): string {
  const prefixes = outputs === undefined ? [] : outputPrefixesOf(outputs);
  if (prefixes.length === 0 || prefixes.includes(prefix)) return '';
  const listed = prefixes.map((p) => quoteValue(p)).join(', ');
  return ` (its ScheduledJobs have the output prefixes ${listed}: pass one as --output-prefix)`;
}

/**
 * The output prefixes of the ScheduledJobs in a stack, in name order: one per output key ending in
 * `OccurrenceTableName` (every ScheduledJobs with outputs has that one), '' for one without a prefix.
 */
export function outputPrefixesOf(outputs: StackOutputs): string[] {
  return Object.keys(outputs.values)
    .filter((key) => key.endsWith(STACK_OUTPUTS.table))
    .map((key) => key.slice(0, -STACK_OUTPUTS.table.length))
    .sort();
}

/** What the SDK clients of a target are made with. */
export interface ClientConfig {
  endpoint?: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export function clientConfig(options: TargetOptions, env: NodeJS.ProcessEnv): ClientConfig {
  const endpoint = options.endpoint ?? (env.AWS_ENDPOINT_URL || undefined);
  if (endpoint === undefined) return options.region === undefined ? {} : { region: options.region };
  const region = options.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? EMULATOR_REGION;
  const hasCredentials = env.AWS_ACCESS_KEY_ID !== undefined || env.AWS_PROFILE !== undefined;
  return {
    endpoint,
    region,
    ...(hasCredentials ? {} : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  };
}

export interface StackOutputs {
  /** Output values by key. */
  readonly values: Readonly<Record<string, string>>;
  /**
   * The queue URL of each worker, from the outputs `<prefix>WorkerQueue<n>` (value: the URL, description: the worker
   * id) of the prefix asked for.
   */
  readonly workerQueues: ReadonlyMap<string, string>;
}

/**
 * The stack's outputs. `required`: a missing stack is an error, whose message names the flags that would have made
 * reading it unnecessary; otherwise (the needed names came from flags and only the bucket is looked up) it is not
 * worth failing for.
 */
async function stackOutputs(
  client: CloudFormationClient,
  stack: string,
  options: { required: boolean; flags: readonly string[]; prefix: string },
): Promise<StackOutputs | undefined> {
  try {
    const out = await client.send(new DescribeStacksCommand({ StackName: stack }));
    return outputsOf(out.Stacks?.[0]?.Outputs ?? [], options.prefix);
  } catch (error) {
    if (!options.required) return undefined;
    const name = (error as { name?: string }).name;
    if (name === 'ValidationError' && /does not exist/.test(String((error as Error).message))) {
      const flags = options.flags.length > 0 ? options.flags.join(' and ') : '--table';
      throw new UsageError(
        `stack ${stack} does not exist in this account and region; pass --stack <name>, or ${flags}`,
      );
    }
    throw asDependencyError(`read the outputs of stack ${stack}`, error);
  } finally {
    client.destroy();
  }
}

/** The outputs by key, and the worker queues of the ScheduledJobs whose outputs have `prefix` (default none). */
export function outputsOf(outputs: readonly Output[], prefix = ''): StackOutputs {
  const workerQueueOutput = new RegExp(`^${STACK_OUTPUTS.workerQueuePrefix}\\d+$`);
  const isWorkerQueue = (key: string) => key.startsWith(prefix) && workerQueueOutput.test(key.slice(prefix.length));
  const values: Record<string, string> = {};
  const workerQueues = new Map<string, string>();
  for (const o of outputs) {
    if (!o.OutputKey || !o.OutputValue) continue;
    values[o.OutputKey] = o.OutputValue;
    if (isWorkerQueue(o.OutputKey) && o.Description) workerQueues.set(o.Description, o.OutputValue);
  }
  return { values, workerQueues };
}
