/**
 * The reconciler: finds occurrences that fell through the cracks and gets them moving again.
 *
 * Nothing else sweeps a non-terminal row that has no message in flight: the trigger failed three times after its
 * insert (the event waits in the trigger's DLQ, the row stays PENDING), a message went to the job DLQ after more
 * crash redeliveries than maxReceiveCount allows (RUNNING with an expired lease, or RETRY_WAIT), or a hidden retry
 * message was lost. The reconciler reads the open shards of the status index (OPEN#k: every row in flight, and every
 * success not yet announced) once, a page at a time; it picks the entries that may be stuck longer than the shortest
 * worker's `stuckAfterSeconds` from their projected attributes, reads those rows in full (BatchGetItem), and
 * re-enqueues each row that is stuck by its own worker's threshold on that worker's queue, conditionally
 * (requeue-occurrence.ts), so racing a live worker is harmless.
 * The index leaves out the lease expiry (a heartbeat changes it, and would write the index every time): a RUNNING
 * entry is a candidate once it was claimed longer ago than the stuck period, and its row decides. The worker then claims
 * it, or, when its attempts or deadline are used up, records it FAILED (or SUCCEEDED, if a report was committed).
 *
 * A BUFFERED row waits for its job's running slot: the release of the slot's holder wakes it. Should that message be
 * lost, the reconciler re-enqueues the first BUFFERED row of a job whose slot is not live (overlap-policy.ts), read
 * from the job-state row and the holder's row (BatchGetItem, once per job and run).
 *
 * From the same pages it announces SUCCEEDED rows that were never announced (no `notifiedAt`), through the
 * notifier's own path (announce-report.ts: read the row, publish with the occurrence key as deduplication id, record
 * `notifiedAt`, which takes the row out of the index).
 * It waits `unannouncedAfterSeconds` after the success, longer than the table stream keeps the record (24 h), so
 * the stream notifier has stopped retrying by then and the two never publish the same announcement at different
 * times; the deduplication id covers a reconciler run that overlaps its own retry.
 */
import { type AnnounceDeps, announceReport } from './announce-report';
import { messageOf } from './errors';
import { isJsonObject } from './field-checks';
import { type JobState, jobStateKeyOf } from './job-state';
import { MetricName } from './metric-names';
import {
  iso,
  isoSeconds,
  type Occurrence,
  OccurrenceStatus,
  occurrenceKeyOf,
  SCHEDULED_TIME_RANGE,
  TERMINAL_STATUSES,
} from './occurrence';
import { holderToRead, isHolderLive } from './overlap-policy';
import type { Clock, LateCheckSources, Logger, Metrics, OccurrenceIndex, RequeueStore, WorkQueue } from './ports';
import { quoteValue } from './quote-value';
import { LateTally, mayBeLate } from './reconcile-late';
import {
  isRequeueable,
  type REQUEUEABLE_STATUSES,
  requeueOccurrence,
  STUCK_SINCE_ATTRIBUTE,
  stuckSince,
} from './requeue-occurrence';
import { seriesKeyOf, seriesOf } from './schedule-key';
import { type IndexedOccurrence, indexShards, OPEN_INDEX_KEY } from './table-schema';
import { type RouteLookup, recordedRoute, type WorkerRoute } from './worker-routes';

export interface ReconcileThresholds {
  /** A SUCCEEDED row without `notifiedAt` this long after `succeededAt` was not announced and will not be. */
  readonly unannouncedAfterSeconds: number;
  /** Re-enqueues and announcements per run at most; the rest wait for the next run. */
  readonly maxFixesPerRun: number;
}

/**
 * One worker as the reconciler sees it: its queue, and how long a PENDING, RUNNING (lease expired) or RETRY_WAIT
 * (retry due) row of its jobs waits before it surely has nothing in flight (WorkerRoute.stuckAfterSeconds).
 */
export interface ReconcileWorker extends Pick<WorkerRoute, 'stuckAfterSeconds'> {
  readonly queue: WorkQueue;
}

/** How the reconciler finds the worker of a row it re-sends (worker-routes.ts). */
/** What routing a row reads of it: its job and worker, and the route the trigger recorded, when it did. */
export type RoutedRow = Pick<Occurrence, 'jobId' | 'worker'> & {
  readonly queueUrl?: unknown;
  readonly stuckAfterSeconds?: unknown;
};

