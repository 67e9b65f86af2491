/**
 * The reconciler: finds occurrences that fell through the cracks and gets them moving again.
 *
 * Nothing else sweeps a non-terminal row that has no message in flight: the trigger failed three times after its
 * insert (the event waits in the trigger's DLQ, the row stays PENDING), a message went to the job DLQ after more
 * crash redeliveries than maxReceiveCount allows (RUNNING with an expired lease, or RETRY_WAIT), or a hidden retry
 * message was lost. The reconciler reads the status index (every shard of each status), picks the entries that may
 * be stuck longer than the shortest worker's `stuckAfterSeconds` from their projected attributes, reads those rows in
 * full (BatchGetItem), and re-enqueues each row that is stuck by its own worker's threshold on that worker's queue,
 * conditionally (requeue-occurrence.ts), so racing a live worker is harmless.
 * The index leaves out the lease expiry (a heartbeat changes it, and would write the index every time): a RUNNING
 * entry is a candidate once it was claimed longer ago than the stuck period, and its row decides. The worker then claims
 * it, or, when its attempts or deadline are used up, records it FAILED (or SUCCEEDED, if a report was committed).
 *
 * A BUFFERED row waits for its job's running slot: the release of the slot's holder wakes it. Should that message be
 * lost, the reconciler re-enqueues the first BUFFERED row of a job whose slot is not live (overlap-policy.ts), read
 * from the job-state row and the holder's row (BatchGetItem, once per job and run).
 *
 * It also announces SUCCEEDED rows that were never announced (no `notifiedAt`), through the notifier's own path
 * (announce-report.ts: read the row, publish with the occurrence key as deduplication id, record `notifiedAt`).
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
} from './occurrence';
import { holderToRead, isHolderLive } from './overlap-policy';
import type { Clock, Logger, Metrics, OccurrenceIndex, RequeueStore, WorkQueue } from './ports';
import { quoteValue } from './quote-value';
import {
  isRequeueable,
  REQUEUEABLE_STATUSES,
  requeueOccurrence,
  STUCK_SINCE_ATTRIBUTE,
  stuckSince,
} from './requeue-occurrence';
import { seriesOf } from './schedule-key';
import type { IndexedOccurrence } from './table-schema';
import type { WorkerRoute } from './worker-routes';

export interface ReconcileThresholds {
  /** A SUCCEEDED row without `notifiedAt` this long after `succeededAt` was not announced and will not be. */
  readonly unannouncedAfterSeconds: number;
  /** How far back, by scheduled time, the reconciler looks. */
  readonly lookbackSeconds: number;
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

export interface ReconcileDeps {
  readonly index: OccurrenceIndex;
  readonly store: RequeueStore;
  /** By worker id: a row is re-enqueued on the queue of the worker it names. */
  readonly workers: ReadonlyMap<string, ReconcileWorker>;
  readonly announce: AnnounceDeps;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly thresholds: ReconcileThresholds;
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
 * One reconciler run: re-enqueue the stuck occurrences, then announce the unannounced reports, within one budget of
 * `maxFixesPerRun` fixes.
 */
export async function reconcile(deps: ReconcileDeps): Promise<ReconcileReport> {
  const run = new ReconcileRun(deps, deps.clock.now());
  await requeueStuckOccurrences(run);
  await announceUnannouncedReports(run);
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
  });
  return report;
}

/** What the two jobs of a run share: the time it started, its budget of fixes, and its tally. */
class ReconcileRun {
  readonly fixed: Fix[] = [];
  /** Per job, whether its running slot is free (read once per run, for its BUFFERED rows). */
  private readonly slotsFree = new Map<string, Promise<{ free: boolean; buffer: readonly string[] }>>();
  examined = 0;
  changedMeanwhile = 0;
  skipped = 0;
  errors = 0;
  truncated = false;

  constructor(
    readonly deps: ReconcileDeps,
    readonly now: number,
  ) {}

  /** Whether one more fix fits in this run; when it does not, the run is truncated. */
  hasRoom(): boolean {
    if (this.fixed.length < this.deps.thresholds.maxFixesPerRun) return true;
    this.truncated = true;
    return false;
  }

  /** The index entries of one status scheduled in [from, to); a failed read is counted and logged, and reads as none. */
  async list(status: OccurrenceStatus, from: string, to: string): Promise<IndexedOccurrence[]> {
    try {
      const entries = await this.deps.index.listIndexed(status, from, to);
      this.examined += entries.length;
      return entries;
    } catch (error) {
      this.errors++;
      this.deps.logger.error('reconciler could not list occurrences', { status, from, to, error: messageOf(error) });
      return [];
    }
  }

  /** The full rows of the candidates; a failed read is counted and logged, and reads as none (the next run retries). */
  async read(candidates: readonly IndexedOccurrence[], status: OccurrenceStatus): Promise<Occurrence[]> {
    if (candidates.length === 0) return [];
    try {
      return await this.deps.index.readRows(candidates);
    } catch (error) {
      this.errors++;
      this.deps.logger.error('reconciler could not read candidate occurrences', {
        status,
        candidates: candidates.length,
        error: messageOf(error),
      });
      return [];
    }
  }

  /**
   * Whether this BUFFERED row waits in vain: its job's slot is not live, and it is the buffer's head (or not in the
   * buffer at all: its delivery decides again). A failed read is counted and logged, and reads as not.
   */
  async waitsInVain(row: Occurrence): Promise<boolean> {
    // The slot is the series' (one schedule's, for a job that takes them at run time).
    const series = seriesOf(row);
    let slot = this.slotsFree.get(series);
    if (slot === undefined) {
      slot = this.readSlot(series);
      this.slotsFree.set(series, slot);
    }
    const { free, buffer } = await slot;
    return free && (buffer[0] === row.scheduledTime || !buffer.includes(row.scheduledTime));
  }

