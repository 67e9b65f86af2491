/**
 * lib/encryption.ts and ScheduledJobsProps.encryptionKey: a customer-managed key on every resource that keeps data
 * (found by type in the template, so a new queue or log group without it fails here), and the key's actions granted
 * exactly where an encrypted resource is read (Decrypt) or written (GenerateDataKey).
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { describe, expect, it } from 'vitest';
import { KEY_ACTIONS } from '../../lib/encryption';
import { OverlapPolicy } from '../../lib/job-props';
import { ScheduledJobs, type ScheduledJobsProps } from '../../lib/scheduled-jobs';
import { validationProblemsOf, WORKER_ENTRY } from './fixtures/test-stack';
import type { TemplateNode } from './template-json';

/**
 * Every kind of resource and grant the construct makes: a shared worker and a job's own, state-change events, a
 * paused-after-failures job, run-time schedules, and a viewer, an operator, a reports reader and a schedules manager.
 */
function keyedStack(props: Partial<ScheduledJobsProps> = {}) {
  const stack = new Stack(new App(), 'Keyed');
  const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
  const jobs = new ScheduledJobs(stack, 'Jobs', { encryptionKey: key, stateChangeEvents: true, ...props });
  const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
  const nightly = jobs.addJob('nightly', {
    schedule: ScheduleExpression.expression('cron(0 2 * * ? *)'),
    worker,
    pauseAfterFailures: 3,
    overlap: OverlapPolicy.BUFFER_ALL,
  });
  const weekly = jobs.addJob('weekly-report', { runtimeSchedules: true, worker });
  jobs.addJob('own', { schedule: ScheduleExpression.expression('rate(1 hour)'), entry: WORKER_ENTRY });
  const role = (id: string) => new iam.Role(stack, id, { assumedBy: new iam.AccountRootPrincipal() });
  jobs.grantViewJobs(role('Viewer'));
  jobs.grantOperateJobs(role('Operator'));
  nightly.grantReadReports(role('ReportsReader'));
  weekly.grantManageSchedules(role('SignupApp'));
  return { stack, key, jobs, template: Template.fromStack(stack) };
}

const resourcesOf = (template: Template, type: string) =>
  Object.entries(template.findResources(type)) as [string, { Properties: TemplateNode }][];

/** `{ Fn::GetAtt: [Key, Arn] }`, as the template names the key. */
const keyLogicalId = (stack: Stack, key: kms.Key) => stack.getLogicalId(key.node.defaultChild as kms.CfnKey);
const isKeyArn = (value: unknown, keyId: string) =>
  JSON.stringify(value) === JSON.stringify({ 'Fn::GetAtt': [keyId, 'Arn'] });

