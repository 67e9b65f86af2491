/**
 * A stateful fake of EventBridge Scheduler's schedule API, plugged in below the real adapter
 * (functions/aws/scheduler-projection.ts) with aws-sdk-client-mock, as FakeAws is below the DynamoDB, S3, SQS and SNS
 * adapters: schedule groups, CreateSchedule, UpdateSchedule, DeleteSchedule, GetSchedule and ListSchedules (by name
 * prefix, in pages), with the service's refusals (ConflictException for a name taken, ResourceNotFoundException for a
 * schedule or group that is not there, ValidationException for what the service would not take) and its one action
 * of its own: a one-time `at()` schedule with ActionAfterCompletion DELETE deletes itself once it has fired.
 *
 * Faults: `failNext` (a throttle, say, before anything is applied), a request rate above which calls are throttled,
 * and the hand edits the registry's reconciler must repair (handDelete, handDisable, handEdit, handCreate): changes
 * made in the console or by another tool, which move LastModificationDate as any change does. Lost responses and
 * crashes are the network's (sim/network.ts), as for every other service.
 */
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  type ListSchedulesCommandInput,
  ResourceNotFoundException,
  SchedulerClient,
  ThrottlingException,
  UpdateScheduleCommand,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { instantOfWallTime } from '../../functions/protocol/schedule-times';

/** A schedule as the service keeps it. */
export interface FakeSchedule {
  readonly Name: string;
  readonly GroupName: string;
  readonly Arn: string;
  ScheduleExpression: string;
  ScheduleExpressionTimezone?: string;
  StartDate?: Date;
  EndDate?: Date;
  Description?: string;
  State: 'ENABLED' | 'DISABLED';
  FlexibleTimeWindow: { Mode: string; MaximumWindowInMinutes?: number };
  Target: Record<string, unknown> & { Arn: string; RoleArn: string; Input?: string };
  ActionAfterCompletion?: string;
  KmsKeyArn?: string;
  readonly CreationDate: Date;
  LastModificationDate: Date;
}

/** One change the service applied, by whom: the adapter's calls, its own at() deletion, and hand edits. */
export interface ScheduleChangeRecord {
  readonly at: number;
  readonly group: string;
  readonly name: string;
  readonly what: 'created' | 'updated' | 'deleted' | 'completed';
  readonly by: 'api' | 'hand' | 'service';
}

type Fault = () => Error;

/** The errors the SDK would raise, as its own exception classes (the classifier reads their names and status). */
export const schedulerFaults = {
  throttled: (): Error => new ThrottlingException(options('Rate exceeded', 429)),
  notFound: (what: string): Error => new ResourceNotFoundException(options(`${what} does not exist.`, 404)),
  conflict: (what: string): Error => new ConflictException(options(`${what} already exists.`, 409)),
  invalid: (message: string): Error => new ValidationException(options(message, 400)),
};

function options(message: string, httpStatusCode: number) {
  return { message, Message: message, $metadata: { httpStatusCode } };
}

const NAME_PATTERN = /^[0-9a-zA-Z-_.]{1,64}$/;
/** The largest Target.Input Scheduler takes. */
export const MAX_TARGET_INPUT_BYTES = 8192;
/** ListSchedules' default and largest page. */
const MAX_PAGE = 100;

export class FakeScheduler {
  readonly groups = new Map<string, Map<string, FakeSchedule>>();
  readonly changes: ScheduleChangeRecord[] = [];
  readonly calls: string[] = [];
  readonly mock = mockClient(SchedulerClient);
  /** ListSchedules' page size when the caller gives no MaxResults (the service's: 100); small to exercise paging. */
  pageSize = MAX_PAGE;
  /** Calls per second above which the service throttles (undefined: never). */
  rateLimitPerSecond: number | undefined;
  private readonly queuedFaults = new Map<string, Fault[]>();
  private readonly recentCalls: number[] = [];

