/**
 * A job that takes its schedules at run time (`runtimeSchedules: true`, docs/runtime-schedules.md), as a user's stack
 * builds it: its own schedule group, its DISABLED template in the stack's group, the one schedule registry table, the
 * grant to manage its schedules (its rows and its group only), the reconciler's access, and the worker's series
 * partitions. Synthesized in-process, without bundling.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, type CfnElement, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { ScheduleExpression, TimeWindow } from 'aws-cdk-lib/aws-scheduler';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { REGISTRY_TABLE } from '../../functions/protocol/schedule-registry';
import { ENV } from '../../functions/runtime-env';
import type { JobProps } from '../../lib/job-props';
import { KEYED_TEMPLATE_EXPRESSION } from '../../lib/job-schedules';
import type { JobWorker } from '../../lib/job-worker';
import type { ScheduledJob } from '../../lib/scheduled-job';
import { ScheduledJobs } from '../../lib/scheduled-jobs';
import { STACK_OUTPUTS } from '../../lib/stack-outputs';
import { validationProblemsOf, WORKER_ENTRY } from './fixtures/test-stack';
import { rendered, type TemplateNode, type TemplateResource } from './template-json';

const NIGHTLY = ScheduleExpression.expression('cron(0 2 * * ? *)');
const unbundledApp = () => new App({ context: { 'aws:cdk:bundling-stacks': [] } });

/**
 * The stack: worker `reports` runs `weekly-report` (run-time schedules, a flexible window and its own Scheduler retry)
 * and `nightly` (a fixed schedule); worker `fixed` runs `hourly` (fixed) only; an app role manages weekly-report's
 * schedules.
 */
interface Built {
  readonly stack: Stack;
  readonly jobs: ScheduledJobs;
  readonly weekly: ScheduledJob;
  readonly nightly: ScheduledJob;
  readonly reports: JobWorker;
  readonly fixed: JobWorker;
  readonly appRole: iam.Role;
}

function build(): Built {
  const stack = new Stack(unbundledApp(), 'Keyed');
  const jobs = new ScheduledJobs(stack, 'Jobs');
  const reports = jobs.addWorker('reports', { entry: WORKER_ENTRY });
  const weekly = jobs.addJob('weekly-report', {
    runtimeSchedules: true,
    worker: reports,
    timeWindow: TimeWindow.flexible(Duration.minutes(10)),
    schedulerRetry: { retryAttempts: 20, maxEventAge: Duration.hours(2) },
    catchupWindow: Duration.minutes(20),
  });
  const nightly = jobs.addJob('nightly', {
    schedule: NIGHTLY,
    worker: reports,
    timeWindow: TimeWindow.flexible(Duration.minutes(10)),
    schedulerRetry: { retryAttempts: 20, maxEventAge: Duration.hours(2) },
    catchupWindow: Duration.minutes(20),
  });
  const fixed = jobs.addWorker('fixed', { entry: WORKER_ENTRY });
  jobs.addJob('hourly', { schedule: ScheduleExpression.expression('rate(1 hour)'), worker: fixed });
  const appRole = new iam.Role(stack, 'SignupApp', { assumedBy: new iam.AccountRootPrincipal() });
  weekly.grantManageSchedules(appRole);
  return { stack, jobs, weekly, nightly, reports, fixed, appRole };
}

let built: Built;
let resources: Record<string, TemplateResource>;
let outputs: Record<string, { Value: TemplateNode }>;
let templateJson: Record<string, unknown>;

beforeAll(() => {
  built = build();
  const json = Template.fromStack(built.stack).toJSON();
  templateJson = json;
  resources = json.Resources;
  outputs = json.Outputs;
});

const logicalId = (construct: IConstruct) =>
  built.stack.getLogicalId((construct.node.defaultChild ?? construct) as CfnElement);
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const schedulesByName = () =>
  Object.fromEntries(ofType('AWS::Scheduler::Schedule').map(([, r]) => [String(r.Properties.Name), r.Properties]));
