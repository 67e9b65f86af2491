/**
 * Several ScheduledJobs in one stack (bin/occurrences/target.ts): each adds its outputs under its `outputPrefix`, and
 * `--output-prefix` says whose the CLI reads. CloudFormation is faked (aws-sdk-client-mock): a stack with the outputs
 * of two ScheduledJobs, one without a prefix and one with `Billing`.
 */
import { CloudFormationClient, DescribeStacksCommand, type Output } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../bin/occurrences/errors';
import { runCli } from '../../bin/occurrences/program';
import { outputPrefixesOf, outputsOf, resolveTarget, type TargetOptions } from '../../bin/occurrences/target';
import { cliDeps } from './support';

const STACK = 'OpsStack';
const REGION = 'eu-west-1';
const cloudFormation = mockClient(CloudFormationClient);

/** The outputs of one ScheduledJobs, as lib/stack-outputs.ts names them, behind `prefix`. */
function scheduledJobsOutputs(prefix: string, name: string): Output[] {
  return [
    { OutputKey: `${prefix}OccurrenceTableName`, OutputValue: `${name}-occurrences` },
    { OutputKey: `${prefix}ReportBucketName`, OutputValue: `${name}-reports` },
    { OutputKey: `${prefix}ScheduleGroupName`, OutputValue: `${name}-schedules` },
    {
      OutputKey: `${prefix}WorkerQueue1`,
      OutputValue: `https://sqs.${REGION}.amazonaws.com/123456789012/${name}-exports`,
      Description: 'exports',
    },
  ];
}

function stackWith(...outputs: Output[][]): void {
  cloudFormation.on(DescribeStacksCommand, { StackName: STACK }).resolves({
    Stacks: [{ StackName: STACK, CreationTime: new Date(0), StackStatus: 'CREATE_COMPLETE', Outputs: outputs.flat() }],
  });
}

const everything = { jobs: true, queues: true, bucket: true };
const resolve = (options: TargetOptions) => resolveTarget({ stack: STACK, region: REGION, ...options }, everything, {});

beforeEach(() => {
  cloudFormation.reset();
  stackWith(scheduledJobsOutputs('', 'main'), scheduledJobsOutputs('Billing', 'billing'));
});

afterAll(() => {
  cloudFormation.restore();
});

describe('Function: resolveTarget, with several ScheduledJobs in one stack', () => {
  it('reads the outputs without a prefix by default, and none of the prefixed ones', async () => {
    const target = await resolve({});

    expect([target.tableName, target.bucketName, target.jobs?.group]).toEqual([
      'main-occurrences',
      'main-reports',
      'main-schedules',
    ]);
    expect([...(target.queues?.byWorker.keys() ?? [])]).toEqual(['exports']);
    expect(target.queues?.source).toBe(`stack ${STACK}'s outputs`);
  });

  it('reads the outputs of the ScheduledJobs whose prefix --output-prefix names, its worker queues included', async () => {
    const target = await resolve({ outputPrefix: 'Billing' });

    expect([target.tableName, target.bucketName, target.jobs?.group]).toEqual([
      'billing-occurrences',
      'billing-reports',
      'billing-schedules',
    ]);
    expect(outputsOf(scheduledJobsOutputs('Billing', 'billing'), 'Billing').workerQueues).toEqual(
      new Map([['exports', `https://sqs.${REGION}.amazonaws.com/123456789012/billing-exports`]]),
    );
    expect(target.queues?.source).toBe(`stack ${STACK}'s outputs Billing*`);
  });

  it('names the prefixes the stack has when the one given has no table', async () => {
    const wrong = resolve({ outputPrefix: 'Biling' });

    await expect(wrong).rejects.toBeInstanceOf(UsageError);
    await expect(wrong).rejects.toThrow(
      `the occurrences table is unknown: stack ${STACK} has no output BilingOccurrenceTableName ` +
        '(its ScheduledJobs have the output prefixes "", "Billing": pass one as --output-prefix); ' +
        'pass --table or --stack',
    );
  });

  it('names the prefixed ones when the stack has no ScheduledJobs without a prefix', async () => {
    stackWith(scheduledJobsOutputs('Billing', 'billing'), scheduledJobsOutputs('Exports2', 'exports'));

    await expect(resolve({})).rejects.toThrow(
      'has no output OccurrenceTableName (its ScheduledJobs have the output prefixes "Billing", "Exports2": ',
    );
  });
});

describe('Function: outputPrefixesOf', () => {
  it('takes a prefix from each output key ending in OccurrenceTableName, and nothing from other keys', () => {
    const outputs = outputsOf([
      ...scheduledJobsOutputs('', 'main'),
      ...scheduledJobsOutputs('Reports', 'reports'),
      { OutputKey: 'OccurrenceTableNameOld', OutputValue: 'x' },
    ]);

    expect(outputPrefixesOf(outputs)).toEqual(['', 'Reports']);
  });
});

describe('Option: --output-prefix', () => {
  it('reaches the target as given, and is none when not given', async () => {
    const seen: TargetOptions[] = [];
    const deps = {
      ...cliDeps({ now: () => Date.parse('2026-11-30T12:00:00Z') }),
      connect: async (options: TargetOptions) => {
        seen.push(options);
        throw new UsageError('stop here');
      },
    };

    await runCli(['--output-prefix', 'Billing', 'list'], deps);
    await runCli(['list'], deps);

    expect(seen.map((options) => options.outputPrefix)).toEqual(['Billing', undefined]);
  });

  it('refuses a prefix that cannot start a stack output key', async () => {
    const deps = cliDeps({ now: () => Date.parse('2026-11-30T12:00:00Z') });

    const code = await runCli(['--output-prefix', 'billing-jobs', 'list'], deps);

    expect(code).toBe(2);
    expect(deps.captured.err.join('\n')).toContain(
      '--output-prefix: must be up to 64 letters or digits (the start of a stack output key), got "billing-jobs"',
    );
  });
});
