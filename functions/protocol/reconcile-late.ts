/**
 * Late occurrences: due, and not started within their job's `lateAfter`. The reconciler counts them at every run, as
 * the metric OccurrencesLate with the worker's dimensions, which a per-worker alarm watches (lib/jobs-monitoring.ts).
 *
 * Two kinds, both of a job that is not paused (a paused job owes nothing):
 * - by row: a row still PENDING or BUFFERED `lateAfterSeconds` after its scheduled time, or RETRY_WAIT that long after
 *   its retry was due (`nextAttemptAt`). The row carries its job's lateAfter, recorded by the trigger from the
 *   schedule's input, so the reconciler needs no per-job setting (its environment holds no per-job list: 100 jobs
 *   would not fit in 4 KB). An operator's run or backfill carries none: it is not due at its scheduled time.
 * - by missing row: a fixed schedule that is DISABLED though the job is not paused (disabled by hand, behind the
 *   stack's back), one of whose fire times after the job's newest row is past its lateAfter. Each such fire time
 *   counts (at most MISSING_FIRE_TIMES_COUNTED per job). Only DISABLED schedules are checked, so a healthy stack
 *   pays one ListSchedules call per run (free); a deleted schedule is not seen (`occurrences describe` shows it).
 *
 * The count is a gauge: each run emits how many occurrences are late now, once per worker with any (nothing when
 * none, so a healthy month writes no such metric). An occurrence late for an hour is counted by every run in that
 * hour, never added up: the alarm reads the Maximum of a period, not its Sum.
 */
import { messageOf } from './errors';
import { type JobState, jobStateKeyOf } from './job-state';
import { MetricName } from './metric-names';
import { iso, isoSeconds, type Occurrence, OccurrenceStatus } from './occurrence';
import type { Clock, DisabledSchedule, LateCheckSources, Logger, Metrics, OccurrenceIndex } from './ports';
import { seriesOf } from './schedule-key';
import { scheduleTimes } from './schedule-times';
import { LATE_AFTER_SECONDS_RANGE } from './setting-basics';
import type { IndexedOccurrence } from './table-schema';

/** The most missing fire times counted for one job in one run: a minutely job disabled for a week is 10,080. */
export const MISSING_FIRE_TIMES_COUNTED = 100;

export type LateCause = 'not-started' | 'no-occurrence';

export interface LateOccurrence {
  readonly jobId: string;
  readonly scheduleKey?: string;
  readonly scheduledTime: string;
  readonly worker: string;
  readonly cause: LateCause;
  /** The row's status, for a late row. */
  readonly status?: OccurrenceStatus;
  /** When it was due: its scheduled time, or its retry's nextAttemptAt. */
  readonly dueAt: string;
  readonly lateAfterSeconds: number;
}

export interface LateDeps {
  readonly index: OccurrenceIndex;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The metrics with one worker's dimensions, { service, worker }: the late alarm watches those. */
  readonly workerMetrics: (worker: string) => Metrics;
  /** Absent: no check of fire times without a row (only late rows are counted). */
  readonly sources?: LateCheckSources;
}

const WAITING: ReadonlySet<OccurrenceStatus> = new Set([
  OccurrenceStatus.PENDING,
  OccurrenceStatus.BUFFERED,
  OccurrenceStatus.RETRY_WAIT,
]);

/** When a waiting row was due (epoch ms), or undefined when it is not waiting or has no readable time. */
function dueAtOf(o: Pick<Occurrence, 'status' | 'scheduledTime' | 'nextAttemptAt'>): number | undefined {
  if (!WAITING.has(o.status)) return undefined;
  const due = Date.parse(o.status === OccurrenceStatus.RETRY_WAIT ? (o.nextAttemptAt ?? '') : o.scheduledTime);
  return Number.isNaN(due) ? undefined : due;
}

/**
 * From an index entry alone: whether its row may be late, so that it is worth reading in full. The index does not
 * project lateAfterSeconds, so the least any job may set decides; the row's own value decides after the read.
 */
export function mayBeLate(e: IndexedOccurrence, now: number): boolean {
  const due = dueAtOf(e);
  return due !== undefined && due < now - LATE_AFTER_SECONDS_RANGE.min * 1000;
}

/** Whether this row is late at `now`: waiting, with a lateAfter of its job, and due longer ago than that. */
export function isLateRow(o: Occurrence, now: number): boolean {
  const due = dueAtOf(o);
  return due !== undefined && o.lateAfterSeconds !== undefined && now - due > o.lateAfterSeconds * 1000;
}

/** One run's tally of late occurrences; the reconciler hands it each row it reads, then asks it to finish. */
export class LateTally {
  readonly late: LateOccurrence[] = [];
  private readonly paused = new Map<string, Promise<boolean>>();
  /** Failed reads; each is logged (the next run counts again). */
  errors = 0;

