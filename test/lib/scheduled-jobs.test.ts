import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { occurrenceDigestJob } from '../../functions/jobs/occurrence-digest';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import { withDefaults } from '../../functions/protocol/job-settings';
import { workerLimits } from '../../functions/protocol/worker-limits';
import type { ScheduledJobConfig } from '../../lib/job-config';
import { ScheduledJobsStack } from '../../lib/scheduled-jobs-stack';
import { faults } from '../../sim/fakes/fake-aws';
import { makeHarness, SCHEDULED, T0 } from '../support/harness';
import type { TemplateNode, TemplateResource } from './template-json';

// Three jobs: the sample, a flexible-window rate job with its own Scheduler retry policy, and a paused one.
const jobs: ScheduledJobConfig[] = [
  { id: 'occurrence-digest', schedule: 'cron(0 6 * * ? *)', timeZone: 'Europe/Berlin', timeoutSeconds: 120 },
  {
    id: 'hourly-export',
    schedule: 'rate(1 hour)',
    flexibleWindowMinutes: 15,
    timeoutSeconds: 300,
    retry: { maxAttempts: 3 },
    schedulerRetry: { maximumRetryAttempts: 10, maximumEventAgeSeconds: 3600 },
  },
  { id: 'paused', schedule: 'rate(5 minutes)', enabled: false, timeoutSeconds: 60 },
];

/** A policy statement: its Effect, Action, Resource, Condition and Principal, as the template has them. */
type Statement = TemplateNode;

/** A job's runtime settings with their defaults: its configuration without the schedule half. */
const settingsOf = ({
  schedule,
  timeZone,
  flexibleWindowMinutes,
  description,
  enabled,
  schedulerRetry,
  ...settings
}: ScheduledJobConfig) => withDefaults(settings);

let stack: ScheduledJobsStack;
let template: Template;
let resources: Record<string, TemplateResource>;

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const actionsOf = (s: Statement): string[] => (Array.isArray(s.Action) ? [...s.Action] : [s.Action]);
const logicalId = (construct: IConstruct | undefined) =>
  stack.getLogicalId((construct?.node.defaultChild ?? construct) as CfnElement);
const getAttArn = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });

/** The statements of the inline policies attached to the given function's role. */
function roleStatements(fn: { role?: IConstruct }): Statement[] {
  const roleId = logicalId(fn.role);
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r) => r.Ref === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
}

const LOG_WRITES = ['logs:CreateLogStream', 'logs:PutLogEvents'];
/** The function's statements other than writing its own logs (checked once, in 'least privilege'). */
function grantStatements(fn: { role?: IConstruct }): Statement[] {
  return roleStatements(fn).filter((s) => !actionsOf(s).every((a) => LOG_WRITES.includes(a)));
}

