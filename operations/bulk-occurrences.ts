/**
 * Retry or cancel many occurrences of one job at once (`occurrences bulk retry|cancel`): "retry every FAILED run of
 * this job since Tuesday", "cancel everything still waiting for the broken upstream".
 *
 * ```
 * filter (job, statuses, from <= scheduledTime < to)
 *   ─▶ select: the job's partition (one Query), or the status index for a job with run-time schedules
 *   ─▶ more than `max` rows: refused, nothing written (TooManyOccurrencesError)
 *   ─▶ dry run: the rows, nothing written
 *   ─▶ apply: one action per row, at most `rate` started per second, progress after each
 *        retry:  retryOccurrence with the run's id: one conditional write that adds the id to `bulkActions`
 *                and is refused where the id is present already (so never twice on one row), then the enqueue
 *        cancel: the injected cancel (cancel-occurrence.ts): CANCELLED is terminal, so it acts once by itself
 * ```
 *
 * The rate. DynamoDB on-demand takes thousands of writes per second per partition and SQS standard queues far more,
 * but an operator's burst must not throttle the workers writing the same table: DEFAULT_BULK_OCCURRENCE_RATE = 25
 * rows/s (a retry is one GetItem, one UpdateItem and one SendMessage), 1,000 rows in 40 s.
 *
 * Resumable. Each run has an id (`bulk-<time>-<random>`). An interrupted run (Ctrl-C, a crash, a fatal error) is
 * resumed by running the same filter with the same id: the rows it reopened are no longer FAILED, and those that
 * failed again since hold its id, so the resumed run skips them (`already`). Failures are classified: a transient
 * one is retried with backoff (and the whole run slows down), a fatal one (AccessDenied) stops the run.
 */
import {
  DependencyError,
  InvalidInputError,
  isTransient,
  messageOf,
  ScheduledJobsError,
} from '../functions/protocol/errors';
import type { DeployedJob } from '../functions/protocol/job-control';
import { type ManualRetryDeps, retryOccurrence } from '../functions/protocol/manual-retry';
import { type Occurrence, type OccurrenceKey, OccurrenceStatus } from '../functions/protocol/occurrence';
import { type Clock, systemClock } from '../functions/protocol/ports';
import { quoteValue } from '../functions/protocol/quote-value';

/** Rows one run may act on, by default: a larger match is refused before any write (raise it with `max`). */
export const DEFAULT_BULK_MAX = 1000;
/** Rows started per second by default; see the module comment. */
export const DEFAULT_BULK_OCCURRENCE_RATE = 25;
/** Rows in flight at once: enough to reach the rate over a high-latency link, few enough to stay gentle. */
export const BULK_OCCURRENCE_CONCURRENCY = 4;
/** Attempts of one row on transient failures, the first included. */
export const BULK_OCCURRENCE_MAX_ATTEMPTS = 5;
const BACKOFF_BASE_MS = 200;
const BACKOFF_CAP_MS = 10_000;

/** What a bulk run does to each row. */
export type BulkAction = 'retry' | 'cancel';

const { PENDING, RUNNING, RETRY_WAIT, BUFFERED, FAILED } = OccurrenceStatus;

/** The statuses each action can act on, the default selection: only a FAILED row can be reopened. */
export const BULK_STATUSES: Readonly<Record<BulkAction, readonly OccurrenceStatus[]>> = {
  retry: [FAILED],
  cancel: [PENDING, RETRY_WAIT, BUFFERED, RUNNING],
};

/** Which occurrences a bulk run acts on: one job's, with these statuses, scheduled in `from <= time < to`. */
export interface BulkFilter {
  /** The job. */
  readonly jobId: string;
  /** The statuses to select; each must be one the action acts on (BULK_STATUSES). */
  readonly statuses: readonly OccurrenceStatus[];
  /** The earliest scheduled time, included (ISO-8601, UTC). */
  readonly from: string;
  /** The latest scheduled time, excluded (ISO-8601, UTC). */
  readonly to: string;
}

/** The reads selection needs: the job's partition, and the status index for a job with run-time schedules. */
export interface BulkSelectionReader {
  /** One job's occurrences with these statuses, newest first, at most `range.limit`. */
  listJobNewestFirst(
    jobId: string,
    range: { readonly from: string; readonly to: string; readonly limit: number },
    statuses?: readonly OccurrenceStatus[],
  ): Promise<Occurrence[]>;
  /** The keys of the status index's entries with this status and `from <= scheduledTime < to`, oldest first. */
  listIndexed(status: OccurrenceStatus, from: string, to: string): Promise<readonly OccurrenceKey[]>;
  /** The full rows of these keys, in their order. */
  readRows(keys: readonly OccurrenceKey[]): Promise<Occurrence[]>;
}

