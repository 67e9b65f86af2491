/**
 * The deployed jobs, as the CLI learns them from the stack: one EventBridge Scheduler schedule per enabled job in the
 * ScheduledJobs' schedule group, named by the job id (lib/job-schedules.ts). A schedule gives the job's expression
 * and time zone (what `backfill` evaluates) and, in its Target.Input, the job's route: its worker and the two
 * settings a writer other than the worker needs (what `backfill` and `retry` write with). A job disabled in the app
 * has no schedule, so it is unknown here.
 */
import {
  GetScheduleCommand,
  type GetScheduleCommandOutput,
  paginateListSchedules,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
// zod/mini, not zod: the operations entry exports this catalogue, and full zod's schemas do not tree-shake (a worker
// importing the entry would carry some 450 KB of it).
import * as z from 'zod/mini';
import { asDependencyError } from '../../functions/aws/classify-error';
import type { DeployedJob } from '../../functions/protocol/job-control';
import {
  CATCHUP_WINDOW_SECONDS_RANGE,
  DEADLINE_SECONDS_RANGE,
  JOB_ID_PATTERN,
  RETENTION_DAYS_RANGE,
} from '../../functions/protocol/job-settings';
import { describe } from '../../functions/protocol/occurrence';
import { quoteValue } from '../../functions/protocol/quote-value';
import type { JobRoute } from '../../functions/protocol/schedule-event';
import { OVERLAP_POLICIES, type OverlapPolicy } from '../../functions/protocol/setting-basics';
import { ScheduleInputError, UsageError } from './errors';

/** Scheduler reads an expression without a time zone in UTC. */
const SCHEDULER_DEFAULT_TIME_ZONE = 'UTC';

// One deployed job: the operator actions' DeployedJob (one declaration, so the catalogue's jobs are the type
// resumeJob, runJobNow and describeJob take).
export type { DeployedJob };

/** Where the CLI looks jobs up; tests pass their own. */
export interface JobCatalogue {
  /** The schedule group the jobs are read from, for messages. */
  readonly group: string;
  /** The job whose schedule is named `jobId`, or undefined when the group has no such schedule. */
  job(jobId: string): Promise<DeployedJob | undefined>;
  /** The names of the group's schedules: the ids of every deployed job, sorted. */
  jobIds(): Promise<string[]>;
  /** The names of the group's DISABLED schedules (ListSchedules by state), sorted; the console's paused jobs. */
  disabledJobIds?(): Promise<string[]>;
}

/** The catalogue of one schedule group, read with GetSchedule and ListSchedules. */
export class SchedulerJobCatalogue implements JobCatalogue {
  constructor(
    private readonly client: SchedulerClient,
    /** The schedule group the jobs are read from. */
    readonly group: string,
  ) {}

  /** The job whose schedule is named `jobId` (GetSchedule), or undefined when the group has no such schedule. */
  async job(jobId: string): Promise<DeployedJob | undefined> {
    let schedule: GetScheduleCommandOutput;
    try {
      schedule = await this.client.send(new GetScheduleCommand({ GroupName: this.group, Name: jobId }));
    } catch (error) {
      if (!isNotFound(error)) throw asDependencyError(`read schedule ${jobId} in group ${this.group}`, error);
      if (isGroupMissing(error)) throw this.groupMissing();
      return undefined;
    }
    return deployedJobOf(schedule, this.group, jobId);
  }

  /** The names of the group's schedules (ListSchedules): the ids of every deployed job, sorted. */
  async jobIds(): Promise<string[]> {
    return this.listNames();
  }

  /**
   * The names of the group's DISABLED schedules (ListSchedules filtered by state: one call per 100 of them, however
   * many are enabled), sorted: where the console finds the paused jobs.
   */
  async disabledJobIds(): Promise<string[]> {
    return this.listNames('DISABLED');
  }

  private async listNames(state?: 'DISABLED'): Promise<string[]> {
    const names: string[] = [];
    try {
      const input = { GroupName: this.group, ...(state === undefined ? {} : { State: state }) };
      for await (const page of paginateListSchedules({ client: this.client }, input)) {
        for (const s of page.Schedules ?? []) if (s.Name !== undefined) names.push(s.Name);
      }
    } catch (error) {
      if (isNotFound(error)) throw this.groupMissing();
      throw asDependencyError(`list the schedules of group ${this.group}`, error);
    }
    return names.sort();
  }

  private groupMissing(): UsageError {
    return new UsageError(
      `schedule group ${this.group} does not exist in this account and region; ` +
        'pass --schedule-group <name>, or --stack with the stack that deploys the jobs',
    );
  }
}

/**
 * What to say of a job the catalogue does not have: it has no schedule, because it is disabled in the app or not
 * deployed at all; and which jobs the group has.
 */
export async function unknownJobMessage(catalogue: JobCatalogue, jobId: string): Promise<string> {
  const ids = await catalogue.jobIds();
  return (
    `job ${quoteValue(jobId)} has no schedule in group ${catalogue.group}: it is disabled or not deployed ` +
    `(the group has ${ids.length === 0 ? 'no schedules' : `schedules for: ${ids.join(', ')}`})`
  );
}

const idField = (field: string) =>
  z.pipe(
    z.unknown().check(
      z.refine((v) => typeof v === 'string' && JOB_ID_PATTERN.test(v), {
        error: (iss) => `${field} must be a job or worker id, got ${describeValue(iss.input)}`,
      }),
    ),
    z.transform((v) => v as string),
  );

const wholeField = (field: string, range: { min: number; max: number }) =>
  z.pipe(
    z.unknown().check(
      z.refine((v) => typeof v === 'number' && Number.isInteger(v) && v >= range.min && v <= range.max, {
        error: (iss) =>
          `${field} must be a whole number from ${range.min} to ${range.max}, got ${describeValue(iss.input)}`,
      }),
    ),
    z.transform((v) => v as number),
  );

/** The route fields of a schedule's input; its scheduledTime is Scheduler's placeholder, not a time, until it fires. */
const scheduleInputSchema = z.object({
  jobId: idField('jobId'),
  worker: idField('worker'),
  deadlineSeconds: wholeField('deadlineSeconds', DEADLINE_SECONDS_RANGE),
  retentionDays: wholeField('retentionDays', RETENTION_DAYS_RANGE),
  // Absent from schedules deployed before the catch-up window existed: the trigger then uses deadlineSeconds.
  catchupWindowSeconds: z.optional(wholeField('catchupWindowSeconds', CATCHUP_WINDOW_SECONDS_RANGE)),
  // Only on the template of a job that takes schedules at run time: the group of its schedules.
  keyedScheduleGroup: z.optional(z.string().check(z.minLength(1, 'keyedScheduleGroup must be a schedule group name'))),
  // The job's overlap policy, for operators to read; absent from schedules deployed before it was added.
  overlap: z.optional(z.enum(OVERLAP_POLICIES, { error: `overlap must be one of ${OVERLAP_POLICIES.join(', ')}` })),
});

/** A schedule as a deployed job; throws ScheduleInputError naming every problem of its input. */
export function deployedJobOf(schedule: GetScheduleCommandOutput, group: string, jobId: string): DeployedJob {
  const name = schedule.Name ?? jobId;
  const where = `schedule ${name} in group ${group}`;
  if (schedule.ScheduleExpression === undefined || schedule.ScheduleExpression === '') {
    throw new ScheduleInputError(`${where} has no ScheduleExpression`);
  }
  const route = routeOf(schedule.Target?.Input, name);
  if (!route.ok) throw new ScheduleInputError(`${where}: Target.Input is not a schedule event: ${route.error}`);
  const { keyedScheduleGroup, overlap, ...jobRoute } = route.value;
  return {
    id: name,
    schedule: schedule.ScheduleExpression,
    timeZone: schedule.ScheduleExpressionTimezone || SCHEDULER_DEFAULT_TIME_ZONE,
    state: schedule.State ?? 'ENABLED',
    route: jobRoute,
    ...(keyedScheduleGroup === undefined ? {} : { runtimeScheduleGroup: keyedScheduleGroup }),
    ...(overlap === undefined ? {} : { overlap }),
  };
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function routeOf(
  input: string | undefined,
  name: string,
): Parsed<JobRoute & { readonly keyedScheduleGroup?: string; readonly overlap?: OverlapPolicy }> {
  if (input === undefined) return { ok: false, error: 'it has none' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    return { ok: false, error: `it is not JSON: ${quoteValue(input)}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, error: `it must be a JSON object, got ${describe(parsed)}` };
  }
  const result = scheduleInputSchema.safeParse(parsed);
  if (!result.success) return { ok: false, error: result.error.issues.map((i) => i.message).join('; ') };
  const { jobId, worker, deadlineSeconds, retentionDays, catchupWindowSeconds, keyedScheduleGroup, overlap } =
    result.data;
  const problems: string[] = [];
  if (jobId !== name) problems.push(`jobId ${quoteValue(jobId)} is not the schedule's name ${quoteValue(name)}`);
  // The trigger's own rule (schedule-event.ts): a row deleted while its retries wait could be recorded again.
  if (retentionDays * 86_400 <= deadlineSeconds) {
    problems.push(`retentionDays (${retentionDays}) must outlive deadlineSeconds (${deadlineSeconds})`);
  }
  if (problems.length > 0) return { ok: false, error: problems.join('; ') };
  const window = catchupWindowSeconds === undefined ? {} : { catchupWindowSeconds };
  const keyed = keyedScheduleGroup === undefined ? {} : { keyedScheduleGroup };
  const policy = overlap === undefined ? {} : { overlap };
  return { ok: true, value: { worker, deadlineSeconds, retentionDays, ...window, ...keyed, ...policy } };
}

function describeValue(value: unknown): string {
  return typeof value === 'number' ? String(value) : describe(value);
}

function isNotFound(error: unknown): boolean {
  return (error as { name?: unknown })?.name === 'ResourceNotFoundException';
}

/** Scheduler answers a GetSchedule in a group that does not exist with the same exception, naming the group. */
function isGroupMissing(error: unknown): boolean {
  return /schedule group/i.test(String((error as { message?: unknown }).message ?? ''));
}
