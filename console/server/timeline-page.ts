/**
 * GET /api/timeline: one page of a job's (or one schedule's) occurrences in [from, to), newest first, at most
 * TIMELINE_PAGE_BARS: one Query of the series' partition (a page of 1,000 may take a second Query when DynamoDB
 * stops at 1 MB). A full page says `before`: the page asks again with it for the older rows, so a year of a
 * per-minute job is read a page at a time and only as far as the page wants (it stops at MAX_TIMELINE_BARS).
 * With the page, the job's fire times in (now, to], for the timeline to draw ahead of now.
 */
import { type DeployedJob, isPaused, seriesOfJob } from '../../functions/protocol/job-control';
import { isoSeconds } from '../../functions/protocol/occurrence';
import { TIMELINE_PAGE_BARS, type TimelinePage } from '../contract';
import type { ConsoleDeps } from './deps';
import { deployedJobOf, scheduleOfJob } from './jobs';
import { barOf, fireTimes } from './timeline';

/** The most fire times ahead a timeline page carries. */
export const MAX_NEXT_FIRES = 100;

export interface TimelineQuery {
  readonly jobId: string;
  readonly key?: string;
  /** Epoch milliseconds, included. */
  readonly from: number;
  /** Epoch milliseconds, excluded. */
  readonly to: number;
  /** Epoch milliseconds, excluded: the previous page's oldest scheduled time. */
  readonly before?: number;
}

export async function timelinePage(deps: ConsoleDeps, q: TimelineQuery): Promise<Omit<TimelinePage, 'readUnits'>> {
  const template = await deployedJobOf(deps, q.jobId);
  let job: DeployedJob = template;
  let registryPaused = false;
  if (q.key !== undefined) {
    if (deps.registry === undefined) {
      // The rows can be read without the registry; only the schedule (and so its fire times) is unknown.
      job = { ...template, scheduleKey: q.key, state: 'UNKNOWN' };
    } else {
      const found = await scheduleOfJob(deps, template, q.key);
      job = found.job;
      registryPaused = found.schedule.state === 'PAUSED';
    }
  }
  const series = seriesOfJob(job);
  // Scheduled times are whole seconds: [from, to) in whole seconds holds the same rows.
  const from = Math.ceil(q.from / 1000) * 1000;
  const end = Math.ceil(Math.min(q.to, q.before ?? q.to) / 1000) * 1000;
  const rows =
    from < end
      ? await deps.occurrences.newestFirst(series, {
          from: isoSeconds(from),
          to: isoSeconds(end),
          limit: TIMELINE_PAGE_BARS,
        })
      : [];
  const oldest = rows.at(-1);
  const now = deps.clock.now();
  const template_ = job.runtimeScheduleGroup !== undefined && job.scheduleKey === undefined;
  let next: string[] = [];
  if (q.to > now && job.state === 'ENABLED' && !template_ && !registryPaused) {
    // Read only when the range reaches past now: a paused job fires nothing.
    const state = await deps.states.read(series);
    if (!isPaused(state)) next = fireTimes(job, { after: now, until: q.to, max: MAX_NEXT_FIRES, recent: rows });
  }
  return {
    jobId: q.jobId,
    ...(q.key === undefined ? {} : { scheduleKey: q.key }),
    from: new Date(q.from).toISOString(),
    to: new Date(q.to).toISOString(),
    bars: rows.map(barOf),
    ...(rows.length === TIMELINE_PAGE_BARS && oldest !== undefined ? { before: oldest.scheduledTime } : {}),
    next,
  };
}