const getAttArn = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const actionsOf = (s: TemplateNode): string[] => (Array.isArray(s.Action) ? [...s.Action] : [s.Action]);

/** The statements of the inline policies attached to the role. */
function statementsOf(role: IConstruct): TemplateNode[] {
  const roleId = logicalId(role);
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r) => r.Ref === roleId))
    .flatMap(([, p]) => [...p.Properties.PolicyDocument.Statement]);
}

const roleOf = (fn: { role?: IConstruct }): IConstruct => {
  if (fn.role === undefined) throw new Error('a function without a role');
  return fn.role;
};

describe('a job with runtimeSchedules', () => {
  it('has a schedule group of its own, beside the stack group', () => {
    const groups = ofType('AWS::Scheduler::ScheduleGroup').map(([id]) => id);
    const keyed = built.jobs.schedules.keyedJobs.get('weekly-report');
    expect(keyed).toBeDefined();
    expect(groups.sort()).toEqual([logicalId(built.jobs.scheduleGroup), logicalId(keyed!.group)].sort());
    // Kept with the registry (RETAIN by default): deleting a group deletes its schedules.
    expect(resources[logicalId(keyed!.group)].DeletionPolicy).toBe('Retain');
  });

  it("has a DISABLED template in the stack group, named by the job id, with the fixed job's DLQ, retry and window, and its own alias and role", () => {
    const { 'weekly-report': template, nightly } = schedulesByName();
    expect(template).toMatchObject({
      Name: 'weekly-report',
      GroupName: nightly.GroupName,
      State: 'DISABLED',
      ScheduleExpression: KEYED_TEMPLATE_EXPRESSION,
    });
    expect(KEYED_TEMPLATE_EXPRESSION).toBe('cron(0 0 1 1 ? 2199)');
    expect(nightly.State).toBe('ENABLED');
    // What the two share: all but the input, the function (the job's alias) and the role (the job's own).
    const withoutInput = (target: TemplateNode) =>
      Object.fromEntries(Object.entries(target).filter(([k]) => !['Input', 'Arn', 'RoleArn'].includes(k)));
    const [templateInput, templateTarget] = [template.Target.Input, withoutInput(template.Target)];
    const [nightlyInput, nightlyTarget] = [nightly.Target.Input, withoutInput(nightly.Target)];
    expect(templateTarget).toEqual(nightlyTarget);
    expect(templateTarget).toMatchObject({ RetryPolicy: { MaximumRetryAttempts: 20, MaximumEventAgeInSeconds: 7200 } });
    expect(template.FlexibleTimeWindow).toEqual(nightly.FlexibleTimeWindow);
    expect(template.FlexibleTimeWindow).toEqual({ Mode: 'FLEXIBLE', MaximumWindowInMinutes: 10 });
    expect(JSON.parse(rendered(nightlyInput))).not.toHaveProperty('keyedScheduleGroup');
    const group = built.jobs.schedules.keyedJobs.get('weekly-report')!.group;
    expect(JSON.parse(rendered(templateInput))).toEqual({
      jobId: 'weekly-report',
      scheduledTime: '<aws.scheduler.scheduled-time>',
      worker: 'reports',
      // The worker's route, which each run-time schedule copies: the trigger sends there and records it on the row.
      queueUrl: `\${${logicalId(built.jobs.workers.get('reports')!.queue)}}`,
      stuckAfterSeconds: built.jobs.workers.get('reports')!.stuckAfterSeconds(),
      deadlineSeconds: 21_600,
      retentionDays: 90,
      catchupWindowSeconds: 1200,
      // The flexible window (10 minutes) plus 5: the run-time schedules' occurrences are judged late by their rows.
      lateAfterSeconds: 900,
      overlap: 'skip',
      keyedScheduleGroup: resources[logicalId(group)].Properties.Name,
    });
    expect(built.weekly.runtimeSchedules).toBe(true);
    expect(built.nightly.runtimeSchedules).toBe(false);
  });

  it('makes one schedule registry table: jobId/scheduleKey, TTL ttl, both indexes projecting ALL, as the occurrence table is kept', () => {
    const tables = ofType('AWS::DynamoDB::Table');
    expect(tables).toHaveLength(2);
    const registryId = logicalId(built.jobs.scheduleRegistry as unknown as IConstruct);
    const registry = resources[registryId];
    expect(registry.DeletionPolicy).toBe('Retain');
    expect(registry.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'jobId', KeyType: 'HASH' },
        { AttributeName: 'scheduleKey', KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      GlobalSecondaryIndexes: [
        {
          IndexName: 'bySyncDue',
          KeySchema: [
            { AttributeName: 'syncShard', KeyType: 'HASH' },
            { AttributeName: 'syncDueAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'byAuditBucket',
          KeySchema: [
            { AttributeName: 'auditBucket', KeyType: 'HASH' },
            { AttributeName: 'scheduleName', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
    expect(registry.Properties.AttributeDefinitions.every((a) => a.AttributeType === 'S')).toBe(true);
    expect(outputs[STACK_OUTPUTS.scheduleRegistryTable]).toEqual({ Value: { Ref: registryId } });
    expect(STACK_OUTPUTS.scheduleRegistryTable).toBe('ScheduleRegistryTableName');
  });

  it('follows removalPolicy and outputPrefix, and adds the registry once for two such jobs', () => {
    const stack = new Stack(unbundledApp(), 'Two');
    const jobs = new ScheduledJobs(stack, 'Jobs', { removalPolicy: RemovalPolicy.DESTROY, outputPrefix: 'Acme' });
    const worker = jobs.addWorker('reports', { entry: WORKER_ENTRY });
    jobs.addJob('a', { runtimeSchedules: true, worker });
    jobs.addJob('b', { runtimeSchedules: true, worker });
    const json = Template.fromStack(stack).toJSON();
    const tables = Object.values(json.Resources as Record<string, TemplateResource>).filter(
      (r) => r.Type === 'AWS::DynamoDB::Table',
    );
    expect(tables.map((t) => t.DeletionPolicy)).toEqual(['Delete', 'Delete']);
    expect(Object.keys(json.Outputs).filter((k) => k.includes('ScheduleRegistry'))).toEqual([
      'AcmeScheduleRegistryTableName',
    ]);
    const groups = Object.values(json.Resources as Record<string, TemplateResource>).filter(
      (r) => r.Type === 'AWS::Scheduler::ScheduleGroup',
    );
    expect(groups).toHaveLength(3);
    // The reconciler's audit walks both jobs' groups: their ids, the one added after the registry too.
    const reconciler = Object.values(json.Resources as Record<string, TemplateResource>).find(
      (r) =>
        r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.[ENV.registryJobs] !== undefined,
    );
    expect(JSON.parse(String(reconciler?.Properties.Environment.Variables[ENV.registryJobs]))).toEqual(['a', 'b']);
  });
});

describe('a stack without run-time schedules', () => {
  it('has no registry table, no output, no REGISTRY_TABLE on the reconciler, no second group', () => {
    const stack = new Stack(unbundledApp(), 'Fixed');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    const worker = jobs.addWorker('reports', { entry: WORKER_ENTRY });
    const job = jobs.addJob('nightly', { schedule: NIGHTLY, worker });
    const json = Template.fromStack(stack).toJSON();
    const all = Object.values(json.Resources as Record<string, TemplateResource>);
    expect(all.filter((r) => r.Type === 'AWS::DynamoDB::Table')).toHaveLength(1);
    expect(all.filter((r) => r.Type === 'AWS::Scheduler::ScheduleGroup')).toHaveLength(1);
    expect(Object.keys(json.Outputs)).not.toContain('ScheduleRegistryTableName');
    expect(jobs.scheduleRegistry).toBeUndefined();
    const reconciler = json.Resources[stack.getLogicalId(jobs.reconcilerFunction.node.defaultChild as CfnElement)];
    expect(Object.keys(reconciler.Properties.Environment.Variables)).not.toContain(ENV.registryTable);
    expect(job.runtimeSchedules).toBe(false);
  });
});

describe('ScheduledJob.grantManageSchedules', () => {
  it("grants exactly the job's registry rows, its audit index, its group, its template and the role to Scheduler", () => {
    const registryId = logicalId(built.jobs.scheduleRegistry as unknown as IConstruct);
    const keyed = built.jobs.schedules.keyedJobs.get('weekly-report')!;
    const groupName = String(resources[logicalId(keyed.group)].Properties.Name);
    const roleArn = built.stack.resolve(keyed.targetRoleArn);
    const withResourceRendered = (s: TemplateNode) =>
      Object.fromEntries(Object.entries(s).map(([k, v]) => [k, k === 'Resource' ? rendered(v) : v]));
    expect(statementsOf(built.appRole).map(withResourceRendered)).toEqual([
      {
        Effect: 'Allow',
        Action: [
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:DeleteItem',
          'dynamodb:Query',
          'dynamodb:ConditionCheckItem',
        ],
        Resource: `\${${registryId}.Arn}`,
        Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['weekly-report'] } },
      },
      {
        Effect: 'Allow',
        Action: 'dynamodb:Query',
        Resource: `\${${registryId}.Arn}/index/${REGISTRY_TABLE.auditIndex.name}`,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['weekly-report#*'] } },
      },
      {
        Effect: 'Allow',
        Action: [
          'scheduler:CreateSchedule',
          'scheduler:UpdateSchedule',
          'scheduler:DeleteSchedule',
          'scheduler:GetSchedule',
        ],
        Resource: `arn:*:scheduler:*:*:schedule/${groupName}/*`,
      },
      {
        Effect: 'Allow',
        Action: 'scheduler:GetSchedule',
        Resource: `\${${logicalId(built.weekly.schedule!)}.Arn}`,
      },
      { Effect: 'Allow', Action: 'scheduler:ListSchedules', Resource: '*' },
      {
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: rendered(roleArn),
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      },
    ]);
    // Not the sync index, whose shards every job's rows share, nor the occurrence table.
    const resourcesGranted = statementsOf(built.appRole).map((s) => rendered(s.Resource));
    expect(resourcesGranted.some((r) => r.includes(REGISTRY_TABLE.syncIndex.name))).toBe(false);
    expect(resourcesGranted.some((r) => r.includes(logicalId(built.jobs.table)))).toBe(false);
  });

  it('is refused for a job with a fixed schedule, naming the job', () => {
    // A role of another stack: this one is synthesized already.
    const role = new iam.Role(new Stack(unbundledApp(), 'Other'), 'Other', {
      assumedBy: new iam.AccountRootPrincipal(),
    });
    expect(validationProblemsOf(() => built.nightly.grantManageSchedules(role))).toEqual([
      expect.stringMatching(/^grantManageSchedules\(nightly\): job nightly has one fixed schedule/),
    ]);
  });
});

describe('grantOperateJobs', () => {
  it('lets an operator manage the run-time schedules of every such job, added before or after the grant', () => {
    const stack = new Stack(unbundledApp(), 'Operated');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    const worker = jobs.addWorker('reports', { entry: WORKER_ENTRY });
    jobs.addJob('early', { runtimeSchedules: true, worker });
    jobs.addJob('nightly', { schedule: NIGHTLY, worker });
    const oncall = new iam.Role(stack, 'Oncall', { assumedBy: new iam.AccountRootPrincipal() });
    jobs.grantOperateJobs(oncall);
    jobs.addJob('late', { runtimeSchedules: true, worker });
    const json = Template.fromStack(stack).toJSON();
    const roleId = stack.getLogicalId(oncall.node.defaultChild as CfnElement);
    const leadingKeys = Object.values(json.Resources as Record<string, TemplateResource>)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x) => x.Ref === roleId))
      .flatMap((p) => [...p.Properties.PolicyDocument.Statement])
      .map((st) => st.Condition?.['ForAllValues:StringEquals']?.['dynamodb:LeadingKeys'])
      .filter((keys) => keys !== undefined);
    expect(leadingKeys).toEqual([['early'], ['late']]);
  });
});