  constructor(private readonly now: () => number = Date.now) {
    this.addGroup('default');
    this.mock.on(CreateScheduleCommand).callsFake((input) => this.run('CreateSchedule', () => this.create(input)));
    this.mock.on(UpdateScheduleCommand).callsFake((input) => this.run('UpdateSchedule', () => this.update(input)));
    this.mock.on(DeleteScheduleCommand).callsFake((input) =>
      this.run('DeleteSchedule', () => {
        const group = this.group(input.GroupName);
        const name = String(input.Name);
        if (!group.has(name)) throw schedulerFaults.notFound(`Schedule ${name}`);
        group.delete(name);
        this.record(input.GroupName, name, 'deleted', 'api');
        return {};
      }),
    );
    this.mock.on(GetScheduleCommand).callsFake((input) =>
      this.run('GetSchedule', () => {
        const schedule = this.group(input.GroupName).get(String(input.Name));
        if (schedule === undefined) throw schedulerFaults.notFound(`Schedule ${String(input.Name)}`);
        return structuredClone(schedule);
      }),
    );
    this.mock.on(ListSchedulesCommand).callsFake((input) => this.run('ListSchedules', () => this.list(input)));
  }

  // ---- set-up and inspection --------------------------------------------------------------------------------------

  /** A schedule group, as the stack deploys it. */
  addGroup(name: string): void {
    if (!this.groups.has(name)) this.groups.set(name, new Map());
  }

  /** A schedule as deployed by CloudFormation (the job's template, say): no call is recorded. */
  seed(schedule: Omit<FakeSchedule, 'Arn' | 'CreationDate' | 'LastModificationDate'>): void {
    this.addGroup(schedule.GroupName);
    const at = new Date(this.now());
    this.group(schedule.GroupName).set(schedule.Name, {
      ...structuredClone(schedule),
      Arn: arnOf(schedule.GroupName, schedule.Name),
      CreationDate: at,
      LastModificationDate: at,
    });
  }

  schedule(group: string, name: string): FakeSchedule | undefined {
    this.completeDue();
    return this.groups.get(group)?.get(name);
  }

  /** The group's schedules, by name. */
  schedulesOf(group: string): FakeSchedule[] {
    this.completeDue();
    return [...(this.groups.get(group)?.values() ?? [])].sort((a, b) => (a.Name < b.Name ? -1 : 1));
  }

  count(operation: string): number {
    return this.calls.filter((c) => c === operation).length;
  }

  /** The next `count` calls of `operation` fail with `fault` before anything is applied. */
  failNext(operation: string, fault: Fault = schedulerFaults.throttled, count = 1): void {
    const list = this.queuedFaults.get(operation) ?? [];
    for (let i = 0; i < count; i++) list.push(fault);
    this.queuedFaults.set(operation, list);
  }

  /** Forget all state, calls and faults, keeping the mock installed (the simulation reuses one per process). */
  reset(): void {
    this.mock.resetHistory();
    this.groups.clear();
    this.queuedFaults.clear();
    this.changes.length = 0;
    this.calls.length = 0;
    this.recentCalls.length = 0;
    this.pageSize = MAX_PAGE;
    this.rateLimitPerSecond = undefined;
    this.addGroup('default');
  }

  restore(): void {
    this.mock.restore();
  }

  // ---- hand edits: someone changes Scheduler behind the registry's back --------------------------------------------

  /** Deleted in the console. False when there was nothing to delete. */
  handDelete(group: string, name: string): boolean {
    const deleted = this.groups.get(group)?.delete(name) ?? false;
    if (deleted) this.record(group, name, 'deleted', 'hand');
    return deleted;
  }

  /** Disabled in the console. False when there was no such schedule. */
  handDisable(group: string, name: string): boolean {
    const schedule = this.groups.get(group)?.get(name);
    if (schedule === undefined) return false;
    schedule.State = 'DISABLED';
    this.touch(schedule, 'hand');
    return true;
  }

  /** Its expression changed in the console (the state as it was). False when there was no such schedule. */
  handEdit(group: string, name: string, expression: string): boolean {
    const schedule = this.groups.get(group)?.get(name);
    if (schedule === undefined) return false;
    schedule.ScheduleExpression = expression;
    this.touch(schedule, 'hand');
    return true;
  }

