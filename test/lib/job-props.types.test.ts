/**
 * The public types reject, at compile time, what the validation would reject at synth: a job with neither or both of
 * `worker` and `entry`, a time as a bare number, a schedule as a string. (Neither or both of `schedule` and
 * `runtimeSchedules` is left to the synth: a union there would break apps that type their props as
 * JobWithOwnWorkerProps or JobInSharedWorkerProps.) `npm test` type-checks this file (tsc
 * --noEmit): an `@ts-expect-error` that no longer meets an error fails it.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Duration, type Stack } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { JobInSharedWorkerProps, JobProps, JobWithOwnWorkerProps } from '../../lib/job-props';
import type { JobWorker } from '../../lib/job-worker';
import type { ScheduledJob } from '../../lib/scheduled-job';
import type { ScheduledJobs } from '../../lib/scheduled-jobs';

const schedule = ScheduleExpression.rate(Duration.hours(1));
const worker = {} as JobWorker;

describe('Type: JobProps', () => {
  it('is a job with its own entry or one with a shared worker, not neither and not both', () => {
    expectTypeOf({ schedule, entry: 'src/jobs/nightly.ts' }).toExtend<JobProps>();
    expectTypeOf({ schedule, worker }).toExtend<JobProps>();
    expectTypeOf({ schedule }).not.toExtend<JobProps>();
    expectTypeOf({ schedule, worker, entry: 'src/jobs/nightly.ts' }).not.toExtend<JobProps>();
    expectTypeOf({ schedule, worker, workerOptions: { memorySize: 512 } }).not.toExtend<JobInSharedWorkerProps>();
    expectTypeOf<JobWithOwnWorkerProps>().toExtend<JobProps>();

    // @ts-expect-error neither worker nor entry
    const neither: JobProps = { schedule };
    // @ts-expect-error both worker and entry
    const both: JobProps = { schedule, worker, entry: 'src/jobs/nightly.ts' };
    void [neither, both];
  });

  it('takes time as a Duration and the schedule as a ScheduleExpression, never a bare number or string', () => {
    expectTypeOf({ schedule, entry: 'x', timeout: 300 }).not.toExtend<JobProps>();
    expectTypeOf({ schedule, entry: 'x', retry: { deadline: 3600 } }).not.toExtend<JobProps>();
    expectTypeOf({ schedule: 'rate(1 hour)', entry: 'x' }).not.toExtend<JobProps>();
    expectTypeOf({ schedule, entry: 'x', timeout: Duration.minutes(5) }).toExtend<JobProps>();

    // @ts-expect-error a bare number of seconds
    const seconds: JobProps = { schedule, entry: 'x', timeout: 300 };
    // @ts-expect-error a schedule string
    const expression: JobProps = { schedule: 'cron(0 6 * * ? *)', entry: 'x' };
    void [seconds, expression];
  });

  it('takes runtimeSchedules: true in place of a schedule (exactly one of the two is checked at synth)', () => {
    expectTypeOf({ runtimeSchedules: true, entry: 'src/jobs/weekly-report.ts' }).toExtend<JobProps>();
    expectTypeOf({ runtimeSchedules: true, worker }).toExtend<JobProps>();
    expectTypeOf({ runtimeSchedules: 'yes', worker }).not.toExtend<JobProps>();
    expectTypeOf<JobProps['runtimeSchedules']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<ScheduledJob['grantManageSchedules']>().returns.toEqualTypeOf<iam.Grant>();
  });

  it('addJob takes the id apart from the props and returns the job', () => {
    // Overloads per kind of job (so that tsc names both worker and entry when neither is given), and one for JobProps.
    expectTypeOf<ScheduledJobs['addJob']>().toBeCallableWith('nightly', {} as JobProps);
    expectTypeOf<ScheduledJobs['addJob']>().toBeCallableWith('nightly', {} as JobWithOwnWorkerProps);
    expectTypeOf<ScheduledJobs['addJob']>().toBeCallableWith('nightly', {} as JobInSharedWorkerProps);
    expectTypeOf<ScheduledJobs['addJob']>().returns.toEqualTypeOf<ScheduledJob>();
    expectTypeOf<Stack>().not.toExtend<JobProps>();
  });
});

describe('the published cdk API (api/cdk.api.md)', () => {
  it('names no zod type and no setting in seconds: every span of time is a Duration', () => {
    const report = readFileSync(path.join(__dirname, '..', '..', 'api', 'cdk.api.md'), 'utf8');
    expect(report).not.toMatch(/zod|Zod/);
    // The 0.1.0 names are there only as Refused<'renamed in 1.0 to …'>, which no value satisfies: tsc names the new one.
    const accepted = report.split('\n').filter((line) => !/: Refused</.test(line));
    expect(accepted.join('\n').match(/\b\w+Seconds\??:/g) ?? []).toEqual([]);
    expect(report).toMatch(/readonly timeoutSeconds\?: Refused<'renamed in 1\.0 to timeout, a Duration'>;/);
    expect(report).toMatch(/readonly timeout\?: Duration;/);
  });
});
