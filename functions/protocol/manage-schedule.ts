/**
 * The writes of the schedules a job takes at run time: upsert, pause, resume and delete one schedule, each the
 * registry row first (the source of truth) and its Scheduler schedule after (the projection).
 *
 * Every write of a row sets `syncDueAt` (now + SYNC_GRACE_SECONDS) with the row, in the same conditional put; the
 * projection follows, and only then is the row marked synced. A crash or a failed Scheduler call between the two
 * leaves the row in the sparse index `bySyncDue`, where the reconciler finds and repairs it (repairSchedule). An
 * upsert of what the row already holds, synced, writes nothing and calls Scheduler not at all.
 *
 * Writers of one key race (docs/runtime-schedules.md, "Racing writers"): each put is conditional on the version it
 * read; a refused put waits (full jitter from the injected random source, 25 ms doubling to 1 s), reads the row again
 * and decides again, MAX_WRITE_ATTEMPTS times in all, so that each racing caller's spec is
 * written in some order and the last writer wins. Only past that bound (a key written by dozens of callers at once)
 * does a call throw, a transient DependencyError saying to try again. Their projections may land in either order,
 * so a writer whose markSynced is refused (the row moved on) projects the row as it now is and tries again: the last
 * projection is always of the newest version a writer read after its own projection.
 */

import { DependencyError, ScheduledJobsError } from './errors';
import { checkAll, id } from './field-checks';
import type { Clock } from './ports';
import { type SeriesKey, scheduleKey } from './schedule-key';
import {
  changedRow,
  InvalidScheduleError,
  isFinished,
  isSynced,
  newRow,
  specEquals,
  stateChangedRow,
  tombstoneOf,
  validateScheduleSpec,
  type WriteOptions,
} from './schedule-registry';
import type {
  KeyedJobTemplate,
  RegisteredSchedule,
  RegisteredScheduleState,
  ScheduleProjection,
  ScheduleRegistry,
  ScheduleSpec,
} from './schedule-registry-ports';
import { delay } from './transient-retry';

/** How many times a write tries a row that changed under it before it gives up (a transient DependencyError). */
export const MAX_WRITE_ATTEMPTS = 8;
/** The wait before the n-th retry of a refused write is random in [0, min(CAP, FIRST * 2^(n-1))) ms (full jitter). */
export const CONTENTION_FIRST_WAIT_MS = 25;
export const CONTENTION_MAX_WAIT_MS = 1_000;

/** What the writes run on. */
export interface ManageScheduleDeps {
  /** The registry table: the source of truth. */
  readonly registry: ScheduleRegistry;
  /** EventBridge Scheduler: the projection of each row, and each job's template. */
  readonly projection: ScheduleProjection;
  readonly clock: Clock;
  /** Uniform in [0, 1): the jitter of the waits between racing writes. Default: Math.random. */
  readonly random?: () => number;
  /**
   * Called after a schedule is resumed, to clear its series' pause after failures (the run of failed occurrences
   * that paused this key). Absent: nothing else is cleared.
   * TODO(lead): wire the core's series resume here once it exposes one (connectScheduleOperations passes it).
   */
  readonly onResume?: (series: SeriesKey, options: WriteOptions) => Promise<void>;
}

/** The job is unknown, or takes no schedules at run time (it has a fixed `schedule`). Nothing was written. */
export class UnknownScheduleJobError extends ScheduledJobsError {
  /** Always `'UnknownScheduleJobError'`. */
  override readonly name = 'UnknownScheduleJobError';

  constructor(
    /** The job asked for. */
    readonly jobId: string,
  ) {
    super(
      `job '${jobId}' takes no schedules at run time: the stack's schedule group has no template schedule named ` +
        `'${jobId}' (an unknown job, one not deployed yet, or one with a fixed schedule: addJob(..., { runtimeSchedules: true }) makes one)`,
    );
  }
}

/** The registry has no schedule of that key for the job (never created, or deleted). Nothing was written. */
export class ScheduleNotFoundError extends ScheduledJobsError {
  /** Always `'ScheduleNotFoundError'`. */
  override readonly name = 'ScheduleNotFoundError';

  constructor(
    /** The job asked for. */
    readonly jobId: string,
    /** The schedule key asked for. */
    readonly scheduleKey: string,
  ) {
    super(`job '${jobId}' has no schedule with key '${scheduleKey}'`);
  }
}

/**
 * created: the key had no schedule (or a deleted one), and this call wrote it; updated: it had another, and this call
 * wrote this one over it; repaired: the registry held this spec already, but its Scheduler schedule was not confirmed
 * (an earlier call that failed half way, or a racing caller still projecting it), and this call put the schedule and
 * marked the row synced; unchanged: it had this one, in sync, and nothing was written.
 */
