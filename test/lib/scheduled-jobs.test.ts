/**
 * ScheduledJobs as a user's stack builds it with the public API (fixtures/test-stack.ts): three workers (`exports`,
 * shared by two jobs and sized by hand; the sample digest's own, built from its entry; `cleanup`, running a paused
 * job), and a bucket of the app's own granted to `exports`. The shared pieces keep their guarantees; each worker's
 * function, queue, dead-letter queue, role and alarms are its own, derived from its own jobs. How the stack grows
 * with more jobs and workers is scheduled-jobs-scale.test.ts.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { App, type CfnElement, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { occurrenceDigestJob } from '../../examples/sample-app/jobs/occurrence-digest';
import { sampleJobs } from '../../examples/sample-app/sample-jobs';
import { SAMPLE_DIGEST_ENTRY, ScheduledJobsStack } from '../../examples/sample-app/sample-stack';
import { OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { FRESH_IMAGE_MS } from '../../functions/protocol/announce-report';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import { parseJobSettingsList, withDefaults } from '../../functions/protocol/job-settings';
import { workerLimits } from '../../functions/protocol/worker-limits';
import { OverlapPolicy } from '../../lib/job-props';
import type { JobWorker } from '../../lib/job-worker';
import { ScheduledJobs } from '../../lib/scheduled-jobs';
import { STACK_OUTPUTS } from '../../lib/stack-outputs';
import { type FakeAws, faults } from '../../sim/fakes/fake-aws';
import { makeHarness, SCHEDULED, T0 } from '../support/harness';
import { exportJobs } from './fixtures/exports-worker';
import {
  ALL_JOBS,
  addJobTo,
  buildTestStack,
  configOf,
  DIGEST,
  type FixtureJob,
  HOURLY,
  PAUSED,
  rejectionOf,
  WEEKLY,
  WORKER_ENTRY,
} from './fixtures/test-stack';
import { rendered, type TemplateNode, type TemplateResource } from './template-json';

/**
 * Each worker's limits, worked out by hand from worker-limits.ts (function timeout: given, or the longest job + 30 s;
 * visibility: max(6 x timeout, timeout + longest lease + 30 s); redrive: most attempts + 5, at least 5; stuck:
 * visibility + 5 min), so that a change to the derivation shows here.
 */
const EXPECTED = {
  exports: {
    jobs: [WEEKLY.id, HOURLY.id],
    timeout: 600,
    memory: 2048,
    visibility: 3600,
    maxReceiveCount: 13,
    stuckAfter: 3900,
    arch: 'arm64',
  },
  'occurrence-digest': {
    jobs: [DIGEST.id],
    timeout: 150,
    memory: 256,
    visibility: 900,
    maxReceiveCount: 25,
    stuckAfter: 1200,
    arch: 'arm64',
  },
  cleanup: {
    jobs: [PAUSED.id],
    timeout: 90,
    memory: 256,
    visibility: 720,
    maxReceiveCount: 6,
    stuckAfter: 1020,
    arch: 'x86_64',
  },
} as const;
type WorkerId = keyof typeof EXPECTED;
const WORKER_IDS = Object.keys(EXPECTED) as WorkerId[];

/** A policy statement: its Effect, Action, Resource, Condition and Principal, as the template has them. */
type Statement = TemplateNode;

/** A job's runtime settings with their defaults: its configuration without the schedule half. */
const settingsOf = (job: FixtureJob) => {
  const { schedule, timeZone, flexibleWindowMinutes, description, enabled, schedulerRetry, ...settings } =
    configOf(job);
  return withDefaults(settings);
};

/** The ValidationError of the call (thrown, or kept for the synth: rejectionOf), as its message. */
const problem = (fn: () => unknown): string => rejectionOf(fn).message;

let stack: Stack;
let jobs: ScheduledJobs;
let workers: Record<WorkerId, JobWorker>;
let dataBucket: s3.Bucket;
let template: Template;
let resources: Record<string, TemplateResource>;

/** An app that does not bundle the functions: for tests that read the template, not the code, or that fail. */
const unbundledApp = (context: Record<string, unknown> = {}) =>
  new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const actionsOf = (s: Statement): string[] => (Array.isArray(s.Action) ? [...s.Action] : [s.Action]);
const resourcesOf = (s: Statement): TemplateNode[] => (Array.isArray(s.Resource) ? [...s.Resource] : [s.Resource]);
const logicalId = (construct: IConstruct | undefined) =>
  stack.getLogicalId((construct?.node.defaultChild ?? construct) as CfnElement);
const getAttArn = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const propsOf = (construct: IConstruct) => resources[logicalId(construct)].Properties;
const envOf = (fn: lambda.IFunction) => propsOf(fn).Environment.Variables;

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

/** Every grant of the statements as `action on resource` (the resource rendered: `${Id.Arn}/reports/x/*`). */
function grantsOf(statements: readonly Statement[]): string[] {
  return statements.flatMap((s) => actionsOf(s).flatMap((a) => resourcesOf(s).map((r) => `${a} on ${rendered(r)}`)));
}

/** The queue policy statement that refuses requests over plain HTTP, if the queue/bucket/topic has one. */
function denyInsecureTransport(statements: readonly Statement[]): Statement | undefined {
  return statements.find((s) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false');
}

beforeAll(() => {
  const built = buildTestStack(new App(), 'Test', { dataBucket: true });
  ({ stack, jobs, workers } = built);
  dataBucket = built.bucket!;
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources;
});

describe('the public API', () => {
  it('lists the workers and jobs in the order they were added, each job with the worker that runs it', () => {
    expect([...jobs.workers.keys()]).toEqual(['exports', 'occurrence-digest', 'cleanup']);
    expect([...jobs.jobs.keys()]).toEqual(ALL_JOBS.map((j) => j.id));
    expect([...jobs.jobs.values()].map((j) => j.worker.workerId)).toEqual([
      'exports',
      'exports',
      'occurrence-digest',
      'cleanup',
    ]);
    for (const id of WORKER_IDS) expect(workers[id].jobs).toEqual(EXPECTED[id].jobs);
  });
});

describe('schedules', () => {
  const byJob = () =>
    Object.fromEntries(ofType('AWS::Scheduler::Schedule').map(([, r]) => [r.Properties.Name, r.Properties]));

  it('creates one schedule per enabled job, named by the job id, and none for a paused one', () => {
    expect(Object.keys(byJob()).sort()).toEqual([DIGEST.id, HOURLY.id, WEEKLY.id].sort());
    expect(jobs.schedules.schedules.has(PAUSED.id)).toBe(false);
  });

  it("invokes the trigger with the schedule event: the key, the job's worker and its route, its deadline, retention and catch-up window", () => {
    const triggerId = logicalId(jobs.triggerFunction);
    const inputs = Object.fromEntries(
      Object.entries(byJob()).map(([name, props]) => {
        expect(props.Target.Arn).toEqual(getAttArn(triggerId));
        return [name, JSON.parse(rendered(props.Target.Input))];
      }),
    );
    const event = (
      jobId: string,
      worker: WorkerId,
      deadlineSeconds: number,
      retentionDays: number,
      lateAfterSeconds: number,
    ) => ({
      jobId,
      scheduledTime: '<aws.scheduler.scheduled-time>',
      worker,
      // The worker's route (a Ref to its queue, and its own stuck threshold): no function is told every worker's.
      queueUrl: `\${${logicalId(workers[worker].queue)}}`,
      stuckAfterSeconds: EXPECTED[worker].stuckAfter,
      deadlineSeconds,
      retentionDays,
      // No catch-up window configured: the deadline, past which no attempt could start anyway.
      catchupWindowSeconds: deadlineSeconds,
      // No lateAfter configured: the flexible window plus 5 minutes.
      lateAfterSeconds,
      // The default policy, for operators to read (describe, the console).
      overlap: 'skip',
    });
    expect(inputs).toEqual({
      [WEEKLY.id]: event(WEEKLY.id, 'exports', 21_600, 90, 300),
      [HOURLY.id]: event(HOURLY.id, 'exports', 3600, 90, 15 * 60 + 300),
      [DIGEST.id]: event(DIGEST.id, 'occurrence-digest', 21_600, 30, 300),
    });
  });

  it("carries each job's expression, time zone, flexible window, retry policy and the schedules' group", () => {
    const groupId = logicalId(jobs.schedules.group);
    const schedules = byJob();
    expect(schedules[WEEKLY.id]).toMatchObject({
      ScheduleExpression: 'cron(0 3 ? * MON *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: { RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 } },
    });
    expect(schedules[HOURLY.id]).toMatchObject({
      ScheduleExpression: 'rate(1 hour)',
      ScheduleExpressionTimezone: 'Etc/UTC',
      FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 15 },
      Target: { RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 } },
    });
    const groupName = resources[groupId].Properties.Name;
    expect(groupName).toEqual(expect.any(String));
    for (const props of Object.values(schedules)) expect(props.GroupName).toBe(groupName);
  });

  it('sends undeliverable occurrences to a standard (non-FIFO), encrypted dead-letter queue', () => {
    const dlqId = logicalId(jobs.schedules.deadLetterQueue);
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
    table = propsOf(jobs.table);
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
    expect(resources[logicalId(jobs.table)].DeletionPolicy).toBe('Retain');
    expect(resources[logicalId(jobs.reportBucket)].DeletionPolicy).toBe('Retain');
  });
});

