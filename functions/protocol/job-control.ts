/**
 * The operator's actions on a job (`occurrences pause | resume | run | describe`, and the same as library functions):
 * pure protocol, through ports only.
 *
 *   pause:    disable the schedule ─▶ CAS the job-state row: pausedAt/By, pauseNote, pauseCause 'operator'
 *   resume:   CAS the row: paused fields removed, resumedAt/By, consecutiveFailures 0 ─▶ enable the schedule
 *             ─▶ each fire time since pausedAt: inside the catch-up window, recorded and enqueued by recordOccurrence
 *                (the trigger's own logic, so the worker applies the overlap policy); older, recorded SKIPPED/missed
 *                by the same call; older than the retention, only counted (TTL would delete such a row at once)
 *   run:      recordOccurrence at now (whole seconds), marked `requested: { by, origin: 'run', overlap }`
 *   describe: the row, the next fire times (Scheduler's daylight-saving rule), the newest occurrences and counts
 *
 * Every write of the job-state row is a compare-and-swap on its `version` (job-state.ts), retried from the row the
 * refusal returns a bounded number of times: the worker writes the same row (the slot, the self-pause).
 */
import { DependencyError, InvalidInputError } from './errors';
import type { OverlapPolicy } from './job-settings';
import type { JobState } from './job-state';
import { iso, isoSeconds, type Occurrence, OccurrenceStatus, SkipReason } from './occurrence';
import type { Clock, JobStateChange, JobStateStore, OccurrenceHistory, ScheduleSwitch } from './ports';

// The runtime entry point (functions/index.ts) exports these two with the operator actions.
export type { JobStateStore, OccurrenceHistory } from './ports';

import { recordOccurrence, type TriggerDeps, type TriggerResult } from './record-occurrence';
import { type JobRoute, scheduleEventOf } from './schedule-event';
import { type JsonValue, seriesOf } from './schedule-key';
import { scheduleTimes } from './schedule-times';

/** A deployed job as the operator actions need it: its schedule and its route (the CLI reads them from Scheduler). */
export interface DeployedJob {
  /** The job id: its schedule's name. */
  readonly id: string;
  /** The Scheduler expression: `cron(...)`, `rate(...)` or `at(...)`. */
  readonly schedule: string;
  /** IANA time zone the expression is read in. */
  readonly timeZone: string;
  /** The schedule's state in Scheduler: `ENABLED` or `DISABLED`. */
  readonly state: string;
  /** Where the job's occurrences go and the settings that writers other than its worker need. */
  readonly route: JobRoute;
  /**
   * Set for a job that takes schedules at run time: the schedule group of its schedules. Its own schedule is then the
   * DISABLED template they copy, never enabled; its occurrences are those of its schedules (`scheduleKey`).
   */
  readonly runtimeScheduleGroup?: string;
  /**
   * Set when this is one schedule of a job that takes them at run time (its expression, time zone and state are
   * that schedule's, from the registry): pause, resume, run and describe act on that schedule's series.
   */
  readonly scheduleKey?: string;
  /** That schedule's input, handed to the occurrences recorded for it (catch-up, run now). */
  readonly input?: JsonValue;
  /** The job's overlap policy, as its schedule's input names it; absent from a schedule deployed before it did. */
  readonly overlap?: OverlapPolicy;
}

/** The occurrence table partition of a deployed job, or of one of its schedules (schedule-key.ts). */
export const seriesOfJob = (job: DeployedJob): string => seriesOf({ jobId: job.id, scheduleKey: job.scheduleKey });

/** The template of a job that takes schedules at run time: it has no occurrences of its own. */
const isTemplate = (job: DeployedJob): boolean =>
  job.runtimeScheduleGroup !== undefined && job.scheduleKey === undefined;

/** What every operator action needs: the job-state rows and a clock. */
export interface JobControlDeps {
  /** The job-state rows (pause fields, the overlap slot). */
  readonly states: JobStateStore;
  /** What "now" is for the times the action records. */
  readonly clock: Clock;
}

