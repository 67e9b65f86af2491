import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Duration } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleJobs } from '../../examples/sample-app/sample-jobs';
import { rendered, type TemplateResource } from './template-json';

const projectRoot = path.join(__dirname, '..', '..');
const seconds = (d: Duration | undefined) => d?.toSeconds();
const outDir = mkdtempSync(path.join(tmpdir(), 'scheduled-jobs-synth-'));

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('cdk synth of bin/app.ts', () => {
  // Proves the real app synthesizes offline and without Docker: the CLI, tsx and the local esbuild together.
  it('writes the ScheduledJobs template with one schedule per enabled job of bin/jobs.ts', () => {
    const result = spawnSync('npx', ['cdk', 'synth', '--quiet', '-o', outDir], {
      cwd: projectRoot,
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
      encoding: 'utf8',
      timeout: 280_000,
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    const templateFile = path.join(outDir, 'ScheduledJobs.template.json');
    expect(existsSync(templateFile)).toBe(true);
    const resources = Object.values(JSON.parse(readFileSync(templateFile, 'utf8')).Resources) as TemplateResource[];
    const schedules = resources.filter((r) => r.Type === 'AWS::Scheduler::Schedule');
    // One schedule per enabled job of bin/jobs.ts, named by the job, each sending its schedule event: the job id,
    // the nominal scheduled time, the job's worker (its own: each sample job has an entry), deadline, retention, catch-up window and lateAfter.
    const enabled = sampleJobs.filter((j) => j.props.enabled !== false);
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect(
      schedules
        .map((s) => ({ name: s.Properties.Name, input: JSON.parse(rendered(s.Properties.Target.Input)) }))
        .sort(byName),
    ).toEqual(
      enabled
        .map((j) => ({
          name: j.id,
          input: {
            jobId: j.id,
            scheduledTime: '<aws.scheduler.scheduled-time>',
            worker: j.id,
            // The worker's route: a Ref to its own queue, and its stuck threshold.
            queueUrl: expect.stringMatching(
              new RegExp(`^\\$\\{ScheduledJobsWorkers${j.id.replace(/-/g, '')}Queue[0-9A-F]{8}\\}$`),
            ),
            stuckAfterSeconds: expect.any(Number),
            deadlineSeconds: seconds(j.props.retry?.deadline) ?? 21_600,
            retentionDays: j.props.retention?.toDays() ?? 90,
            catchupWindowSeconds: seconds(j.props.catchupWindow) ?? seconds(j.props.retry?.deadline) ?? 21_600,
            // The sample jobs have no time window: the default lateAfter is 5 minutes.
            lateAfterSeconds: seconds(j.props.lateAfter) ?? 300,
            overlap: j.props.overlap ?? 'skip',
            // The per-customer job's schedule is its template: it names the job's own group.
            ...('runtimeSchedules' in j.props && j.props.runtimeSchedules
              ? { keyedScheduleGroup: expect.stringMatching(/Keyedcustomerreport/) }
              : {}),
          },
        }))
        .sort(byName),
    );
    const digest = schedules.find((s) => s.Properties.Name === 'occurrence-digest');
    expect(digest?.Properties).toMatchObject({
      ScheduleExpression: 'cron(0 6 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
    });
    // One worker per sample job, each a function of its own beside the trigger, the notifier and the reconciler.
    const functions = resources.filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(functions.length).toBe(3 + sampleJobs.length);
    // The CLI adds its own AWS::CDK::Metadata resource; the rest is the stack's.
    const own = resources.filter((r) => r.Type !== 'AWS::CDK::Metadata');
    console.log(`the sample stack (bin/app.ts): ${own.length} resources, and CDK's metadata`);
    expect(own.length).toBeLessThan(500);
  });
});
