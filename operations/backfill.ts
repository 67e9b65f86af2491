/**
 * A backfill: record (and enqueue) the occurrences a job's schedule would have produced in a past range
 * `[from, to)`, for example after its schedule was disabled or its trigger was broken. The same functions run
 * `occurrences backfill` and the console's backfill action; they print nothing and return what they did.
 *
 *   planBackfill ─▶ the schedule's fire times in the range (refused beyond `max`)
 *   previewBackfill ─▶ one key-range Query: which of them are recorded already (a dry run; writes nothing)
 *   recordBackfill ─▶ each time through recordOccurrence, the trigger's own logic: a conditional put, then an
 *                     enqueue on the job's worker queue
 *
 * Idempotent: an occurrence that exists is not written again and runs at most once; one still PENDING is enqueued
 * again (the earlier run may have stopped between its put and its enqueue), which is harmless because claims are
 * conditional. Each occurrence's retry deadline and retention count from the backfill (`countFrom`), not from its
 * scheduled time, which would have passed. Ranges that reach into the future are refused: the Scheduler fires those.
 * The overlap policy (default bufferAll) is written on each row; under allowAll at most `concurrency` run at once:
 * recordBackfill waits for one to end (or pass its deadline) before it records the next.
 *
 * @example
 * ```ts
 * import { connectJobOperations, OperatorOccurrenceStore, planBackfill, previewBackfill, recordBackfill } from 'scheduled-jobs-stack/operations';
 *
 * const ops = connectJobOperations({ tableName, scheduleGroupName, workerQueueUrls });
 * const job = await ops.job('hourly-report');
 * const plan = planBackfill(job, { from: Date.parse('2026-11-29T00:00:00Z'), to: Date.now(), max: 1000 });
 * const { existing } = await previewBackfill(ops.occurrences, plan); // a dry run: what is recorded already
 * const store = new OperatorOccurrenceStore(documentClient, tableName);
 * const { results, failure } = await recordBackfill({ store, queues: ops.trigger.queues, clock: ops.clock }, plan, {
 *   by: 'alice',
 * });
 * ```
 *
 * @packageDocumentation
 */
import type { NewestFirstRange } from '../functions/aws/occurrence-reader';
import { InvalidInputError } from '../functions/protocol/errors';
import { type DeployedJob, scheduleEventOfJob, seriesOfJob } from '../functions/protocol/job-control';
import type { OverlapPolicy } from '../functions/protocol/job-settings';
import {
  isoSeconds,
  type Occurrence,
  type OccurrenceKey,
  type OccurrenceStatus,
  TERMINAL_STATUSES,
} from '../functions/protocol/occurrence';
import type { Clock, Logger, OccurrenceRecorder, WorkQueue } from '../functions/protocol/ports';
import { recordOccurrence, type TriggerResult } from '../functions/protocol/record-occurrence';
import { scheduleTimesBetween } from '../functions/protocol/schedule-times';
import { sleep } from '../functions/protocol/transient-retry';

/** allowAll's default: occurrences running at once. */
export const BACKFILL_CONCURRENCY = 8;
/** How often an allowAll backfill reads the rows it waits for. */
export const BACKFILL_POLL_MS = 5_000;

/** The fire times a backfill would record. */
export interface BackfillPlan {
  /** The job, as deployed: its schedule, time zone and route. */
  readonly job: DeployedJob;
  /** The range's start, included, epoch milliseconds. */
  readonly from: number;
  /** The range's end, excluded, epoch milliseconds. */
  readonly to: number;
  /** Scheduled times, oldest first, in the key format. */
  readonly times: readonly string[];
}

/** What is wrong with a backfill's range, and which end: undefined when nothing is. */
export interface BackfillRangeProblem {
  /** The end of the range that is wrong. */
  readonly parameter: 'from' | 'to';
  /** What is wrong with it, starting with its value: `(2026-12-02T00:00:00Z) is in the future: ...`. */
  readonly problem: string;
}

