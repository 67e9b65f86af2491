/**
 * lib/occurrence-storage.ts reportBucket: what long jobs need of the reports bucket.
 */
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { DEADLINE_SECONDS_RANGE } from '../../functions/protocol/job-settings';
import { reportBucket } from '../../lib/occurrence-storage';

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
