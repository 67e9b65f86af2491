/**
 * What a local run needs from a synthesized stack, read from its template: the data resources to create in the
 * emulator, the functions to run from their bundled assets, the schedules that fire the triggers, and which queue
 * or table stream feeds which function. Pure: the template in, a description out (with every problem found, at
 * once); nothing is created here.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { TEMPLATE_GROUP_FIELD } from '../../functions/protocol/schedule-event';
import { ENV } from '../../functions/runtime-env';
import { AssemblyError } from '../errors';
import { readStack, type StackArtifact, type Template, type TemplateResource } from './cloud-assembly';

export interface TableSpec {
  readonly logicalId: string;
  readonly properties: Readonly<Record<string, unknown>>;
}

export interface QueueSpec {
  readonly logicalId: string;
  readonly fifo: boolean;
  /** The queue's attributes as SQS names them, literal values only. */
  readonly attributes: Readonly<Record<string, string>>;
  /** The template's RedrivePolicy, intrinsics unresolved (its target is another queue's ARN). */
  readonly redrivePolicy?: unknown;
  readonly queueName?: string;
}

export interface BucketSpec {
  readonly logicalId: string;
  readonly bucketName?: string;
}

export interface TopicSpec {
  readonly logicalId: string;
  readonly topicName?: string;
  readonly fifo: boolean;
  readonly contentBasedDeduplication: boolean;
}

/** A topic's subscription by a queue of the template (the other protocols, e-mail for alarms, are not played). */
export interface SubscriptionSpec {
  readonly logicalId: string;
  readonly topic: string;
  readonly queue: string;
  readonly rawMessageDelivery: boolean;
  readonly filterPolicy?: unknown;
}

export interface FunctionSpec {
  readonly logicalId: string;
  /** The bundled CommonJS file and the export named by the function's Handler (`index.handler`). */
  readonly bundleFile: string;
  readonly exportName: string;
  readonly timeoutSeconds: number;
  readonly memorySize: number;
  /** Environment.Variables, intrinsics unresolved. */
  readonly environment: Readonly<Record<string, unknown>>;
  /** Lambda's retries of a failed asynchronous invocation (EventInvokeConfig; Lambda's default is 2). */
  readonly asyncRetryAttempts: number;
}

export interface ScheduleSpec {
  readonly logicalId: string;
  /** The job the schedule fires: its input's jobId, else its name. */
  readonly jobId: string;
  readonly name?: string;
  readonly groupName?: string;
  readonly expression: string;
  readonly timeZone: string;
  readonly enabled: boolean;
  readonly startDate?: string;
  readonly endDate?: string;
  /** The function it invokes (the trigger). */
  readonly target: string;
  /**
   * The ARN Scheduler invokes when the target is not the bare function: a run-time-schedule job's alias of the
   * trigger (`…:function:<name>:job-<id>`), which the trigger reads to tell which job fired. Set on the schedules read
   * from the local Scheduler (runtime-schedules.ts), from each one's own Target.Arn.
   */
  readonly invokedArn?: string;
  /** Target.Input, with Scheduler's `<aws.scheduler.*>` placeholders still in it. */
  readonly input?: string;
  /**
   * Target.Input as the template gives it when it is not a literal (a Fn::Join with the worker queue's Ref: the
   * route): resolved once the emulator's resources exist (run-locally.ts); `input` meanwhile has the references empty.
   */
  readonly inputNode?: unknown;
  /**
   * Set on the template of a job that takes schedules at run time: the name of the job's own schedule group (its
   * input's keyedScheduleGroup, as the template names it). The template never fires; the schedules in that group do.
   */
  readonly keyedGroup?: string;
  /** Set on one schedule of such a job, read from the local Scheduler (runtime-schedules.ts): its key. */
  readonly scheduleKey?: string;
}

/** A Lambda event filter: the patterns of FilterCriteria, any of which lets a record through. */
export type EventFilters = readonly unknown[];

