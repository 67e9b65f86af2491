/**
 * GET /api/timelines: every job on one time axis, a page of rows at a time, each row counts by status per bucket
 * (and its bars when it has few). A row reads its series' partition, newest first, projected to the bar's attributes
 * (the read the job's own timeline makes), so that successes show: the status index would be a fixed number of
 * Queries, but an announced success has left it, and a timeline without its successes would mislead.
 *
 * What bounds a page's requests is the page, not the number of jobs:
 *
 *   Query (table)     at most SERIES_PER_PAGE series partitions (a fixed job is one; a job with run-time schedules
 *                     aggregates its first KEYS_PER_ROW keys, one each), one page of TIMELINE_ROW_READ rows each
 *                     (a second when DynamoDB stops a page at 1 MB)
 *   Query (registry)  one per run-time-schedule job on the page: its first keys
 *   GetItem           one per run-time-schedule job on the page: whether the whole job is paused (its job-state row)
 *   GetSchedule       one per job on the page, unless read in the last 30 s (RecentJobs)
 *   ListSchedules     the job ids: one per page of the group's schedules (Scheduler; the jobs page makes the same)
 *
 * With `job=J`, the rows are J's keys, KEY_ROWS_PER_PAGE a page in key order, one Query each, one registry Query.
 */
import { type DeployedJob, isPaused, seriesOfJob } from '../../functions/protocol/job-control';
import { isoSeconds, type Occurrence } from '../../functions/protocol/occurrence';
import { deployedScheduleOf, listSchedules, type RuntimeSchedule } from '../../operations/schedules';
import {
  type AllTimelines,
  type Status,
  TIMELINE_ROW_BARS,
  TIMELINE_ROW_READ,
  type TimelineBar,
  type TimelineRow,
} from '../contract';
import type { ConsoleDeps } from './deps';
import { HttpError } from './http-errors';
import { deployedJobOf } from './jobs';
import { barOf, fireTimes } from './timeline';
import { MAX_NEXT_FIRES } from './timeline-page';

/** The most series partitions one page of the all-jobs timeline reads: what bounds its requests. */
export const SERIES_PER_PAGE = 40;
/** The keys of a run-time-schedule job its aggregated row adds up (the first, in key order). */
export const KEYS_PER_ROW = 8;
/** One job's keys a page shows as rows (`job=J`). */
export const KEY_ROWS_PER_PAGE = 20;
/** Series read at once. */
const CONCURRENCY = 8;

export interface AllTimelinesQuery {
  /** Epoch milliseconds, included. */
  readonly from: number;
  /** Epoch milliseconds, excluded. */
  readonly to: number;
  readonly buckets: number;
  /** One job's keys instead of every job. */
  readonly job?: string;
  /** Every job: the last job id of the previous page. One job's keys: the registry's cursor. */
  readonly cursor?: string;
}

type Answer = Omit<AllTimelines, 'readUnits'>;

export async function allTimelines(deps: ConsoleDeps, q: AllTimelinesQuery): Promise<Answer> {
  const window = windowOf(q);
  const base = { from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), bucketMs: window.bucketMs };
  if (q.job !== undefined) return { ...base, job: q.job, ...(await keyRows(deps, q.job, q.cursor, window)) };
  return { ...base, ...(await jobRows(deps, q.cursor, window)) };
}

/** The range in whole seconds (scheduled times are) and its buckets. */
interface Window {
  readonly from: number;
  readonly to: number;
  readonly buckets: number;
  readonly bucketMs: number;
}

function windowOf(q: AllTimelinesQuery): Window {
  return { from: q.from, to: q.to, buckets: q.buckets, bucketMs: (q.to - q.from) / q.buckets };
}

/** A page of jobs, in id order, until SERIES_PER_PAGE would be passed. */
async function jobRows(
  deps: ConsoleDeps,
  cursor: string | undefined,
  window: Window,
): Promise<Pick<AllTimelines, 'rows' | 'cursor' | 'jobCount'>> {
  const ids = await deps.jobs.jobIds();
  const after = cursor === undefined ? ids : ids.filter((id) => id > cursor);
  const page: DeployedJob[] = [];
  let series = 0;
  let last: string | undefined;
  let full = false;
  for (let i = 0; i < after.length && !full && series < SERIES_PER_PAGE; ) {
    // Every job costs at least one series: read no more of them than could still fit.
    const batch = after.slice(i, i + Math.min(CONCURRENCY, SERIES_PER_PAGE - series));
    const jobs = await Promise.all(batch.map((id) => deps.jobs.job(id)));
    for (const [n, job] of jobs.entries()) {
      const cost = job === undefined ? 0 : job.runtimeScheduleGroup !== undefined ? KEYS_PER_ROW : 1;
      full = series + cost > SERIES_PER_PAGE;
      if (full) break;
      series += cost;
      last = batch[n];
      // Deleted between the listing and the read: left out.
      if (job !== undefined) page.push(job);
    }
    i += batch.length;
  }
  const rows = await inBatches(page, CONCURRENCY, (job) =>
    job.runtimeScheduleGroup === undefined ? fixedRow(deps, job, window) : aggregatedRow(deps, job, window),
  );
  const more = last !== undefined && last !== after.at(-1);
  return { rows, jobCount: ids.length, ...(more ? { cursor: last } : {}) };
}

/** A job with a fixed schedule: its series. */
async function fixedRow(deps: ConsoleDeps, job: DeployedJob, window: Window): Promise<TimelineRow> {
  const rows = await seriesRows(deps, seriesOfJob(job), window);
  const paused = job.state !== 'ENABLED';
  return {
    jobId: job.id,
    paused,
    ...rowOf([rows], window),
    next: paused ? [] : nextFires(deps, job, window, rows),
  };
}