describe('workers', () => {
  it.each(WORKER_IDS)('%s: its function has the memory and timeout given or derived from its jobs', (id) => {
    const fn = propsOf(workers[id].function);
    expect({ timeout: fn.Timeout, memory: fn.MemorySize, arch: fn.Architectures }).toEqual({
      timeout: EXPECTED[id].timeout,
      memory: EXPECTED[id].memory,
      arch: [EXPECTED[id].arch],
    });
    expect(workers[id].limits().functionTimeoutSeconds).toBe(EXPECTED[id].timeout);
  });

  it.each(WORKER_IDS)(
    "%s: its queue's visibility timeout and redrive limit come from its own timeout and jobs, into its own DLQ",
    (id) => {
      const worker = workers[id];
      const queue = propsOf(worker.queue);
      const settings = [...parseJobSettingsList(envOf(worker.function).JOB_SETTINGS, 'JOB_SETTINGS').values()];
      const limits = workerLimits(settings, EXPECTED[id].timeout);
      expect({ visibility: queue.VisibilityTimeout, redrive: queue.RedrivePolicy }).toEqual({
        visibility: EXPECTED[id].visibility,
        redrive: {
          deadLetterTargetArn: getAttArn(logicalId(worker.deadLetterQueue)),
          maxReceiveCount: EXPECTED[id].maxReceiveCount,
        },
      });
      expect(limits).toEqual({
        functionTimeoutSeconds: EXPECTED[id].timeout,
        queueVisibilityTimeoutSeconds: EXPECTED[id].visibility,
        maxReceiveCount: EXPECTED[id].maxReceiveCount,
      });
      // SQS with Lambda: at least 6 times the function timeout; AWS's floor of 5 receives.
      expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * EXPECTED[id].timeout);
      expect(queue.RedrivePolicy.maxReceiveCount).toBeGreaterThanOrEqual(5);
    },
  );

  it('have a dead-letter queue each', () => {
    const dlqs = WORKER_IDS.map((id) => logicalId(workers[id].deadLetterQueue));
    expect(new Set(dlqs).size).toBe(WORKER_IDS.length);
    const shared = [jobs.triggerDeadLetterQueue, jobs.notifierFailureQueue, jobs.schedules.deadLetterQueue];
    for (const q of shared) expect(dlqs).not.toContain(logicalId(q));
  });

  it.each(WORKER_IDS)(
    '%s: its function consumes its own queue in batches with partial batch responses, so one failed message does not retry the others',
    (id) => {
      const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(
        ([, r]) => r.Properties.FunctionName.Ref === logicalId(workers[id].function),
      );
      expect(mappings.map(([, m]) => m.Properties)).toEqual([
        expect.objectContaining({
          EventSourceArn: getAttArn(logicalId(workers[id].queue)),
          BatchSize: 5,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        }),
      ]);
    },
  );

  it.each(WORKER_IDS)("%s: its environment names its own queue, its id, and only its own jobs' settings", (id) => {
    const worker = workers[id];
    const env = envOf(worker.function);
    expect(Object.keys(env).sort()).toEqual(
      [
        'DETAILED_METRICS', // the stack has the dashboard, which graphs them
        'JOB_QUEUE_URL',
        'JOB_SETTINGS',
        'NODE_OPTIONS',
        'OCCURRENCE_TABLE_NAME',
        'POWERTOOLS_METRICS_NAMESPACE',
        'REPORT_BUCKET_NAME',
        'WORKER_ID',
        ...(id === 'cleanup' ? ['CLEANUP_MODE'] : []),
      ].sort(),
    );
    expect(env).toMatchObject({
      OCCURRENCE_TABLE_NAME: { Ref: logicalId(jobs.table) },
      JOB_QUEUE_URL: { Ref: logicalId(worker.queue) },
      REPORT_BUCKET_NAME: { Ref: logicalId(jobs.reportBucket) },
      WORKER_ID: id,
      POWERTOOLS_METRICS_NAMESPACE: 'ScheduledJobs/Test',
    });
    const settings = parseJobSettingsList(env.JOB_SETTINGS, 'JOB_SETTINGS');
    const own = ALL_JOBS.filter((j) => (EXPECTED[id].jobs as readonly string[]).includes(j.id));
    expect([...settings.values()]).toEqual(own.map(settingsOf));
  });

  it('JOB_SETTINGS leaves the defaults out', () => {
    const raw = (id: WorkerId) => JSON.parse(envOf(workers[id].function).JOB_SETTINGS);
    expect(raw('exports')).toEqual([
      { id: WEEKLY.id, leaseSeconds: 300, heartbeatSeconds: 90, timeoutSeconds: 540, retry: { maxAttempts: 3 } },
      // 300 s is the default timeout.
      { id: HOURLY.id, retry: { maxAttempts: 8, deadlineSeconds: 3600 } },
    ]);
    expect(raw('occurrence-digest')).toEqual([{ id: DIGEST.id, timeoutSeconds: 120, retentionDays: 30 }]);
    expect(raw('cleanup')).toEqual([
      { id: PAUSED.id, leaseSeconds: 600, heartbeatSeconds: 60, timeoutSeconds: 60, retry: { maxAttempts: 1 } },
    ]);
  });

  it("passes the user's own variables through", () => {
    expect(envOf(workers.cleanup.function).CLEANUP_MODE).toBe('dry-run');
  });

  it("no function's environment carries the settings of every job, and the shared ones carry none", () => {
    for (const [id, fn] of ofType('AWS::Lambda::Function')) {
      const env = fn.Properties.Environment.Variables;
      const worker = WORKER_IDS.find((w) => logicalId(workers[w].function) === id);
      if (worker === undefined) {
        expect(env.JOB_SETTINGS, id).toBeUndefined();
        continue;
      }
      const settingsIds = JSON.parse(env.JOB_SETTINGS).map((s: { id: string }) => s.id);
      expect(settingsIds, id).toEqual(EXPECTED[worker].jobs);
      expect(settingsIds.length, id).toBeLessThan(ALL_JOBS.length);
    }
  });
});