export interface QueueSourceSpec {
  readonly logicalId: string;
  readonly queue: string;
  readonly function: string;
  /** WORKER_ID in the function's environment, else its logical id. */
  readonly workerId: string;
  readonly batchSize: number;
  readonly reportBatchItemFailures: boolean;
  readonly filters?: EventFilters;
}

export interface StreamSourceSpec {
  readonly logicalId: string;
  readonly table: string;
  readonly function: string;
  readonly batchSize: number;
  readonly reportBatchItemFailures: boolean;
  readonly filters?: EventFilters;
  /** Retries of a failing batch before it is given up (Lambda's default, -1, retries until the record expires). */
  readonly maximumRetryAttempts?: number;
}

export interface LocalApp {
  readonly stack: StackArtifact;
  readonly template: Template;
  readonly tables: readonly TableSpec[];
  readonly buckets: readonly BucketSpec[];
  readonly queues: readonly QueueSpec[];
  readonly topics: readonly TopicSpec[];
  readonly subscriptions: readonly SubscriptionSpec[];
  readonly schedules: readonly ScheduleSpec[];
  /** Queue event sources: each worker's job queue feeding its function. */
  readonly workers: readonly QueueSourceSpec[];
  /** Table stream event sources: the notifier. */
  readonly streamSources: readonly StreamSourceSpec[];
  /** The functions a run invokes (schedule targets and the event sources' functions), by logical id. */
  readonly functions: ReadonlyMap<string, FunctionSpec>;
  /** What the template has that a local run leaves out, and why (the reconciler's EventBridge rule, say). */
  readonly notRun: readonly { readonly logicalId: string; readonly why: string }[];
}

/** SQS attributes a queue's template properties set, by their CloudFormation name (the same as SQS's). */
const QUEUE_ATTRIBUTES = [
  'DelaySeconds',
  'MaximumMessageSize',
  'MessageRetentionPeriod',
  'ReceiveMessageWaitTimeSeconds',
  'VisibilityTimeout',
  'FifoQueue',
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'FifoThroughputLimit',
] as const;

const LAMBDA_DEFAULT_ASYNC_RETRIES = 2;
const LAMBDA_DEFAULT_TIMEOUT_SECONDS = 3;
const LAMBDA_DEFAULT_MEMORY_MB = 128;

/** The stack of a cloud assembly (see readStack) described for a local run. */
export function readLocalApp(assemblyDir: string, stackName?: string): LocalApp {
  const { stack, template } = readStack(path.resolve(assemblyDir), stackName);
  return describeApp(stack, template);
}