/** The queue policy statement that refuses requests over plain HTTP, if the queue/bucket/topic has one. */
function denyInsecureTransport(statements: readonly Statement[]): Statement | undefined {
  return statements.find((s) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false');
}

beforeAll(() => {
  const app = new App();
  stack = new ScheduledJobsStack(app, 'Test', { jobs });
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources;
});

describe('schedules', () => {
  it('creates one schedule per enabled job and none for a paused one', () => {
    const schedules = ofType('AWS::Scheduler::Schedule').map(([, r]) => JSON.parse(r.Properties.Target.Input).jobId);
    expect(schedules.sort()).toEqual(['hourly-export', 'occurrence-digest']);
  });

  it('invokes the trigger with the job id and the nominal <aws.scheduler.scheduled-time> as the occurrence key', () => {
    const triggerId = logicalId(stack.scheduledJobs.triggerFunction);
    for (const [, schedule] of ofType('AWS::Scheduler::Schedule')) {
      expect(schedule.Properties.Target.Arn).toEqual(getAttArn(triggerId));
      const input = JSON.parse(schedule.Properties.Target.Input);
      expect(input).toEqual({ jobId: expect.any(String), scheduledTime: '<aws.scheduler.scheduled-time>' });
    }
  });

  it("carries each job's expression, time zone, flexible window, retry policy and the schedules' group", () => {
    const groupId = logicalId(stack.scheduledJobs.schedules.group);
    const byJob: Record<string, TemplateNode> = Object.fromEntries(
      ofType('AWS::Scheduler::Schedule').map(([, r]) => [JSON.parse(r.Properties.Target.Input).jobId, r.Properties]),
    );
    expect(byJob['occurrence-digest']).toMatchObject({
      ScheduleExpression: 'cron(0 6 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: { RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 } },
    });
    expect(byJob['hourly-export']).toMatchObject({
      ScheduleExpression: 'rate(1 hour)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 15 },
      Target: { RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 } },
    });
    const groupName = resources[groupId].Properties.Name;
    expect(groupName).toEqual(expect.any(String));
    for (const props of Object.values(byJob)) expect(props.GroupName).toBe(groupName);
  });

  it('sends undeliverable occurrences to a standard (non-FIFO), encrypted dead-letter queue', () => {
    const dlqId = logicalId(stack.scheduledJobs.schedules.deadLetterQueue);
    for (const [, schedule] of ofType('AWS::Scheduler::Schedule')) {
      expect(schedule.Properties.Target.DeadLetterConfig).toEqual({ Arn: getAttArn(dlqId) });
    }
    expect(resources[dlqId].Properties.FifoQueue).toBeUndefined();
    expect(resources[dlqId].Properties.SqsManagedSseEnabled).toBe(true);
  });
});

describe('occurrences table', () => {
  let table: TemplateNode;
  beforeAll(() => {
    table = resources[logicalId(stack.scheduledJobs.table)].Properties;
  });

  it('is keyed by (jobId, scheduledTime), on demand, with PITR and a NEW_AND_OLD_IMAGES stream', () => {
    expect(table.KeySchema).toEqual([
      { AttributeName: 'jobId', KeyType: 'HASH' },
      { AttributeName: 'scheduledTime', KeyType: 'RANGE' },
    ]);
    expect(table.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it('has the byStatusShard index on (statusShard, scheduledTime), projecting only what a heartbeat leaves alone', () => {
    expect(table.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'byStatusShard',
        KeySchema: [
          { AttributeName: 'statusShard', KeyType: 'HASH' },
          { AttributeName: 'scheduledTime', KeyType: 'RANGE' },
        ],
        Projection: {
          ProjectionType: 'INCLUDE',
          NonKeyAttributes: [
            'status',
            'attempt',
            'createdAt',
            'claimedAt',
            'nextAttemptAt',
            'requeuedAt',
            'reportKey',
            'succeededAt',
            'failedAt',
            'notifiedAt',
          ],
        },
      },
    ]);
    expect(table.AttributeDefinitions).toEqual(
      expect.arrayContaining([{ AttributeName: 'statusShard', AttributeType: 'S' }]),
    );
    expect(table.AttributeDefinitions).not.toEqual(
      expect.arrayContaining([{ AttributeName: 'status', AttributeType: 'S' }]),
    );
  });

  it('expires rows through the ttl attribute', () => {
    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: 'ttl', Enabled: true });
  });

  it('and the reports bucket are retained when the stack is deleted, by default', () => {
    expect(resources[logicalId(stack.scheduledJobs.table)].DeletionPolicy).toBe('Retain');
    expect(resources[logicalId(stack.scheduledJobs.reportBucket)].DeletionPolicy).toBe('Retain');
  });
});