describe('grantViewJobs', () => {
  it('lets a viewer read the schedule registry, built before or after the grant, and write none of it', () => {
    const registryReads = (grantFirst: boolean): string[] => {
      const stack = new Stack(unbundledApp(), grantFirst ? 'ViewedFirst' : 'ViewedLater');
      const jobs = new ScheduledJobs(stack, 'Jobs');
      const worker = jobs.addWorker('reports', { entry: WORKER_ENTRY });
      const support = new iam.Role(stack, 'Support', { assumedBy: new iam.AccountRootPrincipal() });
      if (grantFirst) jobs.grantViewJobs(support);
      jobs.addJob('per-customer', { runtimeSchedules: true, worker });
      if (!grantFirst) jobs.grantViewJobs(support);
      const json = Template.fromStack(stack).toJSON();
      const roleId = stack.getLogicalId(support.node.defaultChild as CfnElement);
      const registryId = stack.getLogicalId(jobs.scheduleRegistry?.node.defaultChild as CfnElement);
      return Object.values(json.Resources as Record<string, TemplateResource>)
        .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x) => x.Ref === roleId))
        .flatMap((p) => [...p.Properties.PolicyDocument.Statement])
        .filter((st) => JSON.stringify(st.Resource).includes(registryId))
        .flatMap((st) => actionsOf(st))
        .sort();
    };
    expect(registryReads(true)).toEqual(['dynamodb:GetItem', 'dynamodb:Query']);
    expect(registryReads(false)).toEqual(['dynamodb:GetItem', 'dynamodb:Query']);
  });
});

