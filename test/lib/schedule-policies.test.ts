/**
 * The CDK side of the schedule policies: what a worker with a job that pauses itself after failures gets (the
 * schedule group in its environment, Get/UpdateSchedule on exactly those jobs' schedules, PassRole on the schedules'
 * role, an alarm and its graph), what every worker gets for the running slot, and what grantOperateJobs gives an
 * operator. The template is read without bundling the functions.
 */
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { OverlapPolicy } from '../../lib/job-props';
import type { JobWorker } from '../../lib/job-worker';
import { ScheduledJobs } from '../../lib/scheduled-jobs';
import { WORKER_ENTRY } from './fixtures/test-stack';
import { rendered, type TemplateNode, type TemplateResource } from './template-json';

const expression = (text: string) => ScheduleExpression.expression(text);

let stack: Stack;
let jobs: ScheduledJobs;
let pausing: JobWorker;
let plain: JobWorker;
let late: JobWorker;
let operator: iam.Role;
let viewer: iam.Role;
let resources: Record<string, TemplateResource>;

beforeAll(() => {
  stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Policies');
  jobs = new ScheduledJobs(stack, 'Jobs', { dashboard: true });
  pausing = jobs.addWorker('exports', { entry: WORKER_ENTRY });
  plain = jobs.addWorker('plain', { entry: WORKER_ENTRY });
  jobs.addJob('nightly', { schedule: expression('cron(0 2 * * ? *)'), worker: pausing, pauseAfterFailures: 3 });
  jobs.addJob('hourly', { schedule: expression('rate(1 hour)'), worker: pausing, overlap: OverlapPolicy.BUFFER_ALL });
  // Disabled in the app: no schedule to switch, so no Scheduler grant for it.
  jobs.addJob('manual', {
    schedule: expression('rate(1 day)'),
    worker: pausing,
    pauseAfterFailures: 2,
    enabled: false,
  });
  jobs.addJob('daily', { schedule: expression('cron(0 6 * * ? *)'), worker: plain, overlap: OverlapPolicy.ALLOW_ALL });
  operator = new iam.Role(stack, 'Operator', { assumedBy: new iam.AccountRootPrincipal() });
  jobs.grantOperateJobs(operator);
  viewer = new iam.Role(stack, 'Viewer', { assumedBy: new iam.AccountRootPrincipal() });
  jobs.grantViewJobs(viewer);
  // Added after the grant: the operator may still enqueue on its queue.
  late = jobs.addWorker('late', { entry: WORKER_ENTRY });
  jobs.addJob('weekly', { schedule: expression('cron(0 3 ? * MON *)'), worker: late, pauseAfterFailures: 1 });
  resources = Template.fromStack(stack).toJSON().Resources;
});

const logicalId = (c: IConstruct | undefined) => stack.getLogicalId((c?.node.defaultChild ?? c) as CfnElement);
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const list = (v: TemplateNode): TemplateNode[] => (Array.isArray(v) ? [...v] : [v]);

/** The statements of the policies attached to a role, by the role's logical id. */
function statementsOf(roleId: string): TemplateNode[] {
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r) => r.Ref === roleId))
    .flatMap(([, p]) => [...p.Properties.PolicyDocument.Statement]);
}
const workerStatements = (w: JobWorker) => statementsOf(logicalId(w.function.role));

/** `action on resource` for each statement that names one of the actions. */
function grants(statements: TemplateNode[], prefix: string): string[] {
  return statements.flatMap((s) =>
    list(s.Action)
      .filter((a) => String(a).startsWith(prefix))
      .flatMap((a) => list(s.Resource).map((r) => `${a} on ${rendered(r)}`)),
  );
}

const scheduleArn = (jobId: string) => `\${${logicalId(jobs.schedules.schedules.get(jobId))}.Arn}`;
const targetRole = () => {
  const [[id]] = ofType('AWS::IAM::Role').filter(([id]) => id.startsWith('SchedulerRoleForTarget'));
  return `\${${id}.Arn}`;
};
/** The schedule group's name, as the template has it (a name CDK generates for the group). */
const groupName = () => rendered(stack.resolve(jobs.schedules.group.scheduleGroupName));
const envOf = (w: JobWorker) => resources[logicalId(w.function)].Properties.Environment.Variables;