describe('job queue and worker', () => {
  it('redrives to the DLQ after the workerLimits maxReceiveCount, at least 5', () => {
    const queue = resources[logicalId(stack.scheduledJobs.jobQueue)].Properties;
    const expected = workerLimits(jobs.map(settingsOf)).maxReceiveCount;
    expect(queue.RedrivePolicy).toEqual({
      deadLetterTargetArn: getAttArn(logicalId(stack.scheduledJobs.jobDeadLetterQueue)),
      maxReceiveCount: expected,
    });
    expect(queue.RedrivePolicy.maxReceiveCount).toBeGreaterThanOrEqual(5);
  });

  it('hides a message at least 6 times as long as the worker may run', () => {
    const [[, mapping]] = ofType('AWS::Lambda::EventSourceMapping').filter(
      ([, r]) =>
        JSON.stringify(r.Properties.EventSourceArn) ===
        JSON.stringify(getAttArn(logicalId(stack.scheduledJobs.jobQueue))),
    );
    const worker = resources[mapping.Properties.FunctionName.Ref].Properties;
    const queue = resources[logicalId(stack.scheduledJobs.jobQueue)].Properties;
    expect(worker.Timeout).toBeGreaterThan(0);
    expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * Number(worker.Timeout));
    // The longest job (300 s) plus the outcome reserve must fit the worker's timeout.
    expect(worker.Timeout).toBeGreaterThanOrEqual(300);
  });

  it('delivers batches with partial batch responses, so one failed message does not retry the others', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: getAttArn(logicalId(stack.scheduledJobs.jobQueue)),
      FunctionName: { Ref: logicalId(stack.scheduledJobs.workerFunction) },
      BatchSize: 5,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('hands every function the settings of every job, paused ones included', () => {
    for (const fn of [stack.scheduledJobs.triggerFunction, stack.scheduledJobs.workerFunction]) {
      const env = resources[logicalId(fn)].Properties.Environment.Variables;
      expect(JSON.parse(env.JOB_SETTINGS)).toEqual(
        jobs.map((j) => withDefaults({ id: j.id, timeoutSeconds: j.timeoutSeconds, retry: j.retry })),
      );
    }
  });
});

/**
 * A minimal evaluator of Lambda event filter patterns (exact values and anything-but), enough to run the
 * notifier's filter against sample stream records instead of comparing it to a copy of itself.
 */
function matches(pattern: TemplateNode, event: unknown): boolean {
  return Object.entries(pattern).every(([key, rule]) => {
    const value = (event as Record<string, unknown> | undefined)?.[key];
    if (!Array.isArray(rule)) return matches(rule, value);
    if (value === undefined) return false;
    return rule.some((r) =>
      typeof r === 'object' && r !== null && 'anything-but' in r
        ? !(r['anything-but'] as unknown[]).includes(value)
        : r === value,
    );
  });
}

describe('notifier', () => {
  const record = (eventName: string, oldStatus?: string, newStatus?: string) => ({
    eventName,
    dynamodb: {
      ...(oldStatus ? { OldImage: { status: { S: oldStatus } } } : {}),
      ...(newStatus ? { NewImage: { status: { S: newStatus } } } : {}),
    },
  });
  let patterns: TemplateNode[];
  beforeAll(() => {
    const [[, mapping]] = ofType('AWS::Lambda::EventSourceMapping').filter(
      ([, r]) => r.Properties.FunctionName.Ref === logicalId(stack.scheduledJobs.notifierFunction),
    );
    patterns = mapping.Properties.FilterCriteria.Filters.map((f) => JSON.parse(f.Pattern));
  });
  const passes = (event: unknown) => patterns.some((p) => matches(p, event));

  it('receives only the transition to SUCCEEDED', () => {
    expect(passes(record('MODIFY', 'RUNNING', 'SUCCEEDED'))).toBe(true);
    expect(passes(record('MODIFY', 'RETRY_WAIT', 'SUCCEEDED'))).toBe(true);
    expect(passes(record('INSERT', undefined, 'SUCCEEDED'))).toBe(false);
    expect(passes(record('INSERT', undefined, 'PENDING'))).toBe(false);
    expect(passes(record('MODIFY', 'PENDING', 'RUNNING'))).toBe(false);
    expect(passes(record('MODIFY', 'RUNNING', 'FAILED'))).toBe(false);
    // Its own notifiedAt update must not invoke it again.
    expect(passes(record('MODIFY', 'SUCCEEDED', 'SUCCEEDED'))).toBe(false);
    expect(passes(record('REMOVE', 'SUCCEEDED', undefined))).toBe(false);
  });

  it('reads the table stream from TRIM_HORIZON, retries until records age out, bisects failing batches and parks hopeless ones', () => {
    const mapping = Object.values(
      template.findResources('AWS::Lambda::EventSourceMapping', {
        Properties: { FunctionName: { Ref: logicalId(stack.scheduledJobs.notifierFunction) } },
      }),
    )[0] as { Properties: Record<string, unknown> };
    // A bounded retry count would drop announcements during an outage; unset means until the record expires.
    expect(mapping.Properties.MaximumRetryAttempts ?? -1).toBe(-1);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.scheduledJobs.table), 'StreamArn'] },
      FunctionName: { Ref: logicalId(stack.scheduledJobs.notifierFunction) },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 10,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: getAttArn(logicalId(stack.scheduledJobs.notifierFailureQueue)) } },
    });
  });
});

