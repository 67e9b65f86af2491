/**
 * The job-state rows in memory, with the compare-and-swap on version that DynamoJobStateStore makes: the operator
 * actions' tests (job-control) and the console's run on it. `interfere` writes before the next compare-and-swap, and
 * `bump` is another writer (the worker) moving the version on.
 */
import { JOB_STATE_SORT_KEY, type JobState } from '../../functions/protocol/job-state';
import type { JobStateChange, JobStateStore, JobStateWrite } from '../../functions/protocol/ports';

export class MemoryJobStates implements JobStateStore {
  readonly rows = new Map<string, JobState>();
  /** Compare-and-swap writes asked for, applied or not. */
  writes = 0;
  interfere: ((jobId: string) => void) | undefined;

  async read(jobId: string): Promise<JobState | undefined> {
    return this.rows.get(jobId);
  }

  async write(jobId: string, expected: number | undefined, change: JobStateChange): Promise<JobStateWrite> {
    this.writes++;
    this.interfere?.(jobId);
    const current = this.rows.get(jobId);
    if (current?.version !== expected) return { written: false, current };
    const next: Record<string, unknown> = { ...(current ?? { jobId, scheduledTime: JOB_STATE_SORT_KEY }) };
    Object.assign(next, change.set, { version: (expected ?? 0) + 1 });
    for (const field of change.remove) delete next[field];
    this.rows.set(jobId, next as unknown as JobState);
    return { written: true, state: next as unknown as JobState };
  }

  /** Another writer (the worker) bumps the version. */
  bump(jobId: string): void {
    const row = this.rows.get(jobId) ?? ({ jobId, scheduledTime: JOB_STATE_SORT_KEY, version: 0 } as JobState);
    this.rows.set(jobId, { ...row, version: row.version + 1 });
  }
}
