/**
 * checkWorkerJobs: before deploying, that each worker's entry implements every job the stack routes to it. A job its
 * worker's `defineWorker({ jobs })` leaves out passes the synth (the stack cannot run the app's code) and fails only
 * at run time, its messages rejected into the worker's dead-letter queue; this finds it in a unit test, in the time
 * it takes to import the entry files, naming the job and the file.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { WorkerJobsError } from './errors';

/**
 * What checkWorkerJobs reads of a ScheduledJobs (`scheduled-jobs-stack/cdk`): its workers, each with its entry file
 * and the ids of its jobs. A ScheduledJobs is one.
 */
export interface WorkerJobsSource {
  /** The workers by id: `ScheduledJobs.workers`. */
  readonly workers: ReadonlyMap<
    string,
    { readonly workerId: string; readonly entry: string; readonly jobs: readonly string[] }
  >;
}

/** What an entry's `handler` says of the jobs it implements: defineJob's one job, or defineWorker's ids. */
function implemented(handler: unknown): { readonly single: true } | { readonly ids: readonly string[] } | undefined {
  if (typeof handler !== 'function') return undefined;
  if ('definition' in handler) return { single: true };
  if ('jobIds' in handler && Array.isArray(handler.jobIds)) return { ids: handler.jobIds as string[] };
  return undefined;
}

/**
 * Imports the entry file of each worker of `jobs` (your ScheduledJobs; as your test runner imports TypeScript) and checks that its
 * `handler` implements every job added to that worker: `defineWorker({ jobs: { ... } })` names each job id, and
 * `defineJob` serves a worker of one job.
 *
 * @throws WorkerJobsError naming each job its worker does not implement, and the worker's entry file
 * @example
 * ```ts
 * it('every job has its implementation', async () => {
 *   const stack = new MyStack(new App(), 'Test');
 *   await checkWorkerJobs(stack.jobs);
 * });
 * ```
 */
export async function checkWorkerJobs(jobs: WorkerJobsSource): Promise<void> {
  const problems: string[] = [];
  for (const worker of jobs.workers.values()) {
    const file = path.resolve(worker.entry);
    let handler: unknown;
    try {
      ({ handler } = (await import(pathToFileURL(file).href)) as { handler?: unknown });
    } catch (error) {
      problems.push(`worker ${worker.workerId} (${file}): importing it failed: ${(error as Error).message}`);
      continue;
    }
    const has = implemented(handler);
    if (has === undefined) {
      problems.push(
        `worker ${worker.workerId} (${file}): exports no handler from defineWorker({ jobs }) or defineJob, so it runs none of its jobs (${worker.jobs.join(', ')})`,
      );
      continue;
    }
    if ('single' in has) {
      if (worker.jobs.length > 1)
        problems.push(
          `worker ${worker.workerId} (${file}): exports defineJob, which runs one job, but runs ${worker.jobs.join(', ')}; export defineWorker({ jobs: { ... } })`,
        );
      continue;
    }
    for (const jobId of worker.jobs.filter((id) => !has.ids.includes(id)))
      problems.push(
        `job ${jobId}: its worker ${worker.workerId} (${file}) does not implement it; add '${jobId}' to its defineWorker({ jobs }) (it has: ${has.ids.join(', ') || 'none'})`,
      );
  }
  if (problems.length > 0) throw new WorkerJobsError(problems);
}