describe('trigger and reconciler', () => {
  it("are told no worker's route: the reconciler only the shortest stuck threshold, which picks its candidates", () => {
    expect(envOf(jobs.triggerFunction).WORKERS).toBeUndefined();
    expect(envOf(jobs.reconcilerFunction).WORKERS).toBeUndefined();
    expect(envOf(jobs.reconcilerFunction).SHORTEST_STUCK_AFTER_SECONDS).toBe(
      String(Math.min(...WORKER_IDS.map((id) => EXPECTED[id].stuckAfter))),
    );
  });

  it('have exactly the variables they need', () => {
    expect(Object.keys(envOf(jobs.triggerFunction)).sort()).toEqual([
      'NODE_OPTIONS',
      'OCCURRENCE_TABLE_NAME',
      'POWERTOOLS_METRICS_NAMESPACE',
      // An event without a route (a run-time schedule projected before routes were) finds it in its job's template.
      'SCHEDULE_GROUP',
    ]);
    expect(Object.keys(envOf(jobs.reconcilerFunction)).sort()).toEqual([
      'NODE_OPTIONS',
      'OCCURRENCE_TABLE_NAME',
      'POWERTOOLS_METRICS_NAMESPACE',
      'RECONCILE_THRESHOLDS',
      'REPORT_BUCKET_NAME',
      'REPORT_READY_TOPIC_ARN',
      // The late check reads the DISABLED schedules of the stack's group (and a route a row lacks, its job's).
      'SCHEDULE_GROUP',
      'SHORTEST_STUCK_AFTER_SECONDS',
    ]);
    expect(Object.keys(envOf(jobs.notifierFunction)).sort()).toEqual([
      'NODE_OPTIONS',
      'OCCURRENCE_TABLE_NAME',
      'POWERTOOLS_METRICS_NAMESPACE',
      'REPORT_BUCKET_NAME',
      'REPORT_READY_TOPIC_ARN',
    ]);
  });

  it("only the trigger may put rows; only the trigger, the reconciler and the queue's own worker may send to a worker queue", () => {
    const queueOwner = new Map(
      WORKER_IDS.map((id) => [
        JSON.stringify(getAttArn(logicalId(workers[id].queue))),
        logicalId(workers[id].function.role),
      ]),
    );
    for (const [id, policy] of ofType('AWS::IAM::Policy')) {
      const roleId = policy.Properties.Roles[0].Ref;
      for (const statement of policy.Properties.PolicyDocument.Statement) {
        const actions = actionsOf(statement);
        if (actions.includes('dynamodb:PutItem')) expect(roleId, id).toBe(logicalId(jobs.triggerFunction.role));
        const owner = queueOwner.get(JSON.stringify(statement.Resource));
        // The worker sends the buffered head's message to its own queue when it releases a job's running slot.
        if (actions.includes('sqs:SendMessage') && owner !== undefined)
          expect([logicalId(jobs.triggerFunction.role), logicalId(jobs.reconcilerFunction.role), owner], id).toContain(
            roleId,
          );
      }
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
      ([, r]) => r.Properties.FunctionName.Ref === logicalId(jobs.notifierFunction),
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
        Properties: { FunctionName: { Ref: logicalId(jobs.notifierFunction) } },
      }),
    )[0] as { Properties: Record<string, unknown> };
    // A bounded retry count would drop announcements during an outage; unset means until the record expires.
    expect(mapping.Properties.MaximumRetryAttempts ?? -1).toBe(-1);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [logicalId(jobs.table), 'StreamArn'] },
      FunctionName: { Ref: logicalId(jobs.notifierFunction) },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 10,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: getAttArn(logicalId(jobs.notifierFailureQueue)) } },
    });
  });
});

