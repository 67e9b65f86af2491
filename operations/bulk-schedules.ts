/**
 * Create or update thousands of a job's run-time schedules at once (`upsertSchedules`, and `occurrences schedules
 * import`): each item is one idempotent upsertSchedule, started at most `rate` per second, at most `concurrency` at a
 * time, retried with exponential backoff and full jitter when it fails transiently (Scheduler's or DynamoDB's
 * throttling: a transient DependencyError), and the whole run slowed by the same backoff, so a throttled account
 * is not hammered by the other workers meanwhile.
 *
 * The rate. EventBridge Scheduler's CreateSchedule and UpdateSchedule quotas are 1,000 requests/s in most Regions
 * (5,000 in a few; Service Quotas, "Scheduler"), shared by the whole account and Region: the app's own upserts, the
 * reconciler and other stacks. The default, DEFAULT_BULK_RATE = 50 items/s (each new item costs one CreateSchedule,
 * one GetItem and two writes in the registry table), leaves that headroom: 100,000 schedules take about 34 minutes.
 * Raising `rate` meets the registry's limit first: its rows of one job share a partition key, which takes about 500
 * upserts/s (166 with a 2 KB input) until DynamoDB splits it for heat, after minutes of sustained load and only if
 * the keys do not arrive in ascending order (bench/registry-model.ts): shuffle a large import's items.
 *
 * Bad input is per item: an item that is not an object, has no or a bad `scheduleKey`, a field that is not a
 * schedule's, or a spec upsertSchedule rejects (InvalidInputError) is reported by its index, and the rest are
 * processed. An error that is no item's own (a fatal DependencyError such as AccessDenied, an unknown job) stops
 * the run: the items not started are not attempted, and `stopped` says why.
 *
 * Resumable: upsert is idempotent, so running the same items again after a crash is safe and cheap (an item already
 * in the registry as asked and synced costs one read and no write). `checkpoint` makes it cheaper still: `save` gets
 * the index below which every item is done, and `startAt` skips them on the next run.
 */
import { DependencyError, InvalidInputError, isTransient, messageOf } from '../functions/protocol/errors';
import { jobTemplateOf, upsertScheduleRecord } from '../functions/protocol/manage-schedule';
import { type Clock, systemClock } from '../functions/protocol/ports';
import { scheduleKey as checkScheduleKey } from '../functions/protocol/schedule-key';
import { InvalidScheduleError, SCHEDULE_SPEC_FIELDS } from '../functions/protocol/schedule-registry';
import type { ScheduleSpec } from '../functions/protocol/schedule-registry-ports';
import { manageDepsOf, type ScheduleOperations } from './schedules';

/** Items started per second by default; see the module comment for Scheduler's quotas. */
export const DEFAULT_BULK_RATE = 50;
/** Items in flight at once by default. */
export const DEFAULT_BULK_CONCURRENCY = 10;
/** Attempts of one item on transient failures, the first included. */
export const DEFAULT_BULK_MAX_ATTEMPTS = 8;
/** The first backoff after a transient failure, doubled per attempt up to BULK_BACKOFF_CAP_MS; full jitter. */
export const BULK_BACKOFF_BASE_MS = 200;
export const BULK_BACKOFF_CAP_MS = 20_000;

/** One schedule to create or update: its key and its spec, as one JSON object (one line of an NDJSON file). */
export interface BulkScheduleItem extends ScheduleSpec {
  /** The schedule key (a customer id, say). */
  readonly scheduleKey: string;
}

/** An item's fields: its key and the spec's fields (the registry's list, so the two cannot disagree). */
const ITEM_FIELDS: ReadonlySet<string> = new Set(['scheduleKey', ...SCHEDULE_SPEC_FIELDS]);

/** Counts after each item, for a progress bar: `done` includes `failed`; both include the items skipped by startAt. */
export interface BulkProgress {
  /** Items done so far, failed ones included. */
  readonly done: number;
  /** Items in the list. */
  readonly total: number;
  /** Items that failed so far. */
  readonly failed: number;
}

/** Where a run stands, for resuming it: every item below `nextIndex` is done (written, unchanged or failed). */
export interface BulkCheckpoint {
  /** Skip the items below this index: a previous run saved it. @defaultValue 0 */
  readonly startAt?: number;
  /** Called each time the index below which every item is done advances. */
  save?(nextIndex: number): void | Promise<void>;
}