describe('report bucket and topic', () => {
  it('blocks all public access and refuses plain HTTP', () => {
    const bucketId = logicalId(stack.scheduledJobs.reportBucket);
    expect(resources[bucketId].Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    const [[, policy]] = ofType('AWS::S3::BucketPolicy').filter(([, p]) => p.Properties.Bucket.Ref === bucketId);
    expect(denyInsecureTransport(policy.Properties.PolicyDocument.Statement)).toBeDefined();
  });

  it('announces on an SSL-only FIFO topic with a raw-delivery FIFO queue subscribed', () => {
    const topicId = logicalId(stack.scheduledJobs.reportReadyTopic);
    expect(resources[topicId].Properties).toMatchObject({ FifoTopic: true, ContentBasedDeduplication: false });
    expect(resources[topicId].Properties.TopicName).toMatch(/\.fifo$/);
    const [[, topicPolicy]] = ofType('AWS::SNS::TopicPolicy');
    expect(denyInsecureTransport(topicPolicy.Properties.PolicyDocument.Statement)).toBeDefined();
    const queueId = logicalId(stack.scheduledJobs.reportReadyQueue);
    expect(resources[queueId].Properties.FifoQueue).toBe(true);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      TopicArn: { Ref: topicId },
      Protocol: 'sqs',
      Endpoint: getAttArn(queueId),
      RawMessageDelivery: true,
    });
  });
});

describe('queues', () => {
  it('are all encrypted and refuse plain HTTP', () => {
    const queues = ofType('AWS::SQS::Queue');
    expect(queues.length).toBe(6);
    const policies = ofType('AWS::SQS::QueuePolicy');
    for (const [id, queue] of queues) {
      expect(queue.Properties.SqsManagedSseEnabled, id).toBe(true);
      const statements = policies
        .filter(([, p]) => p.Properties.Queues.some((q) => q.Ref === id))
        .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
      expect(denyInsecureTransport(statements), id).toBeDefined();
    }
  });
});

describe('functions', () => {
  it('all run on nodejs24.x and arm64 with a log retention', () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.length).toBe(4);
    for (const [id, fn] of functions) {
      expect(fn.Properties.Runtime, id).toBe('nodejs24.x');
      expect(fn.Properties.Architectures, id).toEqual(['arm64']);
      const logGroup = resources[fn.Properties.LoggingConfig.LogGroup.Ref];
      expect(logGroup.Properties.RetentionInDays, id).toBeGreaterThan(0);
    }
  });

  it('trigger: retries async invocations twice, then keeps them in its own DLQ', () => {
    const triggerId = logicalId(stack.scheduledJobs.triggerFunction);
    expect(resources[triggerId].Properties.DeadLetterConfig).toEqual({
      TargetArn: getAttArn(logicalId(stack.scheduledJobs.triggerDeadLetterQueue)),
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: triggerId },
      MaximumRetryAttempts: 2,
    });
  });
});

