/**
 * GET /api/attention: what needs an operator across every job, read through the status index so that its cost does
 * not grow with the number of jobs. Its requests per view:
 *
 *   Query     every shard of the OPEN key and of the FAILED key (2 × STATUS_INDEX_SHARDS, more pages only when a
 *             shard holds more than a page in the window): the same at 10, 100 or 1,000 jobs
 *   BatchGet  the full rows of the FAILED and RUNNING items listed (their error, progress, heartbeat): one per 100
 *   GetSchedule  the route (lateAfter) of each job with a PENDING or BUFFERED occurrence, unless read in the last 30 s
 *   ListSchedules  the group's DISABLED schedules (filtered by state): one call per 100 of them, no GetSchedule
 *   GetItem   the job-state row of each DISABLED schedule only (a paused job, or a run-time-schedule job's template)
 *
 * Most urgent first: FAILED (newest first), late (most late first: PENDING or BUFFERED past the job's lateAfter, or
 * PENDING past EXPECTED_START_SECONDS for a job without one), RUNNING (the stalest heartbeat first), BUFFERED (oldest
 * first); then the paused jobs, the longest paused first.
 */
import type { RunFields } from '../../functions/protocol/checkpoint';
import { isPaused } from '../../functions/protocol/job-control';
import type { Occurrence } from '../../functions/protocol/occurrence';
import { seriesOf } from '../../functions/protocol/schedule-key';
import { type IndexedOccurrence, indexShards, OPEN_INDEX_KEY } from '../../functions/protocol/table-schema';
import {
  ATTENTION_ITEMS,
  type AttentionItem,
  type AttentionKind,
  type AttentionView,
  EXPECTED_START_SECONDS,
  type PausedJob,
  type Status,
} from '../contract';
import type { AttentionIndex, ConsoleDeps } from './deps';

/** What to list: one job's, some kinds (absent: every job, every kind). */
export interface AttentionFilter {
  readonly job?: string;
  readonly kinds?: readonly AttentionKind[];
}

/** Shard Queries in flight at once. */
const CONCURRENCY = 16;

type Counts = Partial<Record<Status, number>>;

export async function attentionView(
  deps: ConsoleDeps & { readonly index: AttentionIndex },
  range: { readonly from: string; readonly to: string },
  filter: AttentionFilter = {},
): Promise<Omit<AttentionView, 'readUnits'>> {
  const now = deps.clock.now();
  const wanted = (kind: AttentionKind) => filter.kinds === undefined || filter.kinds.includes(kind);
  const shards = [...indexShards(OPEN_INDEX_KEY), ...indexShards('FAILED')];
  const entries = (
    await inBatches(shards, CONCURRENCY, async (shard) => {
      const found: IndexedOccurrence[] = [];
      for await (const page of deps.index.shardPages(shard, range.from, range.to)) found.push(...page);
      return found;
    })
  ).flat();
  // An announced success left the index; one not announced yet is in it, but counting those would mislead.
  const counted = entries.filter(
    (e) => e.status !== 'SUCCEEDED' && (filter.job === undefined || e.jobId === filter.job),
  );
  const { total, jobs } = countsOf(counted);

  const of = (status: Status) => counted.filter((e) => e.status === status);
  const failed = wanted('failed') ? of('FAILED').sort((a, b) => b.scheduledTime.localeCompare(a.scheduledTime)) : [];
  // Judged whatever the filter: a late BUFFERED occurrence is listed as late, never as buffered.
  const allLate = await lateOf(deps, [...of('PENDING'), ...of('BUFFERED')], now);
  const late = wanted('late') ? allLate : [];
  const running = wanted('running') ? of('RUNNING') : [];
  const lateIds = new Set(allLate.map((l) => idOf(l.entry)));
  const buffered = (wanted('buffered') ? of('BUFFERED') : [])
    .filter((e) => !lateIds.has(idOf(e)))
    .sort((a, b) => a.scheduledTime.localeCompare(b.scheduledTime));

  const rows = await rowsOf(deps.index, [...failed.slice(0, ATTENTION_ITEMS), ...running.slice(0, ATTENTION_ITEMS)]);
  const items: AttentionItem[] = [
    ...failed.map((e) => failedItem(e, rows.get(idOf(e)))),
    ...late.map(({ entry, lateByMs, lateAgainst }) => ({ ...base('late', entry), lateByMs, lateAgainst })),
    ...running
      .map((e) => runningItem(e, rows.get(idOf(e)), now))
      .sort((a, b) => (b.heartbeatAgeMs ?? 0) - (a.heartbeatAgeMs ?? 0)),
    ...buffered.map((e) => base('buffered', e)),
  ];
  const paused = wanted('paused') ? await pausedJobs(deps, filter.job) : [];
  return {
    from: range.from,
    to: range.to,
    total,
    jobs,
    items: items.slice(0, ATTENTION_ITEMS),
    truncated: items.length > ATTENTION_ITEMS,
    paused,
    ...(filter.job === undefined ? {} : { job: filter.job }),
    ...(filter.kinds === undefined ? {} : { kinds: filter.kinds }),
  };
}

