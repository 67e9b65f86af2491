/**
 * The reconciler's view of Scheduler: the registry's projection (scheduler-projection.ts), whose template also says
 * when it last changed (`lastModifiedAt`, the template schedule's LastModificationDate). A deployment that changes a
 * job's template (its trigger, role, retry policy, dead-letter queue, flexible window or event fields) updates that
 * schedule, and every schedule of the job synced before then was projected from the older template: the audit puts
 * them again (protocol/reconcile-schedules.ts, `stale-template`). CloudFormation updates the template schedule only
 * when one of its properties changes, so an unchanged deployment re-projects nothing.
 *
 * One GetSchedule per job and run (the audit reads each job's template once), the same call the projection makes.
 */
import { GetScheduleCommand, type GetScheduleCommandOutput, type SchedulerClient } from '@aws-sdk/client-scheduler';
import type { KeyedJobTemplate, ScheduleProjection } from '../protocol/schedule-registry-ports';
import { asDependencyError } from './classify-error';
import { templateFromSchedule } from './scheduler-projection';

/** A job's template and when its template schedule last changed (ISO-8601), if Scheduler says. */
export type DatedTemplate = KeyedJobTemplate & { readonly lastModifiedAt?: string };

/** `projection` with templates read with their LastModificationDate. */
export function withDatedTemplates(
  projection: ScheduleProjection,
  client: SchedulerClient,
  sharedGroup: string,
): ScheduleProjection {
  return {
    async template(jobId: string): Promise<DatedTemplate | undefined> {
      let schedule: GetScheduleCommandOutput;
      try {
        schedule = await client.send(new GetScheduleCommand({ GroupName: sharedGroup, Name: jobId }));
      } catch (error) {
        if ((error as { name?: unknown }).name === 'ResourceNotFoundException') return undefined;
        throw asDependencyError(`read the template schedule ${jobId} in group ${sharedGroup}`, error);
      }
      const template = templateFromSchedule(jobId, schedule);
      const changed = schedule.LastModificationDate;
      return template === undefined || changed === undefined
        ? template
        : { ...template, lastModifiedAt: changed.toISOString() };
    },
    put: (row, template) => projection.put(row, template),
    remove: (template, name) => projection.remove(template, name),
    listPage: (template, prefix, token) => projection.listPage(template, prefix, token),
  };
}
