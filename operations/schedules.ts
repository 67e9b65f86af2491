/**
 * The schedules a job takes at run time, managed by the user's app: one schedule per schedule key (a customer id,
 * say), created, changed, paused, resumed and deleted while the stack runs (docs/runtime-schedules.md). Each is a
 * row of the stack's registry table (the source of truth) and a schedule in the job's own Scheduler group (its
 * projection, which the reconciler repairs should the two drift apart).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobStateStore } from '../functions/aws/job-state-store';
import { DynamoScheduleRegistry } from '../functions/aws/schedule-registry-store';
import { SchedulerProjection } from '../functions/aws/scheduler-projection';
import { checkAll, id } from '../functions/protocol/field-checks';
import { type DeployedJob, resumeSeries } from '../functions/protocol/job-control';
import {
  deleteScheduleRecord,
  type ManageScheduleDeps,
  rememberingTemplates,
  setScheduleState,
  type UpsertOutcome,
  upsertScheduleRecord,
} from '../functions/protocol/manage-schedule';
import { type Clock, systemClock } from '../functions/protocol/ports';
import { scheduleKey as checkScheduleKey, type JsonValue, seriesOf } from '../functions/protocol/schedule-key';
import { InvalidScheduleError } from '../functions/protocol/schedule-registry';
import type { RegisteredSchedule, ScheduleSpec } from '../functions/protocol/schedule-registry-ports';
import type { OperationsClients } from './job-operations';

/** What the schedule operations work on: the names a deployed ScheduledJobs puts in its stack outputs. */
export interface ScheduleOperationsTarget {
  /** The registry table (the stack output `ScheduleRegistryTableName`). */
  readonly registryTableName: string;
  /** The stack's schedule group, where each job's template schedule is (the stack output `ScheduleGroupName`). */
  readonly scheduleGroupName: string;
  /**
   * The occurrences table (the stack output `OccurrenceTableName`). Given, `resumeSchedule` also lifts the schedule's
   * pause after failures (`pauseAfterFailures`), which is kept there; without it, only its Scheduler state changes.
   */
  readonly occurrenceTableName?: string;
  /**
   * The AWS SDK clients to use (DynamoDB and Scheduler; SQS is not used here).
   * @defaultValue clients with the SDK's default configuration (region and credentials from the environment)
   */
  readonly clients?: OperationsClients;
  /** The time the writes record, and that an `at()` must be after. @defaultValue the system clock */
  readonly clock?: Clock;
}

let wrap: (deps: ManageScheduleDeps) => ScheduleOperations;
let unwrap: (ops: ScheduleOperations) => ManageScheduleDeps;

/**
 * The connection of one deployed ScheduledJobs's run-time schedules: pass it as the first argument of
 * upsertSchedule, getSchedule, listSchedules, pauseSchedule, resumeSchedule and deleteSchedule. Made by
 * connectScheduleOperations. It remembers each job's template for a minute, so a burst of writes of one job reads
 * it once.
 */
export class ScheduleOperations {
  readonly #deps: ManageScheduleDeps;

  private constructor(deps: ManageScheduleDeps) {
    this.#deps = deps;
  }

  static {
    wrap = (deps) => new ScheduleOperations(deps);
    unwrap = (ops) => ops.#deps;
  }
}

/**
 * Schedule operations over any registry and projection (fakes in tests, the simulation, the bulk upsert's own).
 * Not part of the public entry point.
 */
export function scheduleOperationsOver(deps: ManageScheduleDeps): ScheduleOperations {
  return wrap(deps);
}

/** The registry, projection and clock `ops` runs on (for the bulk upsert, which passes each job's template). */
export function manageDepsOf(ops: ScheduleOperations): ManageScheduleDeps {
  return unwrap(ops);
}