export interface ReconcileWorkers {
  /** The shortest stuck threshold of the stack's workers: which index entries are worth reading in full. */
  readonly shortestStuckAfterSeconds: number;
  /**
   * The row's worker (its queue and stuck threshold); undefined when no route is known. A failed look-up throws. A
   * row without a recorded route (or a capped job's worker, asked with its job id alone) is routed by its job's schedule.
   */
  workerOf(row: RoutedRow): Promise<ReconcileWorker | undefined>;
}

/** Workers known by id, all of them (a process that runs them all: tests, the local pipeline): the row's `worker`. */
export function workersById(byId: ReadonlyMap<string, ReconcileWorker>): ReconcileWorkers {
  return {
    shortestStuckAfterSeconds: Math.min(...[...byId.values()].map((w) => w.stuckAfterSeconds)),
    workerOf: async (row) => (row.worker === undefined ? undefined : byId.get(row.worker)),
  };
}

/**
 * The deployed reconciler's workers: the route each row records (the trigger writes it from its schedule's input),
 * else, for a row recorded before rows carried it, the route `lookup` finds for its job and worker (its schedule's).
 */
export function routedWorkers(options: {
  readonly shortestStuckAfterSeconds: number;
  readonly queueAt: (queueUrl: string) => WorkQueue;
  readonly lookup?: RouteLookup;
}): ReconcileWorkers {
  return {
    shortestStuckAfterSeconds: options.shortestStuckAfterSeconds,
    async workerOf(row) {
      if (row.worker === undefined) return undefined;
      const route = recordedRoute(row) ?? (await options.lookup?.routeOf(row.jobId, row.worker));
      return route === undefined
        ? undefined
        : { queue: options.queueAt(route.queueUrl), stuckAfterSeconds: route.stuckAfterSeconds };
    },
  };
}

export interface ReconcileDeps {
  readonly index: OccurrenceIndex;
  readonly store: RequeueStore;
  /**
   * Where a row is re-enqueued: its own route, or the queue of the worker it names. A map is every worker by id
   * (workersById).
   */
  readonly workers: ReconcileWorkers | ReadonlyMap<string, ReconcileWorker>;
  readonly announce: AnnounceDeps;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly thresholds: ReconcileThresholds;
  /** The metrics with one worker's dimensions, for OccurrencesLate (reconcile-late.ts); default: `metrics`. */
  readonly workerMetrics?: (worker: string) => Metrics;
  /** The disabled schedules and newest rows, for fire times without a row; absent: only late rows are counted. */
  readonly lateSources?: LateCheckSources;
}

export type StuckReason = 'never-claimed' | 'lease-expired' | 'retry-overdue' | 'buffered-slot-free';

const REASON: Readonly<Record<(typeof REQUEUEABLE_STATUSES)[number], StuckReason>> = {
  PENDING: 'never-claimed',
  RUNNING: 'lease-expired',
  RETRY_WAIT: 'retry-overdue',
  BUFFERED: 'buffered-slot-free',
};

export interface Fix {
  readonly jobId: string;
  /** The schedule key, for an occurrence of a schedule created at run time. */
  readonly scheduleKey?: string;
  readonly scheduledTime: string;
  readonly status: OccurrenceStatus;
  readonly action: 'requeued' | 'announced';
  readonly reason: StuckReason | 'never-announced';
}

export interface ReconcileReport {
  /** Entries read from the index. */
  readonly examined: number;
  readonly fixed: readonly Fix[];
  /** Rows that changed between the read and the conditional write: a worker got there first. */
  readonly changedMeanwhile: number;
  /** Rows of workers this deployment does not run, or rows no worker could claim; left alone and logged. */
  readonly skipped: number;
  /** Failed reads and writes; each is logged, and the run goes on with the next row. */
  readonly errors: number;
  /** True when maxFixesPerRun stopped the run; the next run continues. */
  readonly truncated: boolean;
  /** Occurrences late at this run (reconcile-late.ts): rows not started, and fire times without a row. */
  readonly late: number;
}

/** Why this row needs a message, or undefined when it does not (not stuck, or not stuck for long enough). */
export function stuckReason(o: Occurrence, now: number, stuckAfterSeconds: number): StuckReason | undefined {
  if (!isRequeueable(o.status)) return undefined;
  const since = stuckSince(o);
  if (since === undefined || since >= now - stuckAfterSeconds * 1000) return undefined;
  return REASON[o.status];
}

