/**
 * lib/occurrence-storage.ts reportBucket: what long jobs need of the reports bucket, its retention and versioning,
 * and a bucket of the app's own instead (ScheduledJobsProps.reportBucket).
 */
import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { describe, expect, it } from 'vitest';
import { DEADLINE_SECONDS_RANGE } from '../../functions/protocol/job-settings';
import { reportBucket } from '../../lib/occurrence-storage';
import { ScheduledJobs, type ScheduledJobsProps } from '../../lib/scheduled-jobs';
import { validationProblemsOf, WORKER_ENTRY } from './fixtures/test-stack';

describe('reportBucket', () => {
  it('aborts incomplete multipart uploads after 15 days, later than any run may last (maxRunSeconds at most 13.5 days)', () => {
    const stack = new Stack(new App(), 'Bucket');
    reportBucket(stack, RemovalPolicy.DESTROY);
    const [bucket] = Object.values(Template.fromStack(stack).findResources('AWS::S3::Bucket'));
    const rules = bucket.Properties.LifecycleConfiguration.Rules;

    expect(rules).toEqual([
      {
        Id: 'abort-incomplete-report-uploads',
        Status: 'Enabled',
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 15 },
      },
    ]);
    expect(DEADLINE_SECONDS_RANGE.max / 86_400).toBeLessThan(15);
  });
});

describe('ScheduledJobsProps.reportRetention and versioned (the made bucket)', () => {
  const build = (props: ScheduledJobsProps, retention?: Duration) => {
    const stack = new Stack(new App(), 'Reports');
    const jobs = new ScheduledJobs(stack, 'Jobs', props);
    jobs.addJob('nightly', { schedule: ScheduleExpression.expression('rate(1 day)'), entry: WORKER_ENTRY, retention });
    return { stack, jobs };
  };
  const rulesOf = (stack: Stack) => {
    const [bucket] = Object.values(Template.fromStack(stack).findResources('AWS::S3::Bucket'));
    return {
      rules: bucket.Properties.LifecycleConfiguration.Rules,
      versioning: bucket.Properties.VersioningConfiguration,
    };
  };

  it('expires reports under reports/ after reportRetention, and keeps them forever without it', () => {
    const { stack, jobs } = build({ reportRetention: Duration.days(400) });
    expect(jobs.node.validate()).toEqual([]);
    expect(rulesOf(stack).rules).toContainEqual({
      Id: 'expire-reports',
      Prefix: 'reports/',
      ExpirationInDays: 400,
      Status: 'Enabled',
    });
    expect(rulesOf(build({}).stack).rules.map((r: { Id: string }) => r.Id)).toEqual([
      'abort-incomplete-report-uploads',
    ]);
  });

  it('versions the bucket, and with a retention removes an expired noncurrent version a day later and its marker', () => {
    const { stack } = build({ reportRetention: Duration.days(92), versioned: true });
    const { rules, versioning } = rulesOf(stack);
    expect(versioning).toEqual({ Status: 'Enabled' });
    expect(rules).toContainEqual(
      expect.objectContaining({
        Id: 'expire-reports',
        ExpirationInDays: 92,
        NoncurrentVersionExpiration: { NoncurrentDays: 1 },
      }),
    );
    expect(rules).toContainEqual(
      expect.objectContaining({ Id: 'remove-expired-delete-markers', ExpiredObjectDeleteMarker: true }),
    );
    expect(rulesOf(build({ versioned: true }).stack).rules).toHaveLength(1);
  });

  it('refuses at synth a retention a job’s rows outlive: its retention plus the 2 days DynamoDB takes to delete', () => {
    expect(build({ reportRetention: Duration.days(91) }).jobs.node.validate()).toEqual([
      'ScheduledJobs Reports/Jobs.reportRetention: must be at least 92 days, got 91: job "nightly" keeps its occurrence ' +
        'rows 90 days (its retention), DynamoDB deletes an expired row up to 2 days later, and a report must outlive its row',
    ]);
    expect(build({ reportRetention: Duration.days(92) }).jobs.node.validate()).toEqual([]);
    // The longest retention of any job counts.
    const problems = build({ reportRetention: Duration.days(200) }, Duration.days(365)).jobs.node.validate();
    expect(problems).toEqual([expect.stringContaining('must be at least 367 days, got 200')]);
  });

  it('refuses a retention that is not whole days, and the made bucket’s options beside a given bucket', () => {
    const stack = new Stack(new App(), 'Bad');
    expect(validationProblemsOf(() => new ScheduledJobs(stack, 'A', { reportRetention: Duration.hours(36) }))).toEqual([
      expect.stringMatching(/^ScheduledJobs Bad\/A\.reportRetention: must be a whole number of days/),
    ]);
    const given = s3.Bucket.fromBucketName(stack, 'Given', 'team-reports');
    expect(
      validationProblemsOf(
        () =>
          new ScheduledJobs(stack, 'B', { reportBucket: given, reportRetention: Duration.days(400), versioned: true }),
      ),
    ).toEqual([
      'ScheduledJobs Bad/B.reportRetention: applies to the bucket the construct makes; with reportBucket, set it on your own bucket',
      'ScheduledJobs Bad/B.versioned: applies to the bucket the construct makes; with reportBucket, set it on your own bucket',
    ]);
  });
});

describe('ScheduledJobsProps.reportBucket (a bucket of your own)', () => {
  it('makes no bucket and writes, grants and names the given one', () => {
    const stack = new Stack(new App(), 'Given');
    const given = s3.Bucket.fromBucketName(stack, 'Reports', 'team-reports');
    const jobs = new ScheduledJobs(stack, 'Jobs', { reportBucket: given });
    const job = jobs.addJob('nightly', { schedule: ScheduleExpression.expression('rate(1 day)'), entry: WORKER_ENTRY });
    job.grantReadReports(new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() }));
    expect(jobs.reportBucket).toBe(given);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::S3::Bucket', 0);
    const json = JSON.stringify(template.toJSON());
    // The worker's put of its job's reports, the reader's get, the BUCKET_NAME every function reads.
    expect(json).toContain(':s3:::team-reports/reports/nightly/*');
    expect(json).toContain('"REPORT_BUCKET_NAME":"team-reports"');
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[],
    );
    const puts = statements.filter((st) => [st.Action].flat().includes('s3:PutObject'));
    expect(puts.map((st) => JSON.stringify(st.Resource))).toEqual([
      expect.stringContaining('team-reports/reports/nightly/*'),
    ]);
    expect(jobs.node.validate()).toEqual([]);
  });
});