/** Describe the stack for a local run; throws AssemblyError with every problem of the parts a run needs. */
export function describeApp(stack: StackArtifact, template: Template): LocalApp {
  const resources = Object.entries(template.Resources ?? {});
  const ofType = (type: string) => resources.filter(([, r]) => r.Type === type);
  const typeOf = (id: string | undefined) => (id === undefined ? undefined : template.Resources?.[id]?.Type);
  const problems: string[] = [];
  const notRun: { logicalId: string; why: string }[] = [];

  const tables = ofType('AWS::DynamoDB::Table').map(([logicalId, r]) => ({ logicalId, properties: props(r) }));
  const buckets = ofType('AWS::S3::Bucket').map(([logicalId, r]) => ({
    logicalId,
    bucketName: literal(props(r).BucketName),
  }));
  const queues = ofType('AWS::SQS::Queue').map(([logicalId, r]): QueueSpec => {
    const p = props(r);
    const attributes: Record<string, string> = {};
    for (const name of QUEUE_ATTRIBUTES) {
      const value = p[name];
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        attributes[name] = String(value);
    }
    return {
      logicalId,
      fifo: attributes.FifoQueue === 'true',
      attributes,
      redrivePolicy: p.RedrivePolicy,
      queueName: literal(p.QueueName),
    };
  });
  const topics = ofType('AWS::SNS::Topic').map(([logicalId, r]): TopicSpec => {
    const p = props(r);
    return {
      logicalId,
      topicName: literal(p.TopicName),
      fifo: p.FifoTopic === true || p.FifoTopic === 'true',
      contentBasedDeduplication: p.ContentBasedDeduplication === true || p.ContentBasedDeduplication === 'true',
    };
  });
  const subscriptions = ofType('AWS::SNS::Subscription').flatMap(([logicalId, r]): SubscriptionSpec[] => {
    const p = props(r);
    const topic = referencedId(p.TopicArn);
    const queue = referencedId(p.Endpoint);
    if (p.Protocol !== 'sqs' || typeOf(topic) !== 'AWS::SNS::Topic' || typeOf(queue) !== 'AWS::SQS::Queue') {
      notRun.push({ logicalId, why: `a ${String(p.Protocol)} subscription: only SQS subscriptions are played` });
      return [];
    }
    return [
      {
        logicalId,
        topic: topic as string,
        queue: queue as string,
        rawMessageDelivery: p.RawMessageDelivery === true || p.RawMessageDelivery === 'true',
        filterPolicy: p.FilterPolicy,
      },
    ];
  });

  const schedules = ofType('AWS::Scheduler::Schedule').flatMap(([logicalId, r]): ScheduleSpec[] => {
    const p = props(r);
    const target = (p.Target ?? {}) as Record<string, unknown>;
    // A run-time-schedule job's template targets the trigger's alias of the job: the function is the alias's.
    const targetId = referencedId(target.Arn);
    const fn =
      typeOf(targetId) === 'AWS::Lambda::Alias'
        ? referencedId(props(template.Resources?.[targetId as string]).FunctionName)
        : targetId;
    if (typeOf(fn) !== 'AWS::Lambda::Function') {
      notRun.push({ logicalId, why: 'a schedule whose target is not a Lambda function of this stack' });
      return [];
    }
    const expression = literal(p.ScheduleExpression);
    if (expression === undefined) {
      problems.push(`schedule ${logicalId}: ScheduleExpression is not a literal string`);
      return [];
    }
    const inputNode: unknown = target.Input;
    const input = literal(target.Input) ?? withoutReferences(inputNode);
    return [
      {
        logicalId,
        jobId: jobIdOf(input) ?? literal(p.Name) ?? logicalId,
        name: literal(p.Name),
        groupName: literal(p.GroupName),
        expression,
        timeZone: literal(p.ScheduleExpressionTimezone) ?? 'UTC',
        enabled: p.State !== 'DISABLED',
        startDate: literal(p.StartDate),
        endDate: literal(p.EndDate),
        target: fn as string,
        input,
        ...(literal(target.Input) === undefined && inputNode !== undefined ? { inputNode } : {}),
        ...keyedGroupOf(input),
      },
    ];
  });

  const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, r]) => props(r).Enabled !== false);
  const workers: QueueSourceSpec[] = [];
  const streamSources: StreamSourceSpec[] = [];
  for (const [logicalId, r] of mappings) {
    const p = props(r);
    const fn = referencedId(p.FunctionName);
    const [source, attribute] = getAttOf(p.EventSourceArn);
    const responseTypes = Array.isArray(p.FunctionResponseTypes) ? p.FunctionResponseTypes : [];
    const common = {
      logicalId,
      function: fn as string,
      reportBatchItemFailures: responseTypes.includes('ReportBatchItemFailures'),
      filters: filtersOf(p.FilterCriteria, logicalId, problems),
    };
    if (typeOf(fn) !== 'AWS::Lambda::Function') {
      notRun.push({ logicalId, why: 'an event source whose function is not in this stack' });
    } else if (typeOf(source) === 'AWS::SQS::Queue' && attribute === 'Arn') {
      const environment = (props(template.Resources?.[fn as string]).Environment ?? {}) as Record<string, unknown>;
      const workerId = literal((environment.Variables as Record<string, unknown> | undefined)?.[ENV.workerId]);
      workers.push({
        ...common,
        queue: source as string,
        workerId: workerId ?? (fn as string),
        batchSize: numberOr(p.BatchSize, 10),
      });
    } else if (typeOf(source) === 'AWS::DynamoDB::Table' && attribute === 'StreamArn') {
      streamSources.push({
        ...common,
        table: source as string,
        batchSize: numberOr(p.BatchSize, 100),
        maximumRetryAttempts: typeof p.MaximumRetryAttempts === 'number' ? p.MaximumRetryAttempts : undefined,
      });
    } else {
      notRun.push({ logicalId, why: 'an event source other than an SQS queue or a DynamoDB table stream' });
    }
  }

  for (const [logicalId, r] of ofType('AWS::Events::Rule')) {
    const p = props(r);
    const targets = Array.isArray(p.Targets) ? (p.Targets as Record<string, unknown>[]) : [];
    for (const target of targets) {
      const fn = referencedId(target.Arn);
      if (typeOf(fn) === 'AWS::Lambda::Function')
        notRun.push({
          logicalId: fn as string,
          why: `runs on the EventBridge rule ${logicalId} (${String(p.ScheduleExpression ?? 'an event pattern')}), which the local run does not fire`,
        });
    }
  }

  const retries = new Map<string, number>();
  for (const [, r] of ofType('AWS::Lambda::EventInvokeConfig')) {
    const p = props(r);
    const fn = referencedId(p.FunctionName);
    if (fn !== undefined && typeof p.MaximumRetryAttempts === 'number') retries.set(fn, p.MaximumRetryAttempts);
  }
  const needed = new Set([
    ...schedules.map((s) => s.target),
    ...workers.map((w) => w.function),
    ...streamSources.map((s) => s.function),
  ]);
  const functions = new Map<string, FunctionSpec>();
  for (const id of needed) {
    const spec = functionSpec(stack, id, template.Resources?.[id] as TemplateResource, retries.get(id), problems);
    if (spec !== undefined) functions.set(id, spec);
  }
  if (schedules.length === 0) problems.push('no AWS::Scheduler::Schedule targets a Lambda function of this stack');

  if (problems.length > 0)
    throw new AssemblyError(
      stack.assemblyDir,
      problems.map((p) => `${stack.displayName}: ${p}`),
    );
  return {
    stack,
    template,
    tables,
    buckets,
    queues,
    topics,
    subscriptions,
    schedules,
    workers,
    streamSources,
    functions,
    notRun,
  };
}