/** The filter matched more rows than the run may act on: nothing was written. */
export class TooManyOccurrencesError extends ScheduledJobsError {
  /** Always `'TooManyOccurrencesError'`. */
  override readonly name = 'TooManyOccurrencesError';

  constructor(
    /** Rows matched (at least this many: the count stops one past the cap on a job's partition). */
    readonly matched: number,
    /** The cap. */
    readonly max: number,
  ) {
    super(
      `the filter matches ${matched === max + 1 ? `more than ${max}` : matched} occurrences, more than the cap of ` +
        `${max}; nothing was changed: narrow the time range or the statuses, or raise the cap (--max) after a --dry-run`,
    );
  }
}

/**
 * Checks a filter for an action; each problem names the field. Nothing is read before it passes.
 *
 * @throws InvalidInputError naming each wrong field.
 */
export function checkBulkFilter(action: BulkAction, filter: BulkFilter, max: number): void {
  const problems: string[] = [];
  const allowed = BULK_STATUSES[action];
  if (filter.statuses.length === 0) problems.push(`statuses: give at least one of ${allowed.join(', ')}`);
  const wrong = filter.statuses.filter((s) => !allowed.includes(s));
  if (wrong.length > 0)
    problems.push(
      `statuses: ${action} acts only on ${allowed.join(', ')}, not ${wrong.join(', ')}` +
        (action === 'retry' ? ' (a stuck row is re-enqueued one at a time with occurrences retry --force)' : ''),
    );
  const from = Date.parse(filter.from);
  const to = Date.parse(filter.to);
  if (Number.isNaN(from)) problems.push(`from: must be an ISO date-time, got ${quoteValue(filter.from)}`);
  if (Number.isNaN(to)) problems.push(`to: must be an ISO date-time, got ${quoteValue(filter.to)}`);
  if (!Number.isNaN(from) && !Number.isNaN(to) && from >= to)
    problems.push(`from (${filter.from}) must be before to (${filter.to})`);
  if (!(Number.isInteger(max) && max > 0)) problems.push(`max: must be a whole number above 0, got ${max}`);
  if (problems.length > 0) throw new InvalidInputError(`bulk ${action} of ${quoteValue(filter.jobId)}`, problems);
}

/**
 * The rows a bulk run would act on, oldest first: through the job's partition (one Query, stopping one past `max`),
 * or for a job that takes schedules at run time (each schedule is a partition of its own) through the status index,
 * keeping the job's entries. Counted before any full row is read.
 *
 * @throws TooManyOccurrencesError when more than `max` rows match.
 */
export async function selectOccurrences(
  reader: BulkSelectionReader,
  job: Pick<DeployedJob, 'id' | 'runtimeScheduleGroup'>,
  filter: BulkFilter,
  max: number = DEFAULT_BULK_MAX,
): Promise<Occurrence[]> {
  if (job.runtimeScheduleGroup === undefined) {
    const rows = await reader.listJobNewestFirst(
      job.id,
      { from: filter.from, to: filter.to, limit: max + 1 },
      filter.statuses,
    );
    if (rows.length > max) throw new TooManyOccurrencesError(rows.length, max);
    return rows.reverse();
  }
  const entries: OccurrenceKey[] = [];
  for (const status of filter.statuses) {
    const indexed = await reader.listIndexed(status, filter.from, filter.to);
    entries.push(...indexed.filter((entry) => entry.jobId === job.id));
  }
  if (entries.length > max) throw new TooManyOccurrencesError(entries.length, max);
  entries.sort((a, b) => a.scheduledTime.localeCompare(b.scheduledTime));
  return reader.readRows(entries);
}

/** A new run id: `bulk-<UTC time>-<6 random hex>`, sortable by time and unlikely to repeat. */
export function newBulkId(clock: Clock = systemClock, random: () => number = Math.random): string {
  const time = new Date(clock.now()).toISOString().replace(/[-:]|\.\d+/g, '');
  const suffix = Math.floor(random() * 0x1000000)
    .toString(16)
    .padStart(6, '0');
  return `bulk-${time}-${suffix}`;
}