/**
 * Connects to the run-time schedules of one deployed ScheduledJobs. Nothing is read until an operation runs.
 *
 * @param target - the registry table and the schedule group (the stack's outputs), and optional clients.
 * @returns the connection, to pass to the schedule operations.
 *
 * @example
 * ```ts
 * import { connectScheduleOperations, upsertSchedule } from 'scheduled-jobs-stack/operations';
 *
 * const schedules = connectScheduleOperations({
 *   registryTableName: 'Jobs-ScheduleRegistry1234',
 *   scheduleGroupName: 'Jobs-Schedules1234',
 * });
 * await upsertSchedule(schedules, 'weekly-report', 'customer-42', {
 *   expression: 'cron(0 8 ? * MON *)',
 *   timeZone: 'Europe/Berlin',
 *   input: { plan: 'pro' },
 * });
 * ```
 */
export function connectScheduleOperations(target: ScheduleOperationsTarget): ScheduleOperations {
  const dynamo = target.clients?.dynamoDb ?? new DynamoDBClient({});
  const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const scheduler = target.clients?.scheduler ?? new SchedulerClient({});
  const clock = target.clock ?? systemClock;
  const occurrences = target.occurrenceTableName;
  return wrap({
    registry: new DynamoScheduleRegistry(documents, target.registryTableName),
    projection: rememberingTemplates(new SchedulerProjection(scheduler, target.scheduleGroupName, clock), clock),
    clock,
    ...(occurrences === undefined
      ? {}
      : {
          onResume: async (series, options) => {
            const states = new DynamoJobStateStore(documents, occurrences);
            await resumeSeries({ states, clock }, seriesOf(series), options.by ?? 'resumeSchedule');
          },
        }),
  });
}

/** One schedule of a job, as the registry holds it. Times are ISO-8601 UTC with milliseconds. */
export interface RuntimeSchedule {
  /** The job's id, as given to `addJob`. */
  readonly jobId: string;
  /** The schedule key (a customer id, say). */
  readonly scheduleKey: string;
  /** `cron(...)`, `rate(...)` or `at(...)`. */
  readonly expression: string;
  /** The IANA time zone the expression is read in. */
  readonly timeZone: string;
  /** No occurrence before this time. */
  readonly startDate?: string;
  /** No occurrence after this time. */
  readonly endDate?: string;
  /** What each occurrence's job gets as `input`. */
  readonly input?: JsonValue;
  /** The description given with the spec. */
  readonly description?: string;
  /** ENABLED: it fires; PAUSED: its Scheduler schedule is disabled. */
  readonly state: 'ENABLED' | 'PAUSED';
  /** Incremented by every change. */
  readonly version: number;
  /** Its Scheduler schedule's name in the job's group (derived from the key: Scheduler's names are shorter). */
  readonly scheduleName: string;
  /** When the key's schedule was created. */
  readonly createdAt: string;
  /** When it was last changed. */
  readonly updatedAt: string;
  /** Who changed it last (the `by` of that change). */
  readonly updatedBy?: string;
  /**
   * Whether its Scheduler schedule is confirmed to be this version. false for the moment between the two writes,
   * or until the reconciler repairs a projection that failed (within a few minutes).
   */
  readonly inSync: boolean;
}

/** What upsertSchedule did, and the schedule as it is after. */
export interface UpsertScheduleResult {
  /**
   * created: the key had no schedule; updated: it had another; repaired: it had this one, but its Scheduler schedule
   * was not confirmed (an earlier call that failed half way, or a racing caller still projecting it), and this call put
   * it; unchanged: it had this one, in sync, and nothing was written.
   */
  readonly outcome: UpsertOutcome;
  /** The schedule as it is after. */
  readonly schedule: RuntimeSchedule;
}

/** Who made a change, recorded as the schedule's `updatedBy`. */
export interface ScheduleChangeOptions {
  /** An operator's name or the app's own label. @defaultValue not recorded */
  readonly by?: string;
}