  private async readSlot(series: string): Promise<{ free: boolean; buffer: readonly string[] }> {
    try {
      // The job-state row has the occurrence table's key: the same batch read reads it.
      const [state] = (await this.deps.index.readRows([jobStateKeyOf(series)])) as unknown as (JobState | undefined)[];
      const holderKey = holderToRead(state, '');
      const [holder] = holderKey === undefined ? [] : await this.deps.index.readRows([holderKey]);
      return { free: !isHolderLive(holder, this.now), buffer: state?.buffer ?? [] };
    } catch (error) {
      this.errors++;
      this.deps.logger.error('reconciler could not read the job state', { series, error: messageOf(error) });
      return { free: false, buffer: [] };
    }
  }

  fix(row: IndexedOccurrence, action: Fix['action'], reason: Fix['reason']): void {
    this.fixed.push({ ...occurrenceKeyOf(row), status: row.status, action, reason });
  }

  report(): ReconcileReport {
    const { examined, fixed, changedMeanwhile, skipped, errors, truncated } = this;
    return { examined, fixed, changedMeanwhile, skipped, errors, truncated };
  }
}

/** The first job: give every occurrence stuck for longer than its worker's `stuckAfterSeconds` a new message. */
async function requeueStuckOccurrences(run: ReconcileRun): Promise<void> {
  const { deps, now } = run;
  const { logger } = deps;
  // Scheduled times up to now, inclusive: listByStatus's upper bound is exclusive.
  const upToNow = isoSeconds(now + 1000);
  // The index leaves the worker out (its projection is fixed), so the shortest threshold picks the candidates and
  // each row's own worker decides.
  const shortestStuckAfter = Math.min(...[...deps.workers.values()].map((w) => w.stuckAfterSeconds));
  for (const status of REQUEUEABLE_STATUSES) {
    // Every age: a retried or backfilled occurrence keeps its old scheduled time but has a new deadline. The index's
    // non-terminal partitions hold only rows in flight, so reading them whole stays cheap.
    const entries = await run.list(status, EARLIEST_SCHEDULED_TIME, upToNow);
    const candidates = entries.filter((e) => mayBeStuck(e, now, shortestStuckAfter));
    for (const row of await run.read(candidates, status)) {
      if (row.status !== status) {
        // Moved on since the index was read (claimed, finished): not this status's to fix; its new one is read later.
        run.changedMeanwhile++;
        continue;
      }
      const worker = row.worker === undefined ? undefined : deps.workers.get(row.worker);
      if (worker === undefined) {
        // No queue to send it to: a row recorded before workers existed, or of a worker removed from the stack.
        run.skipped++;
        logger.warn('reconciler skipped an occurrence of a worker this deployment does not run', {
          ...fieldsOf(row),
          worker: row.worker ?? '(none: recorded before workers existed)',
        });
        continue;
      }
      const since = stuckSince(row);
      const reason = stuckReason(row, now, worker.stuckAfterSeconds);
      // A reason implies a stuck-since time; a row without one has fields the reconciler cannot judge.
      if (reason === undefined || since === undefined) {
        if (since === undefined) {
          run.skipped++;
          logger.warn('reconciler skipped a row it cannot judge; check its fields', fieldsOf(row));
        }
        continue;
      }
      if (row.status === OccurrenceStatus.BUFFERED && !(await run.waitsInVain(row))) continue;
      if (!run.hasRoom()) break;
      await requeueStuckOccurrence(run, row, worker, reason, since);
    }
  }
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

/** The second job: announce, through the notifier's path, the successes the notifier never recorded announcing. */
async function announceUnannouncedReports(run: ReconcileRun): Promise<void> {
  const { deps, now } = run;
  const { thresholds } = deps;
  if (!run.hasRoom()) return;
  const from = isoSeconds(now - thresholds.lookbackSeconds * 1000);
  // A success is at or after its scheduled time, so rows scheduled after the cut-off cannot qualify yet.
  const announceBefore = now - thresholds.unannouncedAfterSeconds * 1000;
  const succeeded = await run.list(OccurrenceStatus.SUCCEEDED, from, isoSeconds(announceBefore + 1000));
  const unannounced = succeeded.filter((e) => isUnannounced(e, now, thresholds.unannouncedAfterSeconds));
  // Read only the rows this run can still announce; the rest wait for the next run.
  const room = Math.max(0, thresholds.maxFixesPerRun - run.fixed.length);
  if (unannounced.length > room) run.truncated = true;
  for (const row of await run.read(unannounced.slice(0, room), OccurrenceStatus.SUCCEEDED)) {
    // Announced between the index read and the row read.
    if (!isUnannounced(row, now, thresholds.unannouncedAfterSeconds)) continue;
    if (!run.hasRoom()) break;
    await announceUnannouncedReport(run, row);
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
  const known = ['unannouncedAfterSeconds', 'lookbackSeconds', 'maxFixesPerRun'];
  for (const key of Object.keys(t))
    if (!known.includes(key)) problems.push(`${where}.${key}: unknown field (known: ${known.join(', ')})`);
  for (const key of known) {
    const v = t[key];
    if (!(typeof v === 'number' && Number.isInteger(v) && v >= 1))
      problems.push(`${where}.${key}: must be a whole number of at least 1, got ${quoteValue(v)}`);
  }
  if (problems.length === 0 && (t.lookbackSeconds as number) <= (t.unannouncedAfterSeconds as number)) {
    problems.push(
      `${where}.lookbackSeconds: must exceed unannouncedAfterSeconds (${String(t.unannouncedAfterSeconds)}), or no unannounced report is ever looked at`,
    );
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
