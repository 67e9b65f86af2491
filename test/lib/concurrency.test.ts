/**
 * A job's maxConcurrency and fairnessKey at synth (docs/concurrency.md): a bad value is a ValidationError naming the
 * job and the property; a good one reaches the worker's JOB_SETTINGS, which the worker enforces.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors';
import { ScheduledJobs } from '../../lib/scheduled-jobs';
import { WORKER_ENTRY } from './fixtures/test-stack';

const HOURLY = ScheduleExpression.rate(Duration.hours(1));
const appWithoutBundling = () => new App({ context: { 'aws:cdk:bundling-stacks': [] } });

function synthProblems(app: App): readonly string[] {
  try {
    app.synth();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).problems;
  }
  throw new Error('the synth threw nothing');
}

describe('addJob: maxConcurrency and fairnessKey', () => {
  it.each([0, 2.5, 1001])('refuses maxConcurrency %j, naming the job and the property', (maxConcurrency) => {
    const app = appWithoutBundling();
    const jobs = new ScheduledJobs(new Stack(app, 'Bad'), 'Jobs');
    const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
    jobs.addJob('sync', { runtimeSchedules: true, worker, maxConcurrency });
    const problems = synthProblems(app);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^addJob\(sync\)\.maxConcurrency: must be a whole number from 1 to 1000, got /);
  });

  it('refuses a fairnessKey without maxConcurrency', () => {
    const app = appWithoutBundling();
    const jobs = new ScheduledJobs(new Stack(app, 'Bad'), 'Jobs');
    const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
    jobs.addJob('sync', { runtimeSchedules: true, worker, fairnessKey: 'tenantId' });
    expect(synthProblems(app)[0]).toMatch(
      /^addJob\(sync\)\.fairnessKey: orders the occurrences waiting for maxConcurrency/,
    );
  });

  it("hands both to the job's worker in JOB_SETTINGS", () => {
    const stack = new Stack(appWithoutBundling(), 'Good');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
    jobs.addJob('sync', { runtimeSchedules: true, worker, maxConcurrency: 50, fairnessKey: 'tenantId' });
    jobs.addJob('nightly', { schedule: HOURLY, worker });
    const functions = Template.fromStack(stack).findResources('AWS::Lambda::Function');
    const settings = Object.values(functions)
      .map((f) => (f as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }).Properties)
      .map((p) => p.Environment?.Variables?.JOB_SETTINGS)
      .filter((v): v is string => typeof v === 'string')
      .flatMap((json) => JSON.parse(json) as { id: string }[]);
    expect(settings.find((s) => s.id === 'sync')).toMatchObject({ maxConcurrency: 50, fairnessKey: 'tenantId' });
    expect(settings.find((s) => s.id === 'nightly')).not.toHaveProperty('maxConcurrency');
  });

  it("tells the reconciler of the capped jobs and grants the waiting list's requests on their partitions only", () => {
    const stack = new Stack(appWithoutBundling(), 'Good');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
    jobs.addJob('sync', { runtimeSchedules: true, worker, maxConcurrency: 50 });
    jobs.addJob('nightly', { schedule: HOURLY, worker, maxConcurrency: 1 });
    jobs.addJob('free', { schedule: HOURLY, worker });
    const template = Template.fromStack(stack);
    const variables = Object.values(template.findResources('AWS::Lambda::Function')).map(
      (f) =>
        (f as { Properties: { Environment?: { Variables?: Record<string, string> } } }).Properties.Environment
          ?.Variables ?? {},
    );
    const capped = variables.map((v) => v.CAPPED_JOBS).filter((v) => v !== undefined);
    expect(capped.map((json) => JSON.parse(json))).toEqual([
      [
        { id: 'sync', worker: 'exports', maxConcurrency: 50 },
        { id: 'nightly', worker: 'exports', maxConcurrency: 1 },
      ],
    ]);
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (p) =>
        (p as { Properties: { PolicyDocument: { Statement: Record<string, unknown>[] } } }).Properties.PolicyDocument
          .Statement,
    );
    const listing = statements.filter((s) => JSON.stringify(s.Action).match(/"dynamodb:Query","dynamodb:DeleteItem"/));
    // One for the worker, one for the reconciler: both on the capped jobs' own partitions, never the uncapped one's.
    expect(listing.map((s) => s.Action)).toEqual(
      expect.arrayContaining([
        ['dynamodb:Query', 'dynamodb:DeleteItem'],
        ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:DeleteItem'],
      ]),
    );
    expect(listing).toHaveLength(2);
    for (const statement of listing) {
      expect(statement.Condition).toEqual({
        'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['sync', 'nightly'] },
      });
    }
  });

  it('adds nothing to a stack without a capped job', () => {
    const stack = new Stack(appWithoutBundling(), 'Plain');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    jobs.addJob('nightly', { schedule: HOURLY, worker: jobs.addWorker('exports', { entry: WORKER_ENTRY }) });
    expect(JSON.stringify(Template.fromStack(stack).toJSON())).not.toMatch(
      /CAPPED_JOBS|"dynamodb:Query","dynamodb:DeleteItem"/,
    );
  });
});
