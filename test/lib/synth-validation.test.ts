/**
 * Every mistake of a stack's addJob and addWorker calls, reported together by the synth and before any function is
 * bundled (lib/deferred-bundling.ts, lib/rejected-calls.ts). These apps bundle (no `aws:cdk:bundling-stacks`
 * context), so an asset directory in the assembly would show a bundle built before the error.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { afterEach, describe, expect, it } from 'vitest';
import { SAMPLE_DIGEST_ENTRY } from '../../examples/sample-app/sample-stack';
import { ValidationError } from '../../lib/errors';
import type { JobProps } from '../../lib/job-props';
import { ScheduledJobs } from '../../lib/scheduled-jobs';
import { WORKER_ENTRY } from './fixtures/test-stack';

const HOURLY = ScheduleExpression.rate(Duration.hours(1));
const THIS_FILE = path.relative(process.cwd(), __filename);
const outdirs: string[] = [];

afterEach(() => {
  for (const dir of outdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * An app that bundles, into an assembly directory of its own: the fast tier's CDK_CONTEXT_JSON turns bundling off
 * (`aws:cdk:bundling-stacks: []`), and the context given after the CLI's wins over it; with the asset metadata the
 * CLI asks for (what runLocally reads).
 */
function bundlingApp(): { app: App; outdir: string } {
  const outdir = mkdtempSync(path.join(tmpdir(), 'synth-validation-'));
  outdirs.push(outdir);
  return {
    app: new App({
      outdir,
      postCliContext: { 'aws:cdk:bundling-stacks': ['**'], 'aws:cdk:enable-asset-metadata': true },
    }),
    outdir,
  };
}

/** The ValidationError app.synth() throws. */
function synthError(app: App): ValidationError {
  try {
    app.synth();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('the synth threw nothing');
}

/** The asset directories and files the synth wrote: a bundle is one. */
const assetsIn = (outdir: string) =>
  existsSync(outdir) ? readdirSync(outdir).filter((f) => f.startsWith('asset.')) : [];

describe('ScheduledJobs: every configuration mistake at synth, before any bundling', () => {
  it('reports the problems of three bad jobs and a bad worker in one error, with the lines, and bundles nothing', () => {
    const { app, outdir } = bundlingApp();
    const jobs = new ScheduledJobs(new Stack(app, 'Bad'), 'Jobs');
    const exportsWorker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
    jobs.addJob('nightly', { schedule: HOURLY, worker: exportsWorker });
    // 1: a duplicate id; 2: both worker and entry; 3: an entry that is not there; 4: a worker with a bad memory size,
    // and a job of that worker, which adds nothing about the worker.
    jobs.addJob('nightly', { schedule: HOURLY, worker: exportsWorker });
    jobs.addJob('both', { schedule: HOURLY, worker: exportsWorker, entry: SAMPLE_DIGEST_ENTRY } as unknown as JobProps);
    jobs.addJob('missing', { schedule: HOURLY, entry: 'src/jobs/missing.ts' });
    const big = jobs.addWorker('big', { entry: WORKER_ENTRY, memorySize: 5 });
    jobs.addJob('on-big', { schedule: HOURLY, worker: big });

    const error = synthError(app);
    expect(error.problems).toHaveLength(4);
    expect(error.problems[0]).toMatch(/^addJob\(nightly\): a job with the id "nightly" exists already \(at /);
    expect(error.problems[1]).toMatch(/^addJob\(both\): give either worker or entry, not both/);
    expect(error.problems[2]).toContain(`addJob(missing).entry: no file at "${path.resolve('src/jobs/missing.ts')}"`);
    expect(error.problems[3]).toMatch(/^addWorker\(big\)\.memorySize: must be a whole number of MiB/);
    // Each names the app's line that made the call: this file.
    for (const problem of error.problems) expect(problem).toMatch(new RegExp(`\\(at ${THIS_FILE}:\\d+:\\d+\\)$`));
    // The error's stack trace starts at the first rejected call, in this file, not inside the package.
    expect(error.stack?.split('\n').find((line) => line.trim().startsWith('at '))).toContain(THIS_FILE);
    expect(assetsIn(outdir)).toEqual([]);
  });

  it("keeps the rejected calls' handles usable the way the app uses them before the synth", () => {
    const { app } = bundlingApp();
    const jobs = new ScheduledJobs(new Stack(app, 'Handles'), 'Jobs');
    const bad = jobs.addWorker('bad', { entry: 'nowhere.ts' });
    // A stand-in worker grants and takes environment variables as a real one does, so the app carries on.
    new s3.Bucket(Stack.of(jobs), 'Data').grantRead(bad);
    bad.function.addEnvironment('MODE', 'x');
    const job = jobs.addJob('dup', { schedule: HOURLY, entry: 'nowhere-either.ts' });
    expect(job.jobId).toBe('dup');
    // Using a rejected job's handle throws the problems found so far.
    expect(() => job.worker).toThrow(ValidationError);
    expect(() => job.metricFailed()).toThrow(/addJob\(dup\)\.entry: no file at/);
    expect(synthError(app).problems.map((p) => p.split(':')[0])).toEqual(['addWorker(bad).entry', 'addJob(dup).entry']);
  });

  it('bundles every function once the app is right, with the asset metadata local runs read', () => {
    const { app, outdir } = bundlingApp();
    const stack = new Stack(app, 'Good');
    const jobs = new ScheduledJobs(stack, 'Jobs');
    jobs.addJob('digest', { schedule: HOURLY, entry: SAMPLE_DIGEST_ENTRY });
    const assembly = app.synth();
    const template = assembly.getStackByName('Good').template as {
      Resources: Record<string, { Type: string; Metadata?: Record<string, unknown> }>;
    };
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    // The trigger, the notifier, the reconciler and the job's worker; no scratch function of the bundling is left.
    expect(functions).toHaveLength(4);
    const assetPaths = functions.map((f) => f.Metadata?.['aws:asset:path']);
    for (const asset of assetPaths) expect(existsSync(path.join(outdir, String(asset), 'index.js'))).toBe(true);
    expect(assetsIn(outdir).sort()).toEqual([...new Set(assetPaths)].sort());
  });
});
