/**
 * The largest stack of workers: N jobs each with an entry of its own (so N workers, each its own function, queue, DLQ,
 * role and alarms), the README's way to write jobs, which the trigger's 4 KB of WORKERS stopped at 18 before routes
 * travelled with the schedules. Synthesizes it with bundling, prints the synth time and the resources, runs cfn-lint
 * on the template, and fires one occurrence of each job on moto with runLocally, which must end with every job
 * SUCCEEDED.
 *
 *   npx tsx bench/scale-stack.ts [--workers 28] [--no-local]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { App, Stack } from 'aws-cdk-lib';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { SAMPLE_DIGEST_ENTRY } from '../examples/sample-app/sample-stack';
import { ScheduledJobs } from '../lib/scheduled-jobs';
import { runLocally } from '../testing/local/run-locally';

const { values } = parseArgs({
  options: { workers: { type: 'string', default: '28' }, 'no-local': { type: 'boolean', default: false } },
});
const workers = Number(values.workers);

async function main(): Promise<void> {
  const outdir = mkdtempSync(path.join(tmpdir(), 'scale-stack-'));
  try {
    const started = performance.now();
    // Asset metadata: runLocally finds each function's bundle by it, as `cdk synth` writes it.
    const app = new App({ outdir, context: { 'aws:cdk:enable-asset-metadata': true } });
    const stack = new Stack(app, 'ScaleStack');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    for (let i = 0; i < workers; i++) {
      const job = jobs.addJob(`digest-${i}`, {
        schedule: ScheduleExpression.expression('rate(1 hour)'),
        entry: SAMPLE_DIGEST_ENTRY,
      });
      jobs.grantReadOccurrences(job.worker);
    }
    const assembly = app.synth();
    const synthMs = performance.now() - started;
    const template = assembly.getStackByName(stack.stackName);
    const resources = Object.keys(template.template.Resources).length;
    console.log(`${workers} workers, ${workers} jobs: synth ${(synthMs / 1000).toFixed(1)} s, ${resources} resources`);
    execFileSync('cfn-lint', ['--ignore-checks', 'W3005', '--', template.templateFullPath], { stdio: 'inherit' });
    console.log('cfn-lint: no findings');
    if (!values['no-local']) {
      const localStarted = performance.now();
      const run = await runLocally({ assemblyDir: outdir, count: 1, copies: 1, timeoutSeconds: 600 });
      const succeeded = run.rows.filter((r) => r.status === 'SUCCEEDED').length;
      console.log(
        `runLocally: ${run.rows.length} occurrences fired, ${succeeded} SUCCEEDED, ok ${run.ok}, ${((performance.now() - localStarted) / 1000).toFixed(1)} s`,
      );
      if (!run.ok) process.exitCode = 1;
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
