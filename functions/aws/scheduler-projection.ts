/**
 * EventBridge Scheduler as the schedule registry's projection (ScheduleProjection). Each job that takes schedules
 * at run time has a *template* schedule in the stack's shared group, named by the job id, DISABLED and never
 * firing; its target, flexible window and input (with `keyedScheduleGroup`, the group of the job's own schedules)
 * are what every schedule of the job copies. A row's schedule is created, and on ConflictException (it exists)
 * updated with the whole definition: putting the same row twice leaves one schedule as it was.
 */
import { createHash } from 'node:crypto';
import {
  type ActionAfterCompletion,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  type GetScheduleCommandOutput,
  ListSchedulesCommand,
  type SchedulerClient,
  type Target,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { isJsonObject } from '../protocol/field-checks';
import { type Clock, systemClock } from '../protocol/ports';
import { TEMPLATE_GROUP_FIELD } from '../protocol/schedule-event';
import type {
  KeyedJobTemplate,
  ProjectedScheduleSummary,
  RegisteredSchedule,
  ScheduleProjection,
} from '../protocol/schedule-registry-ports';
import { asDependencyError } from './classify-error';

/** What Scheduler replaces with each invocation's scheduled time. */
export const SCHEDULED_TIME_PLACEHOLDER = '<aws.scheduler.scheduled-time>';
/** One page of ListSchedules (Scheduler's largest). */
const LIST_PAGE_SIZE = 100;
const RATE = /^rate\((\d+) (minute|hour|day)s?\)$/;
const UNIT_MS: Readonly<Record<string, number>> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** The schedules of the jobs that take them at run time, on one stack's Scheduler. */
export class SchedulerProjection implements ScheduleProjection {
  constructor(
    private readonly client: SchedulerClient,
    /** The stack's shared schedule group, where each job's template is (the stack output `ScheduleGroupName`). */
    private readonly sharedGroup: string,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The template schedule named `jobId` in the shared group; undefined when there is none or it is no template. */
  async template(jobId: string): Promise<KeyedJobTemplate | undefined> {
    let schedule: GetScheduleCommandOutput;
    try {
      schedule = await this.client.send(new GetScheduleCommand({ GroupName: this.sharedGroup, Name: jobId }));
    } catch (error) {
      if ((error as { name?: unknown }).name === 'ResourceNotFoundException') return undefined;
      throw asDependencyError(`read the template schedule ${jobId} in group ${this.sharedGroup}`, error);
    }
    return templateFromSchedule(jobId, schedule);
  }

  async put(row: RegisteredSchedule, template: KeyedJobTemplate): Promise<void> {
    const definition = scheduleDefinitionOf(row, template, this.clock.now());
    // Create, else update; a schedule deleted between the two (by Scheduler after an at(), or by hand) is created.
    for (let round = 1; ; round++) {
      try {
        await this.client.send(new CreateScheduleCommand(definition));
        return;
      } catch (error) {
        if ((error as { name?: unknown }).name !== 'ConflictException') {
          throw asDependencyError(`create schedule ${definition.Name} in group ${template.group}`, error);
        }
      }
      try {
        await this.client.send(new UpdateScheduleCommand(definition));
        return;
      } catch (error) {
        if ((error as { name?: unknown }).name !== 'ResourceNotFoundException' || round >= 2) {
          throw asDependencyError(`update schedule ${definition.Name} in group ${template.group}`, error);
        }
      }
    }
  }

  async remove(template: KeyedJobTemplate, scheduleName: string): Promise<void> {
    try {
      await this.client.send(new DeleteScheduleCommand({ GroupName: template.group, Name: scheduleName }));
    } catch (error) {
      if ((error as { name?: unknown }).name === 'ResourceNotFoundException') return;
      throw asDependencyError(`delete schedule ${scheduleName} in group ${template.group}`, error);
    }
  }

  async listPage(
    template: KeyedJobTemplate,
    namePrefix: string,
    nextToken?: string,
  ): Promise<{ readonly schedules: readonly ProjectedScheduleSummary[]; readonly nextToken?: string }> {
    try {
      const out = await this.client.send(
        new ListSchedulesCommand({
          GroupName: template.group,
          NamePrefix: namePrefix === '' ? undefined : namePrefix,
          NextToken: nextToken,
          MaxResults: LIST_PAGE_SIZE,
        }),
      );
      const schedules = (out.Schedules ?? []).map(
        (s): ProjectedScheduleSummary => ({
          name: s.Name ?? '',
          state: s.State === 'DISABLED' ? 'DISABLED' : 'ENABLED',
          ...(s.LastModificationDate === undefined ? {} : { lastModifiedAt: s.LastModificationDate.toISOString() }),
        }),
      );
      return out.NextToken ? { schedules, nextToken: out.NextToken } : { schedules };
    } catch (error) {
      throw asDependencyError(`list schedules ${namePrefix}* in group ${template.group}`, error);
    }
  }
}

/**
 * A job's template from its template schedule, or undefined when the schedule's input names no keyed group (a job
 * with a fixed schedule, or an input that is not JSON).
 */
export function templateFromSchedule(jobId: string, schedule: GetScheduleCommandOutput): KeyedJobTemplate | undefined {
  let input: unknown;
  try {
    input = JSON.parse(schedule.Target?.Input ?? '');
  } catch {
    return undefined;
  }
  if (!isJsonObject(input)) return undefined;
  const { [TEMPLATE_GROUP_FIELD]: group, scheduledTime: _placeholder, ...event } = input;
  if (typeof group !== 'string' || group === '' || schedule.Target === undefined) return undefined;
  const { Input: _templateInput, ...target } = schedule.Target;
  const flexibleTimeWindow = { ...(schedule.FlexibleTimeWindow ?? { Mode: 'OFF' }) };
  return {
    jobId,
    group,
    event,
    target,
    flexibleTimeWindow,
    templateHash: createHash('sha256')
      .update(stableJson({ event, target, flexibleTimeWindow }))
      .digest('hex')
      .slice(0, 16),
  };
}

/**
 * The input each invocation of a row's schedule hands the trigger: the template's schedule event with the
 * scheduled time Scheduler fills in, the key, and the row's input (no keyedScheduleGroup: it is no template).
 */
export function keyedScheduleEventOf(row: RegisteredSchedule, template: KeyedJobTemplate): Record<string, unknown> {
  return {
    ...template.event,
    scheduledTime: SCHEDULED_TIME_PLACEHOLDER,
    scheduleKey: row.scheduleKey,
    ...(row.input === undefined ? {} : { input: row.input }),
  };
}

/** The whole definition of a row's schedule, as CreateSchedule and UpdateSchedule take it. */
export function scheduleDefinitionOf(
  row: RegisteredSchedule,
  template: KeyedJobTemplate,
  now: number,
): CreateScheduleCommandInput {
  const startDate = projectedStartDate(row, now);
  const oneTime = row.expression.startsWith('at(');
  return {
    Name: row.scheduleName,
    GroupName: template.group,
    ScheduleExpression: row.expression,
    ScheduleExpressionTimezone: row.timeZone,
    ...(startDate === undefined ? {} : { StartDate: new Date(startDate) }),
    ...(row.endDate === undefined ? {} : { EndDate: new Date(row.endDate) }),
    State: row.state === 'PAUSED' ? 'DISABLED' : 'ENABLED',
    FlexibleTimeWindow: template.flexibleTimeWindow as unknown as CreateScheduleCommandInput['FlexibleTimeWindow'],
    Target: { ...template.target, Input: JSON.stringify(keyedScheduleEventOf(row, template)) } as unknown as Target,
    // A one-time schedule is deleted by Scheduler once it has fired; its row stays until its TTL.
    ActionAfterCompletion: (oneTime ? 'DELETE' : 'NONE') satisfies ActionAfterCompletion,
    Description: `${row.jobId}/${row.scheduleKey} v${row.version}`,
  };
}

/**
 * The StartDate to give Scheduler: the row's when still ahead. Scheduler refuses a start more than 5 minutes past,
 * and a start already past constrains nothing but a rate()'s phase: for a rate, the first time at or after now
 * that keeps the phase the start date set; for the others, none.
 */
export function projectedStartDate(row: RegisteredSchedule, now: number): number | undefined {
  if (row.startDate === undefined) return undefined;
  const start = Date.parse(row.startDate);
  if (start > now) return start;
  const rate = RATE.exec(row.expression);
  if (rate === null) return undefined;
  const period = Number(rate[1]) * UNIT_MS[rate[2]];
  return start + Math.ceil((now - start) / period) * period;
}

/** JSON with every object's keys in order, so that equal values hash alike. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (isJsonObject(value)) {
    const entries = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value instanceof Date ? value.toISOString() : value) ?? 'null';
}
