/**
 * The schedule registry's table and rows: its key and index names (shared by lib/, which creates the table, and by
 * the store, which reads it), the names and shards derived from a schedule key, the check of what a user asks for
 * (ScheduleSpec), and the rows each write puts. Pure: manage-schedule.ts writes them through the ports of
 * schedule-registry-ports.ts.
 *
 * - A key's Scheduler schedule is named by a hash of the key, not the key itself: Scheduler's names are at most 64
 *   characters of `[0-9A-Za-z_.-]`, a key may be 128 characters of a wider set. The name starts with the key's audit
 *   bucket, so the reconciler lists one bucket of a job's group with one NamePrefix.
 * - The sparse index `bySyncDue` holds the rows whose projection may lag, spread over SYNC_INDEX_SHARDS partitions;
 *   the index `byAuditBucket` holds every row by `${jobId}#${bucket}` and the schedule's name, so that the
 *   reconciler compares one bucket of a job's rows with one bucket of its schedules.
 */
import { createHash } from 'node:crypto';
import { ScheduledJobsError } from './errors';
import { type Checked, checkAll, id, isJsonObject } from './field-checks';
import { iso } from './occurrence';
import { quoteValue } from './quote-value';
import { scheduleExpressionProblem } from './schedule-expression';
import { type JsonValue, scheduleInput, scheduleKey } from './schedule-key';
import type { RegisteredSchedule, RegisteredScheduleState, ScheduleSpec } from './schedule-registry-ports';
import { instantOfWallTime } from './schedule-times';

/** How many partitions the sparse index `bySyncDue` spreads the rows awaiting their projection over. */
export const SYNC_INDEX_SHARDS = 16;
/** How many buckets a job's schedules are audited in: one bucket per (job, bucket) pair and reconciler step. */
export const AUDIT_BUCKETS = 256;
/**
 * How long after a write the reconciler leaves its projection to the writer: the writer projects right after the
 * row, so only a crash or a failed Scheduler call leaves a row due for longer.
 */
export const SYNC_GRACE_SECONDS = 60;
/** An `at()` schedule's row is kept this many days after its one time (DynamoDB TTL), then removed. */
export const AT_SCHEDULE_RETENTION_DAYS = 30;
/** Scheduler's own limit on a description; the registry keeps the user's description to the same. */
export const MAX_SCHEDULE_DESCRIPTION_LENGTH = 512;
/** The time zone a schedule is read in when its spec names none. */
export const DEFAULT_SCHEDULE_TIME_ZONE = 'Etc/UTC';

/** The registry table's keys, TTL attribute and two indexes (lib/ creates it from these, the store reads it). */
export const REGISTRY_TABLE = {
  partitionKey: 'jobId',
  sortKey: 'scheduleKey',
  ttlAttribute: 'ttl',
  /** Both keys and every index key are strings. */
  keyType: 'S',
  /** Sparse: only the rows whose projection may lag (syncDueAt set); the reconciler's sweep queries every shard. */
  syncIndex: { name: 'bySyncDue', partitionKey: 'syncShard', sortKey: 'syncDueAt', shards: SYNC_INDEX_SHARDS },
  /** Every row, by job and bucket, in the order of the schedules' names; the reconciler's rolling audit. */
  auditIndex: {
    name: 'byAuditBucket',
    partitionKey: 'auditBucket',
    sortKey: 'scheduleName',
    buckets: AUDIT_BUCKETS,
  },
} as const;

const HASH_HEX_CHARS = 16;
const KEY_CHARS_IN_NAME = 40;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The audit bucket of a key, 0 to AUDIT_BUCKETS - 1: the first byte of the key's SHA-256. */
export function auditBucketOf(key: string): number {
  return sha256(key)[0] % AUDIT_BUCKETS;
}

/** A bucket as the schedules' names start with it: two lowercase hex digits. */
export function bucketLabel(bucket: number): string {
  return bucket.toString(16).padStart(2, '0');
}

/** The audit index's partition key of one bucket of a job: `${jobId}#${bb}`. */
export function auditBucketKey(jobId: string, bucket: number): string {
  return `${jobId}#${bucketLabel(bucket)}`;
}

/**
 * The Scheduler schedule's name of a key in its job's group: `${bb}.${safe}.${h}`, where bb is the key's audit
 * bucket, safe the key's first 40 characters with every character Scheduler does not allow replaced by `_` (for
 * people reading the console), and h the first 16 hex digits of the key's SHA-256 (what makes it unique). At most
 * 60 characters of `[0-9A-Za-z_.-]`, and the same for the same key, always.
 */
export function scheduleNameOf(key: string): string {
  const safe = key.slice(0, KEY_CHARS_IN_NAME).replace(/[^A-Za-z0-9_.-]/g, '_');
  const hash = sha256(key).toString('hex').slice(0, HASH_HEX_CHARS);
  return `${bucketLabel(auditBucketOf(key))}.${safe}.${hash}`;
}