/** A bulk run id as newBulkId makes them (`--resume` takes one). */
export const BULK_ID_PATTERN = /^bulk-\d{8}T\d{6}Z-[0-9a-f]{6}$/;

/** What one row's action did: acted, acted on by this run already (resumed), or refused with the reason. */
export type BulkStepOutcome =
  | { readonly outcome: 'acted' }
  | { readonly outcome: 'already' }
  | { readonly outcome: 'refused'; readonly reason: string };

/** One row's action; a thrown error is a failure (retried when transient, the run stopped when fatal). */
export type BulkStep = (row: Occurrence) => Promise<BulkStepOutcome>;

/**
 * The cancel a bulk cancel runs for each row: cancelOccurrence (functions/protocol/cancel-occurrence.ts) bound to
 * its deps and to the operator's `by` and note. A cancelled row is terminal, so it needs no bulk marker.
 */
export type BulkCancel = (key: OccurrenceKey) => Promise<{ outcome: 'cancelled' | 'refused'; reason?: string }>;

/** Counts after each row, for a progress bar. */
export interface BulkRunProgress {
  /** Rows done so far (acted, already, refused or failed). */
  readonly done: number;
  /** Rows in the run. */
  readonly total: number;
  /** Rows acted on so far. */
  readonly acted: number;
  /** Rows refused or failed so far. */
  readonly notActed: number;
}

/** How a bulk run paces, retries and reports. */
export interface BulkRunOptions {
  /** Rows started per second at most. @defaultValue DEFAULT_BULK_OCCURRENCE_RATE (25) */
  readonly rate?: number;
  /** Called after each row. */
  readonly onProgress?: (progress: BulkRunProgress) => void;
  /** Stops starting rows (Ctrl-C); those in flight finish, and the result says `stopped`. */
  readonly signal?: AbortSignal;
  /** What "now" is for the pacing. @defaultValue the system clock */
  readonly clock?: Clock;
  /** How the run waits (tests pass a fake). @defaultValue a timer */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Uniform in [0, 1): the backoff's jitter. @defaultValue `Math.random` */
  readonly random?: () => number;
}

/** A row the run did not act on, and why. */
export interface BulkRowProblem {
  /** The row's key. */
  readonly key: OccurrenceKey;
  /** Why it was not acted on: the refusal's reason, or the error. */
  readonly reason: string;
}

/** What a bulk run did. */
export interface BulkRunResult {
  /** Rows in the run. */
  readonly total: number;
  /** Rows acted on (reopened and enqueued, or cancelled). */
  readonly acted: number;
  /** Rows this run had acted on before it was resumed: skipped, nothing written. */
  readonly already: number;
  /** Rows refused, with the reason (they changed since they were selected). */
  readonly refused: readonly BulkRowProblem[];
  /** Rows whose action failed, with the error. */
  readonly failed: readonly BulkRowProblem[];
  /** Transient failures retried. */
  readonly retries: number;
  /** Why the run stopped before the end, if it did: the signal, or a failure that is no row's own. */
  readonly stopped?: string;
}

/**
 * Runs `step` once for each row, at most `rate` started per second: see the module comment for the retries and
 * stopping. The public bulkRetry and bulkCancel pass their steps; tests pass fakes.
 */