/**
 * From an index entry alone: whether its row may be stuck, so that it is worth reading in full. Exact for PENDING
 * (createdAt) and RETRY_WAIT (nextAttemptAt). For RUNNING the lease expiry is not projected, but a lease expires
 * after its claim, so a row claimed within the stuck period cannot have a lease that expired before it. An entry
 * without the time is a candidate: its row is read, and judged (or reported) there; so is every BUFFERED entry (the
 * index's projection, fixed once deployed, leaves out bufferedAt).
 */
export function mayBeStuck(e: IndexedOccurrence, now: number, stuckAfterSeconds: number): boolean {
  // The index does not project bufferedAt: every BUFFERED entry is read in full, and judged there.
  if (e.status === OccurrenceStatus.BUFFERED) return true;
  if (!isRequeueable(e.status)) return false;
  const reference = e.status === OccurrenceStatus.RUNNING ? e.claimedAt : e[STUCK_SINCE_ATTRIBUTE[e.status]];
  const since = reference === undefined ? Number.NaN : Date.parse(reference);
  if (Number.isNaN(since)) return true;
  const requeued = e.requeuedAt === undefined ? Number.NaN : Date.parse(e.requeuedAt);
  return (Number.isNaN(requeued) ? since : Math.max(since, requeued)) < now - stuckAfterSeconds * 1000;
}

type AnnouncedFields = Pick<Occurrence, 'status' | 'notifiedAt' | 'reportKey' | 'succeededAt'>;

/** Whether a success was never announced; decidable from an index entry as well as from a row. */
export function isUnannounced(o: AnnouncedFields, now: number, unannouncedAfterSeconds: number): boolean {
  if (o.status !== OccurrenceStatus.SUCCEEDED || o.notifiedAt !== undefined || o.reportKey === undefined) return false;
  const at = o.succeededAt === undefined ? Number.NaN : Date.parse(o.succeededAt);
  // A row without a success time is older than any threshold.
  return Number.isNaN(at) || at < now - unannouncedAfterSeconds * 1000;
}

/** The earliest scheduled time the table can hold. */
const EARLIEST_SCHEDULED_TIME = SCHEDULED_TIME_RANGE.earliest;

/**
 * One reconciler run: one pass over the open shards of the status index (OPEN_INDEX_KEY: every occurrence in flight,
 * and every success not yet announced), a page at a time. Each page's candidates are read in full and handled before
 * the next page is asked for, so a run holds one page whatever the table holds: stuck rows are re-enqueued and
 * unannounced reports announced, within one budget of `maxFixesPerRun` fixes. Finished rows are never read: FAILED,
 * SKIPPED and CANCELLED have shards of their own, and an announced success has left the index.
 */
export async function reconcile(deps: ReconcileDeps): Promise<ReconcileReport> {
  const run = new ReconcileRun(deps, deps.clock.now());
  await reconcileOpenOccurrences(run);
  await run.lateness.noteMissing();
  run.lateness.emit();
  const report = run.report();
  deps.logger.info('reconcile done', {
    examined: report.examined,
    fixed: report.fixed.length,
    requeued: report.fixed.filter((f) => f.action === 'requeued').length,
    announced: report.fixed.filter((f) => f.action === 'announced').length,
    changedMeanwhile: report.changedMeanwhile,
    skipped: report.skipped,
    errors: report.errors,
    truncated: report.truncated,
    late: report.late,
  });
  return report;
}

/** A series' slot as one run saw it: whether it is free, and its buffer from its first occurrence not final. */
interface SlotSeen {
  readonly free: boolean;
  readonly waiting: readonly string[];
}

/** The buffer's heads read per BatchGetItem while looking for its first occurrence that is not final. */
const HEADS_PER_READ = 10;

/** What a run's pages share: the time it started, its budget of fixes, and its tally. */
class ReconcileRun {
  readonly fixed: Fix[] = [];
  /** Per job, whether its running slot is free (read once per run, for its BUFFERED rows). */
  private readonly slotsFree = new Map<string, Promise<SlotSeen>>();
  examined = 0;
  changedMeanwhile = 0;
  skipped = 0;
  errors = 0;
  truncated = false;
  readonly lateness: LateTally;
  readonly workers: ReconcileWorkers;

  constructor(
    readonly deps: ReconcileDeps,
    readonly now: number,
  ) {
    this.workers = deps.workers instanceof Map ? workersById(deps.workers) : (deps.workers as ReconcileWorkers);
    const { index, clock, logger, metrics, workerMetrics, lateSources } = deps;
    this.lateness = new LateTally(
      { index, clock, logger, workerMetrics: workerMetrics ?? (() => metrics), sources: lateSources },
      now,
    );
  }

