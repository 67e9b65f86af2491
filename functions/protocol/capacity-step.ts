/**
 * The worker's step for a job's concurrency cap (concurrency-cap.ts), kept apart from process-delivery.ts so that the
 * delivery flow calls three small functions:
 *
 *   claimed ─▶ admitClaimed: 'run' (a unit taken) or 'waiting' (recorded WAITING, the message acked)
 *   the attempt ended without a crash (run, SKIPPED or BUFFERED by the overlap policy, lease lost) ─▶ releaseClaimed
 *   a delivery found its occurrence final (its deadline passed while it waited) ─▶ leftWaiting
 *
 * Every function is a no-op for a job without maxConcurrency: no request is made.
 */
import { admit, leaveWaiting, release } from './concurrency-cap';
import type { JobSettings } from './job-settings';
import type { Occurrence, OccurrenceKey } from './occurrence';
import type { Logger, WorkerDeps } from './ports';
import { OUTCOME_RESERVE_SECONDS } from './setting-basics';

/**
 * Take a unit of the job's capacity for the claimed occurrence, or record it WAITING. The hold expires by itself when
 * this invocation must have ended (Lambda stops it then), plus the clock skew the protocol tolerates.
 */
export function admitClaimed(
  deps: WorkerDeps,
  settings: JobSettings,
  occurrence: Occurrence,
  leaseId: string,
  mustFinishBy: number,
  log: Logger,
): Promise<'run' | 'waiting'> {
  if (settings.maxConcurrency === undefined) return Promise.resolve('run');
  const holdUntil = mustFinishBy + (OUTCOME_RESERVE_SECONDS + settings.leaseSafetyMarginSeconds) * 1000;
  return admit(capacityDeps(deps, settings), settings, occurrence, leaseId, holdUntil, log);
}

/** The attempt of `leaseId` no longer runs: its unit is freed and the first waiting occurrences woken. Never throws. */
export async function releaseClaimed(
  deps: WorkerDeps,
  settings: JobSettings,
  key: OccurrenceKey,
  leaseId: string,
  log: Logger,
): Promise<void> {
  if (settings.maxConcurrency === undefined) return;
  await release(capacityDeps(deps, settings), settings, key, leaseId, log);
}

/** The occurrence is final: off the waiting list if it was on it, and the next one woken. Never throws. */
export async function leftWaiting(
  deps: WorkerDeps,
  settings: JobSettings,
  key: OccurrenceKey,
  log: Logger,
): Promise<void> {
  if (settings.maxConcurrency === undefined) return;
  await leaveWaiting(capacityDeps(deps, settings), settings, key, log);
}

function capacityDeps(deps: WorkerDeps, settings: JobSettings) {
  // The worker builds them whenever one of its jobs has maxConcurrency (functions/worker.ts).
  if (deps.capacity === undefined)
    throw new Error(`job ${settings.id} has maxConcurrency, but the worker was given no capacity store`);
  return { capacity: deps.capacity.store, waiting: deps.capacity.waiting, queue: deps.queue, clock: deps.clock };
}