/** Which schedules of a job listSchedules returns. */
export interface ListSchedulesOptions {
  /** Only keys that start with this. @defaultValue every key */
  readonly prefix?: string;
  /** At most this many per page, 1 to 1,000. @defaultValue 100 */
  readonly limit?: number;
  /** The `cursor` of the previous page. @defaultValue the first page */
  readonly cursor?: string;
}

/** One page of a job's schedules, in key order. */
export interface ScheduleListPage {
  /** The schedules of this page (a page may hold fewer than the limit, and still not be the last). */
  readonly schedules: readonly RuntimeSchedule[];
  /** Pass it to get the next page; absent on the last page. */
  readonly cursor?: string;
}

/** What deleteSchedule did. */
export interface DeleteScheduleResult {
  /** false: the job had no schedule with that key (deleting twice is not an error). */
  readonly deleted: boolean;
}

/** The public view of a row; undefined for a tombstone (a delete under way). */
function publicView(row: RegisteredSchedule | undefined): RuntimeSchedule | undefined {
  if (row === undefined || row.deletedAt !== undefined) return undefined;
  const view: RuntimeSchedule = {
    jobId: row.jobId,
    scheduleKey: row.scheduleKey,
    expression: row.expression,
    timeZone: row.timeZone,
    startDate: row.startDate,
    endDate: row.endDate,
    input: row.input,
    description: row.description,
    state: row.state,
    version: row.version,
    scheduleName: row.scheduleName,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    updatedBy: row.updatedBy,
    inSync: row.syncDueAt === undefined && row.syncedVersion === row.version,
  };
  return Object.fromEntries(Object.entries(view).filter(([, v]) => v !== undefined)) as unknown as RuntimeSchedule;
}

function checkIds(jobId: string, key?: string): void {
  const checked = checkAll({
    jobId: id('jobId', jobId),
    ...(key === undefined ? {} : { scheduleKey: checkScheduleKey('scheduleKey', key) }),
  });
  if (!checked.ok) throw new InvalidScheduleError(jobId, key, checked.problems);
}

/**
 * Creates the schedule of `scheduleKey` in job `jobId`, or replaces it with `spec`. Idempotent: the same call
 * twice writes nothing the second time and makes no second schedule.
 *
 * @param ops - from connectScheduleOperations.
 * @param jobId - a job deployed with `runtimeSchedules: true`.
 * @param scheduleKey - 1-128 letters, digits and `.`, `_`, `-`, `:`, `@`, `+`, `=`, starting with a letter or digit.
 * @param spec - the expression and its options.
 * @param options - who makes the change.
 * @returns whether it was created, updated, repaired or unchanged, and the schedule. Callers racing on one key are
 *   retried inside (a jittered wait, then the row read again, up to 8 writes): each one's spec is written in turn and
 *   the last writer wins; each is told `created` or `updated`, with the row as it is after.
 * @throws InvalidScheduleError naming every wrong field (an expression Scheduler refuses, an unknown time zone, an
 *   `at()` in the past, an input over 2,048 bytes of JSON, ...); UnknownScheduleJobError for a job that is not
 *   deployed or takes no schedules at run time. Nothing is written in either case. DependencyError (transient) when
 *   a call to DynamoDB or Scheduler failed (the same upsert again finishes it: `repaired`), or when the key's row was
 *   changed by other callers under all 8 writes (dozens of callers on one key at once): nothing of this call was
 *   written; try again.
 */
export async function upsertSchedule(
  ops: ScheduleOperations,
  jobId: string,
  scheduleKey: string,
  spec: ScheduleSpec,
  options: ScheduleChangeOptions = {},
): Promise<UpsertScheduleResult> {
  const result = await upsertScheduleRecord(unwrap(ops), jobId, scheduleKey, spec, { by: options.by });
  return { outcome: result.outcome, schedule: publicView(result.schedule) as RuntimeSchedule };
}

/**
 * One run-time schedule of a job as a deployed job of its own: the template's route with the schedule's expression,
 * time zone, state and input, and its key, so that describe, pause, resume and run act on that schedule's series.
 */