/** Compare-and-swap attempts before giving up as transient: each refusal means another writer got in between. */
export const MAX_STATE_WRITES = 5;
/** Fire times older than the retention that a resume counts at most (it says "at least" beyond). */
export const MAX_COUNTED_TIMES = 1_000_000;
/** A pause note: what the next person needs to know, not an essay. */
export const MAX_NOTE_CHARS = 500;
/** The `by` of an action: a user name or an ARN. */
export const MAX_BY_CHARS = 256;
/**
 * A resume catches up from this long before `pausedAt`: the time is read on the pauser's clock (a worker's, for a
 * pause after failures, read before the schedule is disabled), which may run ahead of Scheduler's by up to the skew
 * the protocol tolerates (leaseSafetyMarginSeconds' default). A time that fired in that span has its row already, and
 * recording it again is a suppressed duplicate; one held back by the disabled schedule would otherwise be lost.
 */
export const CATCH_UP_CLOCK_MARGIN_MS = 15_000;
/** Records in flight at once when a resume records its missed times. */
const RECORD_CONCURRENCY = 8;

/** Whether the job is paused (by an operator or by its failures). */
export const isPaused = (state: JobState | undefined): boolean => state?.pausedAt !== undefined;

/**
 * Decide a change from the row as it is and write it by compare-and-swap; on a refusal decide again from the row
 * the store returned. `decide` returns undefined when nothing is to be written (the row already says so).
 */
async function writeState(
  states: JobStateStore,
  jobId: string,
  decide: (current: JobState | undefined) => JobStateChange | undefined,
): Promise<{ changed: boolean; state: JobState | undefined }> {
  let current = await states.read(jobId);
  for (let i = 0; i < MAX_STATE_WRITES; i++) {
    const change = decide(current);
    if (change === undefined) return { changed: false, state: current };
    const result = await states.write(jobId, current?.version, change);
    if (result.written) return { changed: true, state: result.state };
    current = result.current;
  }
  throw new DependencyError(
    'transient',
    `write the job-state row of ${jobId}`,
    new Error(`the row changed under ${MAX_STATE_WRITES} compare-and-swap writes in a row; run the command again`),
  );
}

function checkText(where: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max)
    throw new InvalidInputError(where, [`must be a non-empty text of at most ${max} characters`]);
  return value;
}

/** What pauseJob did: paused the job, or found it paused already. */
export type PauseResult =
  | { readonly outcome: 'paused'; readonly state: JobState }
  /** Paused before (by this or another operator, or by its failures): the row keeps who, when and why. */
  | { readonly outcome: 'already-paused'; readonly state: JobState };

/**
 * Pause a job: disable its schedule (its definition kept), then record who, when and the note. The time recorded is
 * read before the schedule is disabled, so a resume catches up every time the schedule may not have fired. A job
 * already paused keeps its pause (the schedule is disabled again, which is a no-op). Deliveries already in flight
 * are SKIPPED as paused by the worker.
 */
export async function pauseJob(
  deps: JobControlDeps & { readonly schedules: ScheduleSwitch },
  jobId: string,
  request: { readonly note: string; readonly by: string },
): Promise<PauseResult> {
  const note = checkText('pause note', request.note, MAX_NOTE_CHARS);
  const by = checkText('pause by', request.by, MAX_BY_CHARS);
  const pausedAt = iso(deps.clock.now());
  await deps.schedules.setState(jobId, 'DISABLED');
  const { changed, state } = await writeState(deps.states, jobId, (current) =>
    isPaused(current)
      ? undefined
      : { set: { pausedAt, pausedBy: by, pauseNote: note, pauseCause: 'operator' }, remove: [] },
  );
  // writeState returns a state whenever it wrote, or when the row it read is paused.
  return { outcome: changed ? 'paused' : 'already-paused', state: state as JobState };
}

/** What a resume did about the fire times the pause missed. */
export interface CatchUp {
  /** Times inside the catch-up window of now, by what recordOccurrence did with each. */
  readonly inWindow: Partial<Record<TriggerResult, number>>;
  /** Older times inside the retention, by what recordOccurrence did (`recorded-missed` for a new SKIPPED row). */
  readonly missed: Partial<Record<TriggerResult, number>>;
  /** Older than the job's retention: not recorded, only counted (at least this many if `countCapped`). */
  readonly olderThanRetention: number;
  /** The count of times older than the retention stopped at its cap. */
  readonly countCapped: boolean;
  /** The times recorded to run, oldest first. */
  readonly runTimes: readonly string[];
}

/** What resumeJob did: resumed the job and caught up, or found it not paused. */
export type ResumeResult =
  | {
      readonly outcome: 'resumed';
      /** The pause that was lifted. */
      readonly paused: Pick<JobState, 'pausedAt' | 'pausedBy' | 'pauseNote' | 'pauseCause'>;
      readonly state: JobState;
      readonly catchUp: CatchUp;
    }
  /** The row says the job is not paused; its schedule was enabled (in case a pause stopped half way). */
  | { readonly outcome: 'not-paused'; readonly state: JobState | undefined };

