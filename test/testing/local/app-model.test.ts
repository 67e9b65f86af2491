import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AssemblyError } from '../../../testing';
import { describeApp } from '../../../testing/local/app-model';
import { listStacks, readStack, type StackArtifact, type Template } from '../../../testing/local/cloud-assembly';

const dir = mkdtempSync(path.join(tmpdir(), 'assembly-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function asset(name: string, file: string): string {
  mkdirSync(path.join(dir, name), { recursive: true });
  writeFileSync(path.join(dir, name, file), 'exports.handler = async () => ({});');
  return name;
}

const stack: StackArtifact = {
  stackName: 'Jobs',
  artifactId: 'Jobs',
  displayName: 'Jobs',
  assemblyDir: dir,
  templatePath: path.join(dir, 'Jobs.template.json'),
};

const fn = (assetPath: string | undefined, extra: Record<string, unknown> = {}) => ({
  Type: 'AWS::Lambda::Function',
  Properties: { Handler: 'index.handler', ...extra },
  Metadata: assetPath === undefined ? {} : { 'aws:asset:path': assetPath },
});

const schedule = (target: string, extra: Record<string, unknown> = {}) => ({
  Type: 'AWS::Scheduler::Schedule',
  Properties: {
    Name: 'nightly',
    ScheduleExpression: 'rate(1 day)',
    Target: { Arn: { 'Fn::GetAtt': [target, 'Arn'] }, Input: '{"jobId":"nightly-export"}' },
    ...extra,
  },
});

describe('Function: describeApp', () => {
  it("takes the job id from the schedule's input, and Lambda's defaults where the template sets none", () => {
    const template: Template = { Resources: { Trigger: fn(asset('a1', 'index.js')), Nightly: schedule('Trigger') } };
    const app = describeApp(stack, template);
    expect(app.schedules).toMatchObject([{ jobId: 'nightly-export', name: 'nightly', timeZone: 'UTC', enabled: true }]);
    expect(app.functions.get('Trigger')).toMatchObject({ timeoutSeconds: 3, memorySize: 128, asyncRetryAttempts: 2 });
  });

  it("marks a run-time schedules job's template with the group its input names; a fixed schedule has none", () => {
    const input = JSON.stringify({
      jobId: 'weekly',
      scheduledTime: '<aws.scheduler.scheduled-time>',
      keyedScheduleGroup: 'Jobs-Keyed-1',
    });
    const template: Template = {
      Resources: {
        Trigger: fn(asset('a4', 'index.js')),
        Nightly: schedule('Trigger'),
        Weekly: schedule('Trigger', {
          Name: 'weekly',
          State: 'DISABLED',
          Target: { Arn: { 'Fn::GetAtt': ['Trigger', 'Arn'] }, Input: input },
        }),
      },
    };
    const app = describeApp(stack, template);
    expect(app.schedules.find((s) => s.jobId === 'weekly')).toMatchObject({
      keyedGroup: 'Jobs-Keyed-1',
      enabled: false,
    });
    expect(app.schedules.find((s) => s.jobId === 'nightly-export')?.keyedGroup).toBeUndefined();
  });

  it('reports every problem of the functions a run needs at once', () => {
    const template: Template = {
      Resources: {
        Inline: fn(undefined),
        Esm: fn(asset('a2', 'index.mjs')),
        Odd: fn(asset('a3', 'index.js'), { Handler: 'handler' }),
        S1: schedule('Inline'),
        S2: schedule('Esm'),
        S3: schedule('Odd'),
      },
    };
    const problems = (() => {
      try {
        describeApp(stack, template);
        return [];
      } catch (error) {
        return (error as AssemblyError).problems;
      }
    })();
    expect(problems).toEqual([
      "Jobs: function Inline: no aws:asset:path metadata: `cdk synth` writes it, `new App().synth()` only with the context `aws:cdk:enable-asset-metadata`: `new App({ context: { 'aws:cdk:enable-asset-metadata': true } })` (inline or prebuilt code cannot be run locally)",
      'Jobs: function Esm: index.mjs is an ES module bundle; the local run loads CommonJS bundles (the NodejsFunction default)',
      'Jobs: function Odd: Handler "handler" is not "file.export"',
    ]);
  });

  it('refuses a stack without a schedule that targets one of its functions', () => {
    expect(() => describeApp(stack, { Resources: { Table: { Type: 'AWS::DynamoDB::Table' } } })).toThrow(
      'no AWS::Scheduler::Schedule targets a Lambda function of this stack',
    );
  });
});

describe('Function: readStack', () => {
  it("finds stacks in a stage's nested assembly, and says what to name when several have schedules", () => {
    const root = mkdtempSync(path.join(dir, 'cdk.out-'));
    const template = JSON.stringify({ Resources: { S: schedule('T') } });
    mkdirSync(path.join(root, 'assembly-Prod'));
    writeFileSync(path.join(root, 'assembly-Prod', 'ProdJobs.template.json'), template);
    writeFileSync(path.join(root, 'DevJobs.template.json'), template);
    writeFileSync(
      path.join(root, 'assembly-Prod', 'manifest.json'),
      JSON.stringify({
        artifacts: {
          ProdJobs: {
            type: 'aws:cloudformation:stack',
            displayName: 'Prod/Jobs',
            properties: { templateFile: 'ProdJobs.template.json', stackName: 'Prod-Jobs' },
          },
        },
      }),
    );
    writeFileSync(
      path.join(root, 'manifest.json'),
      JSON.stringify({
        artifacts: {
          DevJobs: { type: 'aws:cloudformation:stack', properties: { templateFile: 'DevJobs.template.json' } },
          assemblyProd: { type: 'cdk:cloud-assembly', properties: { directoryName: 'assembly-Prod' } },
        },
      }),
    );
    expect(listStacks(root).map((s) => [s.stackName, s.displayName])).toEqual([
      ['DevJobs', 'DevJobs'],
      ['Prod-Jobs', 'Prod/Jobs'],
    ]);
    expect(readStack(root, 'Prod/Jobs').stack.assemblyDir).toBe(path.join(root, 'assembly-Prod'));
    expect(() => readStack(root)).toThrow('2 stacks with schedules; name the one to run with stackName');
  });

  it('says when the folder is not a cloud assembly', () => {
    expect(() => readStack(path.join(dir, 'nowhere'))).toThrow(/no manifest.json here/);
  });
});