  /** Whether one more fix fits in this run; when it does not, the run is truncated. */
  hasRoom(): boolean {
    if (this.fixed.length < this.deps.thresholds.maxFixesPerRun) return true;
    this.truncated = true;
    return false;
  }

  /**
   * Hand each page of one shard's entries scheduled in [from, to) to `handle`, the next page asked for only once it
   * is done; a failed read is counted and logged, and ends this shard (the next run reads it again).
   */
  async eachPage(
    shard: string,
    from: string,
    to: string,
    handle: (page: readonly IndexedOccurrence[]) => Promise<void>,
  ): Promise<void> {
    try {
      for await (const page of this.deps.index.shardPages(shard, from, to)) {
        this.examined += page.length;
        await handle(page);
        if (this.truncated) return;
      }
    } catch (error) {
      this.errors++;
      this.deps.logger.error('reconciler could not list occurrences', { shard, from, to, error: messageOf(error) });
    }
  }

  /** The full rows of the candidates; a failed read is counted and logged, and reads as none (the next run retries). */
  async read(candidates: readonly IndexedOccurrence[]): Promise<Occurrence[]> {
    if (candidates.length === 0) return [];
    try {
      return await this.deps.index.readRows(candidates);
    } catch (error) {
      this.errors++;
      this.deps.logger.error('reconciler could not read candidate occurrences', {
        statuses: [...new Set(candidates.map((c) => c.status))].join(','),
        candidates: candidates.length,
        error: messageOf(error),
      });
      return [];
    }
  }

  /**
   * Whether this BUFFERED row waits in vain: its job's slot is not live, and it is the buffer's head, or only final
   * occurrences are before it (or it is not in the buffer at all: its delivery decides again). A failed read is
   * counted and logged, and reads as not.
   *
   * A final occurrence at the head (one SKIPPED while paused, or closed while buffered, that never left the buffer)
   * would otherwise keep the rest waiting for good: nothing wakes a row that is not the head. The row re-enqueued here
   * finds the final head before it and wakes it; that head's delivery, refused as finished, drops it from the buffer
   * and wakes the next (job-slot.ts afterUnheldEnd), until this one heads the buffer and runs.
   */
  async waitsInVain(row: Occurrence): Promise<boolean> {
    // The slot is the series' (one schedule's, for a job that takes them at run time).
    const series = seriesOf(row);
    let slot = this.slotsFree.get(series);
    if (slot === undefined) {
      slot = this.readSlot(series);
      this.slotsFree.set(series, slot);
    }
    const { free, waiting } = await slot;
    // WAITING for its job's maxConcurrency, not for this slot: the capacity repair wakes it (reconcile-capacity.ts).
    const forCapacity = row.waitingFor === 'capacity' && row.waitingSince === row.bufferedAt;
    if (forCapacity && !waiting.includes(row.scheduledTime)) return false;
    return free && (waiting[0] === row.scheduledTime || !waiting.includes(row.scheduledTime));
  }

  private async readSlot(series: string): Promise<SlotSeen> {
    try {
      // The job-state row has the occurrence table's key: the same batch read reads it.
      const [state] = (await this.deps.index.readRows([jobStateKeyOf(series)])) as unknown as (JobState | undefined)[];
      const holderKey = holderToRead(state, '');
      const [holder] = holderKey === undefined ? [] : await this.deps.index.readRows([holderKey]);
      const free = !isHolderLive(holder, this.now);
      const buffer = state?.buffer ?? [];
      return { free, waiting: free ? await this.withoutFinalHeads(series, buffer) : buffer };
    } catch (error) {
      this.errors++;
      this.deps.logger.error('reconciler could not read the job state', { series, error: messageOf(error) });
      return { free: false, waiting: [] };
    }
  }

  /**
   * The buffer from its first occurrence that is not final: the heads' rows are read a few at a time (usually one
   * read of one row, the head being BUFFERED). A row that is gone (its TTL) counts as final.
   */
  private async withoutFinalHeads(series: string, buffer: readonly string[]): Promise<readonly string[]> {
    const key = seriesKeyOf(series);
    for (let from = 0; from < buffer.length; from += HEADS_PER_READ) {
      const times = buffer.slice(from, from + HEADS_PER_READ);
      const rows = await this.deps.index.readRows(times.map((scheduledTime) => ({ ...key, scheduledTime })));
      const open = new Set(rows.filter((r) => !TERMINAL_STATUSES.includes(r.status)).map((r) => r.scheduledTime));
      const first = times.findIndex((t) => open.has(t));
      if (first >= 0) return buffer.slice(from + first);
    }
    return [];
  }