/**
 * The paused jobs, the longest paused first: Scheduler's list of the group's DISABLED schedules (no GetSchedule),
 * then the job-state row of each. A pause disables the job's schedule and records who, when and why in
 * that row; a run-time-schedule job's template is always DISABLED, and its row says whether the whole job is paused.
 * A schedule disabled with no pause recorded (a template not paused, or a change made outside the stack) is not
 * listed: nothing says who or why. One run-time schedule paused alone is in the registry, on the job's schedules list.
 */
async function pausedJobs(deps: ConsoleDeps, job: string | undefined): Promise<PausedJob[]> {
  const disabled = ((await deps.jobs.disabledJobIds?.()) ?? []).filter((id) => job === undefined || id === job);
  const states = await inBatches(disabled, CONCURRENCY, (id) => deps.states.read(id));
  return states
    .flatMap((state): PausedJob[] =>
      state === undefined || !isPaused(state)
        ? []
        : [
            {
              jobId: state.jobId,
              at: state.pausedAt as string,
              by: state.pausedBy ?? 'unknown',
              note: state.pauseNote ?? '',
              cause: state.pauseCause ?? 'operator',
            },
          ],
    )
    .sort((a, b) => a.at.localeCompare(b.at));
}

function countsOf(entries: readonly IndexedOccurrence[]): Pick<AttentionView, 'total' | 'jobs'> {
  const total: Counts = {};
  const bySeries = new Map<string, { jobId: string; scheduleKey?: string; counts: Counts }>();
  for (const e of entries) {
    const status = e.status as Status;
    total[status] = (total[status] ?? 0) + 1;
    const series = seriesOf(e);
    let job = bySeries.get(series);
    if (job === undefined) {
      job = { jobId: e.jobId, ...(e.scheduleKey === undefined ? {} : { scheduleKey: e.scheduleKey }), counts: {} };
      bySeries.set(series, job);
    }
    job.counts[status] = (job.counts[status] ?? 0) + 1;
  }
  const jobs = [...bySeries.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, job]) => job);
  return { total, jobs };
}

/**
 * The waiting occurrences past their job's lateAfter, most late first. A job without one: a PENDING occurrence past
 * EXPECTED_START_SECONDS (a worker claims a recorded one in seconds); a BUFFERED one is not judged, since it waits
 * by design for the run before it, whose length the stack does not know.
 */
async function lateOf(
  deps: ConsoleDeps,
  waiting: readonly IndexedOccurrence[],
  now: number,
): Promise<{ entry: IndexedOccurrence; lateByMs: number; lateAgainst: 'lateAfter' | 'expectedStart' }[]> {
  const jobIds = [...new Set(waiting.map((e) => e.jobId))];
  const routes = new Map(await Promise.all(jobIds.map(async (id) => [id, (await deps.jobs.job(id))?.route] as const)));
  return waiting
    .flatMap((entry) => {
      const lateAfter = routes.get(entry.jobId)?.lateAfterSeconds;
      if (lateAfter === undefined && entry.status !== 'PENDING') return [];
      const lateAgainst = lateAfter === undefined ? ('expectedStart' as const) : ('lateAfter' as const);
      const lateByMs = now - Date.parse(entry.scheduledTime) - (lateAfter ?? EXPECTED_START_SECONDS) * 1000;
      return lateByMs > 0 ? [{ entry, lateByMs, lateAgainst }] : [];
    })
    .sort((a, b) => b.lateByMs - a.lateByMs);
}

async function rowsOf(index: AttentionIndex, entries: readonly IndexedOccurrence[]): Promise<Map<string, Occurrence>> {
  const keys = entries.map((e) => ({
    jobId: e.jobId,
    ...(e.scheduleKey === undefined ? {} : { scheduleKey: e.scheduleKey }),
    scheduledTime: e.scheduledTime,
  }));
  const rows = keys.length === 0 ? [] : await index.readRows(keys);
  return new Map(rows.map((r) => [idOf(r), r]));
}

const idOf = (e: { jobId: string; scheduleKey?: string; scheduledTime: string }) => `${seriesOf(e)}|${e.scheduledTime}`;

function base(kind: AttentionItem['kind'], e: IndexedOccurrence): AttentionItem {
  return {
    kind,
    jobId: e.jobId,
    ...(e.scheduleKey === undefined ? {} : { scheduleKey: e.scheduleKey }),
    scheduledTime: e.scheduledTime,
    status: e.status as Status,
  };
}

function failedItem(e: IndexedOccurrence, row: Occurrence | undefined): AttentionItem {
  const error = row?.lastError?.trim().split('\n')[0]?.slice(0, 300);
  return { ...base('failed', e), ...(error ? { error } : {}) };
}

function runningItem(e: IndexedOccurrence, row: (Occurrence & RunFields) | undefined, now: number): AttentionItem {
  const age = (at: string) => Math.max(0, now - Date.parse(at));
  const claimed = row?.claimedAt ?? e.claimedAt;
  const lastSign = row?.heartbeatAt ?? claimed;
  const progress = row?.progress;
  return {
    ...base('running', e),
    ...(progress === undefined
      ? {}
      : {
          progress: {
            done: progress.done,
            ...(progress.total === undefined ? {} : { total: progress.total }),
            at: progress.at,
          },
        }),
    ...(claimed === undefined ? {} : { leaseAgeMs: age(claimed) }),
    ...(lastSign === undefined ? {} : { heartbeatAgeMs: age(lastSign) }),
  };
}

async function inBatches<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  return results;
}
