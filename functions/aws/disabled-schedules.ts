/**
 * The reconciler's late check on EventBridge Scheduler and the table (LateCheckSources, protocol/reconcile-late.ts):
 * the DISABLED schedules of the stack's group (ListSchedules filtered by state: one call per 100 schedules, and
 * Scheduler's API calls are free), each read in full (GetSchedule) for its expression and the input the stack
 * deployed; and a series' newest row (one Query of one item).
 */
import {
  GetScheduleCommand,
  type GetScheduleCommandOutput,
  ListSchedulesCommand,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { isJsonObject } from '../protocol/field-checks';
import { SCHEDULED_TIME_RANGE } from '../protocol/occurrence';
import type { DisabledSchedule, LateCheckSources } from '../protocol/ports';
import { TEMPLATE_GROUP_FIELD } from '../protocol/schedule-event';
import { asDependencyError } from './classify-error';
import type { OperatorOccurrenceReader } from './occurrence-reader';

export class SchedulerLateCheckSources implements LateCheckSources {
  constructor(
    private readonly scheduler: SchedulerClient,
    private readonly group: string,
    private readonly reader: Pick<OperatorOccurrenceReader, 'listSeriesNewestFirst'>,
  ) {}

  async disabledSchedules(signal?: AbortSignal): Promise<DisabledSchedule[]> {
    const names: string[] = [];
    let next: string | undefined;
    do {
      try {
        const page = await this.scheduler.send(
          new ListSchedulesCommand({ GroupName: this.group, State: 'DISABLED', NextToken: next }),
          { abortSignal: signal },
        );
        names.push(...(page.Schedules ?? []).flatMap((s) => (s.Name === undefined ? [] : [s.Name])));
        next = page.NextToken;
      } catch (error) {
        throw asDependencyError(`list the disabled schedules of group ${this.group}`, error);
      }
    } while (next !== undefined);
    const schedules: DisabledSchedule[] = [];
    for (const name of names) {
      let schedule: GetScheduleCommandOutput;
      try {
        schedule = await this.scheduler.send(new GetScheduleCommand({ GroupName: this.group, Name: name }), {
          abortSignal: signal,
        });
      } catch (error) {
        throw asDependencyError(`read schedule ${name} in group ${this.group}`, error);
      }
      const checked = disabledScheduleOf(schedule);
      if (checked !== undefined) schedules.push(checked);
    }
    return schedules;
  }

  async newestScheduledTime(series: string, to: string): Promise<string | undefined> {
    const [newest] = await this.reader.listSeriesNewestFirst(
      series,
      { from: SCHEDULED_TIME_RANGE.earliest, to, limit: 1 },
      ['jobId', 'scheduledTime'],
    );
    return newest?.scheduledTime;
  }
}

/**
 * What the late check needs of one schedule, from the input the stack deployed; undefined for a template of run-time
 * schedules (always DISABLED), and for a schedule without a lateAfter (deployed before it existed, or not the stack's).
 */
export function disabledScheduleOf(s: GetScheduleCommandOutput): DisabledSchedule | undefined {
  // Enabled again between the listing and the read: it fires, nothing to count.
  if (s.State !== 'DISABLED') return undefined;
  let input: unknown;
  try {
    input = JSON.parse(s.Target?.Input ?? '');
  } catch {
    return undefined;
  }
  if (!isJsonObject(input) || input[TEMPLATE_GROUP_FIELD] !== undefined) return undefined;
  const { jobId, worker, lateAfterSeconds } = input;
  if (typeof jobId !== 'string' || typeof worker !== 'string' || typeof lateAfterSeconds !== 'number') return undefined;
  if (s.ScheduleExpression === undefined || s.CreationDate === undefined) return undefined;
  return {
    jobId,
    worker,
    expression: s.ScheduleExpression,
    timeZone: s.ScheduleExpressionTimezone ?? 'UTC',
    lateAfterSeconds,
    createdAt: s.CreationDate.toISOString(),
  };
}