describe('the reconciler', () => {
  it('is told the registry table (REGISTRY_TABLE) and the stack group (SCHEDULE_GROUP)', () => {
    const env = resources[logicalId(built.jobs.reconcilerFunction)].Properties.Environment.Variables;
    expect(env[ENV.registryTable]).toEqual({ Ref: logicalId(built.jobs.scheduleRegistry as unknown as IConstruct) });
    expect(env[ENV.scheduleGroup]).toEqual(resources[logicalId(built.jobs.scheduleGroup)].Properties.Name);
    expect(ENV.registryTable).toBe('REGISTRY_TABLE');
  });

  it('may read and write the whole registry and both indexes, the keyed groups and templates, and pass the role', () => {
    const registryId = logicalId(built.jobs.scheduleRegistry as unknown as IConstruct);
    const keyed = built.jobs.schedules.keyedJobs.get('weekly-report')!;
    const groupName = String(resources[logicalId(keyed.group)].Properties.Name);
    const grants = statementsOf(roleOf(built.jobs.reconcilerFunction)).flatMap((s) =>
      actionsOf(s).flatMap((a) =>
        (Array.isArray(s.Resource) ? [...s.Resource] : [s.Resource]).map(
          (r) => `${a} on ${rendered(r)}${s.Condition === undefined ? '' : ` if ${JSON.stringify(s.Condition)}`}`,
        ),
      ),
    );
    const registry = `\${${registryId}.Arn}`;
    expect(grants).toEqual(
      expect.arrayContaining([
        ...['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query'].map((a) => `dynamodb:${a} on ${registry}`),
        `dynamodb:Query on ${registry}/index/bySyncDue`,
        `dynamodb:Query on ${registry}/index/byAuditBucket`,
        'scheduler:ListSchedules on *',
        ...['CreateSchedule', 'UpdateSchedule', 'DeleteSchedule', 'GetSchedule'].map(
          (a) => `scheduler:${a} on arn:*:scheduler:*:*:schedule/${groupName}/*`,
        ),
        `scheduler:GetSchedule on \${${logicalId(built.weekly.schedule!)}.Arn}`,
        `iam:PassRole on ${rendered(built.stack.resolve(keyed.targetRoleArn))} if {"StringEquals":{"iam:PassedToService":"scheduler.amazonaws.com"}}`,
      ]),
    );
    // Nothing on the fixed jobs' schedules: they are not the reconciler's to write.
    expect(grants.filter((g) => g.startsWith('scheduler:') && g.includes(logicalId(built.nightly.schedule!)))).toEqual(
      [],
    );
  });
});