/** What resumeJob needs beside the job-state rows and the clock. */
export interface ResumeDeps extends JobControlDeps {
  /** Turns the job's schedule back on. */
  readonly schedules: ScheduleSwitch;
  /** What records an occurrence: the trigger's store, the worker queues, a logger. */
  readonly trigger: TriggerDeps;
  /** For a `rate(...)` schedule: the newest scheduled occurrence gives the rate's phase. */
  readonly history: OccurrenceHistory;
}

/** The row's paused fields, cleared; the resume itself recorded. */
const resumeChange = (by: string, now: number): JobStateChange => ({
  set: { resumedAt: iso(now), resumedBy: by, consecutiveFailures: 0 },
  remove: ['pausedAt', 'pausedBy', 'pauseNote', 'pauseCause'],
});

/**
 * Lift the pause of one series (one schedule of a job that takes schedules at run time, paused after its failures):
 * its Scheduler state is the registry's, and the catch-up is the schedule's own retries. True when it was paused.
 */
export async function resumeSeries(deps: JobControlDeps, series: string, by: string): Promise<boolean> {
  const who = checkText('resume by', by, MAX_BY_CHARS);
  const { changed } = await writeState(deps.states, series, (current) =>
    isPaused(current) ? resumeChange(who, deps.clock.now()) : undefined,
  );
  return changed;
}

/**
 * Resume a paused job: clear the pause, enable the schedule, then catch up on the fire times since the pause (see
 * the file's comment). If enabling the schedule fails, the row is resumed already: the error says to run resume again
 * (which enables it) and to backfill from the pause for the times it would have caught up.
 */
export async function resumeJob(
  deps: ResumeDeps,
  job: DeployedJob,
  request: { readonly by: string },
): Promise<ResumeResult> {
  const by = checkText('resume by', request.by, MAX_BY_CHARS);
  let paused: Pick<JobState, 'pausedAt' | 'pausedBy' | 'pauseNote' | 'pauseCause'> = {};
  const { changed, state } = await writeState(deps.states, seriesOfJob(job), (current) => {
    if (!isPaused(current)) return undefined;
    const { pausedAt, pausedBy, pauseNote, pauseCause } = current as JobState;
    paused = { pausedAt, pausedBy, pauseNote, pauseCause };
    return resumeChange(by, deps.clock.now());
  });
  try {
    // A job with schedules created at run time keeps its template DISABLED; each of its schedules' Scheduler state is
    // the registry's (resumeSchedule).
    if (job.runtimeScheduleGroup === undefined) await deps.schedules.setState(job.id, 'ENABLED');
  } catch (error) {
    if (!changed) throw error;
    throw new DependencyError(
      error instanceof DependencyError ? error.kind : 'fatal',
      `enable the schedule of ${job.id} (the job-state row is resumed already: run resume again to enable it, ` +
        `and backfill --from ${paused.pausedAt} for the times it missed)`,
      error,
    );
  }
  if (!changed) return { outcome: 'not-paused', state };
  let catchUp: CatchUp;
  try {
    catchUp = await catchUpSince(deps, job, Date.parse(paused.pausedAt as string) - CATCH_UP_CLOCK_MARGIN_MS);
  } catch (error) {
    // The job runs again already; what is left is recording the missed times, which a backfill does idempotently.
    throw new DependencyError(
      error instanceof DependencyError ? error.kind : 'fatal',
      `record the fire times ${job.id} missed while paused (the job is resumed and its schedule enabled: ` +
        `backfill --from ${paused.pausedAt} records the rest)`,
      error,
    );
  }
  return { outcome: 'resumed', paused, state: state as JobState, catchUp };
}