  /** A schedule made by hand (or left by an older deployment) in the group: `like`'s settings under another name. */
  handCreate(group: string, name: string, expression: string, like?: FakeSchedule): boolean {
    const schedules = this.groups.get(group);
    if (schedules === undefined || schedules.has(name)) return false;
    const at = new Date(this.now());
    schedules.set(name, {
      Name: name,
      GroupName: group,
      Arn: arnOf(group, name),
      ScheduleExpression: expression,
      ScheduleExpressionTimezone: 'UTC',
      State: 'ENABLED',
      FlexibleTimeWindow: like?.FlexibleTimeWindow ?? { Mode: 'OFF' },
      Target: structuredClone(like?.Target) ?? { Arn: 'arn:aws:lambda:::function:trigger', RoleArn: 'role' },
      CreationDate: at,
      LastModificationDate: at,
    });
    this.record(group, name, 'created', 'hand');
    return true;
  }

  // ---- the API --------------------------------------------------------------------------------------------------

  private run(operation: string, apply: () => unknown): unknown {
    this.calls.push(operation);
    this.completeDue();
    const fault = this.queuedFaults.get(operation)?.shift();
    if (fault) throw fault();
    if (this.overRate()) throw schedulerFaults.throttled();
    return apply();
  }

  private overRate(): boolean {
    if (this.rateLimitPerSecond === undefined) return false;
    const now = this.now();
    while (this.recentCalls.length > 0 && (this.recentCalls[0] ?? 0) <= now - 1000) this.recentCalls.shift();
    if (this.recentCalls.length >= this.rateLimitPerSecond) return true;
    this.recentCalls.push(now);
    return false;
  }

  private create(input: CreateScheduleCommandInput): unknown {
    const group = this.group(input.GroupName);
    const name = String(input.Name);
    if (group.has(name)) throw schedulerFaults.conflict(`Schedule ${name}`);
    const at = new Date(this.now());
    const schedule: FakeSchedule = {
      ...this.validated(input),
      Name: name,
      GroupName: groupNameOf(input.GroupName),
      Arn: arnOf(groupNameOf(input.GroupName), name),
      CreationDate: at,
      LastModificationDate: at,
    };
    group.set(name, schedule);
    this.record(schedule.GroupName, name, 'created', 'api');
    return { ScheduleArn: schedule.Arn };
  }

  /** UpdateSchedule replaces the whole schedule: a field left out is reset, as the service does. */
  private update(input: CreateScheduleCommandInput): unknown {
    const group = this.group(input.GroupName);
    const name = String(input.Name);
    const existing = group.get(name);
    if (existing === undefined) throw schedulerFaults.notFound(`Schedule ${name}`);
    const replaced: FakeSchedule = {
      ...this.validated(input),
      Name: name,
      GroupName: existing.GroupName,
      Arn: existing.Arn,
      CreationDate: existing.CreationDate,
      LastModificationDate: new Date(this.now()),
    };
    group.set(name, replaced);
    this.record(existing.GroupName, name, 'updated', 'api');
    return { ScheduleArn: replaced.Arn };
  }

  private list(input: ListSchedulesCommandInput): unknown {
    const group = this.group(input.GroupName);
    const size = input.MaxResults ?? this.pageSize;
    if (size < 1 || size > MAX_PAGE) throw schedulerFaults.invalid(`MaxResults must be 1-${MAX_PAGE}`);
    const matching = [...group.values()]
      .filter((s) => input.NamePrefix === undefined || s.Name.startsWith(input.NamePrefix))
      .filter((s) => input.State === undefined || s.State === input.State)
      .sort((a, b) => (a.Name < b.Name ? -1 : 1));
    // The token is opaque to callers; here, the name to start after.
    const start = input.NextToken === undefined ? 0 : matching.findIndex((s) => s.Name > String(input.NextToken));
    const page = start < 0 ? [] : matching.slice(start, start + size);
    const more = start >= 0 && start + size < matching.length;
    return {
      Schedules: page.map((s) => ({
        Arn: s.Arn,
        Name: s.Name,
        GroupName: s.GroupName,
        State: s.State,
        CreationDate: s.CreationDate,
        LastModificationDate: s.LastModificationDate,
        Target: { Arn: s.Target.Arn },
      })),
      ...(more ? { NextToken: page.at(-1)?.Name } : {}),
    };
  }