/** The sparse index's partition key of a row, `0` to `15`: a hash of job and key, so a job's rows spread. */
export function syncShardOf(jobId: string, key: string): string {
  return String(sha256(`${jobId}#${key}`).readUInt32BE(0) % SYNC_INDEX_SHARDS);
}

/** Every partition key of the sparse index, for the sweep that queries them all. */
export function syncShards(): string[] {
  return Array.from({ length: SYNC_INDEX_SHARDS }, (_, shard) => String(shard));
}

/** A spec that passed validateScheduleSpec: every default filled in, dates as ISO-8601 UTC with milliseconds. */
export interface CheckedScheduleSpec {
  readonly expression: string;
  readonly timeZone: string;
  readonly startDate?: string;
  readonly endDate?: string;
  readonly input?: JsonValue;
  readonly state: RegisteredScheduleState;
  readonly description?: string;
}

/**
 * A schedule (or a listing of schedules) a user asked for that cannot be: every field that is wrong, each named.
 * Nothing was written.
 */
export class InvalidScheduleError extends ScheduledJobsError {
  /** Always `'InvalidScheduleError'`. */
  override readonly name = 'InvalidScheduleError';

  constructor(
    /** The job the schedule was asked for. */
    readonly jobId: string,
    /** The schedule key asked for; undefined for a listing. */
    readonly scheduleKey: string | undefined,
    /** One line per wrong field, each starting with the field's name. */
    readonly problems: readonly string[],
  ) {
    super(
      `invalid ${scheduleKey === undefined ? `listing of the schedules of ${String(jobId)}` : `schedule ${String(jobId)}/${String(scheduleKey)}`}: ${problems.join('; ')}`,
    );
  }
}

/** The fields of a ScheduleSpec, in the order error messages name them: what a spec or a bulk item may carry. */
export const SCHEDULE_SPEC_FIELDS: readonly (keyof ScheduleSpec)[] = [
  'expression',
  'timeZone',
  'startDate',
  'endDate',
  'input',
  'enabled',
  'description',
];
const ISO_WITH_ZONE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const AT_TIME = /^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$/;

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const problem = (error: string): Checked<never> => ({ ok: false, error });

/**
 * The schedule `spec` of `key` in `jobId`, checked and with its defaults, or every problem with job, key and spec
 * at once (each starting with the field's name). `now` (epoch ms) is what an `at()` and an end date must be after.
 */
export function checkScheduleSpec(
  jobId: unknown,
  key: unknown,
  spec: unknown,
  now: number,
): { readonly ok: true; readonly value: CheckedScheduleSpec } | { readonly ok: false; readonly problems: string[] } {
  if (!isJsonObject(spec)) {
    const ids = checkAll({ jobId: id('jobId', jobId), scheduleKey: scheduleKey('scheduleKey', key) });
    return {
      ok: false,
      problems: [...(ids.ok ? [] : ids.problems), `spec must be an object, got ${quoteValue(spec)}`],
    };
  }
  const unknown = Object.keys(spec).filter((field) => !(SCHEDULE_SPEC_FIELDS as readonly string[]).includes(field));
  const timeZone = spec.timeZone === undefined ? ok(DEFAULT_SCHEDULE_TIME_ZONE) : timeZoneOf('timeZone', spec.timeZone);
  const startDate = optionalDate('startDate', spec.startDate);
  const endDate = optionalDate('endDate', spec.endDate);
  const checked = checkAll({
    jobId: id('jobId', jobId),
    scheduleKey: scheduleKey('scheduleKey', key),
    unknown: unknown.length === 0 ? ok(undefined) : problem(unknownFields(unknown)),
    expression: expressionOf(spec.expression, timeZone, now),
    timeZone,
    startDate,
    endDate: endAfter(endDate, startDate, now),
    input: spec.input === undefined ? ok(undefined) : scheduleInput('input', spec.input),
    enabled:
      spec.enabled === undefined || typeof spec.enabled === 'boolean'
        ? ok(spec.enabled !== false)
        : problem(`enabled must be true or false, got ${quoteValue(spec.enabled)}`),
    description: descriptionOf(spec.description),
  });
  if (!checked.ok) return checked;
  const v = checked.value;
  return {
    ok: true,
    value: withoutUndefined({
      expression: v.expression,
      timeZone: v.timeZone,
      startDate: v.startDate,
      endDate: v.endDate,
      input: v.input,
      state: v.enabled ? 'ENABLED' : 'PAUSED',
      description: v.description,
    }),
  };
}

/**
 * The schedule `spec` of `key` in `jobId`, checked and with its defaults.
 * @throws InvalidScheduleError naming every wrong field (job id and key included).
 */