describe('ScheduledJobsProps.encryptionKey', () => {
  const { stack, key, template } = keyedStack();
  const keyId = keyLogicalId(stack, key);

  it.each([
    ['AWS::DynamoDB::Table', (p: TemplateNode) => p.SSESpecification?.KMSMasterKeyId, 2],
    ['AWS::SQS::Queue', (p: TemplateNode) => p.KmsMasterKeyId, 0],
    ['AWS::SNS::Topic', (p: TemplateNode) => p.KmsMasterKeyId, 2],
    ['AWS::Logs::LogGroup', (p: TemplateNode) => p.KmsKeyId, 0],
    [
      'AWS::S3::Bucket',
      (p: TemplateNode) =>
        p.BucketEncryption?.ServerSideEncryptionConfiguration?.[0]?.ServerSideEncryptionByDefault?.KMSMasterKeyID,
      1,
    ],
  ])('encrypts every %s with the key', (type, keyOf, atLeast) => {
    const resources = resourcesOf(template, type);
    expect(resources.length).toBeGreaterThanOrEqual(Math.max(atLeast, 1));
    const without = resources.filter(([, r]) => !isKeyArn(keyOf(r.Properties), keyId)).map(([id]) => id);
    expect(without).toEqual([]);
  });

  it('makes the tables CUSTOMER_MANAGED, the bucket SSE-KMS with a bucket key, the queues KMS', () => {
    for (const [, table] of resourcesOf(template, 'AWS::DynamoDB::Table'))
      expect(table.Properties.SSESpecification).toMatchObject({ SSEEnabled: true, SSEType: 'KMS' });
    const [[, bucket]] = resourcesOf(template, 'AWS::S3::Bucket');
    expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0]).toMatchObject({
      BucketKeyEnabled: true,
      ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' },
    });
    for (const [, queue] of resourcesOf(template, 'AWS::SQS::Queue'))
      expect(queue.Properties.SqsManagedSseEnabled).toBeUndefined();
  });

  it("lets CloudWatch Logs (this account and region's log groups) and CloudWatch alarms use a key of the app's own", () => {
    const [[, keyResource]] = resourcesOf(template, 'AWS::KMS::Key');
    const statements = keyResource.Properties.KeyPolicy.Statement as unknown as {
      Sid?: string;
      Principal: { Service?: unknown };
      Condition?: Record<string, Record<string, unknown>>;
    }[];
    const logs = statements.find((s) => s.Sid === 'ScheduledJobsLogGroups');
    expect(JSON.stringify(logs?.Principal.Service)).toContain('.amazonaws.com');
    expect(JSON.stringify(logs?.Principal.Service)).toContain('logs.');
    expect(JSON.stringify(logs?.Condition?.ArnLike?.['kms:EncryptionContext:aws:logs:arn'])).toContain(':log-group:*');
    expect(statements.find((s) => s.Sid === 'ScheduledJobsAlarmTopic')?.Principal.Service).toBe(
      'cloudwatch.amazonaws.com',
    );
    // The announcements' delivery to the encrypted ReportReadyQueue: SNS, scoped to the topic.
    expect(statements.some((s) => s.Principal.Service === 'sns.amazonaws.com')).toBe(true);
  });

  describe('grants', () => {
    const encrypted = new Set(
      ['AWS::DynamoDB::Table', 'AWS::SQS::Queue', 'AWS::SNS::Topic', 'AWS::S3::Bucket'].flatMap((type) =>
        resourcesOf(template, type).map(([id]) => id),
      ),
    );
    const writes =
      /^(dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)|s3:PutObject|sqs:SendMessage|sns:Publish)$/;
    const reads = /^(dynamodb:(GetItem|BatchGetItem|Query|Scan|GetRecords)|s3:GetObject\*?|sqs:ReceiveMessage)$/;
    /** GenerateDataKey, or the GenerateDataKey* aws-cdk-lib's own grants give (the stream's failure queue). */
    const generates = (action: string) => action.startsWith('kms:GenerateDataKey');
    /** Each role's statements, from every AWS::IAM::Policy attached to it. */
    const byRole = new Map<string, { actions: string[]; resources: string }[]>();
    for (const [, policy] of resourcesOf(template, 'AWS::IAM::Policy'))
      for (const roleRef of policy.Properties.Roles as unknown as { Ref: string }[])
        for (const s of policy.Properties.PolicyDocument.Statement as unknown as {
          Action: string | string[];
          Resource: unknown;
        }[])
          byRole.set(roleRef.Ref, [
            ...(byRole.get(roleRef.Ref) ?? []),
            { actions: [s.Action].flat(), resources: JSON.stringify(s.Resource) },
          ]);
    /** One of grantKeyUse's statements: exactly the read or the write actions. */
    const isKeyActions = (actions: string[]) =>
      [KEY_ACTIONS.read, KEY_ACTIONS.write].some((set) => [...set].sort().join() === [...actions].sort().join());
    const touches = (statement: { resources: string }) =>
      [...encrypted].some((id) => statement.resources.includes(`"${id}"`));
    /** What each role does to the encrypted resources, and what it may do with the key. */
    const roles = [...byRole].map(([role, statements]) => {
      const onData = statements.filter(touches).flatMap((s) => s.actions);
      const onKey = statements.filter((s) => s.resources.includes(`"${keyId}"`)).flatMap((s) => s.actions);
      return { role, writes: onData.some((a) => writes.test(a)), reads: onData.some((a) => reads.test(a)), onKey };
    });

    it('gives GenerateDataKey to every role that writes an encrypted resource', () => {
      const writers = roles.filter((r) => r.writes);
      expect(writers.map((r) => r.role)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^JobsTriggerRole/),
          expect.stringMatching(/^JobsNotifierRole/),
          expect.stringMatching(/^JobsReconcilerRole/),
          expect.stringMatching(/^JobsWorkersexportsFunctionRole/),
          expect.stringMatching(/^OperatorRole|^Operator/),
          expect.stringMatching(/^SignupApp/),
          expect.stringMatching(/^SchedulerRoleForTarget/),
        ]),
      );
      expect(writers.filter((r) => !r.onKey.some(generates)).map((r) => r.role)).toEqual([]);
    });

    it('gives Decrypt, and no GenerateDataKey, to the roles that only read', () => {
      const readers = roles.filter((r) => r.reads && !r.writes);
      expect(readers.map((r) => r.role)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^Viewer/), expect.stringMatching(/^ReportsReader/)]),
      );
      expect(readers.filter((r) => !r.onKey.includes('kms:Decrypt')).map((r) => r.role)).toEqual([]);
      expect(readers.filter((r) => r.onKey.some(generates)).map((r) => r.role)).toEqual([]);
    });

    it('gives the key to no role that touches no encrypted resource, and to none with a wildcard resource', () => {
      expect(roles.filter((r) => !r.reads && !r.writes && r.onKey.length > 0).map((r) => r.role)).toEqual([]);
      for (const [, statements] of byRole)
        for (const s of statements.filter((s) => s.actions.some((a) => a.startsWith('kms:'))))
          expect(s.resources).toContain(keyId);
    });

    it('grants each role the key in one statement of its own, not one per resource', () => {
      // The reconciler is granted the key for the table, the registry, the queues and the topic; the operator for the
      // table and each worker's queue. (A stream read adds aws-cdk-lib's own read statement beside it.)
      for (const [role, statements] of byRole) {
        const own = statements.filter((s) => isKeyActions(s.actions) && s.actions.includes('kms:GenerateDataKey'));
        expect(own.length, role).toBeLessThanOrEqual(1);
      }
    });

    it('uses exactly the read and write actions of KEY_ACTIONS in its own statements', () => {
      const own = [...byRole.values()].flat().filter((s) => isKeyActions(s.actions));
      // The trigger, notifier, reconciler, two workers, the schedules' role, viewer, operator, schedules manager.
      expect(own.length).toBeGreaterThanOrEqual(9);
      for (const s of own) expect(s.resources).toBe(JSON.stringify({ 'Fn::GetAtt': [keyId, 'Arn'] }));
    });
  });
});

