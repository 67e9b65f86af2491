/**
 * The route of a job read from its deployed schedule (RouteLookup, protocol/worker-routes.ts): GetSchedule on the
 * stack's group, by the job id (a fixed schedule, or the template of a job with run-time schedules), and the route
 * its input carries. For what carries no route of its own: a row recorded, or a run-time schedule projected, before
 * routes were carried. Scheduler's API calls cost nothing.
 */
import { GetScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { isJsonObject } from '../protocol/field-checks';
import { type RouteLookup, recordedRoute, type WorkerRoute } from '../protocol/worker-routes';
import { asDependencyError } from './classify-error';

export class ScheduleRouteLookup implements RouteLookup {
  constructor(
    private readonly scheduler: Pick<SchedulerClient, 'send'>,
    private readonly group: string,
  ) {}

  async routeOf(jobId: string, worker: string): Promise<WorkerRoute | undefined> {
    let input: string | undefined;
    try {
      const schedule = await this.scheduler.send(new GetScheduleCommand({ GroupName: this.group, Name: jobId }));
      input = schedule.Target?.Input;
    } catch (error) {
      // The job's schedule is gone (the job was removed or disabled): it has no route to give.
      if ((error as { name?: unknown })?.name === 'ResourceNotFoundException') return undefined;
      throw asDependencyError(`read schedule ${jobId} in group ${this.group} for its route`, error);
    }
    let parsed: unknown;
    try {
      parsed = input === undefined ? undefined : JSON.parse(input);
    } catch {
      return undefined;
    }
    // A schedule that now names another worker does not give that worker's queue to this worker's row.
    if (!isJsonObject(parsed) || parsed.worker !== worker) return undefined;
    return recordedRoute(parsed);
  }
}
