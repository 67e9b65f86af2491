/**
 * The console reads a job's schedule from Scheduler once per view, not once per timeline page: RecentJobs keeps a
 * job read within RECENT_JOB_MS, forgets a failed read, and forgets everything after an action (pause and resume
 * change the schedule's state, which the next page must show).
 */
import { describe, expect, it } from 'vitest';
import { RECENT_JOB_MS, RecentJobs } from '../../console/server/recent-jobs';
import type { DeployedJob } from '../../functions/protocol/job-control';
import { appOf, HOURLY, hourlyJob, post, signedIn, world } from './server-support';

/** A catalogue that counts its GetSchedule calls and answers from `answers` in turn. */
function countingCatalogue(answers: Array<() => Promise<DeployedJob | undefined>>) {
  const calls: string[] = [];
  return {
    calls,
    jobIds: async () => [HOURLY],
    job: (jobId: string) => {
      calls.push(jobId);
      return (answers.shift() ?? (async () => hourlyJob))();
    },
  };
}

describe('RecentJobs', () => {
  it('answers a job read within RECENT_JOB_MS from memory, and reads it again after', async () => {
    let now = 0;
    const catalogue = countingCatalogue([]);
    const jobs = new RecentJobs(catalogue, { now: () => now });

    await jobs.job(HOURLY);
    now = RECENT_JOB_MS - 1;
    expect(await jobs.job(HOURLY)).toEqual(hourlyJob);
    expect(catalogue.calls).toHaveLength(1);
    now = RECENT_JOB_MS;
    await jobs.job(HOURLY);
    expect(catalogue.calls).toHaveLength(2);
  });

  it('does not keep a failed read: the next request asks again', async () => {
    const catalogue = countingCatalogue([() => Promise.reject(new Error('throttled'))]);
    const jobs = new RecentJobs(catalogue, { now: () => 0 });

    await expect(jobs.job(HOURLY)).rejects.toThrow('throttled');
    expect(await jobs.job(HOURLY)).toEqual(hourlyJob);
    expect(catalogue.calls).toHaveLength(2);
  });

  it('reads every job again after forget', async () => {
    const catalogue = countingCatalogue([]);
    const jobs = new RecentJobs(catalogue, { now: () => 0 });

    await jobs.job(HOURLY);
    jobs.forget();
    await jobs.job(HOURLY);
    expect(catalogue.calls).toHaveLength(2);
  });
});

describe('the console app', () => {
  it('reads the job once for the pages of one timeline view, and again after an action', async () => {
    const w = await world();
    const catalogue = countingCatalogue([]);
    const app = appOf({ ...w.deps, jobs: catalogue });
    const timeline = `/api/timeline?job=${HOURLY}&from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z`;

    for (const before of ['', '&before=2026-12-01T10:00:00Z', '&before=2026-12-01T09:00:00Z'])
      expect((await signedIn(app, timeline + before)).status).toBe(200);
    expect(catalogue.calls).toEqual([HOURLY]);
    expect((await post(app, 'pause', { jobId: HOURLY, note: 'migration' })).status).toBe(200);
    expect((await signedIn(app, `/api/jobs/${HOURLY}`)).status).toBe(200);
    // Without forget, the job page would be answered from memory, with the schedule's state before the pause.
    expect(catalogue.calls).toEqual([HOURLY, HOURLY]);
  });
});
