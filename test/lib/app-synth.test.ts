import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleJobs } from '../../bin/jobs';
import type { TemplateResource } from './template-json';

const projectRoot = path.join(__dirname, '..', '..');
const outDir = mkdtempSync(path.join(tmpdir(), 'scheduled-jobs-synth-'));

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('cdk synth of bin/app.ts', () => {
  // Proves the real app synthesizes offline and without Docker: the CLI, tsx and the local esbuild together.
  it('writes the ScheduledJobs template with one schedule per enabled job of bin/jobs.ts', () => {
    const result = spawnSync('npx', ['cdk', 'synth', '--quiet', '-o', outDir], {
      cwd: projectRoot,
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    const templateFile = path.join(outDir, 'ScheduledJobs.template.json');
    expect(existsSync(templateFile)).toBe(true);
    const resources = Object.values(JSON.parse(readFileSync(templateFile, 'utf8')).Resources) as TemplateResource[];
    const schedules = resources.filter((r) => r.Type === 'AWS::Scheduler::Schedule');
    // One schedule per enabled job of bin/jobs.ts, each sending its job id and the nominal scheduled time.
    const enabled = sampleJobs.filter((j) => j.enabled !== false);
    expect(
      schedules.map((s) => JSON.parse(s.Properties.Target.Input)).sort((a, b) => a.jobId.localeCompare(b.jobId)),
    ).toEqual(
      enabled
        .map((j) => ({ jobId: j.id, scheduledTime: '<aws.scheduler.scheduled-time>' }))
        .sort((a, b) => a.jobId.localeCompare(b.jobId)),
    );
    const digest = schedules.find((s) => JSON.parse(s.Properties.Target.Input).jobId === 'occurrence-digest');
    expect(digest?.Properties).toMatchObject({
      ScheduleExpression: 'cron(0 6 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
    });
  }, 130_000);
});