export function deployedScheduleOf(template: DeployedJob, schedule: RuntimeSchedule): DeployedJob {
  return {
    ...template,
    schedule: schedule.expression,
    timeZone: schedule.timeZone,
    state: schedule.state === 'PAUSED' ? 'DISABLED' : 'ENABLED',
    scheduleKey: schedule.scheduleKey,
    ...(schedule.input === undefined ? {} : { input: schedule.input }),
  };
}

/**
 * The schedule of `scheduleKey` in job `jobId` (a consistent read), or undefined when it has none.
 * @throws InvalidScheduleError for a malformed job id or key.
 */
export async function getSchedule(
  ops: ScheduleOperations,
  jobId: string,
  scheduleKey: string,
): Promise<RuntimeSchedule | undefined> {
  checkIds(jobId, scheduleKey);
  return publicView(await unwrap(ops).registry.get(jobId, scheduleKey, true));
}

/**
 * One page of job `jobId`'s schedules in key order, optionally those whose keys start with a prefix. A job
 * without schedules (or an unknown one) lists none.
 * @throws InvalidScheduleError for a malformed job id, a limit outside 1-1,000 or a cursor not of this listing.
 */
export async function listSchedules(
  ops: ScheduleOperations,
  jobId: string,
  options: ListSchedulesOptions = {},
): Promise<ScheduleListPage> {
  checkIds(jobId);
  const page = await unwrap(ops).registry.list(jobId, options);
  const schedules = page.items.flatMap((row) => publicView(row) ?? []);
  return page.cursor === undefined ? { schedules } : { schedules, cursor: page.cursor };
}

/**
 * Pauses the schedule of `scheduleKey`: its Scheduler schedule is disabled. Pausing a paused schedule changes
 * nothing.
 * @throws ScheduleNotFoundError, UnknownScheduleJobError, InvalidScheduleError (a malformed job id or key).
 */
export async function pauseSchedule(
  ops: ScheduleOperations,
  jobId: string,
  scheduleKey: string,
  options: ScheduleChangeOptions = {},
): Promise<RuntimeSchedule> {
  return changeState(ops, jobId, scheduleKey, 'PAUSED', options);
}

/**
 * Resumes the schedule of `scheduleKey`: its Scheduler schedule is enabled again. Times missed while it was paused
 * are not run.
 * @throws ScheduleNotFoundError, UnknownScheduleJobError, InvalidScheduleError (a malformed job id or key).
 */
export async function resumeSchedule(
  ops: ScheduleOperations,
  jobId: string,
  scheduleKey: string,
  options: ScheduleChangeOptions = {},
): Promise<RuntimeSchedule> {
  return changeState(ops, jobId, scheduleKey, 'ENABLED', options);
}

/** The body of pauseSchedule and resumeSchedule, which differ only in the state they set. */
async function changeState(
  ops: ScheduleOperations,
  jobId: string,
  scheduleKey: string,
  state: 'PAUSED' | 'ENABLED',
  options: ScheduleChangeOptions,
): Promise<RuntimeSchedule> {
  return publicView(
    await setScheduleState(unwrap(ops), jobId, scheduleKey, state, { by: options.by }),
  ) as RuntimeSchedule;
}

/**
 * Deletes the schedule of `scheduleKey`: its Scheduler schedule, then its registry row. Occurrences already
 * running finish; occurrence rows expire by their TTL as any occurrence's do.
 * @throws UnknownScheduleJobError, InvalidScheduleError (a malformed job id or key).
 */
export async function deleteSchedule(
  ops: ScheduleOperations,
  jobId: string,
  scheduleKey: string,
  options: ScheduleChangeOptions = {},
): Promise<DeleteScheduleResult> {
  return deleteScheduleRecord(unwrap(ops), jobId, scheduleKey, { by: options.by });
}
