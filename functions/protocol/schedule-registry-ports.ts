/**
 * The schedule registry: the source of truth of the schedules a job takes at run time (schedule-key.ts). One
 * DynamoDB row per (job, schedule key) in the registry table; the EventBridge Scheduler schedule of each row is its
 * *projection*, written after the row and repaired by the reconciler when the two drift apart
 * (docs/runtime-schedules.md, "Registry and Scheduler").
 *
 * Types and ports only, like ports.ts: the algorithms that use them import this module, never the other way round.
 */
import type { JsonValue } from './schedule-key';

/** What a user gives for one schedule (upsertSchedule); everything but `expression` has a default. */
export interface ScheduleSpec {
  /** `cron(0 8 ? * MON *)`, `rate(1 day)` or `at(2027-01-04T08:00:00)`, as EventBridge Scheduler takes them. */
  readonly expression: string;
  /** IANA time zone the expression is read in. Default `Etc/UTC`. */
  readonly timeZone?: string;
  /** No occurrence before this time (ISO-8601 with a zone). */
  readonly startDate?: string;
  /** No occurrence after this time (ISO-8601 with a zone). */
  readonly endDate?: string;
  /** Handed to each occurrence's job as `input`; at most MAX_SCHEDULE_INPUT_BYTES as JSON. */
  readonly input?: JsonValue;
  /** false: created paused (its Scheduler schedule DISABLED). Default true. */
  readonly enabled?: boolean;
  /** For people reading the registry and the Scheduler console. */
  readonly description?: string;
}

/** ENABLED: its Scheduler schedule fires; PAUSED: its Scheduler schedule is DISABLED. */
export type RegisteredScheduleState = 'ENABLED' | 'PAUSED';

/** The registry row of one schedule, as stored. Timestamps are ISO-8601 UTC with milliseconds. */
export interface RegisteredSchedule {
  /** The job's id: the registry table's partition key (the grant to manage a job's schedules is scoped to it). */
  readonly jobId: string;
  /** The user's key: the registry table's sort key, so a job's schedules list by key prefix, in key order. */
  readonly scheduleKey: string;
  readonly expression: string;
  readonly timeZone: string;
  readonly startDate?: string;
  readonly endDate?: string;
  readonly input?: JsonValue;
  readonly description?: string;
  readonly state: RegisteredScheduleState;
  /** Incremented by every write of the row: the compare-and-swap token, and what the projection is checked against. */
  readonly version: number;
  /** The Scheduler schedule's name in the job's group, derived from the key (scheduleNameOf): stable for the key. */
  readonly scheduleName: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Who made the last change (an operator's `by`, or the app's own label). */
  readonly updatedBy?: string;
  /**
   * Present while the projection may lag the row: set by every write that changes what Scheduler should hold, to
   * the time after which the reconciler repairs it (the write's time plus a grace for the writer's own projection),
   * and removed once the projection of this version is confirmed. The sparse index `bySyncDue` holds only these rows.
   */
  readonly syncDueAt?: string;
  /** The sparse index's partition key while syncDueAt is set: one of SYNC_INDEX_SHARDS, a hash of the key. */
  readonly syncShard?: string;
  /** The version last confirmed in Scheduler, and when. */
  readonly syncedVersion?: number;
  readonly syncedAt?: string;
  /** The hash of the template that version was projected from: a later template makes the schedule stale. */
  readonly syncedTemplateHash?: string;
  /** Set by a delete: the row stays (a tombstone) until its Scheduler schedule is confirmed gone, then is removed. */
  readonly deletedAt?: string;
  /** The audit index's partition key, `${jobId}#${bucket}` (one of AUDIT_BUCKETS, a hash of the key). */
  readonly auditBucket: string;
  /** DynamoDB TTL, epoch seconds: set for an `at()` schedule only, some days after its one time. */
  readonly ttl?: number;
}

/**
 * Which write of which life of a row a conditional write expects: its version, and its createdAt, because a row
 * deleted and created again starts its versions over, and a write read from the old life must not land on the new.
 */
export type RowVersion = Pick<RegisteredSchedule, 'version' | 'createdAt'>;

