/**
 * cdk-nag's AwsSolutions pack over the sample app and a stack of several workers: no finding may be left
 * unacknowledged, and every acknowledgement carries a reason (lib/nag-acknowledgements.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleJobs } from '../../examples/sample-app/sample-jobs';
import { SAMPLE_DIGEST_ENTRY, ScheduledJobsStack } from '../../examples/sample-app/sample-stack';
import { OverlapPolicy } from '../../lib/job-props';
import { ScheduledJobs } from '../../lib/scheduled-jobs';
import { buildTestStack, WORKER_ENTRY } from './fixtures/test-stack';

/**
 * State-change events, a job that pauses itself after failures, an operator role given grantOperateJobs, and two jobs that take their
 * schedules at run time (the registry, their groups), one managed by an app role (grantManageSchedules).
 */
function policiesStack(app: App, id = 'Policies', keyed = false): void {
  const stack = new Stack(app, id);
  // With a customer-managed key, every resource and grant of the stack takes it (lib/encryption.ts).
  const encryptionKey = keyed ? new kms.Key(stack, 'Key', { enableKeyRotation: true }) : undefined;
  // With the state-change events (lib/state-change-events.ts): their function, failure queue and PutEvents grant.
  const jobs = new ScheduledJobs(stack, 'Jobs', { stateChangeEvents: true, encryptionKey });
  const worker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
  jobs.addJob('nightly', {
    schedule: ScheduleExpression.expression('cron(0 2 * * ? *)'),
    worker,
    pauseAfterFailures: 3,
    overlap: OverlapPolicy.BUFFER_ALL,
  });
  jobs.grantOperateJobs(new iam.Role(stack, 'Operator', { assumedBy: new iam.AccountRootPrincipal() }));
  const weekly = jobs.addJob('weekly-report', { runtimeSchedules: true, worker, pauseAfterFailures: 2 });
  jobs.addJob('reminders', { runtimeSchedules: true, entry: WORKER_ENTRY });
  weekly.grantManageSchedules(new iam.Role(stack, 'SignupApp', { assumedBy: new iam.AccountRootPrincipal() }));
}

const outdir = mkdtempSync(path.join(tmpdir(), 'scheduled-jobs-nag-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

interface Violation {
  ruleName: string;
  violatingConstructs: { constructPath: string }[];
}

function synthWithNag(app: App): { error?: Error; violations: Violation[] } {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  let error: Error | undefined;
  try {
    app.synth();
  } catch (e) {
    error = e as Error;
  }
  let report: { pluginReports?: { violations: Violation[] }[] } = {};
  try {
    report = JSON.parse(readFileSync(path.join(outdir, 'validation-report.json'), 'utf8'));
  } catch {
    // No report: nothing was found.
  }
  return { error, violations: (report.pluginReports ?? []).flatMap((r) => r.violations) };
}

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing that is not acknowledged with a reason, in the sample stack, a stack of several workers and one with the schedule policies and run-time schedules', () => {
    // Skip bundling the functions: the rules read the template, not the code.
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [], alarmEmail: 'oncall@example.com' } });
    new ScheduledJobsStack(app, 'ScheduledJobs', { jobs: sampleJobs });
    // Workers shared by two jobs, a job's own, one with a paused job only (test/lib/fixtures/test-stack.ts).
    const { jobs } = buildTestStack(app, 'Workers');
    policiesStack(app);
    const { error, violations } = synthWithNag(app);
    expect(
      violations.map((v) => `${v.ruleName}: ${v.violatingConstructs.map((c) => c.constructPath).join(', ')}`),
    ).toEqual([]);
    expect(error).toBeUndefined();
    expect(jobs.workers.size).toBe(3);
  });

  it("finds nothing unacknowledged with a customer-managed key (encryptionKey) or a bucket of the app's own (reportBucket)", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'scheduled-jobs-nag-keyed-'));
    try {
      const app = new App({ outdir: dir, context: { 'aws:cdk:bundling-stacks': [] } });
      policiesStack(app, 'Keyed', true);
      const given = new Stack(app, 'GivenBucket');
      const jobs = new ScheduledJobs(given, 'Jobs', {
        reportBucket: s3.Bucket.fromBucketName(given, 'Reports', 'team-reports'),
      });
      jobs.addJob('nightly', { schedule: ScheduleExpression.expression('rate(1 day)'), entry: WORKER_ENTRY });
      jobs.grantViewJobs(new iam.Role(given, 'Viewer', { assumedBy: new iam.AccountRootPrincipal() }));
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
      let error: Error | undefined;
      try {
        app.synth();
      } catch (e) {
        error = e as Error;
      }
      expect(error?.message).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds nothing unacknowledged in a stack traced with X-Ray (tracing: ACTIVE), its X-Ray grants included', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'scheduled-jobs-nag-traced-'));
    try {
      const app = new App({ outdir: dir, context: { 'aws:cdk:bundling-stacks': [] } });
      const stack = new Stack(app, 'Traced');
      const jobs = new ScheduledJobs(stack, 'Jobs', { tracing: lambda.Tracing.ACTIVE });
      jobs.addJob('nightly', { schedule: ScheduleExpression.expression('rate(1 day)'), entry: SAMPLE_DIGEST_ENTRY });
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
      expect(() => app.synth()).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('does report an unacknowledged finding (the check is live)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'scheduled-jobs-nag-live-'));
    try {
      const app = new App({ outdir: dir, context: { 'aws:cdk:bundling-stacks': [] } });
      const stack = new ScheduledJobsStack(app, 'ScheduledJobs', { jobs: sampleJobs });
      // A second bucket without the stack's settings: server access logs off, no SSL enforcement.
      new s3.Bucket(stack, 'Unreviewed');
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
      expect(() => app.synth()).toThrow(/AwsSolutions-S1/);
      const report = JSON.parse(readFileSync(path.join(dir, 'validation-report.json'), 'utf8'));
      const rules = report.pluginReports.flatMap((r: { violations: Violation[] }) =>
        r.violations.map((v) => v.ruleName),
      );
      expect(rules.join(' ')).toMatch(/AwsSolutions-S1/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
