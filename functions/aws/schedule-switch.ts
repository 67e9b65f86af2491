/**
 * Pause and resume on EventBridge Scheduler: UpdateSchedule replaces a schedule's whole definition, so the switch
 * reads it (GetSchedule) and writes it back with only its State changed. A schedule changed by someone else between
 * the two calls would lose that change; Scheduler has no conditional update, and a job's schedule is changed only by
 * its deployment and by these switches.
 */
import {
  GetScheduleCommand,
  type GetScheduleCommandOutput,
  type SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import type { ScheduleSwitch } from '../protocol/ports';
import { asDependencyError } from './classify-error';

/** Turns the schedules of one EventBridge Scheduler schedule group off and on (ScheduleSwitch). */
export class SchedulerScheduleSwitch implements ScheduleSwitch {
  constructor(
    private readonly client: SchedulerClient,
    private readonly group: string,
  ) {}

  /** Sets the state of the schedule named `jobId`, keeping the rest of its definition. */
  async setState(jobId: string, state: 'ENABLED' | 'DISABLED'): Promise<void> {
    let schedule: GetScheduleCommandOutput;
    try {
      schedule = await this.client.send(new GetScheduleCommand({ GroupName: this.group, Name: jobId }));
    } catch (error) {
      throw asDependencyError(`read schedule ${jobId} in group ${this.group}`, error);
    }
    if (schedule.State === state) return;
    try {
      await this.client.send(new UpdateScheduleCommand({ ...definitionOf(schedule), State: state }));
    } catch (error) {
      throw asDependencyError(`set schedule ${jobId} in group ${this.group} to ${state}`, error);
    }
  }
}

/** The fields UpdateSchedule takes, as GetSchedule returned them (everything else it returns is read-only). */
function definitionOf(s: GetScheduleCommandOutput) {
  return {
    Name: s.Name,
    GroupName: s.GroupName,
    ScheduleExpression: s.ScheduleExpression,
    ScheduleExpressionTimezone: s.ScheduleExpressionTimezone,
    StartDate: s.StartDate,
    EndDate: s.EndDate,
    Description: s.Description,
    FlexibleTimeWindow: s.FlexibleTimeWindow,
    Target: s.Target,
    KmsKeyArn: s.KmsKeyArn,
    ActionAfterCompletion: s.ActionAfterCompletion,
  };
}