describe('report bucket and topic', () => {
  it('blocks all public access and refuses plain HTTP', () => {
    const bucketId = logicalId(jobs.reportBucket);
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
    const topicId = logicalId(jobs.reportReadyTopic);
    expect(resources[topicId].Properties).toMatchObject({ FifoTopic: true, ContentBasedDeduplication: false });
    expect(resources[topicId].Properties.TopicName).toMatch(/\.fifo$/);
    const [[, topicPolicy]] = ofType('AWS::SNS::TopicPolicy').filter(([, p]) =>
      p.Properties.Topics.some((t) => t.Ref === topicId),
    );
    expect(denyInsecureTransport(topicPolicy.Properties.PolicyDocument.Statement)).toBeDefined();
    const queueId = logicalId(jobs.reportReadyQueue);
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
  it('are all encrypted and refuse plain HTTP: four shared, and a queue and a dead-letter queue per worker', () => {
    const queues = ofType('AWS::SQS::Queue');
    expect(queues.length).toBe(4 + 2 * WORKER_IDS.length);
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
  it('all run on nodejs24.x, on arm64 unless the worker says otherwise, with a log retention', () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.length).toBe(3 + WORKER_IDS.length);
    for (const [id, fn] of functions) {
      expect(fn.Properties.Runtime, id).toBe('nodejs24.x');
      const arch = id === logicalId(workers.cleanup.function) ? 'x86_64' : 'arm64';
      expect(fn.Properties.Architectures, id).toEqual([arch]);
      const logGroup = resources[fn.Properties.LoggingConfig.LogGroup.Ref];
      expect(logGroup.Properties.RetentionInDays, id).toBeGreaterThan(0);
    }
  });

  it('trigger: retries async invocations twice, then keeps them in its own DLQ', () => {
    const triggerId = logicalId(jobs.triggerFunction);
    expect(resources[triggerId].Properties.DeadLetterConfig).toEqual({
      TargetArn: getAttArn(logicalId(jobs.triggerDeadLetterQueue)),
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: triggerId },
      MaximumRetryAttempts: 2,
    });
  });
});

describe('least privilege', () => {
  const tableArn = () => `\${${logicalId(jobs.table)}.Arn}`;
  const queueArn = (id: WorkerId) => `\${${logicalId(workers[id].queue)}.Arn}`;
  const bucketArn = () => `\${${logicalId(jobs.reportBucket)}.Arn}`;
  const dataBucketArn = () => `\${${logicalId(dataBucket)}.Arn}`;
  const CONSUME = [
    'sqs:ChangeMessageVisibility',
    'sqs:DeleteMessage',
    'sqs:GetQueueAttributes',
    'sqs:GetQueueUrl',
    'sqs:ReceiveMessage',
  ];

  it("no IAM policy grants an action wildcard, except the app's own bucket.grantRead", () => {
    const policies = ofType('AWS::IAM::Policy');
    expect(policies.length).toBeGreaterThan(0);
    for (const [id, policy] of policies) {
      for (const statement of policy.Properties.PolicyDocument.Statement) {
        const onDataBucket = resourcesOf(statement).every((r) => rendered(r).startsWith(dataBucketArn()));
        if (onDataBucket) continue;
        for (const action of actionsOf(statement)) expect(action, id).not.toContain('*');
      }
    }
  });

  it('each function has a role of its own, no managed policy, and may write logs only to its own log group', () => {
    const functions = ofType('AWS::Lambda::Function');
    const roleIds = new Set(functions.map(([, fn]) => fn.Properties.Role['Fn::GetAtt'][0]));
    expect(roleIds.size).toBe(functions.length);
    for (const [, role] of ofType('AWS::IAM::Role')) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    const fns = [
      jobs.triggerFunction,
      jobs.notifierFunction,
      jobs.reconcilerFunction,
      ...WORKER_IDS.map((id) => workers[id].function),
    ];
    for (const fn of fns) {
      const logGroupId = propsOf(fn).LoggingConfig.LogGroup.Ref;
      const logStatements = roleStatements(fn).filter((st) => actionsOf(st).some((a) => a.startsWith('logs:')));
      expect(logStatements.map((st) => [actionsOf(st).sort(), st.Resource])).toEqual([
        [LOG_WRITES, getAttArn(logGroupId)],
      ]);
    }
  });

  it("the trigger may only put occurrence rows, send to the workers' queues (and its own async DLQ), and read the group's schedules (a route an event lacks)", () => {
    const group = stack.resolve(jobs.schedules.group.scheduleGroupName);
    expect(grantsOf(grantStatements(jobs.triggerFunction)).sort()).toEqual(
      [
        `dynamodb:PutItem on ${tableArn()}`,
        `scheduler:GetSchedule on arn:*:scheduler:*:*:schedule/${group}/*`,
        ...WORKER_IDS.map((id) => `sqs:SendMessage on ${queueArn(id)}`),
        `sqs:SendMessage on \${${logicalId(jobs.triggerDeadLetterQueue)}.Arn}`,
      ].sort(),
    );
  });

  /** What every worker's role may do: its jobs' rows, its jobs' reports, its own queue. */
  const workerGrants = (id: WorkerId) => [
    `dynamodb:GetItem on ${tableArn()}`,
    `dynamodb:UpdateItem on ${tableArn()}`,
    `sqs:SendMessage on ${queueArn(id)}`,
    ...EXPECTED[id].jobs.flatMap((job) => [
      `s3:GetObject on ${bucketArn()}/reports/${job}/*`,
      `s3:PutObject on ${bucketArn()}/reports/${job}/*`,
      // A next holder aborts the streamed-report upload a lost lease left behind (long jobs).
      `s3:AbortMultipartUpload on ${bucketArn()}/reports/${job}/*`,
    ]),
    `s3:ListBucket on ${bucketArn()}`,
    ...CONSUME.map((a) => `${a} on ${queueArn(id)}`),
  ];

  it("a worker may read and update only its own jobs' rows (LeadingKeys), and the table only", () => {
    for (const id of WORKER_IDS) {
      const updates = grantStatements(workers[id].function).filter((s) => actionsOf(s).includes('dynamodb:UpdateItem'));
      expect(
        updates.map((s) => actionsOf(s)),
        id,
      ).toEqual([['dynamodb:GetItem', 'dynamodb:UpdateItem']]);
      expect(
        updates.map((s) => ({ Resource: s.Resource, Condition: s.Condition })),
        id,
      ).toEqual([
        {
          Resource: getAttArn(logicalId(jobs.table)),
          Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': EXPECTED[id].jobs } },
        },
      ]);
    }
  });

  it('a worker may read and write reports only under reports/<its job ids>/, and consume only its own queue', () => {
    expect(grantsOf(grantStatements(workers.cleanup.function)).sort()).toEqual(workerGrants('cleanup').sort());
    // The sample digest reads the occurrence rows (grantReadOccurrences): the status index by name, no index/*.
    expect(grantsOf(grantStatements(workers['occurrence-digest'].function)).sort()).toEqual(
      [
        ...workerGrants('occurrence-digest'),
        `dynamodb:Query on ${tableArn()}`,
        `dynamodb:Query on ${tableArn()}/index/byStatusShard`,
        `dynamodb:BatchGetItem on ${tableArn()}`,
        `dynamodb:GetItem on ${tableArn()}`,
      ].sort(),
    );
    // exports: bucket.grantRead(worker) of the app's own bucket, beside its own grants.
    const exportsGrants = grantsOf(grantStatements(workers.exports.function));
    expect(exportsGrants.filter((g) => !g.includes(dataBucketArn())).sort()).toEqual(workerGrants('exports').sort());
  });

  it("only the worker it was granted to may read the app's own bucket", () => {
    const readers = ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes(logicalId(dataBucket)))
      .map(([, p]) => p.Properties.Roles.map((r) => r.Ref));
    expect(readers).toEqual([[logicalId(workers.exports.function.role)]]);
    const granted = grantsOf(grantStatements(workers.exports.function)).filter((g) => g.includes(dataBucketArn()));
    expect(granted).toEqual(expect.arrayContaining([`s3:GetObject* on ${dataBucketArn()}/*`]));
  });

  it('the notifier may only read and mark rows, publish to the topic, read the stream and park failures', () => {
    const actions = grantStatements(jobs.notifierFunction).flatMap(actionsOf).sort();
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

  it("the reconciler may only query the status index, read and mark rows, send to the workers' queues and publish, and read the group's schedules", () => {
    const group = stack.resolve(jobs.schedules.group.scheduleGroupName);
    expect(grantsOf(grantStatements(jobs.reconcilerFunction)).sort()).toEqual(
      [
        `dynamodb:Query on ${tableArn()}/index/byStatusShard`,
        // The late check: a disabled schedule's job's newest row, and the schedules found DISABLED.
        `dynamodb:Query on ${tableArn()}`,
        'scheduler:ListSchedules on *',
        `scheduler:GetSchedule on arn:*:scheduler:*:*:schedule/${group}/*`,
        `dynamodb:BatchGetItem on ${tableArn()}`,
        `dynamodb:GetItem on ${tableArn()}`,
        `dynamodb:UpdateItem on ${tableArn()}`,
        `sns:Publish on \${${logicalId(jobs.reportReadyTopic)}}`,
        ...WORKER_IDS.map((id) => `sqs:SendMessage on ${queueArn(id)}`),
      ].sort(),
    );
  });
});

describe('reconciler', () => {
  it("runs every 5 minutes from an EventBridge rule, without Lambda's async retries (the next run is the retry)", () => {
    const fnId = logicalId(jobs.reconcilerFunction);
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

  it('gets its thresholds: unannounced after 25 h, and no look-back (the open shards hold every unannounced success)', () => {
    expect(JSON.parse(envOf(jobs.reconcilerFunction).RECONCILE_THRESHOLDS)).toEqual({
      unannouncedAfterSeconds: 25 * 3600,
      maxFixesPerRun: 200,
    });
  });
});

describe('alarms and dashboard', () => {
  const alarms = () => ofType('AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);
  const namespace = 'ScheduledJobs/Test';
  const dimensions = (...pairs: [string, unknown][]) => pairs.map(([Name, Value]) => ({ Name, Value }));
  const find = (metricName: string, dims: { Name: string; Value: unknown }[]) =>
    alarms().filter((a) => a.MetricName === metricName && JSON.stringify(a.Dimensions) === JSON.stringify(dims));
  const queueAlarm = (queue: IConstruct) =>
    find(
      'ApproximateNumberOfMessagesVisible',
      dimensions(['QueueName', { 'Fn::GetAtt': [logicalId(queue), 'QueueName'] }]),
    );
  const fnAlarm = (fn: IConstruct, metricName: string) =>
    alarms().filter(
      (a) =>
        a.Namespace === 'AWS/Lambda' &&
        a.MetricName === metricName &&
        JSON.stringify(a.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: { Ref: logicalId(fn) } }]),
    );
  const FIRES_ON_ONE = {
    Threshold: 1,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    TreatMissingData: 'notBreaching',
  };

  it('every function writes its metrics to the namespace the alarms watch', () => {
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      expect(fn.Properties.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE).toBe(namespace);
    }
  });

  it.each(WORKER_IDS)('%s: alarms on its DLQ, its errors and throttles, and on nothing else of its own', (id) => {
    const worker = workers[id];
    expect(queueAlarm(worker.deadLetterQueue)).toEqual([
      expect.objectContaining({ Namespace: 'AWS/SQS', Statistic: 'Maximum', ...FIRES_ON_ONE }),
    ]);
    expect(fnAlarm(worker.function, 'Errors')).toHaveLength(1);
    expect(fnAlarm(worker.function, 'Throttles')).toHaveLength(1);
    expect(Object.keys(worker.alarms).sort()).toEqual(['deadLetters', 'workerErrors', 'workerThrottles']);
    expect(worker.alarms).toBe(jobs.monitoring.workerAlarms(id));
    // The worker's metric methods return the metrics its alarms watch.
    const watched = (alarm: { metric: unknown } | undefined) => JSON.stringify(stack.resolve(alarm?.metric));
    expect(watched(worker.alarms.deadLetters)).toBe(JSON.stringify(stack.resolve(worker.metricDeadLetters())));
    expect(watched(worker.alarms.workerErrors)).toBe(JSON.stringify(stack.resolve(worker.metricErrors())));
    expect(find('OccurrencesFailed', dimensions(['service', 'scheduled-jobs'], ['worker', id]))).toEqual([]);
  });

  it('alarms once per stack on FAILED occurrences, lost leases and late occurrences of every worker', () => {
    const stackWide = dimensions(['component', 'workers'], ['service', 'scheduled-jobs']);
    for (const metricName of ['OccurrencesFailed', 'LeasesLost'])
      expect(find(metricName, stackWide), metricName).toEqual([
        expect.objectContaining({ Namespace: namespace, Statistic: 'Sum', Period: 300, ...FIRES_ON_ONE }),
      ]);
    expect(find('OccurrencesLate', stackWide)).toEqual([
      expect.objectContaining({ Namespace: namespace, Statistic: 'Maximum', Period: 300, ...FIRES_ON_ONE }),
    ]);
    expect(jobs.monitoring.sharedAlarms.failedOccurrences).toBeDefined();
  });

  it('alarm on the first message in each shared dead-letter queue, and on reconciler errors', () => {
    for (const queue of [jobs.triggerDeadLetterQueue, jobs.notifierFailureQueue, jobs.schedules.deadLetterQueue]) {
      expect(queueAlarm(queue), logicalId(queue)).toEqual([
        expect.objectContaining({ Namespace: 'AWS/SQS', Statistic: 'Maximum', ...FIRES_ON_ONE }),
      ]);
    }
    expect(fnAlarm(jobs.reconcilerFunction, 'Errors')).toHaveLength(1);
  });

  it('alarm once per stack on any reconciler fix (re-enqueue or late announcement), on { service, component: reconciler }', () => {
    const fixes = alarms().filter((a) => JSON.stringify(a.Metrics ?? []).includes('OccurrencesRequeued'));
    expect(fixes).toHaveLength(1);
    const metrics = fixes[0].Metrics.filter((m) => m.MetricStat !== undefined);
    expect(metrics.map((m) => m.MetricStat.Metric.MetricName).sort()).toEqual([
      'OccurrencesRequeued',
      'ReportsReannounced',
    ]);
    for (const m of metrics) {
      expect(m.MetricStat.Metric).toMatchObject({
        Namespace: namespace,
        Dimensions: dimensions(['component', 'reconciler'], ['service', 'scheduled-jobs']),
      });
    }
    expect(fixes[0].Threshold).toBe(1);
  });

  it('no alarm is per job: none watches a jobId dimension, and there are 8 per stack and 3 per worker', () => {
    for (const a of alarms()) expect(JSON.stringify(a)).not.toContain('"jobId"');
    expect(alarms().length).toBe(8 + 3 * WORKER_IDS.length);
  });

  it('send every alarm to the alarm topic, which has no subscription without alarmEmail', () => {
    const topicId = logicalId(jobs.monitoring.alarmTopic as IConstruct);
    for (const a of alarms()) expect(a.AlarmActions).toEqual([{ Ref: topicId }]);
    expect(ofType('AWS::SNS::Subscription').filter(([, r]) => r.Properties.Protocol === 'email')).toEqual([]);
  });

  it('subscribe the e-mail address given (as a prop, or as CDK context in the sample stack), and refuse one that is not an address', () => {
    const withProp = new Stack(unbundledApp(), 'WithEmail');
    addJobTo(new ScheduledJobs(withProp, 'Jobs', { alarms: { emailAddresses: ['oncall@example.com'] } }), {
      ...DIGEST,
      entry: SAMPLE_DIGEST_ENTRY,
    });
    Template.fromStack(withProp).hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
    });
    const sample = new ScheduledJobsStack(unbundledApp({ alarmEmail: 'oncall@example.com' }), 'Sample', {
      jobs: sampleJobs,
    });
    Template.fromStack(sample).hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
    });
    expect(() => new ScheduledJobsStack(unbundledApp({ alarmEmail: 'oncall' }), 'Bad', { jobs: sampleJobs })).toThrow(
      /alarms\.emailAddresses\[0\].*"oncall"/,
    );
  });

  it("a dashboard has a row per worker (its occurrences, retries, leases, durations, function and DLQ) and every worker's occurrences", () => {
    const [[, dashboard]] = ofType('AWS::CloudWatch::Dashboard');
    const body = rendered(dashboard.Properties.DashboardBody);
    for (const id of WORKER_IDS) {
      expect(body).toContain(`## Worker ${id}`);
      expect(body).toContain(`${id}: occurrences`);
      expect(body).toContain(`\${${logicalId(workers[id].function)}}`);
      expect(body).toContain(`\${${logicalId(workers[id].deadLetterQueue)}.QueueName}`);
    }
    for (const metric of [
      'OccurrencesStarted',
      'OccurrencesSucceeded',
      'OccurrencesFailed',
      'RetriesScheduled',
      'ExtendFailures',
      'LeasesLost',
      'JobDuration',
      'ApproximateNumberOfMessagesVisible',
      'Throttles',
    ]) {
      expect(body).toContain(metric);
    }
    // Every worker by its own dimension: one search, so a worker adds no line to the shared graph; no job's set.
    expect(body).toContain(`SEARCH('{${namespace},service,worker} MetricName=\\"OccurrencesSucceeded\\"'`);
    expect(body).not.toContain('service,jobId');
    expect(body).not.toContain(`## ${WEEKLY.id}`);
  });

  it("every alarm on the functions' metrics watches a dimension set they write: { service, component }", () => {
    type Dimensions = { Name: string; Value: unknown }[];
    const written = (dims: Dimensions) => {
      const byName = Object.fromEntries(dims.map((d) => [d.Name, d.Value]));
      const names = Object.keys(byName).sort().join(',');
      if (byName.service !== 'scheduled-jobs') return false;
      if (names === 'service,worker') return (WORKER_IDS as readonly unknown[]).includes(byName.worker);
      return names === 'component,service' && ['trigger', 'reconciler', 'workers'].includes(byName.component as string);
    };
    const watched = alarms().flatMap((a) => [
      ...(a.Namespace === namespace ? [a.Dimensions as unknown as Dimensions] : []),
      ...((a.Metrics ?? []) as unknown as TemplateNode[])
        .map((m) => m.MetricStat?.Metric)
        .filter((m) => m?.Namespace === namespace)
        .map((m) => m.Dimensions as unknown as Dimensions),
    ]);
    // Over every worker: FAILED occurrences, lost leases, late occurrences; the reconciler's two repairs.
    expect(watched.length).toBeGreaterThanOrEqual(3 + 2);
    for (const dims of watched) expect(written(dims), JSON.stringify(dims)).toBe(true);
  });

  it('makes no dashboard, and no DashboardName output, unless asked (dashboard: true)', () => {
    const sample = Template.fromStack(
      new ScheduledJobsStack(unbundledApp(), 'NoDashboard', { jobs: sampleJobs }),
    ).toJSON();
    expect(
      Object.values(sample.Resources).filter((r) => (r as TemplateResource).Type === 'AWS::CloudWatch::Dashboard'),
    ).toEqual([]);
    expect(Object.keys(sample.Outputs)).not.toContain(STACK_OUTPUTS.dashboard);
    expect(Object.keys(template.toJSON().Outputs)).toContain(STACK_OUTPUTS.dashboard);
  });
});