/** The function's bundle from its asset (`aws:asset:path`) and Handler, its timeout, memory and environment. */
function functionSpec(
  stack: StackArtifact,
  logicalId: string,
  resource: TemplateResource,
  asyncRetryAttempts: number | undefined,
  problems: string[],
): FunctionSpec | undefined {
  const p = props(resource);
  const asset = resource.Metadata?.['aws:asset:path'];
  const handler = literal(p.Handler);
  if (typeof asset !== 'string') {
    problems.push(
      `function ${logicalId}: no aws:asset:path metadata: \`cdk synth\` writes it, \`new App().synth()\` only with ` +
        "the context `aws:cdk:enable-asset-metadata`: `new App({ context: { 'aws:cdk:enable-asset-metadata': true } })` " +
        '(inline or prebuilt code cannot be run locally)',
    );
    return undefined;
  }
  const match = handler === undefined ? null : /^(.+)\.([^./]+)$/.exec(handler);
  if (match === null) {
    problems.push(`function ${logicalId}: Handler ${JSON.stringify(handler)} is not "file.export"`);
    return undefined;
  }
  const dir = path.resolve(stack.assemblyDir, asset);
  const [, modulePath, exportName] = match;
  const bundleFile = ['.js', '.cjs'].map((ext) => path.join(dir, modulePath + ext)).find((f) => existsSync(f));
  if (bundleFile === undefined) {
    const esm = existsSync(path.join(dir, `${modulePath}.mjs`));
    problems.push(
      esm
        ? `function ${logicalId}: ${modulePath}.mjs is an ES module bundle; the local run loads CommonJS bundles (the NodejsFunction default)`
        : `function ${logicalId}: no ${modulePath}.js in ${dir}`,
    );
    return undefined;
  }
  return {
    logicalId,
    bundleFile,
    exportName,
    timeoutSeconds: numberOr(p.Timeout, LAMBDA_DEFAULT_TIMEOUT_SECONDS),
    memorySize: numberOr(p.MemorySize, LAMBDA_DEFAULT_MEMORY_MB),
    environment: ((p.Environment as Record<string, unknown> | undefined)?.Variables ?? {}) as Record<string, unknown>,
    asyncRetryAttempts: asyncRetryAttempts ?? LAMBDA_DEFAULT_ASYNC_RETRIES,
  };
}

