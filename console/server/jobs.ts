/**
 * The jobs page and a timeline's header: each job (or one run-time schedule of a job) at a glance, as describeJob
 * gives it to the CLI, from the job's schedule (Scheduler), its job-state row (one consistent GetItem) and its newest
 * RECENT_RUNS occurrences (one Query of the job's partition, newest first, projected to the bar's attributes).
 */
import type { DeployedJob } from '../../functions/protocol/job-control';
import { isPaused, seriesOfJob } from '../../functions/protocol/job-control';
import type { JobState } from '../../functions/protocol/job-state';
import {
  isoSeconds,
  type Occurrence,
  OccurrenceStatus,
  SCHEDULED_TIME_RANGE,
} from '../../functions/protocol/occurrence';
import { deployedScheduleOf, getSchedule, type RuntimeSchedule } from '../../operations/schedules';
import type { JobSummary } from '../contract';
import type { ConsoleDeps } from './deps';
import { HttpError } from './http-errors';
import { scheduleInWords } from './schedule-words';
import { barOf, fireTimes } from './timeline';

/** The newest occurrences the history strip shows. */
export const RECENT_RUNS = 20;
/** The next fire times a job's row shows. */
export const NEXT_FIRES = 5;
/** Jobs summarised at once: each is a GetSchedule, a GetItem and a Query. */
const JOB_CONCURRENCY = 8;

/** Every scheduled time there is: a series' whole key range (never its job-state row, '#job'). */
export const ALL_TIMES = {
  from: SCHEDULED_TIME_RANGE.earliest,
  to: isoSeconds(Date.parse(SCHEDULED_TIME_RANGE.latest) + 1000),
} as const;

/** Every deployed job, in id order. */
export async function jobSummaries(deps: ConsoleDeps): Promise<JobSummary[]> {
  const ids = await deps.jobs.jobIds();
  const summaries: (JobSummary | undefined)[] = [];
  for (let i = 0; i < ids.length; i += JOB_CONCURRENCY) {
    const batch = ids.slice(i, i + JOB_CONCURRENCY);
    summaries.push(
      ...(await Promise.all(
        batch.map(async (id) => {
          const job = await deps.jobs.job(id);
          // Deleted between the listing and the read: left out.
          return job === undefined ? undefined : summaryOf(deps, job);
        }),
      )),
    );
  }
  return summaries.filter((s): s is JobSummary => s !== undefined);
}

/** The deployed job `jobId`; a 404 naming the known ones when there is none. */
export async function deployedJobOf(deps: ConsoleDeps, jobId: string): Promise<DeployedJob> {
  const job = await deps.jobs.job(jobId);
  if (job !== undefined) return job;
  const known = await deps.jobs.jobIds();
  throw new HttpError(404, `job ${jobId} is not deployed (the deployed jobs: ${known.join(', ') || 'none'})`);
}

/**
 * One run-time schedule of a job, as a deployed job: the template's route, the registry's expression, time zone,
 * state and input (as `occurrences describe --key` does). 404 when the job has a fixed schedule, the registry is
 * unknown, or the key has no schedule.
 */
export async function scheduleOfJob(
  deps: ConsoleDeps,
  template: DeployedJob,
  key: string,
): Promise<{ readonly job: DeployedJob; readonly schedule: RuntimeSchedule }> {
  if (template.runtimeScheduleGroup === undefined)
    throw new HttpError(404, `key: job ${template.id} has a fixed schedule; only a job with runtimeSchedules has keys`);
  if (deps.registry === undefined)
    throw new HttpError(
      404,
      'key: the schedule registry is unknown (the stack has no output ScheduleRegistryTableName): start the console with --registry-table',
    );
  const schedule = await getSchedule(deps.registry, template.id, key);
  if (schedule === undefined) throw new HttpError(404, `key: job ${template.id} has no schedule ${key}`);
  return { job: deployedScheduleOf(template, schedule), schedule };
}

const isTemplate = (job: DeployedJob): boolean =>
  job.runtimeScheduleGroup !== undefined && job.scheduleKey === undefined;

/** One job (or one schedule of a job) at a glance. */
export async function summaryOf(deps: ConsoleDeps, job: DeployedJob, schedule?: RuntimeSchedule): Promise<JobSummary> {
  const series = seriesOfJob(job);
  const [state, recent, jobState] = await Promise.all([
    deps.states.read(series),
    isTemplate(job) ? [] : deps.occurrences.newestFirst(series, { ...ALL_TIMES, limit: RECENT_RUNS }),
    // One schedule of a job is paused with its job too (runJobNow refuses it then).
    job.scheduleKey === undefined ? undefined : deps.states.read(job.id),
  ]);
  const now = deps.clock.now();
  const registryPaused = schedule?.state === 'PAUSED';
  const paused = isPaused(state) || isPaused(jobState) || registryPaused;
  const fires = !paused && job.state === 'ENABLED' && !isTemplate(job);
  const lastRan = recent.find(ran);
  return {
    jobId: job.id,
    ...(job.scheduleKey === undefined ? {} : { scheduleKey: job.scheduleKey }),
    schedule: job.schedule,
    scheduleInWords: scheduleInWords(job.schedule),
    timeZone: job.timeZone,
    schedulerState: job.state,
    runtimeSchedules: job.runtimeScheduleGroup !== undefined,
    worker: job.route.worker,
    ...(job.overlap === undefined ? {} : { overlap: job.overlap }),
    paused,
    ...pauseOf(isPaused(state) ? state : jobState, schedule),
    failuresInARow: state?.consecutiveFailures ?? 0,
    ...(lastRan === undefined ? {} : { lastRun: lastRunOf(lastRan) }),
    next: fires ? fireTimes(job, { after: now, max: NEXT_FIRES, recent }) : [],
    recent: recent.map((r) => ({
      scheduledTime: r.scheduledTime,
      status: r.status,
      ...(r.skipReason === undefined ? {} : { skipReason: r.skipReason }),
    })),
  };
}

function pauseOf(state: JobState | undefined, schedule: RuntimeSchedule | undefined): Pick<JobSummary, 'pause'> {
  if (state !== undefined && isPaused(state)) {
    return {
      pause: {
        at: state.pausedAt as string,
        by: state.pausedBy ?? 'unknown',
        note: state.pauseNote ?? '',
        cause: state.pauseCause ?? 'operator',
      },
    };
  }
  if (schedule?.state === 'PAUSED') {
    return {
      pause: {
        at: schedule.updatedAt,
        by: schedule.updatedBy ?? 'unknown',
        note: 'the schedule is paused in the registry',
        cause: 'operator',
      },
    };
  }
  return {};
}

/**
 * An occurrence that ran: a worker started it, and it did not yield. A SKIPPED one may have been claimed before its
 * worker found the run it yields to: "last run: Skipped · 6.9 s" would hide the run that matters.
 */
const ran = (row: Occurrence): boolean => row.status !== OccurrenceStatus.SKIPPED && barOf(row).startedAt !== undefined;

function lastRunOf(row: Occurrence): NonNullable<JobSummary['lastRun']> {
  const bar = barOf(row);
  const durationMs =
    bar.startedAt !== undefined && bar.endedAt !== undefined
      ? Math.max(0, Date.parse(bar.endedAt) - Date.parse(bar.startedAt))
      : undefined;
  return {
    scheduledTime: bar.scheduledTime,
    status: bar.status,
    ...(bar.startedAt === undefined ? {} : { startedAt: bar.startedAt }),
    ...(bar.endedAt === undefined ? {} : { endedAt: bar.endedAt }),
    ...(durationMs === undefined ? {} : { durationMs }),
  };
}