export function validateScheduleSpec(jobId: string, key: string, spec: ScheduleSpec, now: number): CheckedScheduleSpec {
  const checked = checkScheduleSpec(jobId, key, spec, now);
  if (!checked.ok) throw new InvalidScheduleError(jobId, key, checked.problems);
  return checked.value;
}

function unknownFields(fields: readonly string[]): string {
  return `${fields.map((f) => `spec.${f}`).join(', ')} ${fields.length === 1 ? 'is not a field' : 'are not fields'} of a schedule (it has: ${SCHEDULE_SPEC_FIELDS.join(', ')})`;
}

function expressionOf(expression: unknown, timeZone: Checked<string>, now: number): Checked<string> {
  const wrong = scheduleExpressionProblem(expression);
  if (wrong !== undefined) return problem(`expression ${wrong}`);
  const text = expression as string;
  // An at() is read in the schedule's time zone; without a valid zone, its time cannot be placed (timeZone says why).
  if (!timeZone.ok) return ok(text);
  const at = atInstant(text, timeZone.value);
  if (at === null)
    return problem(`expression ${quoteValue(text)} names a time that does not exist in ${timeZone.value}`);
  if (at !== undefined && at <= now) {
    return problem(`expression ${quoteValue(text)} is in the past in ${timeZone.value} (it is ${iso(now)} now)`);
  }
  return ok(text);
}

/**
 * The instant of an `at()` expression in `timeZone`: undefined for cron and rate, null for a wall time the zone
 * skips (the hour lost when clocks go forward).
 */
export function atInstant(expression: string, timeZone: string): number | undefined | null {
  const match = AT_TIME.exec(expression);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number);
  return instantOfWallTime(Date.UTC(year, month - 1, day, hour, minute, second), timeZone) ?? null;
}

function timeZoneOf(field: string, value: unknown): Checked<string> {
  if (typeof value !== 'string' || value === '') {
    return problem(`${field} must be an IANA time zone name such as 'Europe/Berlin', got ${quoteValue(value)}`);
  }
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return problem(`${field} ${quoteValue(value)} is not an IANA time zone name (such as 'Europe/Berlin')`);
  }
  // Intl reads names in any case; Scheduler does not.
  if (resolved !== value && resolved.toLowerCase() === value.toLowerCase()) {
    return problem(`${field} ${quoteValue(value)} must be spelled ${quoteValue(resolved)}`);
  }
  return ok(value);
}

function optionalDate(field: string, value: unknown): Checked<string | undefined> {
  if (value === undefined) return ok(undefined);
  const match = typeof value === 'string' ? ISO_WITH_ZONE.exec(value) : null;
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (match === null || Number.isNaN(at)) {
    return problem(
      `${field} must be an ISO-8601 date and time with a zone, such as '2027-01-04T08:00:00Z' or ` +
        `'2027-01-04T09:00:00+01:00', got ${quoteValue(value)}`,
    );
  }
  // Date.parse rolls 2027-02-30 over to March: the fields must name a real date and time.
  const [year, month, day, hour, minute] = match.slice(1, 6).map(Number);
  const real = new Date(Date.UTC(year, month - 1, day));
  if (real.getUTCMonth() !== month - 1 || real.getUTCDate() !== day || hour > 23 || minute > 59) {
    return problem(`${field} names a date that does not exist: ${quoteValue(value)}`);
  }
  return ok(iso(at));
}

function endAfter(
  end: Checked<string | undefined>,
  start: Checked<string | undefined>,
  now: number,
): Checked<string | undefined> {
  if (!end.ok || end.value === undefined) return end;
  if (start.ok && start.value !== undefined && end.value <= start.value) {
    return problem(`endDate ${end.value} must be after startDate ${start.value}`);
  }
  if (Date.parse(end.value) <= now) return problem(`endDate ${end.value} is in the past (it is ${iso(now)} now)`);
  return end;
}