/** FilterCriteria's patterns, each a JSON string in the template. */
function filtersOf(criteria: unknown, logicalId: string, problems: string[]): EventFilters | undefined {
  const filters = (criteria as { Filters?: { Pattern?: unknown }[] } | undefined)?.Filters;
  if (!Array.isArray(filters) || filters.length === 0) return undefined;
  return filters.map((f) => {
    try {
      return typeof f.Pattern === 'string' ? JSON.parse(f.Pattern) : f.Pattern;
    } catch {
      problems.push(`event source ${logicalId}: a filter pattern that is not JSON: ${String(f.Pattern)}`);
      return {};
    }
  });
}

const props = (resource: TemplateResource | undefined): Record<string, unknown> => resource?.Properties ?? {};

const literal = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

const numberOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' ? value : typeof value === 'string' && value !== '' ? Number(value) : fallback;

/** The logical id a `Ref` or `Fn::GetAtt` points at. */
export function referencedId(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.Ref === 'string') return v.Ref;
  return getAttOf(value)[0];
}

function getAttOf(value: unknown): [string | undefined, string | undefined] {
  const getAtt = (value as Record<string, unknown> | undefined)?.['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return [String(getAtt[0]), String(getAtt[1])];
  if (typeof getAtt === 'string') {
    const at = getAtt.indexOf('.');
    return [getAtt.slice(0, at), getAtt.slice(at + 1)];
  }
  return [undefined, undefined];
}

/** The keyed group a template's input names (TEMPLATE_GROUP_FIELD), as `{ keyedGroup }`, or nothing. */
/** A Fn::Join of strings and references, the references left empty; undefined for anything else. */
function withoutReferences(node: unknown): string | undefined {
  const join = (node as { 'Fn::Join'?: [string, unknown[]] } | null)?.['Fn::Join'];
  if (!Array.isArray(join) || !Array.isArray(join[1])) return undefined;
  return join[1].map((part) => (typeof part === 'string' ? part : '')).join(join[0]);
}

function keyedGroupOf(input: string | undefined): { keyedGroup?: string } {
  const group = fieldOf(input, TEMPLATE_GROUP_FIELD);
  return typeof group === 'string' && group !== '' ? { keyedGroup: group } : {};
}

function fieldOf(input: string | undefined, field: string): unknown {
  if (input === undefined) return undefined;
  try {
    return (JSON.parse(input) as Record<string, unknown> | null)?.[field];
  } catch {
    return undefined;
  }
}

/** The jobId of a schedule's input, the package's schedule event (functions/protocol/schedule-event.ts). */
function jobIdOf(input: string | undefined): string | undefined {
  if (input === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(input);
    const jobId = (parsed as { jobId?: unknown } | null)?.jobId;
    return typeof jobId === 'string' ? jobId : undefined;
  } catch {
    return undefined;
  }
}