export type UpsertOutcome = 'created' | 'updated' | 'repaired' | 'unchanged';

/** What an upsert did, and the row as it is after. */
export interface UpsertResult {
  readonly outcome: UpsertOutcome;
  readonly schedule: RegisteredSchedule;
}

/** The template of `jobId`'s schedules; throws UnknownScheduleJobError when it has none. */
export async function jobTemplateOf(
  deps: Pick<ManageScheduleDeps, 'projection'>,
  jobId: string,
): Promise<KeyedJobTemplate> {
  const template = await deps.projection.template(jobId);
  if (template === undefined) throw new UnknownScheduleJobError(jobId);
  return template;
}

/** Options of a write: who wrote, and the job's template when the caller has it already (a bulk upsert). */
export interface ManageOptions extends WriteOptions {
  readonly template?: KeyedJobTemplate;
}

/**
 * Creates or replaces the schedule of `key` in `jobId`. The same spec twice: the second writes nothing.
 * @throws InvalidScheduleError naming every wrong field, UnknownScheduleJobError; nothing written by either.
 * @throws DependencyError when a call failed: the row may be written and its projection not yet (the reconciler
 *   repairs it; the same upsert again does too).
 */
export async function upsertScheduleRecord(
  deps: ManageScheduleDeps,
  jobId: string,
  key: string,
  spec: ScheduleSpec,
  options: ManageOptions = {},
): Promise<UpsertResult> {
  const now = deps.clock.now();
  const checked = validateScheduleSpec(jobId, key, spec, now);
  const template = options.template ?? (await jobTemplateOf(deps, jobId));
  const write = await writeRow(deps, jobId, key, (current) => {
    if (current === undefined) return newRow(jobId, key, checked, now, options);
    return specEquals(current, checked) ? undefined : changedRow(current, checked, now, options);
  });
  const row = write.row as RegisteredSchedule;
  if (!write.wrote && isSynced(row)) return { outcome: 'unchanged', schedule: row };
  const previous = write.previous;
  // Not written, not synced: the projection this call makes is a write too, and the outcome says so.
  const outcome: UpsertOutcome = !write.wrote
    ? 'repaired'
    : previous === undefined || previous.deletedAt !== undefined
      ? 'created'
      : 'updated';
  return { outcome, schedule: (await repairSchedule(deps, row, template)) ?? row };
}

/**
 * Pauses (PAUSED: its Scheduler schedule DISABLED) or resumes (ENABLED) the schedule of `key`. Resuming also
 * clears the series' pause after failures (deps.onResume).
 * @throws ScheduleNotFoundError, UnknownScheduleJobError, InvalidScheduleError (a malformed job id or key).
 */
export async function setScheduleState(
  deps: ManageScheduleDeps,
  jobId: string,
  key: string,
  state: RegisteredScheduleState,
  options: ManageOptions = {},
): Promise<RegisteredSchedule> {
  checkIds(jobId, key);
  const now = deps.clock.now();
  const template = options.template ?? (await jobTemplateOf(deps, jobId));
  const write = await writeRow(deps, jobId, key, (current) => {
    if (current === undefined || current.deletedAt !== undefined) throw new ScheduleNotFoundError(jobId, key);
    return current.state === state ? undefined : stateChangedRow(current, state, now, options);
  });
  const row = write.row as RegisteredSchedule;
  const after = write.wrote || !isSynced(row) ? ((await repairSchedule(deps, row, template)) ?? row) : row;
  if (state === 'ENABLED') await deps.onResume?.({ jobId, scheduleKey: key }, options);
  return after;
}

/**
 * Deletes the schedule of `key`: a tombstone first, then the Scheduler schedule, then the row. Its occurrences in
 * flight finish; their rows expire by TTL as any occurrence's. `deleted: false`: there was no such schedule.
 * @throws UnknownScheduleJobError, InvalidScheduleError (a malformed job id or key).
 */
export async function deleteScheduleRecord(
  deps: ManageScheduleDeps,
  jobId: string,
  key: string,
  options: ManageOptions = {},
): Promise<{ readonly deleted: boolean }> {
  checkIds(jobId, key);
  const now = deps.clock.now();
  const template = options.template ?? (await jobTemplateOf(deps, jobId));
  // A tombstone already there is a delete that did not finish: finish it.
  const write = await writeRow(deps, jobId, key, (current) =>
    current === undefined || current.deletedAt !== undefined ? undefined : tombstoneOf(current, now, options),
  );
  if (write.row === undefined) return { deleted: false };
  await repairSchedule(deps, write.row, template);
  return { deleted: true };
}

/**
 * Makes Scheduler hold what `row` says and records it: puts its schedule (or removes it, for a tombstone or a
 * finished schedule) and marks the row synced (or removes the tombstone). When the row changed meanwhile, does the
 * same for the row as it is now, up to MAX_WRITE_ATTEMPTS times. The writes call it after their row, the reconciler
 * for a row due or found drifted.
 * @returns the row as it is after, undefined once it is removed.
 */