  constructor(
    private readonly deps: LateDeps,
    private readonly now: number,
  ) {}

  /** Note the row if it is late, unless its job is paused. */
  async noteRow(row: Occurrence): Promise<void> {
    if (!isLateRow(row, this.now) || row.worker === undefined) return;
    if (await this.isPaused(seriesOf(row))) return;
    this.late.push({
      jobId: row.jobId,
      ...(row.scheduleKey === undefined ? {} : { scheduleKey: row.scheduleKey }),
      scheduledTime: row.scheduledTime,
      worker: row.worker,
      cause: 'not-started',
      status: row.status,
      dueAt: iso(dueAtOf(row) ?? this.now),
      lateAfterSeconds: row.lateAfterSeconds ?? 0,
    });
  }

  /** The fire times of DISABLED schedules of jobs not paused that have no row and are past their lateAfter. */
  async noteMissing(signal?: AbortSignal): Promise<void> {
    const sources = this.deps.sources;
    if (sources === undefined) return;
    let schedules: DisabledSchedule[];
    try {
      schedules = await sources.disabledSchedules(signal);
    } catch (error) {
      this.errors++;
      this.deps.logger.error('reconciler could not list the disabled schedules', { error: messageOf(error) });
      return;
    }
    for (const schedule of schedules) {
      if (await this.isPaused(schedule.jobId)) continue;
      try {
        const newest = await sources.newestScheduledTime(schedule.jobId, isoSeconds(this.now + 1000), signal);
        this.late.push(...missingFireTimes(schedule, newest, this.now));
      } catch (error) {
        this.errors++;
        this.deps.logger.error('reconciler could not check a disabled schedule for missing occurrences', {
          jobId: schedule.jobId,
          error: messageOf(error),
        });
      }
    }
  }

  /** Emit the gauge, once per worker with late occurrences, and log each late occurrence. */
  emit(): void {
    const byWorker = new Map<string, LateOccurrence[]>();
    for (const o of this.late) byWorker.set(o.worker, [...(byWorker.get(o.worker) ?? []), o]);
    for (const [worker, late] of byWorker) {
      // The port wants a job: per-job metrics are off in the reconciler, so it only names the first one.
      this.deps.workerMetrics(worker).add(MetricName.OccurrencesLate, late.length, late[0].jobId);
      for (const o of late) this.deps.logger.warn('occurrence is late: due and not started within lateAfter', { ...o });
    }
  }

  /** Whether the job (or run-time schedule's series) is paused; read once per series and run. */
  private isPaused(series: string): Promise<boolean> {
    let paused = this.paused.get(series);
    if (paused === undefined) {
      paused = this.readPaused(series);
      this.paused.set(series, paused);
    }
    return paused;
  }

  private async readPaused(series: string): Promise<boolean> {
    try {
      const [state] = (await this.deps.index.readRows([jobStateKeyOf(series)])) as unknown as (JobState | undefined)[];
      return state?.pausedAt !== undefined;
    } catch (error) {
      this.errors++;
      this.deps.logger.error('reconciler could not read whether a job is paused', { series, error: messageOf(error) });
      // Unknown: counted as paused, so that a failed read never pages anyone; the next run reads again.
      return true;
    }
  }
}

/**
 * The fire times of a disabled schedule that are owed and late at `now`: after the newest row (or, with none, after
 * the schedule's creation), and more than lateAfter ago; at most MISSING_FIRE_TIMES_COUNTED.
 */
export function missingFireTimes(
  schedule: DisabledSchedule,
  newestScheduledTime: string | undefined,
  now: number,
): LateOccurrence[] {
  const created = Date.parse(schedule.createdAt);
  const newest = newestScheduledTime === undefined ? Number.NaN : Date.parse(newestScheduledTime);
  const after = Math.max(Number.isNaN(created) ? -Infinity : created, Number.isNaN(newest) ? -Infinity : newest);
  if (after === -Infinity) return [];
  const lateBefore = now - schedule.lateAfterSeconds * 1000;
  const late: LateOccurrence[] = [];
  // A rate is anchored at `after`: its first time is `after` itself, which is not owed (the row, or the creation).
  for (const t of scheduleTimes({ schedule: schedule.expression, timeZone: schedule.timeZone }, new Date(after))) {
    if (t.getTime() <= after) continue;
    if (t.getTime() >= lateBefore || late.length === MISSING_FIRE_TIMES_COUNTED) break;
    late.push({
      jobId: schedule.jobId,
      scheduledTime: isoSeconds(t.getTime()),
      worker: schedule.worker,
      cause: 'no-occurrence',
      dueAt: isoSeconds(t.getTime()),
      lateAfterSeconds: schedule.lateAfterSeconds,
    });
  }
  return late;
}
