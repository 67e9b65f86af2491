/**
 * checkWorkerJobs: a job its worker's entry does not implement is found before deploy, naming the job and the file
 * (it used to pass the synth and fail at run time, its messages in the DLQ).
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { describe, expect, it } from 'vitest';
import { SAMPLE_DIGEST_ENTRY } from '../../examples/sample-app/sample-stack';
import { ScheduledJobs } from '../../lib/scheduled-jobs';
import { checkWorkerJobs, WorkerJobsError } from '../../testing/index';
import { WORKER_ENTRY } from '../lib/fixtures/test-stack';

const HOURLY = ScheduleExpression.rate(Duration.hours(1));

/** A ScheduledJobs that does not bundle, with the shared worker of test/lib's fixtures (weekly- and hourly-export). */
function scheduledJobs(): ScheduledJobs {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return new ScheduledJobs(new Stack(app, 'Check'), 'Jobs');
}

describe('checkWorkerJobs', () => {
  it('passes when every job of every worker is implemented, defineWorker and defineJob alike', async () => {
    const jobs = scheduledJobs();
    const exportsWorker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
    jobs.addJob('weekly-export', { schedule: HOURLY, worker: exportsWorker });
    jobs.addJob('hourly-export', { schedule: HOURLY, worker: exportsWorker });
    jobs.addJob('digest', { schedule: HOURLY, entry: SAMPLE_DIGEST_ENTRY });
    await expect(checkWorkerJobs(jobs)).resolves.toBeUndefined();
  });

  it('names the job its worker does not implement, the worker, its file and what it has', async () => {
    const jobs = scheduledJobs();
    const exportsWorker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
    jobs.addJob('weekly-export', { schedule: HOURLY, worker: exportsWorker });
    jobs.addJob('monthly-export', { schedule: HOURLY, worker: exportsWorker });
    const error = await checkWorkerJobs(jobs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerJobsError);
    expect((error as WorkerJobsError).problems).toEqual([
      `job monthly-export: its worker exports (${WORKER_ENTRY}) does not implement it; add 'monthly-export' to its ` +
        'defineWorker({ jobs }) (it has: weekly-export, hourly-export)',
    ]);
  });
});