describe("the worker's occurrence partitions (dynamodb:LeadingKeys)", () => {
  const rowStatements = (worker: JobWorker) =>
    statementsOf(roleOf(worker.function)).filter((s) => actionsOf(s).includes('dynamodb:UpdateItem'));

  it('include the series jobId#* of a job with run-time schedules, beside its jobs ids', () => {
    expect(rowStatements(built.reports).map((s) => s.Condition)).toEqual([
      { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['weekly-report', 'nightly'] } },
      { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['weekly-report#*'] } },
    ]);
    const tableArn = getAttArn(logicalId(built.jobs.table));
    expect(rowStatements(built.reports).map((s) => [actionsOf(s), s.Resource])).toEqual([
      [['dynamodb:GetItem', 'dynamodb:UpdateItem'], tableArn],
      [['dynamodb:GetItem', 'dynamodb:UpdateItem'], tableArn],
    ]);
  });

  it('are the job ids alone for a worker without such a job', () => {
    expect(rowStatements(built.fixed).map((s) => s.Condition)).toEqual([
      { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['hourly'] } },
    ]);
  });
});

describe('addJob: schedule or runtimeSchedules, exactly one', () => {
  /** A fresh ScheduledJobs, and whether a worker was built (bundled) for a job that was refused. */
  function refused(props: unknown): { problems: readonly string[]; workers: number } {
    const jobs = new ScheduledJobs(new Stack(unbundledApp(), 'Refused'), 'Jobs');
    const problems = validationProblemsOf(() => jobs.addJob('weekly-report', props as JobProps));
    return { problems, workers: jobs.workers.size };
  }

  it('refuses both, naming addJob(id).runtimeSchedules, before the job builds its worker', () => {
    expect(refused({ schedule: NIGHTLY, runtimeSchedules: true, entry: WORKER_ENTRY })).toEqual({
      problems: [expect.stringMatching(/^addJob\(weekly-report\)\.runtimeSchedules: give either schedule .* not both/)],
      workers: 0,
    });
  });

  it('refuses neither, naming addJob(id).schedule', () => {
    expect(refused({ entry: WORKER_ENTRY })).toEqual({
      problems: [
        expect.stringMatching(/^addJob\(weekly-report\)\.schedule: give schedule .* or runtimeSchedules: true/),
      ],
      workers: 0,
    });
    expect(refused({ runtimeSchedules: false, entry: WORKER_ENTRY }).problems).toEqual([
      expect.stringMatching(/^addJob\(weekly-report\)\.schedule: /),
    ]);
  });

  it('refuses a runtimeSchedules that is not a boolean, and enabled: false with runtimeSchedules', () => {
    expect(refused({ runtimeSchedules: 'yes', entry: WORKER_ENTRY }).problems).toContainEqual(
      expect.stringMatching(/^addJob\(weekly-report\)\.runtimeSchedules: must be true or false, got "yes"/),
    );
    expect(refused({ runtimeSchedules: true, enabled: false, entry: WORKER_ENTRY })).toEqual({
      problems: [
        expect.stringMatching(/^addJob\(weekly-report\)\.enabled: a job with runtimeSchedules cannot be disabled/),
      ],
      workers: 0,
    });
  });

  it('takes runtimeSchedules with a job of its own (entry), building its worker', () => {
    const jobs = new ScheduledJobs(new Stack(unbundledApp(), 'Own'), 'Jobs');
    const job = jobs.addJob('weekly-report', { runtimeSchedules: true, entry: WORKER_ENTRY });
    expect(job.runtimeSchedules).toBe(true);
    expect(jobs.workers.get('weekly-report')?.jobs).toEqual(['weekly-report']);
    expect(jobs.scheduleRegistry).toBeDefined();
  });
});

