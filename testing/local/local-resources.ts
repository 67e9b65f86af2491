/**
 * Creates a described app's data resources in the emulator, as the template defines them: every DynamoDB table
 * (its keys, attribute definitions, indexes, stream and TTL), S3 bucket, SQS queue (its attributes, FIFO, redrive to
 * its DLQ), SNS topic and SQS subscription. Names are the template's names or logical ids with the run's id
 * appended, so runs share an emulator without colliding. Returns what each resource answers to Ref and
 * Fn::GetAtt, to resolve the functions' environments against.
 */
import { CreateTableCommand, type CreateTableCommandInput, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import {
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  CreateScheduleGroupCommand,
  type FlexibleTimeWindow,
  type Target,
} from '@aws-sdk/client-scheduler';
import { CreateTopicCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { isJsonObject } from '../../functions/protocol/field-checks';
import { TEMPLATE_GROUP_FIELD } from '../../functions/protocol/schedule-event';
import { type LocalApp, type QueueSpec, referencedId } from './app-model';
import { type PhysicalResource, type ResolveContext, resolveString, resolveValue } from './intrinsics';
import { LOCAL_REGION, type LocalClients } from './local-aws';

/** moto's default account. */
export const LOCAL_ACCOUNT = '123456789012';

export interface ResourceOptions {
  /** Appended to every name. */
  readonly runId: string;
  /** Overrides every queue's VisibilityTimeout (a test's crashed worker is redelivered in seconds). */
  readonly visibilityTimeoutSeconds?: number;
}

export async function createResources(
  app: LocalApp,
  clients: LocalClients,
  options: ResourceOptions,
): Promise<ResolveContext> {
  const resources = new Map<string, PhysicalResource>();
  const types = new Map(Object.entries(app.template.Resources ?? {}).map(([id, r]) => [id, r.Type]));
  const parameters: Record<string, string> = {
    'AWS::Region': LOCAL_REGION,
    'AWS::AccountId': LOCAL_ACCOUNT,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': app.stack.stackName,
    'AWS::StackId': `arn:aws:cloudformation:${LOCAL_REGION}:${LOCAL_ACCOUNT}:stack/${app.stack.stackName}/${options.runId}`,
  };
  for (const [name, parameter] of Object.entries(app.template.Parameters ?? {})) {
    if (typeof parameter.Default === 'string') parameters[name] = parameter.Default;
  }
  const context: ResolveContext = { resources, types, parameters };
  const suffix = `-${options.runId}`;

  for (const table of app.tables) {
    const base = typeof table.properties.TableName === 'string' ? table.properties.TableName : table.logicalId;
    const tableName = `${base.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 200)}${suffix}`;
    const created = await clients.dynamo.send(new CreateTableCommand(createTableInput(tableName, table.properties)));
    const description = created.TableDescription;
    resources.set(table.logicalId, {
      type: 'AWS::DynamoDB::Table',
      ref: tableName,
      attributes: {
        Arn: description?.TableArn ?? `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${tableName}`,
        ...(description?.LatestStreamArn === undefined ? {} : { StreamArn: description.LatestStreamArn }),
      },
    });
    const ttl = table.properties.TimeToLiveSpecification as { AttributeName?: string; Enabled?: boolean } | undefined;
    if (ttl?.Enabled === true && ttl.AttributeName !== undefined) {
      await clients.dynamo.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true },
        }),
      );
    }
  }

  for (const bucket of app.buckets) {
    const name = bucketName(bucket.bucketName ?? bucket.logicalId, suffix);
    await clients.s3.send(new CreateBucketCommand({ Bucket: name }));
    resources.set(bucket.logicalId, {
      type: 'AWS::S3::Bucket',
      ref: name,
      attributes: {
        Arn: `arn:aws:s3:::${name}`,
        DomainName: `${name}.s3.amazonaws.com`,
        RegionalDomainName: `${name}.s3.${LOCAL_REGION}.amazonaws.com`,
      },
    });
  }

  // Every queue first, then the redrive policies: a queue's DLQ is another queue of the template.
  for (const queue of app.queues) {
    const name = queueName(queue, suffix);
    const attributes = { ...queue.attributes };
    if (options.visibilityTimeoutSeconds !== undefined)
      attributes.VisibilityTimeout = String(options.visibilityTimeoutSeconds);
    const created = await clients.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    const url = required(created.QueueUrl, `the URL of queue ${name}`);
    const described = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
    );
    resources.set(queue.logicalId, {
      type: 'AWS::SQS::Queue',
      ref: url,
      attributes: {
        Arn: required(described.Attributes?.QueueArn, `the ARN of ${name}`),
        QueueName: name,
        QueueUrl: url,
      },
    });
  }
  for (const queue of app.queues) {
    if (queue.redrivePolicy === undefined) continue;
    const policy = resolveValue(queue.redrivePolicy, context);
    await clients.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: resources.get(queue.logicalId)?.ref,
        Attributes: { RedrivePolicy: typeof policy === 'string' ? policy : JSON.stringify(policy) },
      }),
    );
  }

  for (const topic of app.topics) {
    const base = (topic.topicName ?? topic.logicalId).replace(/\.fifo$/, '').slice(0, 200);
    const name = `${base}${suffix}${topic.fifo ? '.fifo' : ''}`;
    const created = await clients.sns.send(
      new CreateTopicCommand({
        Name: name,
        Attributes: topic.fifo
          ? { FifoTopic: 'true', ContentBasedDeduplication: String(topic.contentBasedDeduplication) }
          : {},
      }),
    );
    const arn = required(created.TopicArn, `the ARN of topic ${name}`);
    resources.set(topic.logicalId, {
      type: 'AWS::SNS::Topic',
      ref: arn,
      attributes: { TopicArn: arn, TopicName: name },
    });
  }
  for (const subscription of app.subscriptions) {
    const attributes: Record<string, string> = { RawMessageDelivery: String(subscription.rawMessageDelivery) };
    if (subscription.filterPolicy !== undefined)
      attributes.FilterPolicy = JSON.stringify(resolveValue(subscription.filterPolicy, context));
    await clients.sns.send(
      new SubscribeCommand({
        TopicArn: resources.get(subscription.topic)?.ref,
        Protocol: 'sqs',
        Endpoint: resources.get(subscription.queue)?.attributes.Arn,
        Attributes: attributes,
      }),
    );
  }

  // Names only: what a function's environment or a schedule's target may name of a function.
  for (const [id, r] of Object.entries(app.template.Resources ?? {})) {
    if (r.Type === 'AWS::Lambda::Function') {
      const name = `${id.slice(0, 50)}${suffix}`;
      const arn = `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${name}`;
      resources.set(id, { type: r.Type, ref: name, attributes: { Arn: arn } });
    }
  }
  // A run-time-schedule job's alias of the trigger: its Ref is its ARN, the function's and the alias's name.
  for (const [id, r] of Object.entries(app.template.Resources ?? {})) {
    if (r.Type !== 'AWS::Lambda::Alias') continue;
    const fn = resources.get(referencedId(r.Properties?.FunctionName) ?? '');
    if (fn === undefined) continue;
    const arn = `${fn.attributes.Arn}:${resolveString(r.Properties?.Name, context)}`;
    resources.set(id, { type: r.Type, ref: arn, attributes: { AliasArn: arn } });
  }
  await createSchedules(app, clients, { context, resources, suffix });
  return context;
}