function descriptionOf(value: unknown): Checked<string | undefined> {
  if (value === undefined) return ok(undefined);
  if (typeof value !== 'string') return problem(`description must be a string, got ${quoteValue(value)}`);
  if (value.length > MAX_SCHEDULE_DESCRIPTION_LENGTH) {
    return problem(
      `description must be at most ${MAX_SCHEDULE_DESCRIPTION_LENGTH} characters, got ${value.length} characters`,
    );
  }
  return ok(value);
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The spec a row holds, as checkScheduleSpec gives it (for comparison with what a user asks for). */
export function specOf(row: RegisteredSchedule): CheckedScheduleSpec {
  return withoutUndefined({
    expression: row.expression,
    timeZone: row.timeZone,
    startDate: row.startDate,
    endDate: row.endDate,
    input: row.input,
    state: row.state,
    description: row.description,
  });
}

/** Whether a live row (not a tombstone) already holds exactly `spec`. */
export function specEquals(row: RegisteredSchedule, spec: CheckedScheduleSpec): boolean {
  const held = specOf(row);
  return (
    row.deletedAt === undefined &&
    held.expression === spec.expression &&
    held.timeZone === spec.timeZone &&
    held.startDate === spec.startDate &&
    held.endDate === spec.endDate &&
    held.state === spec.state &&
    held.description === spec.description &&
    sameJson(held.input, spec.input)
  );
}

/** JSON equality that ignores the order of an object's keys (DynamoDB does not keep it). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}

/** Whether the row's projection is confirmed: the version it holds is the one Scheduler has. */
export function isSynced(row: RegisteredSchedule): boolean {
  return row.syncDueAt === undefined && row.syncedVersion === row.version;
}

/**
 * Whether the row's schedule can fire no more: an `at()` whose time has passed, or an end date that has. Its
 * projection is no schedule (Scheduler deletes a completed `at()` itself), so neither the writer nor the
 * reconciler creates one for it.
 */
export function isFinished(row: RegisteredSchedule, now: number): boolean {
  const at = atInstant(row.expression, row.timeZone);
  if (at !== undefined && (at === null || at <= now)) return true;
  return row.endDate !== undefined && Date.parse(row.endDate) <= now;
}

/** Who wrote, for the row's updatedBy. */
export interface WriteOptions {
  /** An operator's name or the app's own label; absent: not recorded. */
  readonly by?: string;
}

/** The fields every write sets: the time, the writer, and the due time of the projection it asks for. */
function written(jobId: string, key: string, now: number, options: WriteOptions) {
  return {
    updatedAt: iso(now),
    updatedBy: options.by,
    syncDueAt: iso(now + SYNC_GRACE_SECONDS * 1000),
    syncShard: syncShardOf(jobId, key),
  };
}

function ttlOf(spec: CheckedScheduleSpec): number | undefined {
  const at = atInstant(spec.expression, spec.timeZone);
  if (at === undefined || at === null) return undefined;
  return Math.floor(at / 1000) + AT_SCHEDULE_RETENTION_DAYS * 24 * 3600;
}

/** The row of a schedule the registry does not have yet (or has only as a tombstone, `previous`): version 1 or on. */
export function newRow(
  jobId: string,
  key: string,
  spec: CheckedScheduleSpec,
  now: number,
  options: WriteOptions = {},
  previous?: RegisteredSchedule,
): RegisteredSchedule {
  return withoutUndefined({
    jobId,
    scheduleKey: key,
    ...spec,
    version: (previous?.version ?? 0) + 1,
    scheduleName: scheduleNameOf(key),
    auditBucket: auditBucketKey(jobId, auditBucketOf(key)),
    createdAt: iso(now),
    ...written(jobId, key, now, options),
    syncedVersion: previous?.syncedVersion,
    syncedAt: previous?.syncedAt,
    ttl: ttlOf(spec),
  });
}

/** `current` (a live row) changed to `spec`: the next version, due for its projection. */
export function changedRow(
  current: RegisteredSchedule,
  spec: CheckedScheduleSpec,
  now: number,
  options: WriteOptions = {},
): RegisteredSchedule {
  if (current.deletedAt !== undefined) {
    return newRow(current.jobId, current.scheduleKey, spec, now, options, current);
  }
  return withoutUndefined({
    jobId: current.jobId,
    scheduleKey: current.scheduleKey,
    ...spec,
    version: current.version + 1,
    scheduleName: current.scheduleName,
    auditBucket: current.auditBucket,
    createdAt: current.createdAt,
    ...written(current.jobId, current.scheduleKey, now, options),
    syncedVersion: current.syncedVersion,
    syncedAt: current.syncedAt,
    ttl: ttlOf(spec),
  });
}

/** `current` paused or resumed. */
export function stateChangedRow(
  current: RegisteredSchedule,
  state: RegisteredScheduleState,
  now: number,
  options: WriteOptions = {},
): RegisteredSchedule {
  return changedRow(current, { ...specOf(current), state }, now, options);
}

/**
 * `current` deleted: the row stays as a tombstone, due for its projection (the schedule's removal), until that is
 * confirmed and the row removed. Kept at most AT_SCHEDULE_RETENTION_DAYS by TTL should the removal never come.
 */
export function tombstoneOf(current: RegisteredSchedule, now: number, options: WriteOptions = {}): RegisteredSchedule {
  const { updatedBy: _previousWriter, ...kept } = current;
  return withoutUndefined({
    ...kept,
    ...written(current.jobId, current.scheduleKey, now, options),
    version: current.version + 1,
    deletedAt: iso(now),
    ttl: Math.floor(now / 1000) + AT_SCHEDULE_RETENTION_DAYS * 24 * 3600,
  });
}