describe('outputs', () => {
  it('are the fixed keys and one WorkerQueue<n> per worker, described by its id', () => {
    const outputs = template.toJSON().Outputs;
    // The registry's output exists only with a job that takes run-time schedules (runtime-schedules.test.ts).
    const fixed = Object.entries(STACK_OUTPUTS)
      .filter(([key]) => key !== 'workerQueuePrefix' && key !== 'scheduleRegistryTable')
      .map(([, name]) => name);
    expect(Object.keys(outputs).sort()).toEqual([...fixed, 'WorkerQueue1', 'WorkerQueue2', 'WorkerQueue3'].sort());
    expect(outputs.OccurrenceTableName.Value).toEqual({ Ref: logicalId(jobs.table) });
    expect(outputs.ScheduleGroupName.Value).toBe(resources[logicalId(jobs.schedules.group)].Properties.Name);
    WORKER_IDS.forEach((id, i) => {
      expect(outputs[`WorkerQueue${i + 1}`]).toEqual({ Description: id, Value: { Ref: logicalId(workers[id].queue) } });
    });
  });

  it('a second ScheduledJobs in the same stack needs an outputPrefix of its own', () => {
    const other = new Stack(unbundledApp(), 'Twice');
    addJobTo(new ScheduledJobs(other, 'Jobs'), { ...DIGEST, entry: SAMPLE_DIGEST_ENTRY });
    expect(problem(() => new ScheduledJobs(other, 'MoreJobs'))).toMatch(
      /ScheduledJobs Twice\/MoreJobs\.outputPrefix: the stack has outputs named with the prefix "" already/,
    );
  });

  it('two ScheduledJobs in one stack, each with its prefixed outputs, and one without outputs', () => {
    const twice = new Stack(unbundledApp(), 'Twice');
    const billing = new ScheduledJobs(twice, 'Billing', { outputPrefix: 'Billing' });
    const reports = new ScheduledJobs(twice, 'Reports', { outputPrefix: 'Reports' });
    const quiet = new ScheduledJobs(twice, 'Quiet', { stackOutputs: false });
    for (const s of [billing, reports, quiet]) addJobTo(s, { ...DIGEST, entry: SAMPLE_DIGEST_ENTRY });
    const outputs = Template.fromStack(twice).toJSON().Outputs;
    const names = Object.keys(outputs);
    for (const prefix of ['Billing', 'Reports']) {
      expect(names).toContain(`${prefix}OccurrenceTableName`);
      expect(names).toContain(`${prefix}WorkerQueue1`);
      expect(outputs[`${prefix}WorkerQueue1`].Description).toBe(DIGEST.id);
    }
    expect(names.filter((n) => !n.startsWith('Billing') && !n.startsWith('Reports'))).toEqual([]);
    expect(outputs.BillingOccurrenceTableName.Value).not.toEqual(outputs.ReportsOccurrenceTableName.Value);
    expect(problem(() => new ScheduledJobs(twice, 'Bad', { outputPrefix: 'billing-jobs' }))).toContain(
      'ScheduledJobs Twice/Bad.outputPrefix: must be up to 64 letters or digits',
    );
  });
});