describe('without encryptionKey (the default)', () => {
  it('keeps AWS-managed encryption and grants no KMS action', () => {
    const stack = new Stack(new App(), 'Default');
    const jobs = new ScheduledJobs(stack, 'Jobs', { stateChangeEvents: true });
    jobs.addJob('own', { schedule: ScheduleExpression.expression('rate(1 hour)'), entry: WORKER_ENTRY });
    jobs.grantOperateJobs(new iam.Role(stack, 'Operator', { assumedBy: new iam.AccountRootPrincipal() }));
    const template = Template.fromStack(stack);
    const json = JSON.stringify(template.toJSON());
    expect(json).not.toContain('kms:');
    template.allResourcesProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    template.allResourcesProperties('AWS::DynamoDB::Table', { SSESpecification: { SSEEnabled: true } });
  });
});

describe('encryptionKeyProblems', () => {
  it('refuses an alias, naming the property and why', () => {
    const stack = new Stack(new App(), 'Alias');
    const alias = kms.Alias.fromAliasName(stack, 'Alias', 'alias/jobs');
    const problems = validationProblemsOf(() => new ScheduledJobs(stack, 'Jobs', { encryptionKey: alias }));
    expect(problems).toEqual([expect.stringMatching(/^ScheduledJobs Alias\/Jobs\.encryptionKey: give the key itself/)]);
  });

  it('refuses what is not a key', () => {
    const stack = new Stack(new App(), 'NotAKey');
    const problems = validationProblemsOf(
      () => new ScheduledJobs(stack, 'Jobs', { encryptionKey: 'arn:aws:kms:eu-west-1:1:key/x' as unknown as kms.IKey }),
    );
    expect(problems).toEqual([expect.stringContaining('.encryptionKey: must be a kms.IKey')]);
  });

  it('takes a key imported by ARN, granting on its ARN, and leaves its policy alone', () => {
    const stack = new Stack(new App(), 'Imported');
    const arn = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    const jobs = new ScheduledJobs(stack, 'Jobs', { encryptionKey: kms.Key.fromKeyArn(stack, 'Key', arn) });
    jobs.addJob('own', { schedule: ScheduleExpression.expression('rate(1 hour)'), entry: WORKER_ENTRY });
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::KMS::Key', 0);
    template.allResourcesProperties('AWS::SQS::Queue', { KmsMasterKeyId: arn });
    expect(JSON.stringify(template.toJSON())).toContain(`"Resource":"${arn}"`);
  });
});