/**
 * The schedule groups and the schedules, as Scheduler would hold them once deployed, so that what reads them (the
 * `occurrences` CLI's describe, pause, resume, run, backfill, retry; a worker's pause after failures) works against a
 * local run. moto stores them but fires nothing: the local run plays the schedules itself.
 */
async function createSchedules(
  app: LocalApp,
  clients: LocalClients,
  local: { context: ResolveContext; resources: Map<string, PhysicalResource>; suffix: string },
): Promise<void> {
  const { context, resources, suffix } = local;
  const groupNames = new Map<string, string>(); // the template's name -> the local one
  for (const [id, r] of Object.entries(app.template.Resources ?? {})) {
    if (r.Type !== 'AWS::Scheduler::ScheduleGroup') continue;
    const base = typeof r.Properties?.Name === 'string' ? r.Properties.Name : id;
    const name = `${base.slice(0, SCHEDULER_NAME_MAX - suffix.length)}${suffix}`;
    const created = await clients.scheduler.send(new CreateScheduleGroupCommand({ Name: name }));
    groupNames.set(base, name);
    resources.set(id, { type: r.Type, ref: name, attributes: { Arn: created.ScheduleGroupArn ?? '' } });
  }
  for (const [id, r] of Object.entries(app.template.Resources ?? {})) {
    if (r.Type !== 'AWS::Scheduler::Schedule') continue;
    const p = r.Properties ?? {};
    const group = resolveGroupName(p.GroupName, context, groupNames);
    const name = typeof p.Name === 'string' ? p.Name : `${id.slice(0, SCHEDULER_NAME_MAX - suffix.length)}${suffix}`;
    const target = (p.Target ?? {}) as Record<string, unknown>;
    const created = await clients.scheduler.send(
      new CreateScheduleCommand({
        Name: name,
        GroupName: group,
        ScheduleExpression: resolveString(p.ScheduleExpression, context),
        ScheduleExpressionTimezone: optionalString(p.ScheduleExpressionTimezone, context),
        Description: optionalString(p.Description, context),
        State: optionalString(p.State, context) as CreateScheduleCommandInput['State'],
        StartDate: p.StartDate === undefined ? undefined : new Date(resolveString(p.StartDate, context)),
        EndDate: p.EndDate === undefined ? undefined : new Date(resolveString(p.EndDate, context)),
        FlexibleTimeWindow: resolveValue(p.FlexibleTimeWindow ?? { Mode: 'OFF' }, context) as FlexibleTimeWindow,
        Target: {
          Arn: resolveString(target.Arn, context),
          // IAM is not emulated: the role only has to look like one, as UpdateSchedule passes it back.
          RoleArn: `arn:aws:iam::${LOCAL_ACCOUNT}:role/local-scheduler${suffix}`,
          Input: withLocalKeyedGroup(optionalString(target.Input, context), groupNames),
          RetryPolicy: resolveValue(target.RetryPolicy, context) as Target['RetryPolicy'],
          DeadLetterConfig: resolveValue(target.DeadLetterConfig, context) as Target['DeadLetterConfig'],
        },
      }),
    );
    resources.set(id, { type: r.Type, ref: name, attributes: { Arn: created.ScheduleArn ?? '' } });
  }
}