describe('synth errors', () => {
  /** A ScheduledJobs with the exports worker (given 600 s), not bundled. */
  function withExports() {
    const s = new ScheduledJobs(new Stack(unbundledApp(), 'Errors'), 'Jobs');
    const exportsWorker = s.addWorker('exports', { entry: WORKER_ENTRY, timeout: Duration.minutes(10) });
    return { s, exportsWorker };
  }

  it('a job naming a worker by an id the ScheduledJobs does not have', () => {
    const { s } = withExports();
    expect(problem(() => addJobTo(s, { ...WEEKLY, worker: 'export' }))).toContain(
      'addJob(weekly-export).worker: must be a worker of this ScheduledJobs (it has: exports), from addWorker; got "export"',
    );
  });

  it('a job naming a JobWorker of another ScheduledJobs, even one with the id of its own', () => {
    const { s } = withExports();
    const elsewhere = new ScheduledJobs(new Stack(unbundledApp(), 'Elsewhere'), 'Jobs');
    const theirs = elsewhere.addWorker('exports', { entry: WORKER_ENTRY });
    const unknown = elsewhere.addWorker('reports', { entry: WORKER_ENTRY });
    expect(problem(() => addJobTo(s, { ...WEEKLY, worker: theirs }))).toContain(
      'addJob(weekly-export).worker: must be a worker of this ScheduledJobs (it has: exports), from addWorker; got worker "exports" of another ScheduledJobs',
    );
    expect(problem(() => addJobTo(s, { ...WEEKLY, worker: unknown }))).toContain(
      'got worker "reports" of another ScheduledJobs',
    );
  });

  it('two workers with the same id, by addWorker or by a job with its own entry', () => {
    const { s } = withExports();
    expect(problem(() => s.addWorker('exports', { entry: WORKER_ENTRY }))).toContain(
      'addWorker(exports): a worker with the id "exports" exists already',
    );
    expect(problem(() => addJobTo(s, { ...DIGEST, id: 'exports', entry: SAMPLE_DIGEST_ENTRY }))).toContain(
      'addJob(exports).entry: a worker with the id "exports" exists already',
    );
  });

  it("a job whose timeout + 30 s exceeds its worker's given timeout; exactly the timeout is fine", () => {
    const { s, exportsWorker } = withExports();
    expect(problem(() => addJobTo(s, { ...WEEKLY, timeout: Duration.seconds(571), worker: exportsWorker }))).toContain(
      'addJob(weekly-export).timeout: 571 s plus 30 s to record the outcome exceeds the timeout of worker "exports" (600 s)',
    );
    expect(s.jobs.has(WEEKLY.id)).toBe(false);
    addJobTo(s, { ...WEEKLY, timeout: Duration.seconds(570), worker: exportsWorker });
    expect(exportsWorker.settings.map((j) => j.timeoutSeconds)).toEqual([570]);
  });

  it("a cancelOther job: its worker's timeout must also hold the wait for the cancelled run's lease", () => {
    const { s, exportsWorker } = withExports();
    const cancelling = { ...WEEKLY, overlap: OverlapPolicy.CANCEL_OTHER, worker: exportsWorker }; // lease 300 s
    expect(problem(() => addJobTo(s, { ...cancelling, timeout: Duration.seconds(271) }))).toContain(
      'addJob(weekly-export).timeout: 271 s plus leaseDuration (300 s, the wait of overlap cancelOther) plus 30 s ' +
        'to record the outcome exceeds the timeout of worker "exports" (600 s)',
    );
    addJobTo(s, { ...cancelling, timeout: Duration.seconds(270) });
    expect(exportsWorker.settings.map((j) => j.timeoutSeconds)).toEqual([270]);
    // Without a timeout given, the worker's is derived, up to Lambda's 900 s.
    expect(
      problem(() =>
        addJobTo(s, {
          ...DIGEST,
          overlap: OverlapPolicy.CANCEL_OTHER,
          timeout: Duration.seconds(800),
          entry: SAMPLE_DIGEST_ENTRY,
        }),
      ),
    ).toContain(
      `addJob(${DIGEST.id}).timeout: 800 s plus leaseDuration (120 s, the wait of overlap cancelOther) plus 30 s ` +
        "to record the outcome exceeds Lambda's maximum timeout",
    );
  });

  it('a job with both worker and entry, or with neither', () => {
    const { s } = withExports();
    expect(problem(() => addJobTo(s, { ...WEEKLY, worker: 'exports', entry: SAMPLE_DIGEST_ENTRY }))).toContain(
      'addJob(weekly-export): give either worker or entry, not both',
    );
    expect(problem(() => addJobTo(s, { ...WEEKLY }))).toContain(
      'addJob(weekly-export): give worker (from addWorker) or entry',
    );
  });

  it('a duplicate job id', () => {
    const { s } = withExports();
    addJobTo(s, { ...WEEKLY, worker: 'exports' });
    expect(problem(() => addJobTo(s, { ...HOURLY, id: WEEKLY.id, worker: 'exports' }))).toContain(
      'addJob(weekly-export): a job with the id "weekly-export" exists already',
    );
  });

  it("a worker timeout above Lambda's 900 s", () => {
    const { s } = withExports();
    expect(problem(() => s.addWorker('slow', { entry: WORKER_ENTRY, timeout: Duration.seconds(901) }))).toContain(
      "addWorker(slow).timeout: must be at most 900 s (Lambda's limit), got 901 s",
    );
    expect(s.addWorker('slowest', { entry: WORKER_ENTRY, timeout: Duration.seconds(900) }).limits()).toMatchObject({
      functionTimeoutSeconds: 900,
    });
  });

  it('a worker id that is not an id, and a worker without an entry', () => {
    const { s } = withExports();
    expect(problem(() => s.addWorker('nightly exports', { entry: WORKER_ENTRY }))).toContain(
      "addWorker(nightly exports): the worker id must be 1-64 letters, digits, '-' or '_' starting with a letter or digit",
    );
    expect(problem(() => s.addWorker('-exports', { entry: WORKER_ENTRY }))).toContain('addWorker(-exports)');
    expect(problem(() => s.addWorker('nightly', { entry: '' }))).toContain(
      'addWorker(nightly).entry: must be the path of the entry file',
    );
  });

  it("a second job for a worker built from a job's own entry: defineJob runs one job", () => {
    const { s } = withExports();
    addJobTo(s, { ...DIGEST, entry: SAMPLE_DIGEST_ENTRY });
    expect(problem(() => addJobTo(s, { ...HOURLY, worker: DIGEST.id }))).toContain(
      `addJob(${HOURLY.id}).worker: worker "${DIGEST.id}" was built from job "${DIGEST.id}"'s own entry, and defineJob runs one job`,
    );
  });

  it('a job with its own entry that its worker could not run leaves no worker behind', () => {
    const app = unbundledApp();
    const s = new ScheduledJobs(new Stack(app, 'Orphan'), 'Jobs', {
      defaultWorkerOptions: { timeout: Duration.seconds(60) },
    });
    expect(
      problem(() => addJobTo(s, { ...DIGEST, timeout: Duration.seconds(120), entry: SAMPLE_DIGEST_ENTRY })),
    ).toContain(
      `addJob(${DIGEST.id}).timeout: 120 s plus 30 s to record the outcome exceeds the timeout of worker "${DIGEST.id}" (60 s)`,
    );
    expect([...s.workers.keys()]).toEqual([]);
    // Corrected, the same job is accepted: nothing of the first try is in the way.
    expect(addJobTo(s, { ...DIGEST, timeout: Duration.seconds(30), entry: SAMPLE_DIGEST_ENTRY }).worker.workerId).toBe(
      DIGEST.id,
    );
  });

  it("a worker id that a shared queue's alarm carries", () => {
    const { s } = withExports();
    expect(problem(() => s.addWorker('TriggerDeadLetterQueue', { entry: WORKER_ENTRY }))).toContain(
      `addWorker(TriggerDeadLetterQueue): the id "TriggerDeadLetterQueue" is taken by a shared queue's alarm`,
    );
  });

  it('a worker without jobs fails the synth with its message, not an IAM one', () => {
    const app = unbundledApp();
    const s = new ScheduledJobs(new Stack(app, 'Idle'), 'Jobs');
    s.addWorker('exports', { entry: WORKER_ENTRY });
    s.addWorker('idle', { entry: WORKER_ENTRY });
    addJobTo(s, { ...WEEKLY, worker: 'exports' });
    expect(() => app.synth()).toThrow(/\[Idle\/Jobs\] addWorker\(idle\): the worker runs no job/);
  });

  it('a ScheduledJobs with no jobs fails the synth with its message', () => {
    const app = unbundledApp();
    const s = new ScheduledJobs(new Stack(app, 'Empty'), 'Jobs');
    s.addWorker('exports', { entry: WORKER_ENTRY });
    expect(() => app.synth()).toThrow(
      /Validation failed[\s\S]*\[Empty\/Jobs\] ScheduledJobs Empty\/Jobs: add at least one job \(addJob\)/,
    );
  });
});