/** The result of a conditional write: `current` is the row as it is after (written) or as it refused (not). */
export type RegistryWriteResult =
  | { readonly written: true; readonly current: RegisteredSchedule }
  | { readonly written: false; readonly current: RegisteredSchedule | undefined };

/** One page of a listing; `cursor` is opaque, absent on the last page. */
export interface RegistryPage<T> {
  readonly items: readonly T[];
  readonly cursor?: string;
}

/** The registry table's reads and writes. Every failure is a DependencyError (conditional refusals are results). */
export interface ScheduleRegistry {
  /** The row, or undefined. `consistent` for a read-modify-write. */
  get(jobId: string, scheduleKey: string, consistent: boolean): Promise<RegisteredSchedule | undefined>;
  /** Put `row` if the stored row is at `expected` (undefined: only if no row exists). */
  put(row: RegisteredSchedule, expected: RowVersion | undefined): Promise<RegistryWriteResult>;
  /**
   * Record that the row at `expected` is projected, from the template of `templateHash`: clears syncDueAt/syncShard
   * if the row is still at `expected`.
   */
  markSynced(
    jobId: string,
    scheduleKey: string,
    expected: RowVersion,
    now: number,
    templateHash: string,
  ): Promise<RegistryWriteResult>;
  /** Remove the tombstone at `expected` (its schedule is confirmed gone). */
  remove(jobId: string, scheduleKey: string, expected: RowVersion): Promise<{ readonly removed: boolean }>;
  /** A job's rows (tombstones included), in key order, from keys starting with `prefix`. */
  list(
    jobId: string,
    options: { readonly prefix?: string; readonly limit?: number; readonly cursor?: string },
  ): Promise<RegistryPage<RegisteredSchedule>>;
  /** Rows whose syncDueAt is at or before `now`, from every shard of the sparse index, oldest first per shard. */
  dueForSync(now: number, limit: number): Promise<readonly RegisteredSchedule[]>;
  /** The rows of one audit bucket of a job (the audit index), every page. */
  auditBucket(jobId: string, bucket: number): Promise<readonly RegisteredSchedule[]>;
}

/**
 * What the projection of a job's schedules is built from: the job's *template*, read from the job's own schedule in
 * the stack's schedule group (DISABLED, named by the job id, never firing), whose target and input each schedule of
 * the job copies, adding its key and input.
 */
export interface KeyedJobTemplate {
  readonly jobId: string;
  /** The schedule group of this job's run-time schedules (one per job that takes them; at most 500 per account). */
  readonly group: string;
  /** The template's schedule event fields (schedule-event.ts) but scheduleKey, input and the scheduled time. */
  readonly event: Readonly<Record<string, unknown>>;
  /** The Scheduler target to copy: the trigger's ARN, the role, the retry policy and the dead-letter queue. */
  readonly target: Readonly<Record<string, unknown>>;
  /** The template's flexible time window, copied to every schedule. */
  readonly flexibleTimeWindow: Readonly<Record<string, unknown>>;
  /** A hash of event, target and window: a schedule projected from another template is stale. */
  readonly templateHash: string;
}

/** One schedule as ListSchedules shows it. */
export interface ProjectedScheduleSummary {
  readonly name: string;
  readonly state: 'ENABLED' | 'DISABLED';
  /** ISO-8601: a change after the row's syncedAt was made by someone else. */
  readonly lastModifiedAt?: string;
}

/** EventBridge Scheduler, as the registry's projection. Every failure is a DependencyError. */
export interface ScheduleProjection {
  /** The template of a job that takes schedules at run time; undefined for an unknown job or one that does not. */
  template(jobId: string): Promise<KeyedJobTemplate | undefined>;
  /** Create or replace the schedule of `row` (idempotent: the same row twice leaves one schedule as it was). */
  put(row: RegisteredSchedule, template: KeyedJobTemplate): Promise<void>;
  /** Delete the schedule named `scheduleName`; one already gone counts as deleted. */
  remove(template: KeyedJobTemplate, scheduleName: string): Promise<void>;
  /** One page of the job's group's schedules whose names start with `namePrefix`. */
  listPage(
    template: KeyedJobTemplate,
    namePrefix: string,
    nextToken?: string,
  ): Promise<{ readonly schedules: readonly ProjectedScheduleSummary[]; readonly nextToken?: string }>;
}
