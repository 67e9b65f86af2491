import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const projectRoot = path.join(__dirname, '..', '..');
const outDir = mkdtempSync(path.join(tmpdir(), 'scheduled-jobs-synth-'));

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('cdk synth of bin/app.ts', () => {
  // Proves the real app synthesizes offline and without Docker: the CLI, tsx and the local esbuild together.
  it('writes the ScheduledJobs template with the sample schedule', () => {
    const result = spawnSync('npx', ['cdk', 'synth', '--quiet', '-o', outDir], {
      cwd: projectRoot,
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    const templateFile = path.join(outDir, 'ScheduledJobs.template.json');
    expect(existsSync(templateFile)).toBe(true);
    const resources = Object.values(JSON.parse(readFileSync(templateFile, 'utf8')).Resources) as
      { Type: string; Properties: Record<string, any> }[];
    const schedules = resources.filter((r) => r.Type === 'AWS::Scheduler::Schedule');
    expect(schedules).toHaveLength(1);
    expect(schedules[0].Properties).toMatchObject({
      ScheduleExpression: 'cron(0 6 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
    });
    expect(JSON.parse(schedules[0].Properties.Target.Input))
      .toEqual({ jobId: 'occurrence-digest', scheduledTime: '<aws.scheduler.scheduled-time>' });
  }, 130_000);
});