describe('least privilege', () => {
  it('no IAM policy in the template grants an action wildcard', () => {
    const policies = ofType('AWS::IAM::Policy');
    expect(policies.length).toBeGreaterThan(0);
    for (const [id, policy] of policies) {
      for (const statement of policy.Properties.PolicyDocument.Statement) {
        for (const action of actionsOf(statement)) expect(action, id).not.toContain('*');
      }
    }
  });

  it('each function has a role of its own, no managed policy, and may write logs only to its own log group', () => {
    const functions = ofType('AWS::Lambda::Function');
    const roleIds = new Set(functions.map(([, fn]) => fn.Properties.Role['Fn::GetAtt'][0]));
    expect(roleIds.size).toBe(functions.length);
    for (const [, role] of ofType('AWS::IAM::Role')) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    const { triggerFunction, workerFunction, notifierFunction, reconcilerFunction } = stack.scheduledJobs;
    for (const fn of [triggerFunction, workerFunction, notifierFunction, reconcilerFunction]) {
      const logGroupId = resources[logicalId(fn)].Properties.LoggingConfig.LogGroup.Ref;
      const logStatements = roleStatements(fn).filter((st) => actionsOf(st).some((a) => a.startsWith('logs:')));
      expect(logStatements.map((st) => [actionsOf(st).sort(), st.Resource])).toEqual([
        [LOG_WRITES, getAttArn(logGroupId)],
      ]);
    }
  });

  it('the trigger may only put occurrence rows and send to the job queue (and its own async DLQ)', () => {
    const { table, jobQueue, triggerDeadLetterQueue, triggerFunction } = stack.scheduledJobs;
    const grants = grantStatements(triggerFunction).flatMap((s) => actionsOf(s).map((a) => [a, s.Resource]));
    expect(grants).toHaveLength(3);
    expect(grants).toEqual(
      expect.arrayContaining([
        ['dynamodb:PutItem', getAttArn(logicalId(table))],
        ['sqs:SendMessage', getAttArn(logicalId(jobQueue))],
        ['sqs:SendMessage', getAttArn(logicalId(triggerDeadLetterQueue))],
      ]),
    );
  });

  it('the worker may read and write reports only under reports/, and reach the table and its index', () => {
    const statements = grantStatements(stack.scheduledJobs.workerFunction);
    const actions = statements.flatMap(actionsOf).sort();
    expect(actions).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
      's3:GetObject',
      's3:ListBucket',
      's3:PutObject',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ]);
    const objects = statements.find((s) => actionsOf(s).includes('s3:PutObject'))!;
    expect(JSON.stringify(objects.Resource)).toContain('"/reports/*"');
    const dynamo = statements.find((s) => actionsOf(s).includes('dynamodb:Query'))!;
    expect(JSON.stringify(dynamo.Resource)).toContain('/index/byStatusShard');
  });

  it('the notifier may only read and mark rows, publish to the topic, read the stream and park failures', () => {
    const actions = grantStatements(stack.scheduledJobs.notifierFunction).flatMap(actionsOf).sort();
    expect(actions).toEqual([
      'dynamodb:DescribeStream',
      'dynamodb:GetItem',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
      'dynamodb:UpdateItem',
      'sns:Publish',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:SendMessage',
    ]);
  });
});