describe('a worker with a job that has pauseAfterFailures', () => {
  it('gets SCHEDULE_GROUP, the group of its jobs’ schedules; a worker without one does not', () => {
    expect(envOf(pausing).SCHEDULE_GROUP).toBe(groupName());
    expect(envOf(plain).SCHEDULE_GROUP).toBeUndefined();
  });

  it('may get and update exactly the schedules of those jobs, not its other jobs’ or other workers’', () => {
    expect(grants(workerStatements(pausing), 'scheduler:').sort()).toEqual(
      [
        `scheduler:GetSchedule on ${scheduleArn('nightly')}`,
        `scheduler:UpdateSchedule on ${scheduleArn('nightly')}`,
      ].sort(),
    );
    expect(grants(workerStatements(late), 'scheduler:').sort()).toEqual(
      [
        `scheduler:GetSchedule on ${scheduleArn('weekly')}`,
        `scheduler:UpdateSchedule on ${scheduleArn('weekly')}`,
      ].sort(),
    );
    expect(grants(workerStatements(plain), 'scheduler:')).toEqual([]);
  });

  it("may pass the schedules' target role, and only to Scheduler", () => {
    const passRole = workerStatements(pausing).filter((s) => list(s.Action).includes('iam:PassRole' as never));
    expect(passRole).toHaveLength(1);
    expect(list(passRole[0].Resource).map(rendered)).toEqual([targetRole()]);
    expect(passRole[0].Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
    expect(grants(workerStatements(plain), 'iam:')).toEqual([]);
  });

  it('has one alarm on JobsPausedOnFailures over every worker, { service, component: workers }', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm')
      .map(([, a]) => a.Properties)
      .filter((a) => a.MetricName === 'JobsPausedOnFailures');
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({ Threshold: 1, Statistic: 'Sum', TreatMissingData: 'notBreaching' });
    expect(alarms[0].Dimensions).toEqual([
      { Name: 'component', Value: 'workers' },
      { Name: 'service', Value: 'scheduled-jobs' },
    ]);
    expect(jobs.monitoring.sharedAlarms.pausedOnFailures).toBeDefined();
  });

  it("graphs each worker's skipped, buffered, cancelled and paused, and the trigger's missed", () => {
    const [[, dashboard]] = ofType('AWS::CloudWatch::Dashboard');
    const body = rendered(dashboard.Properties.DashboardBody);
    for (const id of ['exports', 'plain', 'late'])
      expect(body).toContain(`${id}: skipped, buffered, cancelled, paused`);
    for (const metric of ['OccurrencesSkipped', 'OccurrencesBuffered', 'OccurrencesCancelled', 'JobsPausedOnFailures'])
      expect(body).toContain(metric);
    // Missed is the trigger's: on its own { service, component: trigger }, over every job.
    expect(body).toContain('"OccurrencesMissed","component","trigger","service","scheduled-jobs"');
  });
});

describe('every worker, for the running slot', () => {
  it("may read and update its own jobs' rows only (the slot holder's row, the job-state row)", () => {
    const table = `\${${logicalId(jobs.table)}.Arn}`;
    const dynamo = workerStatements(plain).filter((s) => list(s.Action).some((a) => String(a).startsWith('dynamodb:')));
    expect(dynamo.map((s) => ({ Action: s.Action, Resource: rendered(s.Resource), Condition: s.Condition }))).toEqual([
      {
        Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        Resource: table,
        Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['daily'] } },
      },
    ]);
  });

  it('may send to its own queue (the buffered head is enqueued when the slot is released), no other', () => {
    expect(grants(workerStatements(plain), 'sqs:SendMessage')).toEqual([
      `sqs:SendMessage on \${${logicalId(plain.queue)}.Arn}`,
    ]);
  });
});

const groupSchedules = () => `arn:*:scheduler:*:*:schedule/${groupName()}/*`;

/** What grantViewJobs gives on this stack: reads only. */
function viewerGrants(): string[] {
  const table = `\${${logicalId(jobs.table)}.Arn}`;
  return [
    `scheduler:GetSchedule on ${groupSchedules()}`,
    'scheduler:ListSchedules on *',
    `dynamodb:GetItem on ${table}`,
    `dynamodb:BatchGetItem on ${table}`,
    `dynamodb:Query on ${table}`,
    `dynamodb:Query on ${table}/index/byStatusShard`,
    `s3:GetObject on \${${logicalId(jobs.reportBucket)}.Arn}/reports/*`,
    `cloudformation:DescribeStacks on \${AWS::StackId}`,
  ];
}

describe('Method: grantViewJobs', () => {
  it('gives only reads: the schedules, the rows and the status index, the reports, the stack outputs', () => {
    expect(grants(statementsOf(logicalId(viewer)), '').sort()).toEqual(viewerGrants().sort());
  });
});

describe('Method: grantOperateJobs', () => {
  const operatorGrants = () => grants(statementsOf(logicalId(operator)), '');

  it('gives what pause, resume, run, retry, backfill and the console call, with what a viewer reads', () => {
    const table = `\${${logicalId(jobs.table)}.Arn}`;
    expect(operatorGrants().sort()).toEqual(
      [
        ...viewerGrants(),
        `scheduler:UpdateSchedule on ${groupSchedules()}`,
        `dynamodb:UpdateItem on ${table}`,
        `dynamodb:PutItem on ${table}`,
        ...[pausing, plain, late].map((w) => `sqs:SendMessage on \${${logicalId(w.queue)}.Arn}`),
        `iam:PassRole on ${targetRole()}`,
      ].sort(),
    );
  });

  it('passes the role only to Scheduler', () => {
    const [passRole] = statementsOf(logicalId(operator)).filter((s) =>
      list(s.Action).includes('iam:PassRole' as never),
    );
    expect(passRole.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
  });
});
