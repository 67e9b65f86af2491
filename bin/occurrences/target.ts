/**
 * Which table, queue and bucket the CLI works on, and the SDK clients to reach them.
 *
 * Names come from flags first (`--table`, `--queue-url`, `--bucket`), otherwise from the CloudFormation outputs of
 * the stack (`--stack`, default `ScheduledJobs`, the stack bin/app.ts deploys). The stack is read only when a name
 * that is needed was not given. Region and credentials come from the SDK's default chain (`--region` overrides).
 * With `--endpoint` (or AWS_ENDPOINT_URL) every client talks to that endpoint, the local emulator; there the region
 * defaults to the one `npm run local` uses and dummy credentials are used when none are configured, because the
 * emulator accepts any.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { asDependencyError } from '../../functions/aws/classify-error';
import { OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import { UsageError } from './errors';

export const DEFAULT_STACK = 'ScheduledJobs';
/** The emulator's region when nothing else says which: the one scripts/local creates the resources in. */
export const EMULATOR_REGION = 'us-east-1';

/** The stack outputs the CLI reads (lib/scheduled-jobs-stack.ts). */
export const STACK_OUTPUTS = {
  table: 'OccurrenceTableName',
  queueUrl: 'JobQueueUrl',
  bucket: 'ReportBucketName',
} as const;

export interface TargetOptions {
  readonly stack?: string;
  readonly table?: string;
  readonly queueUrl?: string;
  readonly bucket?: string;
  readonly endpoint?: string;
  readonly region?: string;
}

export interface Target {
  readonly tableName: string;
  readonly bucketName?: string;
  readonly reader: OperatorOccurrenceReader;
  readonly store: OperatorOccurrenceStore;
  /** Only when the command needs it (retry, backfill). */
  readonly queue?: SqsWorkQueue;
  readonly queueUrl?: string;
  readonly where: string;
}

export interface Needs {
  readonly queue: boolean;
  /** Wanted to show where a report is; not worth failing for. */
  readonly bucket?: boolean;
}

export async function resolveTarget(
  options: TargetOptions,
  needs: Needs,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Target> {
  const config = clientConfig(options, env);
  const { table, queueUrl, bucket } = await resolveNames(options, needs, config);
  const dynamo = new DynamoDBClient(config);
  const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const queue = needs.queue && queueUrl !== undefined ? new SqsWorkQueue(new SQSClient(config), queueUrl) : undefined;
  return {
    tableName: table,
    bucketName: bucket,
    reader: new OperatorOccurrenceReader(documents, table),
    store: new OperatorOccurrenceStore(documents, table),
    queue,
    queueUrl,
    where: config.endpoint === undefined ? `table ${table}` : `table ${table} at ${config.endpoint}`,
  };
}

/**
 * The queue of a target resolved with `{ queue: true }`. resolveTarget never returns such a target without one (it
 * throws a UsageError instead); only a `connect` passed in by a test could, and that is a bug in the test.
 */
export function jobQueueOf(target: Target): SqsWorkQueue {
  if (target.queue === undefined) throw new Error(`no job queue in the target for ${target.where}`);
  return target.queue;
}

/** The names from the flags; the stack's outputs are read only for a needed one that was not given. */
async function resolveNames(
  options: TargetOptions,
  needs: Needs,
  config: ClientConfig,
): Promise<{ table: string; queueUrl?: string; bucket?: string }> {
  const requiredMissing = options.table === undefined || (needs.queue && options.queueUrl === undefined);
  const stack = options.stack ?? DEFAULT_STACK;
  const outputs =
    requiredMissing || (needs.bucket && options.bucket === undefined)
      ? await stackOutputs(new CloudFormationClient(config), stack, requiredMissing || options.stack !== undefined)
      : undefined;
  const table = options.table ?? outputs?.[STACK_OUTPUTS.table];
  const queueUrl = options.queueUrl ?? outputs?.[STACK_OUTPUTS.queueUrl];
  const bucket = options.bucket ?? outputs?.[STACK_OUTPUTS.bucket];
  if (table === undefined) {
    throw new UsageError(
      `the occurrences table is unknown: stack ${stack} has no output ${STACK_OUTPUTS.table}; pass --table or --stack`,
    );
  }
  if (needs.queue && queueUrl === undefined) {
    throw new UsageError(
      `the job queue is unknown: stack ${stack} has no output ${STACK_OUTPUTS.queueUrl}; ` +
        'pass --queue-url or --stack',
    );
  }
  return { table, queueUrl, bucket };
}

interface ClientConfig {
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

/**
 * The stack's outputs by key. `required`: a missing stack is an error; otherwise (the needed names came from flags
 * and only the bucket is looked up) it is not worth failing for.
 */
async function stackOutputs(
  client: CloudFormationClient,
  stack: string,
  required: boolean,
): Promise<Record<string, string> | undefined> {
  try {
    const out = await client.send(new DescribeStacksCommand({ StackName: stack }));
    const outputs = out.Stacks?.[0]?.Outputs ?? [];
    return Object.fromEntries(
      outputs.flatMap((o) => (o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [])),
    );
  } catch (error) {
    if (!required) return undefined;
    const name = (error as { name?: string }).name;
    if (name === 'ValidationError' && /does not exist/.test(String((error as Error).message))) {
      throw new UsageError(
        `stack ${stack} does not exist in this account and region; pass --stack <name>, or --table and --queue-url`,
      );
    }
    throw asDependencyError(`read the outputs of stack ${stack}`, error);
  } finally {
    client.destroy();
  }
}
