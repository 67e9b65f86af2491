/**
 * The platform team's options of ScheduledJobs: `runtime` (stack-wide and a worker's own), a worker's own `role`, and
 * `permissionsBoundary` reaching every role the construct makes, the schedules' role included.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { describe, expect, it } from 'vitest';
import { LOWEST_NODE_MAJOR } from '../../lib/job-function';
import { ScheduledJobs, type ScheduledJobsProps } from '../../lib/scheduled-jobs';
import { validationProblemsOf, WORKER_ENTRY } from './fixtures/test-stack';

const daily = ScheduleExpression.expression('rate(1 day)');

/** Every function the construct makes: a shared worker, a job's own, the events function, run-time schedules. */
function build(props: ScheduledJobsProps, workerProps: { runtime?: lambda.Runtime; role?: iam.IRole } = {}) {
  const stack = new Stack(new App(), 'Platform');
  const jobs = new ScheduledJobs(stack, 'Jobs', { stateChangeEvents: true, ...props });
  const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY, ...workerProps });
  jobs.addJob('nightly', { schedule: daily, worker, pauseAfterFailures: 2 });
  jobs.addJob('keyed', { runtimeSchedules: true, worker });
  jobs.addJob('own', { schedule: daily, entry: WORKER_ENTRY });
  return { stack, jobs, worker, template: Template.fromStack(stack) };
}

const runtimes = (template: Template) =>
  Object.entries(template.findResources('AWS::Lambda::Function')).map(
    ([id, fn]) => [id, fn.Properties.Runtime] as [string, string],
  );

describe('runtime', () => {
  it.each([lambda.Runtime.NODEJS_20_X, lambda.Runtime.NODEJS_24_X])(
    'builds every function of the stack on %s, the lowest and the newest supported',
    (runtime) => {
      const { template } = build({ runtime });
      const all = runtimes(template);
      expect(all.length).toBeGreaterThanOrEqual(6);
      expect(all.filter(([, r]) => r !== runtime.name)).toEqual([]);
    },
  );

  it('defaults to Node.js 24, and a worker’s own runtime wins over the stack’s', () => {
    expect(new Set(runtimes(build({}).template).map(([, r]) => r))).toEqual(new Set(['nodejs24.x']));
    const { template } = build({ runtime: lambda.Runtime.NODEJS_22_X }, { runtime: lambda.Runtime.NODEJS_20_X });
    const byId = runtimes(template);
    expect(byId.filter(([id]) => id.startsWith('JobsWorkersexports')).map(([, r]) => r)).toEqual(['nodejs20.x']);
    expect(byId.filter(([id]) => !id.startsWith('JobsWorkersexports')).every(([, r]) => r === 'nodejs22.x')).toBe(true);
  });

  it('refuses a runtime older than Node.js 20 or not Node.js at all, naming where', () => {
    const stack = new Stack(new App(), 'Bad');
    expect(
      validationProblemsOf(() => new ScheduledJobs(stack, 'Old', { runtime: lambda.Runtime.NODEJS_18_X })),
    ).toEqual([
      `ScheduledJobs Bad/Old.runtime: must be Node.js ${LOWEST_NODE_MAJOR} or newer (lambda.Runtime.NODEJS_20_X), got nodejs18.x: the functions and the AWS SDK they bundle need it`,
    ]);
    expect(validationProblemsOf(() => new ScheduledJobs(stack, 'Py', { runtime: lambda.Runtime.PYTHON_3_12 }))).toEqual(
      [expect.stringMatching(/^ScheduledJobs Bad\/Py\.runtime: must be a Node\.js runtime .*got python3\.12/)],
    );
    const jobs = new ScheduledJobs(stack, 'Jobs');
    expect(
      validationProblemsOf(() => jobs.addWorker('w', { entry: WORKER_ENTRY, runtime: lambda.Runtime.NODEJS_16_X })),
    ).toEqual([expect.stringMatching(/^addWorker\(w\)\.runtime: must be Node\.js 20 or newer/)]);
  });
});