/** The fire times in [since, now), sorted into the window, the retention and older, and recorded. */
async function catchUpSince(deps: ResumeDeps, job: DeployedJob, since: number): Promise<CatchUp> {
  const now = deps.clock.now();
  const windowMs = (job.route.catchupWindowSeconds ?? job.route.deadlineSeconds) * 1000;
  const retentionMs = job.route.retentionDays * 86_400_000;
  if (isTemplate(job)) return { inWindow: {}, missed: {}, olderThanRetention: 0, countCapped: false, runTimes: [] };
  const rows = isRate(job) ? await deps.history.newestFirst(seriesOfJob(job), ANCHOR_ROWS) : [];
  const anchor = anchorOf(job, rows, since);
  let olderThanRetention = 0;
  let countCapped = false;
  const runTimes: string[] = [];
  const missedTimes: string[] = [];
  for (const t of firesFrom(job, since, anchor)) {
    const at = t.getTime();
    if (at >= now) break;
    if (at <= now - retentionMs) {
      if (++olderThanRetention >= MAX_COUNTED_TIMES) {
        countCapped = true;
        break;
      }
    } else (now - at <= windowMs ? runTimes : missedTimes).push(isoSeconds(at));
  }
  // The ones to run first and in time order: with bufferAll they then start in that order without waiting.
  const inWindow = await recordTimes(deps.trigger, job, runTimes, 1);
  const missed = await recordTimes(deps.trigger, job, missedTimes, RECORD_CONCURRENCY);
  return { inWindow, missed, olderThanRetention, countCapped, runTimes };
}

/** Record each time as its schedule would have (a schedule event through recordOccurrence), `concurrency` at once. */
async function recordTimes(
  trigger: TriggerDeps,
  job: DeployedJob,
  times: readonly string[],
  concurrency: number,
): Promise<Partial<Record<TriggerResult, number>>> {
  const results: Partial<Record<TriggerResult, number>> = {};
  for (let i = 0; i < times.length; i += concurrency) {
    const batch = times.slice(i, i + concurrency);
    const outcomes = await Promise.all(
      batch.map((scheduledTime) => recordOccurrence(trigger, scheduleEventOfJob(job, scheduledTime))),
    );
    for (const r of outcomes) results[r] = (results[r] ?? 0) + 1;
  }
  return results;
}

/**
 * The event the job's schedule (or one of its schedules: its key and input) would have sent for this time: what
 * catch-up, run now and a backfill record, through the trigger's own recordOccurrence.
 */
export function scheduleEventOfJob(job: DeployedJob, scheduledTime: string) {
  const event = scheduleEventOf({ jobId: job.id, scheduleKey: job.scheduleKey, scheduledTime }, job.route);
  return job.input === undefined ? event : { ...event, input: job.input };
}

const isRate = (job: DeployedJob): boolean => job.schedule.startsWith('rate(');

/**
 * Where a `rate(...)` schedule's fire times are counted from. Scheduler anchors a rate at the schedule's creation,
 * which the CLI cannot see; the newest occurrence the schedule itself recorded (no `origin`) at or before `before` is
 * a fire time, so it fixes the phase. Without one, `before` itself; a cron or at() schedule needs no anchor.
 */
function anchorOf(job: DeployedJob, newestFirst: readonly Occurrence[], before: number): number {
  if (!isRate(job)) return before;
  const fired = newestFirst.find((r) => r.origin === undefined && Date.parse(r.scheduledTime) <= before);
  return fired === undefined ? before : Date.parse(fired.scheduledTime);
}

/** Rows read to find a rate's phase: the newest scheduled one is almost always among them. */
const ANCHOR_ROWS = 100;

/** The job's fire times at or after `from`; a rate counted from `anchor` (at or before `from`). */
function* firesFrom(job: DeployedJob, from: number, anchor: number): Generator<Date> {
  for (const t of scheduleTimes({ schedule: job.schedule, timeZone: job.timeZone }, new Date(anchor))) {
    if (t.getTime() >= from) yield t;
  }
}

/** What runJobNow did: how the occurrence was recorded, or why it was refused. */
export type RunResult =
  | { readonly outcome: TriggerResult; readonly scheduledTime: string }
  /** The job is paused: the worker would only record the occurrence SKIPPED. */
  | { readonly outcome: 'refused'; readonly reason: string; readonly state: JobState };

/**
 * An occurrence of the job now (whole seconds), recorded and enqueued with
 * `requested: { by, origin: 'run', overlap }`: the worker applies the job's overlap policy, or `overlap` when given.
 * Refused while the job is paused.
 * Twice in one second is the same occurrence (the second is a duplicate, as for the trigger).
 */