describe('permissions cover every call the handlers make', () => {
  /** The IAM action each SDK command the adapters send needs (HeadObject is authorised by s3:GetObject). */
  const ACTION: Record<string, string> = {
    PutCommand: 'dynamodb:PutItem',
    UpdateCommand: 'dynamodb:UpdateItem',
    GetCommand: 'dynamodb:GetItem',
    QueryCommand: 'dynamodb:Query',
    BatchGetCommand: 'dynamodb:BatchGetItem',
    HeadObjectCommand: 's3:GetObject',
    GetObjectCommand: 's3:GetObject',
    PutObjectCommand: 's3:PutObject',
    SendMessageCommand: 'sqs:SendMessage',
    ChangeMessageVisibilityCommand: 'sqs:ChangeMessageVisibility',
    PublishCommand: 'sns:Publish',
  };

  /** One request a handler made: the action it needs, the resource it names, the row's partition key. */
  interface Call {
    readonly action: string;
    readonly resource: string;
    readonly leadingKey?: string;
  }

  /** Whether the statements allow the call: an Allow naming the action and the resource, its LeadingKeys met. */
  function allows(statements: readonly Statement[], call: Call): boolean {
    const glob = (pattern: string, value: string) =>
      new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(value);
    return statements.some((s) => {
      if (s.Effect !== 'Allow') return false;
      if (!actionsOf(s).some((a) => glob(a, call.action))) return false;
      if (!resourcesOf(s).some((r) => glob(rendered(r), call.resource))) return false;
      if (s.Condition === undefined) return true;
      const leadingKeys = s.Condition['ForAllValues:StringEquals']?.['dynamodb:LeadingKeys'];
      const onlyLeadingKeys =
        Object.keys(s.Condition).length === 1 &&
        Object.keys(s.Condition['ForAllValues:StringEquals'] ?? {}).length === 1;
      return (
        onlyLeadingKeys &&
        leadingKeys !== undefined &&
        call.leadingKey !== undefined &&
        (leadingKeys as unknown as string[]).includes(call.leadingKey)
      );
    });
  }

  it('grants each function, each worker its own, the actions its handler was seen to call, on the resources and rows it called them on', async () => {
    const seen = await callsByFunction();
    const roles: Record<string, lambda.IFunction> = {
      trigger: jobs.triggerFunction,
      notifier: jobs.notifierFunction,
      reconciler: jobs.reconcilerFunction,
      ...Object.fromEntries(WORKER_IDS.map((id) => [id, workers[id].function])),
    };
    for (const [name, calls] of Object.entries(seen)) {
      const statements = roleStatements(roles[name]);
      const missing = calls.filter((c) => !allows(statements, c));
      expect({ name, missing }).toEqual({ name, missing: [] });
    }
    // The paths above really ran: a lost grant would have been caught.
    const actions = (name: string) => seen[name].map((c) => c.action);
    expect(actions('trigger')).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'sqs:SendMessage']));
    expect(actions('occurrence-digest')).toEqual(
      expect.arrayContaining(['dynamodb:UpdateItem', 'dynamodb:Query', 's3:PutObject']),
    );
    expect(actions('exports')).toEqual(
      expect.arrayContaining(['dynamodb:UpdateItem', 's3:GetObject', 's3:PutObject', 'sqs:ChangeMessageVisibility']),
    );
    expect(actions('notifier')).toEqual(
      expect.arrayContaining(['dynamodb:GetItem', 'sns:Publish', 'dynamodb:UpdateItem']),
    );
    expect(actions('reconciler')).toEqual(
      expect.arrayContaining([
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'sqs:SendMessage',
        'dynamodb:GetItem',
        'sns:Publish',
      ]),
    );
    // And the check can fail: the digest's role may not write the exports' rows or reports.
    const digest = roleStatements(workers['occurrence-digest'].function);
    const exportsCall = seen.exports.find((c) => c.action === 'dynamodb:UpdateItem')!;
    expect(allows(digest, exportsCall)).toBe(false);
    expect(allows(digest, seen.exports.find((c) => c.action === 's3:PutObject')!)).toBe(false);
  });

  /**
   * Run the trigger, the workers (the real digest; the exports worker's hourly job, and its weekly job failing, then
   * retried) and the notifier and the reconciler over the harness; note each function's requests, naming the
   * stack's resources: the harness has one table, bucket, topic and queue, each a stand-in for the stack's.
   */
  async function callsByFunction(): Promise<Record<string, Call[]>> {
    const reader = new OperatorOccurrenceReader(
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
    const h = makeHarness({
      jobs: {
        [DIGEST.id]: occurrenceDigestJob(() => reader, [DIGEST.id, HOURLY.id, WEEKLY.id]),
        [HOURLY.id]: exportJobs['hourly-export'],
        [WEEKLY.id]: failing,
      },
    });
    const workerOf = (jobId: string) => jobs.jobs.get(jobId)!.worker.workerId as WorkerId;
    const seen: Record<string, Call[]> = {
      trigger: [],
      notifier: [],
      reconciler: [],
      exports: [],
      'occurrence-digest': [],
      cleanup: [],
    };
    /** Run `step` as `name` (a worker's runs name their job, whose worker's queue they change). */
    const as = async (name: string, step: () => Promise<unknown>, jobId?: string) => {
      const from = marks(h.aws);
      await step();
      seen[name].push(
        ...callsSince(h.aws, from, (msgJob) => workerOf(msgJob), jobId === undefined ? undefined : workerOf(jobId)),
      );
    };
    vi.useFakeTimers({ now: T0 });
    try {
      const key = (jobId: string, scheduledTime = SCHEDULED) => encodeEnvelope({ jobId, scheduledTime });
      for (const jobId of [DIGEST.id, HOURLY.id, WEEKLY.id])
        await as('trigger', () => h.trigger({ jobId, scheduledTime: SCHEDULED }));
      const before = { ...h.aws.row(DIGEST.id, SCHEDULED)!, status: 'RUNNING' };
      for (const jobId of [DIGEST.id, HOURLY.id, WEEKLY.id])
        await as(workerOf(jobId), () => h.deliver(key(jobId)), jobId);
      await as('notifier', () => h.streamChange(before, DIGEST.id, SCHEDULED));
      // Two minutes on: the failing job's second attempt looks for a committed report (a first attempt does not).
      vi.setSystemTime(T0 + 120_000);
      await as('exports', () => h.deliver(key(WEEKLY.id)), WEEKLY.id);
      // Past the fresh window: a stream record that old is announced from the row, read again, not from its image.
      vi.setSystemTime(T0 + FRESH_IMAGE_MS + 60_000);
      await as('notifier', () => h.streamChange(before, DIGEST.id, SCHEDULED));
      // A row the trigger recorded but could not enqueue, and a report the notifier never announced.
      h.aws.failAlways('SendMessage', faults.unavailable);
      await as('trigger', () =>
        h.trigger({ jobId: HOURLY.id, scheduledTime: '2026-11-30T07:00:00Z' }).catch(() => undefined),
      );
      h.aws.clearFaults();
      const { notifiedAt, notificationId, ...unannounced } = h.aws.row(DIGEST.id, SCHEDULED)!;
      h.aws.table.set(`${DIGEST.id}|2026-11-30T05:00:00Z`, { ...unannounced, scheduledTime: '2026-11-30T05:00:00Z' });
      vi.setSystemTime(T0 + 26 * 3_600_000);
      await as('reconciler', () => h.reconciler());
      return seen;
    } finally {
      h.aws.restore();
      vi.useRealTimers();
    }
  }

  type Marks = Record<'ddb' | 's3' | 'sqs' | 'sns', number>;
  const marks = (aws: FakeAws): Marks => ({
    ddb: aws.ddb.calls().length,
    s3: aws.s3.calls().length,
    sqs: aws.sqs.calls().length,
    sns: aws.sns.calls().length,
  });

  /**
   * The requests sent since `from`, each as the action and the stack resource it needs: a row's table and its job id,
   * an index, a report object, the queue of the message's job (or, for a visibility change, the worker's own queue).
   */
  function callsSince(
    aws: FakeAws,
    from: Marks,
    workerOfJob: (jobId: string) => WorkerId,
    ownWorker?: WorkerId,
  ): Call[] {
    const tableArn = `\${${logicalId(jobs.table)}.Arn}`;
    const queueArn = (id: WorkerId) => `\${${logicalId(workers[id].queue)}.Arn}`;
    const clients = { ddb: aws.ddb, s3: aws.s3, sqs: aws.sqs, sns: aws.sns };
    return (Object.keys(clients) as (keyof Marks)[]).flatMap((client) =>
      clients[client]
        .calls()
        .slice(from[client])
        .map((call): Call => {
          const command = call.args[0] as unknown as { constructor: { name: string }; input: Record<string, unknown> };
          const name = command.constructor.name;
          const action = ACTION[name];
          if (action === undefined) throw new Error(`a handler sent ${name}: add its IAM action to ACTION`);
          const input = command.input as {
            IndexName?: string;
            Key?: Record<string, string>;
            MessageBody?: string;
            KeyConditionExpression?: string;
          };
          switch (client) {
            case 'ddb':
              if (input.IndexName !== undefined) return { action, resource: `${tableArn}/index/${input.IndexName}` };
              return { action, resource: tableArn, leadingKey: input.Key?.jobId };
            case 's3':
              return { action, resource: `\${${logicalId(jobs.reportBucket)}.Arn}/${input.Key}` };
            case 'sqs':
              if (input.MessageBody !== undefined)
                return { action, resource: queueArn(workerOfJob(JSON.parse(input.MessageBody).jobId)) };
              return { action, resource: queueArn(ownWorker!) };
            default:
              return { action, resource: `\${${logicalId(jobs.reportReadyTopic)}}` };
          }
        }),
    );
  }
});