/**
 * Whether `[from, to)` may be backfilled at `now`: `from` must be before `to`, and `to` no later than now (the
 * Scheduler fires later times itself, and recording them now would run the job early).
 */
export function backfillRangeProblem(from: number, to: number, now: number): BackfillRangeProblem | undefined {
  if (from >= to) return { parameter: 'from', problem: `(${isoSeconds(from)}) must be before to (${isoSeconds(to)})` };
  if (to > now) {
    return {
      parameter: 'to',
      problem:
        `(${isoSeconds(to)}) is in the future: the Scheduler fires those occurrences itself, and recording ` +
        'them now would run the job early; end the range at now or before',
    };
  }
  return undefined;
}

/**
 * The scheduled times of the job's schedule in `[from, to)`, at most `max` of them.
 * @throws ScheduleError when the schedule fires more than `max` times in the range, or cannot be read.
 * @throws InvalidInputError for a job that takes schedules at run time given without one of its keys.
 */
export function planBackfill(
  job: DeployedJob,
  range: { readonly from: number; readonly to: number; readonly max: number },
): BackfillPlan {
  if (job.runtimeScheduleGroup !== undefined && job.scheduleKey === undefined)
    throw new InvalidInputError('backfill', [
      `job ${job.id} takes schedules at run time: backfill one of its schedules (ops.job(jobId, scheduleKey))`,
    ]);
  const times = scheduleTimesBetween(
    { schedule: job.schedule, timeZone: job.timeZone },
    new Date(range.from),
    new Date(range.to),
    range.max,
  );
  return { job, from: range.from, to: range.to, times: times.map((t) => isoSeconds(t.getTime())) };
}

/** The read a dry run makes: one job's rows in a range, newest first (OperatorOccurrenceReader has it). */
export interface BackfillRows {
  /** The job's rows with `from <= scheduledTime < to`, newest first, at most `limit`. */
  listJobNewestFirst(
    jobId: string,
    range: NewestFirstRange,
  ): Promise<readonly Pick<Occurrence, 'scheduledTime' | 'status'>[]>;
}

/** What a dry run found. */
export interface BackfillPreview {
  /** The times the plan holds. */
  readonly planned: number;
  /** Of those, the ones that have a row already, by status. */
  readonly existing: Partial<Record<OccurrenceStatus, number>>;
}

/** A dry run: which of the plan's times are recorded already, from one read of the range; writes nothing. */
export async function previewBackfill(rows: BackfillRows, plan: BackfillPlan): Promise<BackfillPreview> {
  // One key-range Query for the whole range, rather than a read per time.
  // The series: the job, or one of its run-time schedules (`jobId#scheduleKey`).
  const found = await rows.listJobNewestFirst(seriesOfJob(plan.job), {
    from: isoSeconds(plan.from),
    to: isoSeconds(Math.ceil(plan.to / 1000) * 1000),
    limit: Number.MAX_SAFE_INTEGER /* every row: pages are capped by the reader */,
  });
  const planned = new Set(plan.times);
  const existing: Partial<Record<OccurrenceStatus, number>> = {};
  for (const row of found) if (planned.has(row.scheduledTime)) existing[row.status] = (existing[row.status] ?? 0) + 1;
  return { planned: plan.times.length, existing };
}

/** Where a backfill records: the trigger's insert, and a read of a row (an allowAll backfill waits on it). */
export interface BackfillStore extends OccurrenceRecorder {
  /** The row of this key, or undefined when there is none. */
  get(key: OccurrenceKey): Promise<Occurrence | undefined>;
}

/** What recordBackfill works with. */
export interface BackfillDeps {
  /** Where the occurrences are recorded (OperatorOccurrenceStore). */
  readonly store: BackfillStore;
  /** Each worker's job queue, by worker id: the job's worker's is used. */
  readonly queues: ReadonlyMap<string, WorkQueue>;
  /** The time the deadlines and the retention count from. */
  readonly clock: Clock;
}

