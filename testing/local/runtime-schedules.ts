/**
 * The schedules of the jobs that take them at run time (`runtimeSchedules: true`), in a local run. Each such job
 * has a DISABLED template in the stack's group and a group of its own (created by local-resources.ts under its local
 * name, which the template's input names). The run upserts the schedules it is given through the same
 * `upsertSchedule` a user's app calls (registry row, then the Scheduler schedule copied from the template), and reads
 * back what the local Scheduler holds, so that firing a key's schedule hands the trigger the input the projection
 * wrote, exactly as a deployed Scheduler would. A kept run also watches the groups and fires a schedule that appears
 * (or changes) after the start.
 */
import { GetScheduleCommand, ListSchedulesCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { isJsonObject } from '../../functions/protocol/field-checks';
import type { Clock } from '../../functions/protocol/ports';
import type { JsonValue } from '../../functions/protocol/schedule-key';
import type { ScheduleSpec as RuntimeScheduleSpec } from '../../functions/protocol/schedule-registry-ports';
import { STACK_OUTPUTS } from '../../lib/stack-outputs';
import { connectScheduleOperations, upsertSchedule } from '../../operations/schedules';
import type { LocalApp, ScheduleSpec } from './app-model';
import { type ResolveContext, resolveString } from './intrinsics';
import type { LocalClients } from './local-aws';

/** One schedule of a job that takes schedules at run time, for runLocally to upsert before it fires. */
export interface LocalRuntimeSchedule extends RuntimeScheduleSpec {
  /** The job, deployed with `runtimeSchedules: true`. */
  readonly jobId: string;
  /** The schedule key (a customer id, say). */
  readonly scheduleKey: string;
  /** Handed to each occurrence's job as `input`. */
  readonly input?: JsonValue;
}

/** Where the run-time schedules of a local run live: the registry table and the stack's (shared) group. */
export interface LocalRegistry {
  readonly registryTableName: string;
  readonly scheduleGroupName: string;
  readonly occurrenceTableName: string;
}

/**
 * The registry of the ScheduledJobs whose occurrences table is `tableName`: its output `<prefix>OccurrenceTableName`
 * names that table, and `<prefix>ScheduleRegistryTableName` the registry (absent when no job takes run-time
 * schedules); the shared group is where the trigger's templates are.
 */
export function registryOf(app: LocalApp, context: ResolveContext, tableName: string): LocalRegistry | undefined {
  const outputs = Object.entries(app.template.Outputs ?? {}) as [string, { Value?: unknown }][];
  const resolved = (value: unknown) => {
    try {
      return resolveString(value, context);
    } catch {
      return undefined;
    }
  };
  const tableOutput = outputs.find(
    ([key, o]) => key.endsWith(STACK_OUTPUTS.table) && resolved(o.Value) === tableName,
  )?.[0];
  if (tableOutput === undefined) return undefined;
  const prefix = tableOutput.slice(0, -STACK_OUTPUTS.table.length);
  const value = (name: string) => {
    const output = outputs.find(([key]) => key === `${prefix}${name}`)?.[1];
    return output === undefined ? undefined : resolved(output.Value);
  };
  const registryTableName = value(STACK_OUTPUTS.scheduleRegistryTable);
  const sharedGroup = value(STACK_OUTPUTS.scheduleGroup);
  if (registryTableName === undefined || sharedGroup === undefined) return undefined;
  return {
    registryTableName,
    scheduleGroupName: localGroupName(app, context, sharedGroup) ?? sharedGroup,
    occurrenceTableName: tableName,
  };
}

/** The local name of the schedule group the template names `templateName` (its Name in the template). */
export function localGroupName(app: LocalApp, context: ResolveContext, templateName: string): string | undefined {
  for (const [id, r] of Object.entries(app.template.Resources ?? {})) {
    if (r.Type === 'AWS::Scheduler::ScheduleGroup' && r.Properties?.Name === templateName)
      return context.resources.get(id)?.ref;
  }
  return undefined;
}

/**
 * Upserts each schedule with the package's own upsertSchedule (operations/schedules.ts), recorded as by `runLocally`.
 * A bad schedule throws the registry's InvalidScheduleError, naming the field, before anything of it is written.
 */
export async function upsertLocalSchedules(
  clients: LocalClients,
  registry: LocalRegistry,
  schedules: readonly LocalRuntimeSchedule[],
  clock?: Clock,
): Promise<void> {
  const ops = connectScheduleOperations({
    ...registry,
    clients: { dynamoDb: clients.dynamo, scheduler: clients.scheduler },
    ...(clock === undefined ? {} : { clock }),
  });
  for (const { jobId, scheduleKey, ...spec } of schedules) {
    await upsertSchedule(ops, jobId, scheduleKey, spec, { by: 'runLocally' });
  }
}

/** A schedule read from the local Scheduler, and when it last changed (a change fires it again in a kept run). */
export interface KeyedSchedule {
  readonly spec: ScheduleSpec;
  readonly modifiedAt: string;
}

/**
 * Every ENABLED schedule in the groups of the templates given (each template's `keyedGroup` already its local name),
 * as the local Scheduler holds it: expression, time zone, start and end, and the input the projection wrote (with the
 * key and the row's input). Paged as ListSchedules pages; bounded at 100 pages per group.
 */
export async function readKeyedSchedules(
  scheduler: SchedulerClient,
  templates: readonly ScheduleSpec[],
): Promise<KeyedSchedule[]> {
  const found: KeyedSchedule[] = [];
  for (const template of templates) {
    const group = template.keyedGroup;
    if (group === undefined) continue;
    let token: string | undefined;
    for (let page = 0; page < 100; page++) {
      const listed = await scheduler.send(new ListSchedulesCommand({ GroupName: group, NextToken: token }));
      for (const summary of listed.Schedules ?? []) {
        if (summary.Name === undefined || summary.State === 'DISABLED') continue;
        const s = await scheduler.send(new GetScheduleCommand({ GroupName: group, Name: summary.Name }));
        if (s.State === 'DISABLED' || s.ScheduleExpression === undefined) continue;
        const input = s.Target?.Input;
        found.push({
          spec: {
            logicalId: `${group}/${summary.Name}`,
            jobId: template.jobId,
            ...keyOf(input),
            name: summary.Name,
            groupName: group,
            expression: s.ScheduleExpression,
            timeZone: s.ScheduleExpressionTimezone ?? 'UTC',
            enabled: true,
            ...(s.StartDate === undefined ? {} : { startDate: s.StartDate.toISOString() }),
            ...(s.EndDate === undefined ? {} : { endDate: s.EndDate.toISOString() }),
            target: template.target,
            ...(s.Target?.Arn === undefined ? {} : { invokedArn: s.Target.Arn }),
            ...(input === undefined ? {} : { input }),
          },
          modifiedAt: (s.LastModificationDate ?? s.CreationDate)?.toISOString() ?? '',
        });
      }
      token = listed.NextToken;
      if (token === undefined) break;
    }
  }
  return found;
}

function keyOf(input: string | undefined): { scheduleKey?: string } {
  try {
    const parsed: unknown = JSON.parse(input ?? '');
    const key = isJsonObject(parsed) ? parsed.scheduleKey : undefined;
    return typeof key === 'string' ? { scheduleKey: key } : {};
  } catch {
    return {};
  }
}

/** How often a kept run looks for new or changed schedules in the keyed groups. */
export const KEYED_WATCH_MS = 1000;

/**
 * Watches the keyed groups of a kept run: each schedule not seen before (or changed since) is handed to `fire` once.
 * One look at a time; a failed look is reported and the next one tries again. `stop()` waits for the look under way.
 */
export function watchKeyedSchedules(watch: {
  readonly read: () => Promise<readonly KeyedSchedule[]>;
  readonly seen: Iterable<KeyedSchedule>;
  readonly fire: (schedules: readonly ScheduleSpec[]) => Promise<void>;
  readonly onError: (error: unknown) => void;
  readonly intervalMs?: number;
}): { stop(): Promise<void> } {
  const seen = new Set([...watch.seen].map(seenKey));
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const look = async () => {
    try {
      const fresh = (await watch.read()).filter((s) => !seen.has(seenKey(s)));
      for (const s of fresh) seen.add(seenKey(s));
      if (fresh.length > 0 && !stopped) await watch.fire(fresh.map((s) => s.spec));
    } catch (error) {
      watch.onError(error);
    }
  };
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = look().then(next);
    }, watch.intervalMs ?? KEYED_WATCH_MS);
  };
  next();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

const seenKey = (s: KeyedSchedule): string => `${s.spec.logicalId}@${s.modifiedAt}`;