/** How upsertSchedules paces, retries, reports and resumes. */
export interface BulkUpsertOptions {
  /** Items started per second at most. @defaultValue DEFAULT_BULK_RATE (50) */
  readonly rate?: number;
  /** Items in flight at once at most. @defaultValue DEFAULT_BULK_CONCURRENCY (10) */
  readonly concurrency?: number;
  /** Attempts per item on transient failures. @defaultValue DEFAULT_BULK_MAX_ATTEMPTS (8) */
  readonly maxAttempts?: number;
  /** Who makes the change, recorded in each row (`updatedBy`). */
  readonly by?: string;
  /** Called after each item, for a progress bar. */
  readonly onProgress?: (progress: BulkProgress) => void;
  /** Where to start, and where to save how far the run got, so that a crashed run goes on where it stopped. */
  readonly checkpoint?: BulkCheckpoint;
  /** Stops starting items (Ctrl-C); those in flight finish, and the result says `stopped`. */
  readonly signal?: AbortSignal;
  /** What "now" is for the pacing. @defaultValue the system clock */
  readonly clock?: Clock;
  /** How the run waits (tests pass a fake). @defaultValue a timer */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Uniform in [0, 1): the backoff's jitter. @defaultValue `Math.random` */
  readonly random?: () => number;
}

/** One item that could not be written, and why. */
export interface BulkItemFailure {
  /** The item's index in the list (the line number minus one, for an NDJSON file). */
  readonly index: number;
  /** Its schedule key, when it had a readable one. */
  readonly scheduleKey?: string;
  /** What was wrong, naming the field. */
  readonly error: string;
}

/** What a bulk upsert did. */
export interface BulkUpsertResult {
  /** Items in the list. */
  readonly total: number;
  /**
   * Items whose row (and schedule) this run wrote: created, updated, or repaired (the row held the spec already, but
   * its schedule was not confirmed: this run put it).
   */
  readonly written: number;
  /** Items already in the registry as asked, in sync: read, nothing written. */
  readonly unchanged: number;
  /** Items that could not be written, by index. */
  readonly failed: readonly BulkItemFailure[];
  /** Transient failures retried. */
  readonly retries: number;
  /** Every item below this index is done; pass it as `checkpoint.startAt` to go on after a stop. */
  readonly nextIndex: number;
  /** Why the run stopped before the end, if it did: an error that is no item's own, or the signal. */
  readonly stopped?: string;
}

/**
 * One item's upsert: true when it wrote, false when the registry already held it as asked. The public upsertSchedules
 * passes upsertSchedule of operations/schedules.ts; tests pass fakes.
 */
export type UpsertOne = (scheduleKey: string, spec: ScheduleSpec, by: string | undefined) => Promise<boolean>;

/** The item at `index` as a key and a spec, or the problems with it (each naming the field). */
export function checkBulkItem(
  item: unknown,
):
  | { readonly ok: true; readonly key: string; readonly spec: ScheduleSpec }
  | { readonly ok: false; readonly problems: string[]; readonly key?: string } {
  if (typeof item !== 'object' || item === null || Array.isArray(item))
    return { ok: false, problems: ['must be a JSON object with scheduleKey and expression'] };
  const { scheduleKey, ...spec } = item as Record<string, unknown>;
  const problems = Object.keys(item)
    .filter((field) => !ITEM_FIELDS.has(field))
    .map((field) => `${field} is not a field of a schedule (${[...ITEM_FIELDS].join(', ')})`);
  const key = checkScheduleKey('scheduleKey', scheduleKey);
  if (!key.ok) problems.unshift(key.error);
  const named = typeof scheduleKey === 'string' ? scheduleKey : undefined;
  if (problems.length > 0 || !key.ok) return { ok: false, problems, key: named };
  return { ok: true, key: key.value, spec: spec as unknown as ScheduleSpec };
}

/**
 * Creates or updates each of `items` as a schedule of `jobId` (upsertSchedule for each, within the rate): see the
 * module comment for the rate, the backoff, bad items and resuming. `ops` is connectScheduleOperations's. The job's template is read once, first: an unknown job, or
 * one that takes no schedules at run time, throws UnknownScheduleJobError before any item is written.
 *
 * ```ts
 * const result = await upsertSchedules(ops, 'weekly-report', customers.map((c) => ({
 *   scheduleKey: c.id, expression: 'cron(0 8 ? * MON *)', timeZone: c.timeZone, input: { customerId: c.id },
 * })), { rate: 100, onProgress: ({ done, total }) => console.log(`${done}/${total}`) });
 * ```
 */
export async function upsertSchedules(
  ops: ScheduleOperations,
  jobId: string,
  items: readonly (BulkScheduleItem | unknown)[],
  options: BulkUpsertOptions = {},
): Promise<BulkUpsertResult> {
  const deps = manageDepsOf(ops);
  const template = await jobTemplateOf(deps, jobId);
  const upsertOne: UpsertOne = async (key, spec, by) => {
    const { outcome } = await upsertScheduleRecord(deps, jobId, key, spec, { template, by });
    return outcome !== 'unchanged';
  };
  return upsertEach(upsertOne, items, { clock: deps.clock, ...options });
}