describe('a worker’s own role', () => {
  it('runs the worker with it and adds the worker’s statements to it, making no role for it', () => {
    const stack = new Stack(new App(), 'Role');
    const role = new iam.Role(stack, 'TeamRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    const jobs = new ScheduledJobs(stack, 'Jobs');
    const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY, role });
    jobs.addJob('nightly', { schedule: daily, worker });
    const template = Template.fromStack(stack);
    const roleId = stack.getLogicalId(role.node.defaultChild as iam.CfnRole);
    const fn = Object.entries(template.findResources('AWS::Lambda::Function')).find(([id]) =>
      id.startsWith('JobsWorkersexports'),
    );
    expect(fn?.[1].Properties.Role).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
    expect(Object.keys(template.findResources('AWS::IAM::Role')).filter((id) => id.includes('exports'))).toEqual([]);
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[] }[])
      .flatMap((s) => [s.Action].flat());
    expect(statements).toEqual(
      expect.arrayContaining(['logs:PutLogEvents', 'dynamodb:UpdateItem', 's3:PutObject', 'sqs:ReceiveMessage']),
    );
    expect(worker.grantPrincipal).toBe(role);
  });
});

describe('permissionsBoundary', () => {
  it('bounds every IAM role in the template: each function’s and the schedules’ role, with a key too', () => {
    const stack = new Stack(new App(), 'Bounded');
    const boundary = iam.ManagedPolicy.fromManagedPolicyName(stack, 'Boundary', 'team-boundary');
    const encryptionKey = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    const jobs = new ScheduledJobs(stack, 'Jobs', {
      permissionsBoundary: boundary,
      encryptionKey,
      stateChangeEvents: true,
    });
    const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
    jobs.addJob('nightly', { schedule: daily, worker, pauseAfterFailures: 2 });
    jobs.addJob('keyed', { runtimeSchedules: true, worker });
    jobs.addJob('own', { schedule: daily, entry: WORKER_ENTRY });
    const roles = Object.entries(Template.fromStack(stack).findResources('AWS::IAM::Role'));
    expect(roles.length).toBeGreaterThanOrEqual(7);
    expect(roles.some(([id]) => id.startsWith('SchedulerRoleForTarget'))).toBe(true);
    const unbounded = roles.filter(
      ([, r]) => !JSON.stringify(r.Properties.PermissionsBoundary ?? '').includes('team-boundary'),
    );
    expect(unbounded.map(([id]) => id)).toEqual([]);
  });

  it('keeps its boundary on the construct’s roles when the app bounds the whole stack with another (the nearer wins)', () => {
    const stack = new Stack(new App(), 'Both');
    iam.PermissionsBoundary.of(stack).apply(
      iam.ManagedPolicy.fromManagedPolicyName(stack, 'StackWide', 'stack-boundary'),
    );
    const jobs = new ScheduledJobs(stack, 'Jobs', {
      permissionsBoundary: iam.ManagedPolicy.fromManagedPolicyName(stack, 'Boundary', 'team-boundary'),
    });
    jobs.addJob('own', { schedule: daily, entry: WORKER_ENTRY });
    const roles = Object.entries(Template.fromStack(stack).findResources('AWS::IAM::Role'));
    const boundaryOf = (id: string) =>
      JSON.stringify(roles.find(([r]) => r === id)?.[1].Properties.PermissionsBoundary);
    for (const [id] of roles.filter(([id]) => id.startsWith('Jobs'))) expect(boundaryOf(id)).toContain('team-boundary');
  });

  it('refuses what is not a managed policy', () => {
    const stack = new Stack(new App(), 'Bad');
    expect(
      validationProblemsOf(
        () =>
          new ScheduledJobs(stack, 'Jobs', { permissionsBoundary: 'team-boundary' as unknown as iam.IManagedPolicy }),
      ),
    ).toEqual([expect.stringMatching(/^ScheduledJobs Bad\/Jobs\.permissionsBoundary: must be an iam\.IManagedPolicy/)]);
  });
});