/** How recordBackfill records. */
export interface BackfillOptions {
  /** Written on each row. @defaultValue bufferAll */
  readonly overlap?: OverlapPolicy;
  /** allowAll: occurrences running at once. @defaultValue BACKFILL_CONCURRENCY */
  readonly concurrency?: number;
  /** Who asks, written on each row. @defaultValue 'occurrences backfill' */
  readonly by?: string;
  /** Waits between reads of the rows an allowAll backfill waits for. @defaultValue a timer */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Called once per time recorded (a progress bar). */
  readonly onRecorded?: () => void;
  /** Aborted: no new occurrence is started; the ones in flight finish. */
  readonly signal?: AbortSignal;
}

/** What recordBackfill did. */
export interface BackfillRecording {
  /** By recordOccurrence's result. */
  readonly results: Partial<Record<TriggerResult, number>>;
  /** The times recorded (whatever the result): fewer than planned after a failure or an abort. */
  readonly done: number;
  /** The first failure; undefined when every time was recorded, or the signal stopped it. */
  readonly failure: unknown;
  /** When the retry deadlines (and the retention) of the recorded occurrences are counted from. */
  readonly countFrom: number;
}

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Records the plan's occurrences, in order (or up to `concurrency` running at once under allowAll). A failure or
 * an abort stops it (the occurrences in flight finish); it never throws the failure, it returns it with how far it
 * got, so the caller can say so. Running it again is safe.
 */
export async function recordBackfill(
  deps: BackfillDeps,
  plan: BackfillPlan,
  options: BackfillOptions = {},
): Promise<BackfillRecording> {
  const { job } = plan;
  const results: Partial<Record<TriggerResult, number>> = {};
  const triggerDeps = { store: deps.store, queues: deps.queues, clock: deps.clock, logger: quiet };
  const countFrom = deps.clock.now();
  const overlap = options.overlap ?? 'bufferAll';
  const requested = { by: options.by ?? 'occurrences backfill', origin: 'backfill' as const, overlap };
  const parallel = overlap === 'allowAll';
  let done = 0;
  const record = async (scheduledTime: string): Promise<void> => {
    // The event the schedule would have sent: its key and input too, for one schedule of a job that takes them.
    const event = scheduleEventOfJob(job, scheduledTime);
    const result = await recordOccurrence(triggerDeps, event, { countFrom, requested });
    results[result] = (results[result] ?? 0) + 1;
    done++;
    options.onRecorded?.();
    if (parallel && result !== 'duplicate-suppressed' && result !== 'recorded-missed')
      await untilEnded(deps, { jobId: job.id, scheduleKey: job.scheduleKey, scheduledTime }, options);
  };
  // One at a time in order unless allowAll: the worker's slot starts them in scheduled-time order anyway.
  const concurrency = parallel ? (options.concurrency ?? BACKFILL_CONCURRENCY) : 1;
  const failure = await inParallel(plan.times, concurrency, record, options.signal);
  return { results, done, failure, countFrom };
}

/**
 * Waits until the occurrence's row is terminal, or past its deadline (no attempt starts after it, so it no longer
 * runs for long), or the signal aborts: an allowAll backfill keeps at most `concurrency` running this way.
 */
async function untilEnded(deps: BackfillDeps, key: OccurrenceKey, options: BackfillOptions): Promise<void> {
  const signal = options.signal ?? new AbortController().signal;
  const wait = options.sleep ?? sleep;
  while (!signal.aborted) {
    const row = await deps.store.get(key);
    if (row === undefined || TERMINAL_STATUSES.includes(row.status) || Date.parse(row.deadlineAt) < deps.clock.now())
      return;
    await wait(BACKFILL_POLL_MS, signal);
  }
}

/**
 * Calls `fn` for each item in order, `concurrency` at a time. After the first failure or once the signal aborts no
 * new item is started; the ones in flight finish. Resolves with the first failure, undefined when there was none.
 */
async function inParallel<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  let next = 0;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (failure === undefined && !signal?.aborted && next < items.length) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return failure;
}