/** Scheduler's limit for group and schedule names. */
const SCHEDULER_NAME_MAX = 64;

/** The local name of the group a schedule names: a Ref to a group of the template, or the template's literal name. */
function resolveGroupName(value: unknown, context: ResolveContext, groupNames: ReadonlyMap<string, string>) {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return groupNames.get(value) ?? value;
  return resolveString(value, context);
}

/**
 * A template's input names its job's own group by the template's name (a literal: CDK names the group at synth);
 * the group was created under its local name, so the input names that one, as deployed it names the real group.
 */
export function withLocalKeyedGroup(
  input: string | undefined,
  groupNames: ReadonlyMap<string, string>,
): string | undefined {
  if (input === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    return input;
  }
  if (!isJsonObject(parsed)) return input;
  const group = parsed[TEMPLATE_GROUP_FIELD];
  const local = typeof group === 'string' ? groupNames.get(group) : undefined;
  return local === undefined ? input : JSON.stringify({ ...parsed, [TEMPLATE_GROUP_FIELD]: local });
}

function optionalString(value: unknown, context: ResolveContext): string | undefined {
  return value === undefined ? undefined : resolveString(value, context);
}

/** The template's table as CreateTable takes it: keys, attribute definitions, indexes, billing and stream. */
export function createTableInput(tableName: string, p: Readonly<Record<string, unknown>>): CreateTableCommandInput {
  type Index = Record<string, unknown>;
  const billingMode = (p.BillingMode as string | undefined) ?? 'PROVISIONED';
  const pick = (index: Index, keys: readonly string[]) =>
    Object.fromEntries(keys.filter((k) => index[k] !== undefined).map((k) => [k, index[k]]));
  const gsis = (p.GlobalSecondaryIndexes as Index[] | undefined)?.map((i) =>
    pick(i, ['IndexName', 'KeySchema', 'Projection', 'ProvisionedThroughput', 'OnDemandThroughput']),
  );
  const lsis = (p.LocalSecondaryIndexes as Index[] | undefined)?.map((i) =>
    pick(i, ['IndexName', 'KeySchema', 'Projection']),
  );
  const streamViewType = (p.StreamSpecification as { StreamViewType?: string } | undefined)?.StreamViewType;
  return {
    TableName: tableName,
    AttributeDefinitions: p.AttributeDefinitions as CreateTableCommandInput['AttributeDefinitions'],
    KeySchema: p.KeySchema as CreateTableCommandInput['KeySchema'],
    BillingMode: billingMode as CreateTableCommandInput['BillingMode'],
    ...(billingMode === 'PROVISIONED'
      ? { ProvisionedThroughput: p.ProvisionedThroughput as CreateTableCommandInput['ProvisionedThroughput'] }
      : {}),
    ...(gsis === undefined
      ? {}
      : { GlobalSecondaryIndexes: gsis as unknown as CreateTableCommandInput['GlobalSecondaryIndexes'] }),
    ...(lsis === undefined
      ? {}
      : { LocalSecondaryIndexes: lsis as unknown as CreateTableCommandInput['LocalSecondaryIndexes'] }),
    ...(streamViewType === undefined
      ? {}
      : { StreamSpecification: { StreamEnabled: true, StreamViewType: streamViewType as 'NEW_AND_OLD_IMAGES' } }),
  };
}

/** SQS: up to 80 letters, digits, '-' and '_', FIFO queues ending in `.fifo`. */
function queueName(queue: QueueSpec, suffix: string): string {
  const fifo = queue.fifo ? '.fifo' : '';
  const base = (queue.queueName ?? queue.logicalId).replace(/\.fifo$/, '').replace(/[^A-Za-z0-9_-]/g, '-');
  return `${base.slice(0, 80 - suffix.length - fifo.length)}${suffix}${fifo}`;
}

/** S3: 3-63 lower-case letters, digits and '-'. */
function bucketName(base: string, suffix: string): string {
  const clean = base.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  return `${clean.slice(0, 63 - suffix.length)}${suffix}`.replace(/^-+/, '');
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the emulator did not return ${what}`);
  return value;
}