describe('reconciler', () => {
  it("runs every 5 minutes from an EventBridge rule, without Lambda's async retries (the next run is the retry)", () => {
    const fnId = logicalId(stack.scheduledJobs.reconcilerFunction);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: getAttArn(fnId), RetryPolicy: { MaximumRetryAttempts: 0 } })],
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fnId },
      MaximumRetryAttempts: 0,
    });
  });

  it('gets thresholds derived from the jobs: stuck after the queue visibility timeout + 5 min, unannounced after 25 h', () => {
    const env = resources[logicalId(stack.scheduledJobs.reconcilerFunction)].Properties.Environment.Variables;
    const limits = workerLimits(jobs.map(settingsOf));
    expect(JSON.parse(env.RECONCILE_THRESHOLDS)).toEqual({
      stuckAfterSeconds: limits.queueVisibilityTimeoutSeconds + 300,
      unannouncedAfterSeconds: 25 * 3600,
      // The longest deadline + time limit (6 h + 300 s), 25 h, and a day.
      lookbackSeconds: 21_600 + 300 + 25 * 3600 + 86_400,
      maxFixesPerRun: 200,
    });
    expect(JSON.parse(env.JOB_SETTINGS).map((s: { id: string }) => s.id)).toEqual(jobs.map((j) => j.id));
  });

  it('may only query the status index, read and mark rows, send to the job queue and publish to the topic', () => {
    const { table, jobQueue, reportReadyTopic, reconcilerFunction } = stack.scheduledJobs;
    const grants = grantStatements(reconcilerFunction)
      .flatMap((s) => actionsOf(s).map((a) => [a, JSON.stringify(s.Resource)]))
      .sort();
    const tableArn = JSON.stringify(getAttArn(logicalId(table)));
    expect(grants).toEqual([
      ['dynamodb:BatchGetItem', tableArn],
      ['dynamodb:GetItem', tableArn],
      ['dynamodb:Query', expect.stringContaining('/index/byStatusShard')],
      ['dynamodb:UpdateItem', tableArn],
      ['sns:Publish', JSON.stringify({ Ref: logicalId(reportReadyTopic) })],
      ['sqs:SendMessage', JSON.stringify(getAttArn(logicalId(jobQueue)))],
    ]);
  });
});