  fix(row: IndexedOccurrence, action: Fix['action'], reason: Fix['reason']): void {
    this.fixed.push({ ...occurrenceKeyOf(row), status: row.status, action, reason });
  }

  report(): ReconcileReport {
    const { examined, fixed, changedMeanwhile, skipped, truncated } = this;
    const errors = this.errors + this.lateness.errors;
    return { examined, fixed, changedMeanwhile, skipped, errors, truncated, late: this.lateness.late.length };
  }
}

/**
 * The one pass: every open shard, every age up to now (a retried or backfilled occurrence keeps its old scheduled
 * time but has a new deadline; an announcement can be owed for any scheduled time). Only open rows are there, so
 * reading them whole stays cheap: an idle table costs one empty Query per shard.
 */
async function reconcileOpenOccurrences(run: ReconcileRun): Promise<void> {
  const { deps, now } = run;
  // Scheduled times up to now, inclusive: the upper bound is exclusive.
  const upToNow = isoSeconds(now + 1000);
  // The index leaves the worker out (its projection is fixed), so the shortest threshold picks the candidates and
  // each row's own worker decides.
  const shortestStuckAfter = run.workers.shortestStuckAfterSeconds;
  const { unannouncedAfterSeconds } = deps.thresholds;
  for (const shard of indexShards(OPEN_INDEX_KEY)) {
    if (run.truncated) return;
    await run.eachPage(shard, EARLIEST_SCHEDULED_TIME, upToNow, async (page) => {
      const candidates = page.filter(
        (e) =>
          mayBeStuck(e, now, shortestStuckAfter) || isUnannounced(e, now, unannouncedAfterSeconds) || mayBeLate(e, now),
      );
      await handleCandidates(run, candidates);
    });
  }
}

/** One page's candidates, read in full and handled in the page's order until the run's budget is spent. */
async function handleCandidates(run: ReconcileRun, candidates: readonly IndexedOccurrence[]): Promise<void> {
  const seen = new Map(candidates.map((e) => [keyId(e), e.status]));
  for (const row of await run.read(candidates)) {
    await run.lateness.noteRow(row);
    const indexed = seen.get(keyId(row));
    if (indexed !== undefined && isRequeueable(indexed)) {
      if (!(await requeueIfStuck(run, row, indexed))) return;
    } else if (isUnannounced(row, run.now, run.deps.thresholds.unannouncedAfterSeconds)) {
      if (!run.hasRoom()) return;
      await announceUnannouncedReport(run, row);
    }
    // Otherwise announced between the index read and the row read: nothing to do.
  }
}

/**
 * Re-enqueue the row if it is still in the status it was indexed with and stuck by its own worker's threshold;
 * false when the run's budget is spent (the rest of the page waits for the next run).
 */
async function requeueIfStuck(run: ReconcileRun, row: Occurrence, indexed: OccurrenceStatus): Promise<boolean> {
  const { deps, now } = run;
  const { logger } = deps;
  if (row.status !== indexed) {
    // Moved on since the index was read (claimed, finished): not this pass's to fix; the next run sees it as it is.
    run.changedMeanwhile++;
    return true;
  }
  let worker: ReconcileWorker | undefined;
  try {
    worker = await run.workers.workerOf(row);
  } catch (error) {
    run.errors++;
    logger.error("reconciler could not find a stuck occurrence's route", { ...fieldsOf(row), error: messageOf(error) });
    return true;
  }
  if (worker === undefined) {
    // No queue to send it to: a row recorded before workers existed, or of a worker (or job) removed from the stack.
    run.skipped++;
    logger.warn('reconciler skipped an occurrence of a worker this deployment does not run', {
      ...fieldsOf(row),
      worker: row.worker ?? '(none: recorded before workers existed)',
    });
    return true;
  }
  const since = stuckSince(row);
  const reason = stuckReason(row, now, worker.stuckAfterSeconds);
  // A reason implies a stuck-since time; a row without one has fields the reconciler cannot judge.
  if (reason === undefined || since === undefined) {
    if (since === undefined) {
      run.skipped++;
      logger.warn('reconciler skipped a row it cannot judge; check its fields', fieldsOf(row));
    }
    return true;
  }
  if (row.status === OccurrenceStatus.BUFFERED && !(await run.waitsInVain(row))) return true;
  if (!run.hasRoom()) return false;
  await requeueStuckOccurrence(run, row, worker, reason, since);
  return true;
}