export async function runBulk(
  rows: readonly Occurrence[],
  step: BulkStep,
  options: BulkRunOptions = {},
): Promise<BulkRunResult> {
  const rate = options.rate ?? DEFAULT_BULK_OCCURRENCE_RATE;
  if (!(Number.isFinite(rate) && rate > 0))
    throw new InvalidInputError('bulk run options', [`rate must be a positive number, got ${rate}`]);
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const interval = 1000 / rate;
  const total = rows.length;
  const refused: BulkRowProblem[] = [];
  const failed: BulkRowProblem[] = [];
  let acted = 0;
  let already = 0;
  let retries = 0;
  let done = 0;
  let next = 0;
  let stopped: string | undefined;
  // The start time of the next row: reserved synchronously, so that concurrent workers never share a slot.
  let nextSlot = clock.now();

  const takeSlot = async (): Promise<void> => {
    const now = clock.now();
    const slot = Math.max(now, nextSlot);
    nextSlot = slot + interval;
    if (slot > now) await sleep(slot - now);
  };

  const runRow = async (row: Occurrence): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      await takeSlot();
      try {
        const result = await step(row);
        if (result.outcome === 'acted') acted++;
        else if (result.outcome === 'already') already++;
        else refused.push({ key: keyOf(row), reason: result.reason });
        return;
      } catch (error) {
        if (isTransient(error) && attempt < BULK_OCCURRENCE_MAX_ATTEMPTS) {
          retries++;
          // Everyone slows down, not only this row: a throttled table needs fewer requests, not the same.
          const delay = random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
          nextSlot = Math.max(nextSlot, clock.now() + delay);
          continue;
        }
        // Fatal (AccessDenied, a missing table): the same for every row, so stop rather than fail them all.
        if (error instanceof DependencyError && !isTransient(error)) throw error;
        failed.push({ key: keyOf(row), reason: messageOf(error) });
        return;
      }
    }
  };

  const worker = async (): Promise<void> => {
    while (stopped === undefined && next < total) {
      if (options.signal?.aborted) {
        stopped = 'interrupted';
        return;
      }
      const row = rows[next++];
      try {
        await runRow(row);
      } catch (error) {
        stopped ??= messageOf(error);
        failed.push({ key: keyOf(row), reason: messageOf(error) });
      }
      done++;
      options.onProgress?.({ done, total, acted, notActed: refused.length + failed.length });
    }
  };

  await Promise.all(Array.from({ length: Math.min(BULK_OCCURRENCE_CONCURRENCY, Math.max(1, total)) }, worker));
  return { total, acted, already, refused, failed, retries, ...(stopped === undefined ? {} : { stopped }) };
}

/** Who runs a bulk action, and as which run. */
export interface BulkActor {
  /** The run's id (newBulkId), recorded in each row it retries; pass the same id to resume a run. */
  readonly bulkId: string;
  /** Who runs it (operator-identity.ts), recorded in each row's history. */
  readonly by: string;
}

/**
 * Reopens each FAILED row of `job` and enqueues it (retryOccurrence), recording the run's id so that a resumed run
 * skips the rows it did before. A row no longer FAILED is refused with the reason and left as it is.
 *
 * @param deps - what retryOccurrence needs (`ops.retryDeps(job)`).
 * @param rows - the rows selectOccurrences returned.
 *
 * @example
 * ```ts
 * const job = await ops.job('nightly-export');
 * const filter = { jobId: job.id, statuses: ['FAILED'], from: '2026-11-24T00:00:00Z', to: '2026-12-01T00:00:00Z' };
 * const rows = await selectOccurrences(ops.occurrences, job, filter);
 * const result = await bulkRetry(ops.retryDeps(job), rows, { bulkId: newBulkId(), by: await ops.operator() });
 * ```
 */
export function bulkRetry(
  deps: ManualRetryDeps,
  rows: readonly Occurrence[],
  actor: BulkActor,
  options: BulkRunOptions = {},
): Promise<BulkRunResult> {
  const step: BulkStep = async (row) => {
    const result = await retryOccurrence(deps, keyOf(row), { force: false, by: actor.by, bulkId: actor.bulkId });
    if (result.outcome === 'reopened') return { outcome: 'acted' };
    if (result.outcome === 'refused' && result.alreadyInBulk) return { outcome: 'already' };
    return { outcome: 'refused', reason: result.outcome === 'refused' ? result.reason : 'it is not FAILED' };
  };
  return runBulk(rows, step, { clock: deps.clock, ...options });
}

/**
 * Cancels each row through `cancel` (cancelOccurrence bound to its deps, `by` and note). A row that finished since
 * it was selected is refused with the reason; CANCELLED is terminal, so a resumed run does not select it again.
 */
export function bulkCancel(
  cancel: BulkCancel,
  rows: readonly Occurrence[],
  options: BulkRunOptions = {},
): Promise<BulkRunResult> {
  return runBulk(
    rows,
    async (row) => {
      const result = await cancel(keyOf(row));
      return result.outcome === 'cancelled'
        ? { outcome: 'acted' }
        : { outcome: 'refused', reason: result.reason ?? 'refused' };
    },
    options,
  );
}

const keyOf = (row: Occurrence): OccurrenceKey => ({
  jobId: row.jobId,
  scheduledTime: row.scheduledTime,
  ...(row.scheduleKey === undefined ? {} : { scheduleKey: row.scheduleKey }),
});