export async function runJobNow(
  deps: JobControlDeps & { readonly trigger: TriggerDeps },
  job: DeployedJob,
  request: { readonly by: string; readonly overlap?: OverlapPolicy },
): Promise<RunResult> {
  const by = checkText('run by', request.by, MAX_BY_CHARS);
  if (isTemplate(job)) {
    throw new InvalidInputError('run', [
      `job ${job.id} takes schedules at run time: run one of its schedules (give its schedule key)`,
    ]);
  }
  const series = seriesOfJob(job);
  // One of a job's schedules is paused with its job too.
  for (const stateOf of job.scheduleKey === undefined ? [series] : [job.id, series]) {
    const state = await deps.states.read(stateOf);
    if (state !== undefined && isPaused(state)) {
      const what = stateOf === job.id ? 'the job' : 'the schedule';
      return { outcome: 'refused', reason: `${what} is paused (${pauseSummary(state)}); resume it first`, state };
    }
  }
  const scheduledTime = isoSeconds(Math.floor(deps.clock.now() / 1000) * 1000);
  const outcome = await recordOccurrence(deps.trigger, scheduleEventOfJob(job, scheduledTime), {
    requested: { by, origin: 'run', ...(request.overlap === undefined ? {} : { overlap: request.overlap }) },
  });
  return { outcome, scheduledTime };
}

/** `since <pausedAt> by <who> (<cause>): <note>`. */
export function pauseSummary(state: JobState): string {
  const cause = state.pauseCause === 'failures' ? ', after failures' : '';
  return `since ${state.pausedAt} by ${state.pausedBy ?? 'unknown'}${cause}: ${state.pauseNote ?? 'no note'}`;
}

/** Counts among the occurrences a describe read. */
export interface OccurrenceCounts {
  /** The occurrences read. */
  readonly read: number;
  /** Of those, SKIPPED for overlap. */
  readonly skippedForOverlap: number;
  /** Of those, SKIPPED as missed (first recorded after the catch-up window). */
  readonly missed: number;
  /** Of those, FAILED. */
  readonly failed: number;
}

/** What describeJob gives back: a job at a glance. */
export interface JobDescription {
  /** The job described. */
  readonly job: DeployedJob;
  /** Undefined: the job has no job-state row yet (never paused, never run under a slot). */
  readonly state: JobState | undefined;
  /** Whether the job is paused (by an operator or by its failures). */
  readonly paused: boolean;
  /** The next fire times from now, by Scheduler's daylight-saving rule (ISO, UTC). */
  readonly next: readonly string[];
  /** The newest occurrences, newest first. */
  readonly recent: readonly Occurrence[];
  /** Counts among the newest occurrences read. */
  readonly counts: OccurrenceCounts;
}

/** Fire times and occurrences a describe shows. */
export const DESCRIBE_NEXT = 10;
export const DESCRIBE_RECENT = 10;

/**
 * A job at a glance: its schedule and state, paused or not, the next DESCRIBE_NEXT fire times, the newest
 * DESCRIBE_RECENT occurrences, and counts of SKIPPED for overlap, SKIPPED as missed and FAILED among the newest
 * `rows` occurrences.
 */
export async function describeJob(
  deps: JobControlDeps & { readonly history: OccurrenceHistory },
  job: DeployedJob,
  options: { readonly rows?: number } = {},
): Promise<JobDescription> {
  const rows = Math.max(options.rows ?? 100, DESCRIBE_RECENT);
  const series = seriesOfJob(job);
  // A template has no occurrences of its own (each schedule's are a partition of their own: describe one of them).
  const [state, history] = await Promise.all([
    deps.states.read(series),
    isTemplate(job) ? [] : deps.history.newestFirst(series, rows),
  ]);
  const now = deps.clock.now();
  return {
    job,
    state,
    paused: isPaused(state),
    next: isTemplate(job) ? [] : nextFireTimes(job, now, anchorOf(job, history, now)),
    recent: history.slice(0, DESCRIBE_RECENT),
    counts: countsOf(history),
  };
}

function nextFireTimes(job: DeployedJob, now: number, anchor: number): string[] {
  const next: string[] = [];
  for (const t of firesFrom(job, now, anchor)) {
    next.push(isoSeconds(t.getTime()));
    if (next.length === DESCRIBE_NEXT) break;
  }
  return next;
}

function countsOf(rows: readonly Occurrence[]): OccurrenceCounts {
  const skipped = (reason: SkipReason) =>
    rows.filter((r) => r.status === OccurrenceStatus.SKIPPED && r.skipReason === reason).length;
  return {
    read: rows.length,
    skippedForOverlap: skipped(SkipReason.overlap),
    missed: skipped(SkipReason.missed),
    failed: rows.filter((r) => r.status === OccurrenceStatus.FAILED).length,
  };
}