/** Re-enqueue one stuck row, conditionally on it being as it was read; a failure is counted and logged. */
async function requeueStuckOccurrence(
  run: ReconcileRun,
  row: Occurrence,
  worker: ReconcileWorker,
  reason: StuckReason,
  since: number,
): Promise<void> {
  const { deps, now } = run;
  const { logger } = deps;
  try {
    const requeue = { store: deps.store, clock: deps.clock, queue: worker.queue };
    const result = await requeueOccurrence(requeue, row, now - worker.stuckAfterSeconds * 1000);
    if (result === 'changed-meanwhile') {
      run.changedMeanwhile++;
      logger.info('stuck occurrence changed before the reconciler could re-enqueue it; left alone', {
        ...fieldsOf(row),
        reason,
      });
      return;
    }
    run.fix(row, 'requeued', reason);
    deps.metrics.add(MetricName.OccurrencesRequeued, 1, row.jobId);
    logger.warn('reconciler re-enqueued a stuck occurrence', {
      ...fieldsOf(row),
      reason,
      stuckSince: iso(since),
      requeueCount: (row.requeueCount ?? 0) + 1,
    });
  } catch (error) {
    run.errors++;
    logger.error('reconciler could not re-enqueue a stuck occurrence', {
      ...fieldsOf(row),
      reason,
      error: messageOf(error),
    });
  }
}

/** Announce one report; a failure is counted and logged. */
async function announceUnannouncedReport(run: ReconcileRun, row: Occurrence): Promise<void> {
  const { deps } = run;
  try {
    const result = await announceReport(deps.announce, row);
    if (result !== 'announced') return;
    run.fix(row, 'announced', 'never-announced');
    deps.metrics.add(MetricName.ReportsReannounced, 1, row.jobId);
    deps.logger.warn('reconciler announced a report the notifier never recorded as announced', {
      ...fieldsOf(row),
      succeededAt: row.succeededAt,
    });
  } catch (error) {
    run.errors++;
    deps.logger.error('reconciler could not announce a report', { ...fieldsOf(row), error: messageOf(error) });
  }
}

/** An occurrence's identity within one run: its series and scheduled time. */
const keyId = (k: Pick<Occurrence, 'jobId' | 'scheduleKey' | 'scheduledTime'>) =>
  `${seriesOf(k)}\u0000${k.scheduledTime}`;

const fieldsOf = (o: Pick<Occurrence, 'jobId' | 'scheduleKey' | 'scheduledTime' | 'status' | 'attempt'>) => ({
  ...occurrenceKeyOf(o),
  status: o.status,
  attempt: o.attempt,
});

/** Checks the thresholds the stack hands the reconciler; every problem names its field. */
export function reconcileThresholdProblems(value: unknown, where: string): string[] {
  if (!isJsonObject(value)) return [`${where}: must be an object of reconcile thresholds`];
  const t = value;
  const problems: string[] = [];
  const known = ['unannouncedAfterSeconds', 'maxFixesPerRun'];
  for (const key of Object.keys(t)) {
    // The look-back bounded the scan of finished rows that the open shards replaced (docs/design.md).
    if (key === 'lookbackSeconds') problems.push(`${where}.lookbackSeconds: no longer used; remove it`);
    else if (!known.includes(key)) problems.push(`${where}.${key}: unknown field (known: ${known.join(', ')})`);
  }
  for (const key of known) {
    const v = t[key];
    if (!(typeof v === 'number' && Number.isInteger(v) && v >= 1))
      problems.push(`${where}.${key}: must be a whole number of at least 1, got ${quoteValue(v)}`);
  }
  return problems;
}

export function parseReconcileThresholds(json: string | undefined, source: string): ReconcileThresholds {
  if (json === undefined || json.trim() === '') throw new Error(`${source} is not set`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (e) {
    throw new Error(`${source} is not valid JSON: ${(e as Error).message}`);
  }
  const problems = reconcileThresholdProblems(parsed, source);
  if (problems.length > 0) throw new Error(`invalid reconcile thresholds:\n  - ${problems.join('\n  - ')}`);
  return parsed as ReconcileThresholds;
}