/** The bulk run over any one-item upsert (upsertSchedules's, or a test's). */
export async function upsertEach(
  upsertOne: UpsertOne,
  items: readonly unknown[],
  options: BulkUpsertOptions = {},
): Promise<BulkUpsertResult> {
  const rate = positive('rate', options.rate ?? DEFAULT_BULK_RATE);
  const concurrency = Math.floor(positive('concurrency', options.concurrency ?? DEFAULT_BULK_CONCURRENCY));
  const maxAttempts = Math.floor(positive('maxAttempts', options.maxAttempts ?? DEFAULT_BULK_MAX_ATTEMPTS));
  const startAt = options.checkpoint?.startAt ?? 0;
  if (!Number.isInteger(startAt) || startAt < 0 || startAt > items.length)
    throw new InvalidInputError('bulk upsert options', [
      `checkpoint.startAt must be a whole number from 0 to ${items.length}, got ${startAt}`,
    ]);
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const interval = 1000 / rate;

  const total = items.length;
  const finished = new Uint8Array(total);
  let watermark = startAt;
  let next = startAt;
  let done = startAt;
  let written = 0;
  let unchanged = 0;
  let retries = 0;
  let stopped: string | undefined;
  const failed: BulkItemFailure[] = [];
  // The start time of the next item: reserved synchronously, so concurrent workers never share a slot.
  let nextSlot = clock.now();

  const takeSlot = async (): Promise<void> => {
    const now = clock.now();
    const slot = Math.max(now, nextSlot);
    nextSlot = slot + interval;
    if (slot > now) await sleep(slot - now);
  };

  const finish = async (index: number): Promise<void> => {
    finished[index] = 1;
    done++;
    options.onProgress?.({ done, total, failed: failed.length });
    if (watermark !== index) return;
    while (watermark < total && finished[watermark] === 1) watermark++;
    await options.checkpoint?.save?.(watermark);
  };

  const runItem = async (index: number): Promise<void> => {
    const checked = checkBulkItem(items[index]);
    if (!checked.ok) {
      failed.push({ index, scheduleKey: checked.key, error: checked.problems.join('; ') });
      return;
    }
    for (let attempt = 1; ; attempt++) {
      await takeSlot();
      try {
        if (await upsertOne(checked.key, checked.spec, options.by)) written++;
        else unchanged++;
        return;
      } catch (error) {
        if (isTransient(error) && attempt < maxAttempts) {
          retries++;
          const delay = random() * Math.min(BULK_BACKOFF_CAP_MS, BULK_BACKOFF_BASE_MS * 2 ** (attempt - 1));
          // Everyone slows down, not only this item: a throttled account needs fewer requests, not the same.
          nextSlot = Math.max(nextSlot, clock.now() + delay);
          continue;
        }
        if (isItemError(error) || isTransient(error)) {
          failed.push({ index, scheduleKey: checked.key, error: itemMessage(error) });
          return;
        }
        throw error;
      }
    }
  };

  const worker = async (): Promise<void> => {
    while (stopped === undefined) {
      if (options.signal?.aborted) {
        stopped ??= 'interrupted';
        return;
      }
      if (next >= total) return;
      const index = next++;
      try {
        await runItem(index);
      } catch (error) {
        // No item's own: the same for every item (access denied, unknown job). Stop, with this item not done, so
        // that nextIndex (the checkpoint) stays before it and a run after the fix starts with it.
        stopped ??= messageOf(error);
        failed.push({ index, scheduleKey: checkBulkItem(items[index]).key, error: messageOf(error) });
        return;
      }
      await finish(index);
    }
  };

  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, total - startAt)) }, worker));
  failed.sort((a, b) => a.index - b.index);
  return { total, written, unchanged, failed, retries, nextIndex: watermark, ...(stopped ? { stopped } : {}) };
}

/** A bad item: its spec (or key) is wrong, and only it. */
const isItemError = (error: unknown): error is InvalidInputError | InvalidScheduleError =>
  error instanceof InvalidInputError || error instanceof InvalidScheduleError;

function itemMessage(error: unknown): string {
  if (isItemError(error)) return error.problems.join('; ');
  if (error instanceof DependencyError) return error.message;
  return messageOf(error);
}

function positive(field: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0))
    throw new InvalidInputError('bulk upsert options', [`${field} must be a positive number, got ${value}`]);
  return value;
}
