/**
 * The deployed jobs as read a moment ago. One view of a timeline asks for its job on each of its pages (ten for
 * 10,000 occurrences), and the jobs page for every job: each a Scheduler GetSchedule, which costs nothing but counts
 * against the account's Scheduler request rate. A job read within RECENT_JOB_MS is answered from memory; an action
 * forgets them all, since pause and resume change a schedule's state.
 */
import type { DeployedJob } from '../../functions/protocol/job-control';
import type { Clock } from '../../functions/protocol/ports';
import type { ConsoleJobCatalogue } from './deps';

/** How long a job read from Scheduler is reused: about the time one view takes to load. */
export const RECENT_JOB_MS = 30_000;

export class RecentJobs implements ConsoleJobCatalogue {
  private readonly jobs = new Map<string, { readonly at: number; readonly job: Promise<DeployedJob | undefined> }>();

  constructor(
    private readonly catalogue: ConsoleJobCatalogue,
    private readonly clock: Clock,
  ) {}

  /** Always read anew: a job deployed or removed since shows at once. */
  jobIds(): Promise<string[]> {
    return this.catalogue.jobIds();
  }

  /** Always read anew, as jobIds: a pause shows at once. */
  disabledJobIds(): Promise<string[]> {
    return this.catalogue.disabledJobIds?.() ?? Promise.resolve([]);
  }

  job(jobId: string): Promise<DeployedJob | undefined> {
    const now = this.clock.now();
    const recent = this.jobs.get(jobId);
    if (recent !== undefined && now - recent.at < RECENT_JOB_MS) return recent.job;
    const entry = { at: now, job: this.catalogue.job(jobId) };
    this.jobs.set(jobId, entry);
    // A failed read is not kept: the next request asks Scheduler again.
    entry.job.catch(() => {
      if (this.jobs.get(jobId) === entry) this.jobs.delete(jobId);
    });
    return entry.job;
  }

  /** After an action: the next read of every job asks Scheduler. */
  forget(): void {
    this.jobs.clear();
  }
}
