/**
 * `--key` of the job commands (describe, run, backfill): one schedule of a job deployed with `runtimeSchedules: true`,
 * read from the registry (connectSchedulesOf finds it as the `schedules` commands do, `--local` included). Its
 * occurrences carry the key and the schedule's input, as when that schedule fires; a key the registry does not hold
 * is refused before anything is written.
 */
import type { Command } from 'commander';
import { messageOf } from '../../../functions/protocol/errors';
import { deployedScheduleOf, getSchedule, listSchedules } from '../../../operations/schedules';
import type { DeployedJob } from '../catalogue';
import type { CommandSetup } from '../context';
import { UsageError } from '../errors';
import { connectSchedulesOf } from './schedules';

/** A job deployed with `runtimeSchedules: true` as the catalogue reads it: its DISABLED template, no key. */
export const isKeyedTemplate = (job: DeployedJob): boolean =>
  job.runtimeScheduleGroup !== undefined && job.scheduleKey === undefined;

/**
 * One schedule of a job that takes schedules at run time, as a deployed job: the template's route, and the
 * registry's expression, time zone, state and input. A UsageError for a job with a fixed schedule or an unknown key.
 */
export async function scheduleOfJob(
  cmd: Command,
  setup: CommandSetup,
  template: DeployedJob,
  key: string,
): Promise<DeployedJob> {
  if (template.runtimeScheduleGroup === undefined)
    throw new UsageError(`--key: job ${template.id} has a fixed schedule; only a job with runtimeSchedules has keys`);
  const { ops, where } = await connectSchedulesOf(cmd, setup.deps);
  const schedule = await getSchedule(ops, template.id, key);
  if (schedule === undefined)
    throw new UsageError(
      `--key: job ${template.id} has no schedule ${key} in ${where} (occurrences schedules list ${template.id} lists its keys)`,
    );
  return deployedScheduleOf(template, schedule);
}

/**
 * The job a command acts on: the deployed job, or with `--key` one of its run-time schedules. A job that takes
 * schedules at run time needs the key (its template never fires); `verb` says what the command would do.
 */
export async function jobOrScheduleOf(
  cmd: Command,
  setup: CommandSetup,
  job: DeployedJob,
  key: string | undefined,
  verb: string,
): Promise<DeployedJob> {
  if (key !== undefined) return scheduleOfJob(cmd, setup, job, key);
  if (isKeyedTemplate(job))
    throw new UsageError(
      `--key: job ${job.id} takes schedules at run time: ${verb} one of its schedules with --key <scheduleKey> ` +
        `(occurrences schedules list ${job.id} lists them)`,
    );
  return job;
}

/** The most registry rows describe counts: one page. */
export const COUNTED_KEYS = 100;

/** How many schedules the registry holds for the job (`100+` past one page), or why they could not be counted. */
export async function scheduleCount(cmd: Command, setup: CommandSetup, jobId: string): Promise<string> {
  try {
    const { ops } = await connectSchedulesOf(cmd, setup.deps);
    const page = await listSchedules(ops, jobId, { limit: COUNTED_KEYS });
    return page.cursor === undefined ? String(page.schedules.length) : `${COUNTED_KEYS}+`;
  } catch (error) {
    return `not counted (${messageOf(error)})`;
  }
}
