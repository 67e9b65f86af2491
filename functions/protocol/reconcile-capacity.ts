/**
 * The reconciler's part of the concurrency cap (concurrency-cap.ts): for every capped job, waiting occurrences whose
 * row went final leave the list, and the first ones that can start are woken on their worker's queue, one per free
 * unit. It repairs a lost wake-up (a worker that died before its release, a send that failed) within one run of the
 * unit freeing: a dead worker's hold expires with its invocation, so a waiting occurrence starts at most one function
 * timeout plus one reconciler interval after its turn came (docs/concurrency.md).
 */
import { repairCapacity } from './concurrency-cap';
import type { CapacityPorts } from './concurrency-ports';
import { messageOf } from './errors';
import type { Clock, Logger, WorkQueue } from './ports';
import { JOB_ID_PATTERN, JobSettingsError, parseJsonVariable } from './setting-basics';

/** One capped job as the stack tells the reconciler of it (CAPPED_JOBS). */
export interface CappedJob {
  readonly id: string;
  readonly worker: string;
  readonly maxConcurrency: number;
}

export interface CapacityReconcileDeps {
  readonly ports: CapacityPorts;
  readonly jobs: readonly CappedJob[];
  /** The queue of the capped job's worker (its route, as the job's schedule names it). */
  readonly queueOf: (job: CappedJob) => Promise<WorkQueue | undefined>;
  readonly clock: Clock;
  readonly logger: Logger;
}

export interface CapacityReconcileReport {
  readonly woken: number;
  readonly dropped: number;
  readonly errors: number;
}

export async function reconcileCapacity(deps: CapacityReconcileDeps): Promise<CapacityReconcileReport> {
  let woken = 0;
  let dropped = 0;
  let errors = 0;
  for (const job of deps.jobs) {
    const queue = await deps.queueOf(job).catch(() => undefined);
    if (queue === undefined) {
      errors++;
      deps.logger.error('capped job names a worker the reconciler has no queue for', {
        jobId: job.id,
        worker: job.worker,
      });
      continue;
    }
    try {
      const capacity = { capacity: deps.ports.store, waiting: deps.ports.waiting, queue, clock: deps.clock };
      const repaired = await repairCapacity(capacity, job, deps.logger);
      woken += repaired.woken;
      dropped += repaired.dropped;
    } catch (error) {
      errors++;
      deps.logger.error('could not repair the waiting list of a capped job', {
        jobId: job.id,
        error: messageOf(error),
      });
    }
  }
  if (woken + dropped > 0) deps.logger.info('woke occurrences waiting for job concurrency', { woken, dropped });
  return { woken, dropped, errors };
}

/** Parse CAPPED_JOBS, the JSON array of `{ id, worker, maxConcurrency }` the stack sets; throws naming each problem. */
export function parseCappedJobs(json: string | undefined, source: string): readonly CappedJob[] {
  const parsed = parseJsonVariable(json, source);
  if (!Array.isArray(parsed)) throw new JobSettingsError([`${source} must be a JSON array of capped jobs`]);
  const problems = parsed.flatMap((item: unknown, i) => {
    const job = item as Partial<CappedJob> | null;
    const ok =
      typeof job === 'object' &&
      job !== null &&
      typeof job.id === 'string' &&
      JOB_ID_PATTERN.test(job.id) &&
      typeof job.worker === 'string' &&
      Number.isInteger(job.maxConcurrency) &&
      (job.maxConcurrency ?? 0) >= 1;
    return ok ? [] : [`${source}[${i}] must be { id, worker, maxConcurrency }, got ${JSON.stringify(item)}`];
  });
  if (problems.length > 0) throw new JobSettingsError(problems);
  return parsed as CappedJob[];
}