/** A job whose schedules are made at run time: its first KEYS_PER_ROW keys, added up. */
async function aggregatedRow(deps: ConsoleDeps, template: DeployedJob, window: Window): Promise<TimelineRow> {
  const [listed, state] = await Promise.all([
    deps.registry === undefined ? undefined : listSchedules(deps.registry, template.id, { limit: KEYS_PER_ROW }),
    deps.states.read(template.id),
  ]);
  const schedules = listed?.schedules ?? [];
  const jobPaused = isPaused(state);
  const keyed = await Promise.all(
    schedules.map(async (schedule) => {
      const job = deployedScheduleOf(template, schedule);
      const rows = await seriesRows(deps, seriesOfJob(job), window);
      return { rows, next: jobPaused || job.state !== 'ENABLED' ? [] : nextFires(deps, job, window, rows) };
    }),
  );
  const { bars: _bars, ...counts } = rowOf(
    keyed.map((k) => k.rows),
    window,
  );
  return {
    jobId: template.id,
    aggregated: { keys: schedules.length, moreKeys: listed?.cursor !== undefined },
    paused: jobPaused,
    ...counts,
    next: mergeTimes(keyed.map((k) => k.next)),
  };
}

/** One job's keys as rows, a registry page at a time. */
async function keyRows(
  deps: ConsoleDeps,
  jobId: string,
  cursor: string | undefined,
  window: Window,
): Promise<Pick<AllTimelines, 'rows' | 'cursor'>> {
  const template = await deployedJobOf(deps, jobId);
  if (template.runtimeScheduleGroup === undefined)
    throw new HttpError(404, `job: ${jobId} has a fixed schedule; only a job with runtimeSchedules has keys`);
  if (deps.registry === undefined)
    throw new HttpError(404, 'job: the schedule registry is unknown: start the console with --registry-table');
  const [listed, state] = await Promise.all([
    listSchedules(deps.registry, jobId, { limit: KEY_ROWS_PER_PAGE, ...(cursor === undefined ? {} : { cursor }) }),
    deps.states.read(jobId),
  ]);
  const rows = await inBatches(listed.schedules, CONCURRENCY, (schedule) =>
    keyRow(deps, template, schedule, isPaused(state), window),
  );
  return { rows, ...(listed.cursor === undefined ? {} : { cursor: listed.cursor }) };
}

async function keyRow(
  deps: ConsoleDeps,
  template: DeployedJob,
  schedule: RuntimeSchedule,
  jobPaused: boolean,
  window: Window,
): Promise<TimelineRow> {
  const job = deployedScheduleOf(template, schedule);
  const rows = await seriesRows(deps, seriesOfJob(job), window);
  const paused = jobPaused || job.state !== 'ENABLED';
  return {
    jobId: template.id,
    scheduleKey: schedule.scheduleKey,
    paused,
    ...rowOf([rows], window),
    next: paused ? [] : nextFires(deps, job, window, rows),
  };
}

/** A series' rows in the window, newest first, at most TIMELINE_ROW_READ. */
function seriesRows(deps: ConsoleDeps, series: string, window: Window): Promise<Occurrence[]> {
  const from = Math.ceil(window.from / 1000) * 1000;
  const to = Math.ceil(window.to / 1000) * 1000;
  if (from >= to) return Promise.resolve([]);
  return deps.occurrences.newestFirst(series, { from: isoSeconds(from), to: isoSeconds(to), limit: TIMELINE_ROW_READ });
}

/** The buckets, bars and read limit of one or more series' rows (each newest first). */
export function rowOf(
  series: readonly (readonly Occurrence[])[],
  window: Window,
): Pick<TimelineRow, 'buckets' | 'bars' | 'readFrom'> {
  const buckets = new Map<number, Partial<Record<Status, number>>>();
  let readFrom: string | undefined;
  let total = 0;
  for (const rows of series) {
    total += rows.length;
    // A full read stopped there: older rows in the range were not read. The latest such stop is where the row is whole.
    const oldest = rows.at(-1);
    if (
      rows.length >= TIMELINE_ROW_READ &&
      oldest !== undefined &&
      (readFrom === undefined || oldest.scheduledTime > readFrom)
    )
      readFrom = oldest.scheduledTime;
    for (const row of rows) {
      const at = Date.parse(row.scheduledTime);
      const index = Math.min(window.buckets - 1, Math.max(0, Math.floor((at - window.from) / window.bucketMs)));
      const counts = buckets.get(index) ?? {};
      counts[row.status] = (counts[row.status] ?? 0) + 1;
      buckets.set(index, counts);
    }
  }
  const bars: TimelineBar[] | undefined = total <= TIMELINE_ROW_BARS ? series.flat().map(barOf) : undefined;
  return {
    buckets: [...buckets.entries()].sort(([a], [b]) => a - b),
    ...(bars === undefined ? {} : { bars }),
    ...(readFrom === undefined ? {} : { readFrom }),
  };
}

function nextFires(deps: ConsoleDeps, job: DeployedJob, window: Window, recent: readonly Occurrence[]): string[] {
  const now = deps.clock.now();
  if (window.to <= now) return [];
  return fireTimes(job, { after: Math.max(now, window.from - 1), until: window.to, max: MAX_NEXT_FIRES, recent });
}

/** Several sorted lists of times as one, sorted, without repeats, at most MAX_NEXT_FIRES. */
function mergeTimes(lists: readonly (readonly string[])[]): string[] {
  return [...new Set(lists.flat())].sort().slice(0, MAX_NEXT_FIRES);
}

async function inBatches<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  return results;
}