describe('alarms and dashboard', () => {
  const alarms = () => ofType('AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);
  const namespace = 'ScheduledJobs/Test';
  const jobMetricAlarm = (metricName: string, jobId: string) =>
    alarms().find(
      (a) =>
        a.MetricName === metricName &&
        JSON.stringify(a.Dimensions) ===
          JSON.stringify([
            { Name: 'jobId', Value: jobId },
            { Name: 'service', Value: 'scheduled-jobs' },
          ]),
    );

  it('every function writes its metrics to the namespace the alarms watch', () => {
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      expect(fn.Properties.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE).toBe(namespace);
    }
  });

  it('alarm on the first message in each dead-letter queue', () => {
    const { jobDeadLetterQueue, triggerDeadLetterQueue, notifierFailureQueue, schedules } = stack.scheduledJobs;
    for (const queue of [jobDeadLetterQueue, triggerDeadLetterQueue, notifierFailureQueue, schedules.deadLetterQueue]) {
      const queueName = { 'Fn::GetAtt': [logicalId(queue), 'QueueName'] };
      const found = alarms().find(
        (a) =>
          a.MetricName === 'ApproximateNumberOfMessagesVisible' &&
          JSON.stringify(a.Dimensions) === JSON.stringify([{ Name: 'QueueName', Value: queueName }]),
      );
      expect(found, logicalId(queue)).toMatchObject({
        Namespace: 'AWS/SQS',
        Statistic: 'Maximum',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it('alarm per job on FAILED occurrences and lost leases, from the metrics the worker emits', () => {
    for (const jobId of jobs.map((j) => j.id)) {
      for (const metricName of ['OccurrencesFailed', 'LeasesLost']) {
        expect(jobMetricAlarm(metricName, jobId), `${metricName} ${jobId}`).toMatchObject({
          Namespace: namespace,
          Statistic: 'Sum',
          Period: 300,
          Threshold: 1,
        });
      }
    }
  });

  it('alarm per job on any reconciler fix (re-enqueue or late announcement)', () => {
    for (const jobId of jobs.map((j) => j.id)) {
      const fixes = alarms().find(
        (a) =>
          JSON.stringify(a.Metrics ?? []).includes(`"Value":"${jobId}"`) &&
          JSON.stringify(a.Metrics).includes('OccurrencesRequeued'),
      );
      expect(fixes, jobId).toBeDefined();
      expect(JSON.stringify(fixes!.Metrics)).toContain('ReportsReannounced');
      expect(fixes!.Threshold).toBe(1);
    }
  });

  it('alarm on worker errors and throttles, and on reconciler errors', () => {
    const { workerFunction, reconcilerFunction } = stack.scheduledJobs;
    const fnAlarm = (fn: IConstruct, metricName: string) =>
      alarms().find(
        (a) =>
          a.Namespace === 'AWS/Lambda' &&
          a.MetricName === metricName &&
          JSON.stringify(a.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: { Ref: logicalId(fn) } }]),
      );
    expect(fnAlarm(workerFunction, 'Errors')).toBeDefined();
    expect(fnAlarm(workerFunction, 'Throttles')).toBeDefined();
    expect(fnAlarm(reconcilerFunction, 'Errors')).toBeDefined();
  });

  it('send every alarm to the alarm topic, which has no subscription without -c alarmEmail', () => {
    const topicId = logicalId(stack.scheduledJobs.monitoring.alarmTopic);
    expect(alarms().length).toBe(4 + 3 + 3 * jobs.length);
    for (const a of alarms()) expect(a.AlarmActions).toEqual([{ Ref: topicId }]);
    expect(ofType('AWS::SNS::Subscription').filter(([, r]) => r.Properties.Protocol === 'email')).toEqual([]);
  });

  it('subscribe the e-mail address given as CDK context, and refuse one that is not an address', () => {
    const app = new App({ context: { alarmEmail: 'oncall@example.com' } });
    const withEmail = Template.fromStack(new ScheduledJobsStack(app, 'WithEmail', { jobs: jobs.slice(0, 1) }));
    withEmail.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
    const bad = new App({ context: { alarmEmail: 'oncall' } });
    expect(() => new ScheduledJobsStack(bad, 'Bad', { jobs: jobs.slice(0, 1) })).toThrow(
      'alarmEmail (-c alarmEmail=...): not an e-mail address: "oncall"',
    );
  });

  it("a dashboard shows each job's occurrences, retries, leases, durations and fixes, and the queues and functions", () => {
    const [[, dashboard]] = ofType('AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const jobId of jobs.map((j) => j.id)) {
      expect(body).toContain(`## ${jobId}`);
      for (const metric of [
        'OccurrencesStarted',
        'OccurrencesSucceeded',
        'OccurrencesFailed',
        'RetriesScheduled',
        'ExtendFailures',
        'LeasesLost',
        'DuplicateTriggersSuppressed',
        'JobDuration',
        'OccurrencesRequeued',
        'ReportsReannounced',
      ]) {
        expect(body).toContain(metric);
      }
    }
    expect(body).toContain('ApproximateNumberOfMessagesVisible');
    expect(body).toContain('Throttles');
  });
});

describe('permissions cover every call the handlers make', () => {
  /** The IAM action each SDK operation the adapters send needs (HeadObject is authorised by s3:GetObject). */
  const ACTION: Record<string, string> = {
    PutItem: 'dynamodb:PutItem',
    UpdateItem: 'dynamodb:UpdateItem',
    GetItem: 'dynamodb:GetItem',
    Query: 'dynamodb:Query',
    BatchGetItem: 'dynamodb:BatchGetItem',
    HeadObject: 's3:GetObject',
    PutObject: 's3:PutObject',
    SendMessage: 'sqs:SendMessage',
    ChangeMessageVisibility: 'sqs:ChangeMessageVisibility',
    Publish: 'sns:Publish',
  };

  it('grants each function exactly the actions its handler was seen to call, through every path', async () => {
    const calls = await callsByHandler();
    const { triggerFunction, workerFunction, notifierFunction, reconcilerFunction } = stack.scheduledJobs;
    const fns = {
      trigger: triggerFunction,
      worker: workerFunction,
      notifier: notifierFunction,
      reconciler: reconcilerFunction,
    };
    for (const [name, fn] of Object.entries(fns)) {
      const needed = [...new Set(calls[name as keyof typeof calls].map((op) => ACTION[op]))];
      const granted = roleStatements(fn).flatMap(actionsOf);
      expect({ name, missing: needed.filter((a) => !granted.includes(a)) }).toEqual({ name, missing: [] });
    }
    // The paths above really ran: a lost grant would have been caught.
    expect(calls.worker).toEqual(
      expect.arrayContaining(['UpdateItem', 'Query', 'HeadObject', 'PutObject', 'ChangeMessageVisibility']),
    );
    expect(calls.notifier).toEqual(expect.arrayContaining(['GetItem', 'Publish', 'UpdateItem']));
    expect(calls.reconciler).toEqual(
      expect.arrayContaining(['Query', 'UpdateItem', 'SendMessage', 'GetItem', 'Publish']),
    );
  });

  /** Run the trigger, the worker (the real digest job, then a failing job) and the notifier; note their calls. */
  async function callsByHandler() {
    const reader = new DynamoOccurrenceReader(
      DynamoDBDocumentClient.from(
        new DynamoDBClient({ region: 'eu-central-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }),
      ),
      'occurrences',
    );
    const failing = {
      reportExtension: 'txt',
      run: async (): Promise<never> => {
        throw new Error('down');
      },
    };
    const h = makeHarness({ jobs: { 'occurrence-digest': occurrenceDigestJob(() => reader), failing } });
    vi.useFakeTimers({ now: T0 });
    try {
      const seen = () => h.aws.calls.length;
      const slice = (from: number) => h.aws.calls.slice(from);
      let mark = seen();
      await h.trigger({ jobId: 'occurrence-digest', scheduledTime: SCHEDULED });
      await h.trigger({ jobId: 'failing', scheduledTime: SCHEDULED });
      const trigger = slice(mark);
      const before = { ...h.aws.row('occurrence-digest', SCHEDULED)!, status: 'RUNNING' };
      mark = seen();
      await h.deliver(encodeEnvelope({ jobId: 'occurrence-digest', scheduledTime: SCHEDULED }));
      await h.deliver(encodeEnvelope({ jobId: 'failing', scheduledTime: SCHEDULED }));
      const worker = slice(mark);
      mark = seen();
      await h.streamChange(before, 'occurrence-digest', SCHEDULED);
      const notifier = slice(mark);
      // Two minutes on: the failing job's second attempt looks for a committed report (a first attempt does not),
      // and a stream record that old is announced from the row, read again, not from its image.
      vi.setSystemTime(T0 + 120_000);
      mark = seen();
      await h.deliver(encodeEnvelope({ jobId: 'failing', scheduledTime: SCHEDULED }));
      worker.push(...slice(mark));
      mark = seen();
      await h.streamChange(before, 'occurrence-digest', SCHEDULED);
      notifier.push(...slice(mark));
      // A row the trigger recorded but could not enqueue, and a report the notifier never announced.
      h.aws.failAlways('SendMessage', faults.unavailable);
      await h.trigger({ jobId: 'failing', scheduledTime: '2026-11-30T07:00:00Z' }).catch(() => undefined);
      h.aws.clearFaults();
      const { notifiedAt, notificationId, ...unannounced } = h.aws.row('occurrence-digest', SCHEDULED)!;
      h.aws.table.set('occurrence-digest|2026-11-30T05:00:00Z', {
        ...unannounced,
        scheduledTime: '2026-11-30T05:00:00Z',
      });
      vi.setSystemTime(T0 + 26 * 3_600_000);
      mark = seen();
      await h.reconciler();
      const reconciler = slice(mark);
      return { trigger, worker, notifier, reconciler };
    } finally {
      h.aws.restore();
      vi.useRealTimers();
    }
  }
});

describe('outputs', () => {
  it('names the table, queues, bucket and topic', () => {
    expect(Object.keys(template.toJSON().Outputs).sort()).toEqual([
      'AlarmTopicArn',
      'DashboardName',
      'JobDeadLetterQueueUrl',
      'JobQueueUrl',
      'OccurrenceTableName',
      'ReportBucketName',
      'ReportReadyQueueUrl',
      'ReportReadyTopicArn',
    ]);
  });
});