export async function repairSchedule(
  deps: Pick<ManageScheduleDeps, 'registry' | 'projection' | 'clock' | 'random'>,
  row: RegisteredSchedule,
  template: KeyedJobTemplate,
): Promise<RegisteredSchedule | undefined> {
  const { registry, projection, clock } = deps;
  let current = row;
  for (let attempt = 1; ; attempt++) {
    const now = clock.now();
    if (current.deletedAt !== undefined) {
      await projection.remove(template, current.scheduleName);
      if ((await registry.remove(current.jobId, current.scheduleKey, current)).removed) return undefined;
    } else {
      if (isFinished(current, now)) await projection.remove(template, current.scheduleName);
      else await projection.put(current, template);
      const marked = await registry.markSynced(current.jobId, current.scheduleKey, current, now, template.templateHash);
      if (marked.written) return marked.current;
    }
    // The row moved on while we projected; our projection may have landed after the newer writer's.
    const latest = await registry.get(current.jobId, current.scheduleKey, true);
    if (latest === undefined) {
      // Removed by a delete that finished; a put of ours may have come after its removal.
      if (current.deletedAt === undefined) await projection.remove(template, current.scheduleName);
      return undefined;
    }
    current = latest;
    // Left due: the reconciler takes it from here.
    if (attempt >= MAX_WRITE_ATTEMPTS) return current;
    await contentionWait(deps, attempt);
  }
}

/** The jittered wait before retrying a write that another writer of the key got in before. */
function contentionWait(deps: Pick<ManageScheduleDeps, 'random'>, attempt: number): Promise<void> {
  const ceiling = Math.min(CONTENTION_MAX_WAIT_MS, CONTENTION_FIRST_WAIT_MS * 2 ** (attempt - 1));
  return delay(Math.floor((deps.random ?? Math.random)() * ceiling));
}

function checkIds(jobId: string, key: string): void {
  const checked = checkAll({ jobId: id('jobId', jobId), scheduleKey: scheduleKey('scheduleKey', key) });
  if (!checked.ok) throw new InvalidScheduleError(jobId, key, checked.problems);
}

/**
 * Reads the row (consistently) and puts `change(row)` conditional on the version read; on a refusal, waits (jittered)
 * and reads it again. `change` returns undefined when nothing is to be written.
 */
async function writeRow(
  deps: Pick<ManageScheduleDeps, 'registry' | 'random'>,
  jobId: string,
  key: string,
  change: (current: RegisteredSchedule | undefined) => RegisteredSchedule | undefined,
): Promise<{
  readonly wrote: boolean;
  readonly row: RegisteredSchedule | undefined;
  readonly previous: RegisteredSchedule | undefined;
}> {
  const { registry } = deps;
  let current = await registry.get(jobId, key, true);
  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
    const next = change(current);
    if (next === undefined) return { wrote: false, row: current, previous: current };
    const result = await registry.put(next, current);
    if (result.written) return { wrote: true, row: result.current, previous: current };
    if (attempt === MAX_WRITE_ATTEMPTS) break;
    // The row the refusal returned is as old as the wait is long: the others write on meanwhile. Read it after.
    await contentionWait(deps, attempt);
    current = await registry.get(jobId, key, true);
  }
  throw new DependencyError(
    'transient',
    `write schedule ${jobId}/${key}`,
    new Error(
      `other callers changed the row under ${MAX_WRITE_ATTEMPTS} writes in a row (each waited for); nothing of this call was written: try again`,
    ),
  );
}

/**
 * `projection` with its templates remembered for `ttlMs`, so that many writes of one job (a bulk upsert, an app's
 * busy hour) read the template once. A job not found is not remembered: it may be deployed a moment later. A
 * template changed by a deployment reaches the writes within `ttlMs`; the reconciler's audit re-projects schedules
 * of a stale template.
 */
export function rememberingTemplates(projection: ScheduleProjection, clock: Clock, ttlMs = 60_000): ScheduleProjection {
  const remembered = new Map<string, { readonly template: KeyedJobTemplate; readonly until: number }>();
  return {
    async template(jobId) {
      const hit = remembered.get(jobId);
      if (hit !== undefined && hit.until > clock.now()) return hit.template;
      const template = await projection.template(jobId);
      if (template === undefined) remembered.delete(jobId);
      else remembered.set(jobId, { template, until: clock.now() + ttlMs });
      return template;
    },
    put: (row, template) => projection.put(row, template),
    remove: (template, name) => projection.remove(template, name),
    listPage: (template, prefix, token) => projection.listPage(template, prefix, token),
  };
}