  /** What the service checks of a create or update, and the schedule's settings from it. */
  private validated(input: CreateScheduleCommandInput) {
    const name = String(input.Name);
    if (!NAME_PATTERN.test(name)) throw schedulerFaults.invalid(`Schedule name ${name} is invalid`);
    if (input.ScheduleExpression === undefined) throw schedulerFaults.invalid('ScheduleExpression is required');
    if (input.FlexibleTimeWindow?.Mode === undefined) throw schedulerFaults.invalid('FlexibleTimeWindow is required');
    const target = input.Target;
    if (target?.Arn === undefined || target.RoleArn === undefined) throw schedulerFaults.invalid('Target is required');
    if (target.Input !== undefined && Buffer.byteLength(target.Input, 'utf8') > MAX_TARGET_INPUT_BYTES)
      throw schedulerFaults.invalid(`Target.Input must be at most ${MAX_TARGET_INPUT_BYTES} bytes`);
    if (input.StartDate !== undefined && input.StartDate.getTime() < this.now() - 5 * 60_000)
      throw schedulerFaults.invalid(
        'The StartDate you specify cannot be earlier than 5 minutes prior to the current time.',
      );
    if (input.EndDate !== undefined && input.EndDate.getTime() < this.now())
      throw schedulerFaults.invalid('The EndDate you specify cannot be earlier than the current time.');
    if (input.StartDate !== undefined && input.EndDate !== undefined && input.StartDate > input.EndDate)
      throw schedulerFaults.invalid('The StartDate must be before the EndDate.');
    return {
      ScheduleExpression: input.ScheduleExpression,
      ...(input.ScheduleExpressionTimezone === undefined
        ? {}
        : { ScheduleExpressionTimezone: input.ScheduleExpressionTimezone }),
      ...(input.StartDate === undefined ? {} : { StartDate: new Date(input.StartDate) }),
      ...(input.EndDate === undefined ? {} : { EndDate: new Date(input.EndDate) }),
      ...(input.Description === undefined ? {} : { Description: input.Description }),
      State: (input.State ?? 'ENABLED') as 'ENABLED' | 'DISABLED',
      FlexibleTimeWindow: structuredClone(input.FlexibleTimeWindow) as FakeSchedule['FlexibleTimeWindow'],
      Target: structuredClone(target) as FakeSchedule['Target'],
      ...(input.ActionAfterCompletion === undefined ? {} : { ActionAfterCompletion: input.ActionAfterCompletion }),
    };
  }

  /**
   * The service's own change: an ENABLED one-time schedule whose time has come fires, and with ActionAfterCompletion
   * DELETE is then deleted. Applied before anything reads or writes the schedules, so every caller sees it.
   */
  completeDue(): void {
    const now = this.now();
    for (const [groupName, group] of this.groups) {
      for (const [name, s] of group) {
        if (s.State !== 'ENABLED' || s.ActionAfterCompletion !== 'DELETE') continue;
        const at = oneTimeOf(s);
        if (at !== undefined && at <= now) {
          group.delete(name);
          this.record(groupName, name, 'completed', 'service');
        }
      }
    }
  }

  private group(name: string | undefined): Map<string, FakeSchedule> {
    const group = this.groups.get(groupNameOf(name));
    if (group === undefined) throw schedulerFaults.notFound(`Schedule group ${groupNameOf(name)}`);
    return group;
  }

  private touch(schedule: FakeSchedule, by: ScheduleChangeRecord['by']): void {
    schedule.LastModificationDate = new Date(this.now());
    this.record(schedule.GroupName, schedule.Name, 'updated', by);
  }

  private record(
    group: string | undefined,
    name: string,
    what: ScheduleChangeRecord['what'],
    by: ScheduleChangeRecord['by'],
  ): void {
    this.changes.push({ at: this.now(), group: groupNameOf(group), name, what, by });
  }
}

/** The time an `at(...)` schedule fires (its wall time read in its time zone), or undefined for any other. */
export function oneTimeOf(
  s: Pick<FakeSchedule, 'ScheduleExpression' | 'ScheduleExpressionTimezone'>,
): number | undefined {
  const m = /^at\((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\)$/.exec(s.ScheduleExpression);
  if (m === null) return undefined;
  return instantOfWallTime(Date.parse(`${m[1]}Z`), s.ScheduleExpressionTimezone ?? 'UTC');
}

const groupNameOf = (name: string | undefined) => name ?? 'default';
const arnOf = (group: string, name: string) => `arn:aws:scheduler:eu-central-1:123456789012:schedule/${group}/${name}`;
