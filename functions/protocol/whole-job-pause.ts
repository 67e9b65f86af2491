/**
 * Whether a job that takes schedules at run time is paused as a whole (`pauseJob`): its job-state row, at the job's
 * own partition, not at any schedule's. Every start of every one of its schedules asks, so the answer is kept for
 * WHOLE_JOB_PAUSE_CACHE_MS per worker container: 100,000 schedules due at once read that one item about once per
 * container per interval instead of once per start (a single item serves about 3,000 strongly consistent reads per
 * second, and cannot be split). A pause reaches the starts within that interval; a resume likewise.
 */
import type { Clock, JobSlotStore, WholeJobPauses } from './ports';

/** How long a worker container trusts what it read of a job's pause. */
export const WHOLE_JOB_PAUSE_CACHE_MS = 15_000;

/** Reads the job's state row at most once per WHOLE_JOB_PAUSE_CACHE_MS per job (eventually consistent). */
export class CachedWholeJobPauses implements WholeJobPauses {
  // The read itself is kept, so the concurrent starts of one batch share one read instead of each making its own.
  private readonly known = new Map<string, { readonly paused: Promise<boolean>; readonly readAt: number }>();

  constructor(
    private readonly slots: Pick<JobSlotStore, 'read'>,
    private readonly clock: Clock,
    private readonly maxAgeMs: number = WHOLE_JOB_PAUSE_CACHE_MS,
  ) {}

  isPaused(jobId: string): Promise<boolean> {
    const now = this.clock.now();
    const cached = this.known.get(jobId);
    if (cached !== undefined && now - cached.readAt < this.maxAgeMs) return cached.paused;
    const paused = this.slots.read(jobId, false).then((state) => state?.pausedAt !== undefined);
    this.known.set(jobId, { paused, readAt: now });
    // A failed read is not kept: the next start reads again (and this one's caller sees the failure).
    paused.catch(() => {
      if (this.known.get(jobId)?.paused === paused) this.known.delete(jobId);
    });
    return paused;
  }
}