describe('cfn-lint', () => {
  const cfnLint = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  // CI installs cfn-lint (npm run lint:template needs it); a machine without it skips this check only.
  it.skipIf(cfnLint.status !== 0)(
    'finds nothing in the template of a stack with a run-time schedules job (rules as npm run lint:template)',
    () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'scheduled-jobs-keyed-lint-'));
      try {
        const file = path.join(dir, 'Keyed.template.json');
        writeFileSync(file, JSON.stringify(templateJson));
        const result = spawnSync('cfn-lint', ['--ignore-checks', 'W3005', '--', file], {
          encoding: 'utf8',
          timeout: 280_000,
        });
        expect(`${result.stdout}${result.stderr}`.trim()).toBe('');
        expect(result.status).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    130_000,
  );
});

/**
 * The trust boundary: a principal holding one job's grant cannot cause an occurrence of another job. Each run-time-schedule
 * job's schedules invoke the trigger through an alias of the job's own with a role of the job's own; the grant passes
 * that role only, and the role invokes that alias only (the trigger then refuses an event naming another job:
 * test/functions/trigger.test.ts).
 */
describe('the trust boundary between two run-time-schedule jobs', () => {
  let stack: Stack;
  let jobs: ScheduledJobs;
  let json: { Resources: Record<string, TemplateResource> };
  let appA: iam.Role;
  const idOf = (construct: IConstruct) => stack.getLogicalId((construct.node.defaultChild ?? construct) as CfnElement);
  const policiesOf = (roleId: string) =>
    Object.values(json.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: TemplateNode) => x.Ref === roleId))
      .flatMap((p) => [...p.Properties.PolicyDocument.Statement]);
  const keyedTarget = (jobId: string) => {
    const template = Object.values(json.Resources).find(
      (r) => r.Type === 'AWS::Scheduler::Schedule' && r.Properties.Name === jobId,
    );
    return template?.Properties.Target as TemplateNode;
  };
  const roleIdOf = (jobId: string) => keyedTarget(jobId).RoleArn['Fn::GetAtt'][0] as string;
  const aliasIdOf = (jobId: string) => keyedTarget(jobId).Arn.Ref as string;

  beforeAll(() => {
    stack = new Stack(unbundledApp(), 'Trust');
    jobs = new ScheduledJobs(stack, 'Jobs');
    const worker = jobs.addWorker('reports', { entry: WORKER_ENTRY });
    const a = jobs.addJob('job-a', { runtimeSchedules: true, worker });
    jobs.addJob('job-b', { runtimeSchedules: true, worker });
    jobs.addJob('nightly', { schedule: NIGHTLY, worker });
    appA = new iam.Role(stack, 'AppOfA', { assumedBy: new iam.AccountRootPrincipal() });
    a.grantManageSchedules(appA);
    json = Template.fromStack(stack).toJSON() as typeof json;
  });

  it("targets each job's own alias of the trigger, job-<id> on $LATEST, with the trigger's async retries", () => {
    const trigger = idOf(jobs.triggerFunction);
    for (const jobId of ['job-a', 'job-b']) {
      const alias = json.Resources[aliasIdOf(jobId)];
      expect(alias.Type).toBe('AWS::Lambda::Alias');
      expect(alias.Properties).toMatchObject({ Name: `job-${jobId}`, FunctionVersion: '$LATEST' });
      expect(alias.Properties.FunctionName).toEqual({ Ref: trigger });
      const invokeConfig = Object.values(json.Resources).find(
        (r) =>
          r.Type === 'AWS::Lambda::EventInvokeConfig' &&
          JSON.stringify(r.Properties.Qualifier).includes(`"${aliasIdOf(jobId)}"`),
      );
      expect(invokeConfig?.Properties.MaximumRetryAttempts).toBe(2);
    }
    expect(aliasIdOf('job-a')).not.toBe(aliasIdOf('job-b'));
    expect(roleIdOf('job-a')).not.toBe(roleIdOf('job-b'));
  });

  it("gives each job's role lambda:InvokeFunction on its own alias only: not the function, not the other job's alias", () => {
    for (const [jobId, other] of [
      ['job-a', 'job-b'],
      ['job-b', 'job-a'],
    ]) {
      const invokes = policiesOf(roleIdOf(jobId)).filter((st) => actionsOf(st).includes('lambda:InvokeFunction'));
      expect(invokes.flatMap((st) => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]))).toEqual([
        { Ref: aliasIdOf(jobId) },
      ]);
      expect(JSON.stringify(policiesOf(roleIdOf(jobId)))).not.toContain(aliasIdOf(other));
    }
  });

  it("lets Scheduler assume a job's role only for the schedules of that job's group", () => {
    const [statement] = json.Resources[roleIdOf('job-a')].Properties.AssumeRolePolicyDocument.Statement;
    expect(statement.Principal).toEqual({ Service: 'scheduler.amazonaws.com' });
    const groupName = json.Resources[idOf(jobs.schedules.keyedJobs.get('job-a')!.group)].Properties.Name;
    expect(rendered(statement.Condition.ArnEquals['aws:SourceArn'])).toBe(
      `arn:\${AWS::Partition}:scheduler:\${AWS::Region}:\${AWS::AccountId}:schedule-group/${groupName}`,
    );
    expect(statement.Condition.StringEquals).toEqual({ 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
  });

  it("lets job A's grant pass A's role only: not B's, not the fixed schedules' role", () => {
    const passes = policiesOf(idOf(appA)).filter((st) => actionsOf(st).includes('iam:PassRole'));
    expect(passes).toEqual([
      {
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: { 'Fn::GetAtt': [roleIdOf('job-a'), 'Arn'] },
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      },
    ]);
    const nightlyRole = roleIdOf('nightly');
    expect(JSON.stringify(policiesOf(idOf(appA)))).not.toContain(roleIdOf('job-b'));
    expect(JSON.stringify(policiesOf(idOf(appA)))).not.toContain(nightlyRole);
  });

  it("lets the reconciler pass each job's role, and the trigger read the registry's rows (GetItem only)", () => {
    const reconciler = policiesOf(idOf(roleOf(jobs.reconcilerFunction)));
    const passed = reconciler
      .filter((st) => actionsOf(st).includes('iam:PassRole'))
      .map((st) => st.Resource['Fn::GetAtt']?.[0]);
    expect(passed).toEqual(expect.arrayContaining([roleIdOf('job-a'), roleIdOf('job-b')]));
    const registryId = idOf(jobs.scheduleRegistry as unknown as IConstruct);
    const trigger = policiesOf(idOf(roleOf(jobs.triggerFunction)));
    const onRegistry = trigger.filter((st) => JSON.stringify(st.Resource).includes(registryId));
    expect(onRegistry.map((st) => st.Action)).toEqual(['dynamodb:GetItem']);
    const env = json.Resources[idOf(jobs.triggerFunction)].Properties.Environment.Variables;
    expect(env[ENV.registryTable]).toEqual({ Ref: registryId });
  });
});
