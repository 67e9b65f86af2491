/**
 * The trust boundary of run-time schedules (docs/design.md, "Who may start an occurrence"). A principal holding one
 * job's grant (grantManageSchedules) can create any schedule in that job's group, with any input; what keeps it to
 * that job's registered schedules is checked here, in the trigger, before anything is written:
 *
 * - IAM says which job fired: each run-time-schedule job's schedules invoke the trigger through a Lambda alias of
 *   its own (`job-<jobId>`), with a Scheduler role that may invoke only that alias, and the grant may pass only that
 *   role. The trigger reads the alias from the ARN it was invoked by and refuses an event naming another job.
 * - The registry says which keys and inputs exist: an event with a scheduleKey is checked against the job's registry
 *   row (one eventually consistent GetItem). No row, or a deleted one (a tombstone): refused. The occurrence's input
 *   is the row's, whatever the event carries.
 *
 * An event without a scheduleKey comes from a fixed schedule of the stack's own group, whose role only the stack
 * holds; it passes as before, unless it came through a job's alias (a keyed job has no fixed schedule).
 */
import { ScheduledJobsError } from './errors';
import type { ScheduleEvent } from './schedule-event';
import type { RegisteredSchedule } from './schedule-registry-ports';

/** A run-time-schedule job's alias of the trigger is this prefix and the job id (an alias may not be all digits). */
export const KEYED_ALIAS_PREFIX = 'job-';

/** The trigger's alias that one job's run-time schedules invoke. */
export function keyedAliasNameOf(jobId: string): string {
  return `${KEYED_ALIAS_PREFIX}${jobId}`;
}

/**
 * The job whose alias the trigger was invoked through, from the invoked ARN (`…:function:<name>:<qualifier>`); undefined
 * for an unqualified ARN, `$LATEST`, a version number or any other alias.
 */
export function jobOfInvokedArn(invokedFunctionArn: string | undefined): string | undefined {
  if (invokedFunctionArn === undefined) return undefined;
  const parts = invokedFunctionArn.split(':');
  // arn:partition:lambda:region:account:function:name[:qualifier]
  const qualifier = parts.length === 8 ? parts[7] : undefined;
  if (qualifier === undefined || !qualifier.startsWith(KEYED_ALIAS_PREFIX)) return undefined;
  const jobId = qualifier.slice(KEYED_ALIAS_PREFIX.length);
  return jobId === '' ? undefined : jobId;
}

/** The registry rows the trigger reads: whether one (job, key) is held, and its input. */
export interface RegistryReader {
  get(
    jobId: string,
    scheduleKey: string,
    consistent: boolean,
  ): Promise<Pick<RegisteredSchedule, 'input' | 'deletedAt'> | undefined>;
}

/**
 * An event a run-time schedule must not start: it names another job than the alias it came through, or a key the
 * registry does not hold. Nothing was written; Lambda keeps the event in the trigger's dead-letter queue.
 */
export class ForgedScheduleError extends ScheduledJobsError {
  /** Always `'ForgedScheduleError'`. */
  override readonly name = 'ForgedScheduleError';

  constructor(
    /** Why the event was refused. */
    readonly problem: string,
  ) {
    super(`refused schedule event: ${problem}`);
  }
}

/**
 * The (checked) event as the trigger may record it: unchanged for a fixed schedule's; for a run-time schedule's,
 * checked against the alias it came through (`invokedJob`) and the registry, with the registry row's input in place
 * of the event's. Throws ForgedScheduleError, having read at most the row, when it must not run.
 */
export async function guardRuntimeSchedule(
  event: ScheduleEvent,
  invokedJob: string | undefined,
  registry: RegistryReader | undefined,
): Promise<ScheduleEvent> {
  const { jobId, scheduleKey } = event;
  if (invokedJob !== undefined && jobId !== invokedJob) {
    throw new ForgedScheduleError(
      `jobId ${jobId} arrived through the trigger's alias of job ${invokedJob}: a schedule in a job's group starts ` +
        'only that job',
    );
  }
  if (scheduleKey === undefined) {
    if (invokedJob === undefined) return event;
    throw new ForgedScheduleError(
      `a schedule of job ${invokedJob}'s group fired without a scheduleKey: its schedules are the registry's, each with a key`,
    );
  }
  if (registry === undefined) {
    throw new ForgedScheduleError(
      `schedule ${jobId}/${scheduleKey} has a scheduleKey, but no job of this stack takes run-time schedules`,
    );
  }
  const row = await registry.get(jobId, scheduleKey, false);
  if (row === undefined || row.deletedAt !== undefined) {
    throw new ForgedScheduleError(
      `schedule ${jobId}/${scheduleKey} is not in the schedule registry${row === undefined ? '' : ' (deleted)'}: ` +
        'only a schedule upserted through the registry starts an occurrence',
    );
  }
  const { input: _fromEvent, ...rest } = event;
  return row.input === undefined ? rest : { ...rest, input: row.input };
}
