/**
 * In-memory fakes of the registry's ports (schedule-registry-ports.ts) and of the audit cursor, for the reconciler's
 * and the bulk upsert's unit tests: the registry keeps rows with the same compare-and-swap rules as the DynamoDB store
 * (put on version, markSynced and remove on version), and the projection keeps one schedule per name with its state,
 * the version it was projected from and when it changed, like a job's schedule group.
 */

import type { AuditCursorStore, AuditPosition, StoredAuditCursor } from '../../functions/protocol/reconcile-schedules';
import { auditBucketKey, bucketLabel } from '../../functions/protocol/schedule-registry';
import type {
  KeyedJobTemplate,
  ProjectedScheduleSummary,
  RegisteredSchedule,
  RegistryWriteResult,
  RowVersion,
  ScheduleProjection,
  ScheduleRegistry,
} from '../../functions/protocol/schedule-registry-ports';

export const iso = (ms: number): string => new Date(ms).toISOString();

export function template(jobId: string, hash = 'h1'): KeyedJobTemplate {
  return {
    jobId,
    group: `${jobId}-schedules`,
    event: { jobId, worker: 'w' },
    target: { Arn: 'arn:trigger', RoleArn: 'arn:role' },
    flexibleTimeWindow: { Mode: 'OFF' },
    templateHash: hash,
  };
}

/** A synced live row of `key` in `bucket`, its schedule named as scheduleNameOf would (`bb.key.hash`). */
export function row(
  jobId: string,
  scheduleKey: string,
  bucket: number,
  at: number,
  fields: Partial<RegisteredSchedule> = {},
): RegisteredSchedule {
  return {
    jobId,
    scheduleKey,
    expression: 'cron(0 8 ? * MON *)',
    timeZone: 'Europe/Paris',
    state: 'ENABLED',
    version: 1,
    scheduleName: `${bucketLabel(bucket)}.${scheduleKey}.0123456789abcdef`,
    createdAt: iso(at),
    updatedAt: iso(at),
    syncedVersion: 1,
    syncedAt: iso(at),
    auditBucket: auditBucketKey(jobId, bucket),
    ...fields,
  };
}

export interface Calls {
  [operation: string]: number;
}

function count(calls: Calls, op: string): void {
  calls[op] = (calls[op] ?? 0) + 1;
}

/** Whether `row` is at `expected`: the same version of the same life (createdAt) of the row. */
const isAt = (row: RegisteredSchedule | undefined, expected: RowVersion | undefined): boolean =>
  expected === undefined
    ? row === undefined
    : row?.version === expected.version && row.createdAt === expected.createdAt;

export class FakeRegistry implements ScheduleRegistry {
  readonly rows = new Map<string, RegisteredSchedule>();
  readonly calls: Calls = {};
  /** Called before each operation; may throw (a fault) or change rows (a racing writer). */
  before: (op: string, args: unknown[]) => void = () => {};

  private static id(jobId: string, key: string): string {
    return `${jobId}|${key}`;
  }

  add(...rows: RegisteredSchedule[]): void {
    for (const r of rows) this.rows.set(FakeRegistry.id(r.jobId, r.scheduleKey), r);
  }

  row(jobId: string, key: string): RegisteredSchedule | undefined {
    return this.rows.get(FakeRegistry.id(jobId, key));
  }

  async get(jobId: string, scheduleKey: string): Promise<RegisteredSchedule | undefined> {
    count(this.calls, 'get');
    this.before('get', [jobId, scheduleKey]);
    return this.row(jobId, scheduleKey);
  }

  async put(next: RegisteredSchedule, expected: RowVersion | undefined): Promise<RegistryWriteResult> {
    count(this.calls, 'put');
    this.before('put', [next, expected?.version]);
    const current = this.row(next.jobId, next.scheduleKey);
    if (!isAt(current, expected)) return { written: false, current };
    this.add(next);
    return { written: true, current: next };
  }

  async markSynced(
    jobId: string,
    scheduleKey: string,
    expected: RowVersion,
    now: number,
    templateHash: string,
  ): Promise<RegistryWriteResult> {
    count(this.calls, 'markSynced');
    this.before('markSynced', [jobId, scheduleKey, expected.version]);
    const current = this.row(jobId, scheduleKey);
    if (current === undefined || !isAt(current, expected)) return { written: false, current };
    const { syncDueAt: _d, syncShard: _s, ...rest } = current;
    const synced = { ...rest, syncedVersion: expected.version, syncedAt: iso(now), syncedTemplateHash: templateHash };
    this.add(synced);
    return { written: true, current: synced };
  }

  async remove(jobId: string, scheduleKey: string, expected: RowVersion): Promise<{ removed: boolean }> {
    count(this.calls, 'remove');
    this.before('remove', [jobId, scheduleKey, expected.version]);
    const current = this.row(jobId, scheduleKey);
    if (!isAt(current, expected) || current?.deletedAt === undefined) return { removed: false };
    this.rows.delete(FakeRegistry.id(jobId, scheduleKey));
    return { removed: true };
  }

  async list(
    jobId: string,
    options: { prefix?: string; limit?: number; cursor?: string },
  ): Promise<{ items: RegisteredSchedule[]; cursor?: string }> {
    count(this.calls, 'list');
    const all = [...this.rows.values()]
      .filter((r) => r.jobId === jobId && r.scheduleKey.startsWith(options.prefix ?? ''))
      .filter((r) => options.cursor === undefined || r.scheduleKey > options.cursor)
      .sort((a, b) => (a.scheduleKey < b.scheduleKey ? -1 : 1));
    const items = all.slice(0, options.limit ?? 100);
    return { items, cursor: all.length > items.length ? items.at(-1)?.scheduleKey : undefined };
  }

  async dueForSync(now: number, limit: number): Promise<RegisteredSchedule[]> {
    count(this.calls, 'dueForSync');
    this.before('dueForSync', [now, limit]);
    return [...this.rows.values()]
      .filter((r) => r.syncDueAt !== undefined && Date.parse(r.syncDueAt) <= now)
      .sort((a, b) => ((a.syncDueAt ?? '') < (b.syncDueAt ?? '') ? -1 : 1))
      .slice(0, limit);
  }

  async auditBucket(jobId: string, bucket: number): Promise<RegisteredSchedule[]> {
    count(this.calls, 'auditBucket');
    this.before('auditBucket', [jobId, bucket]);
    return [...this.rows.values()].filter((r) => r.auditBucket === auditBucketKey(jobId, bucket));
  }
}

export interface FakeSchedule {
  readonly name: string;
  readonly group: string;
  readonly state: 'ENABLED' | 'DISABLED';
  readonly lastModifiedAt: string;
  /** The row version and template hash it was projected from; undefined for one made by hand. */
  readonly version?: number;
  readonly templateHash?: string;
}

export class FakeProjection implements ScheduleProjection {
  readonly schedules = new Map<string, FakeSchedule>();
  readonly templates = new Map<string, KeyedJobTemplate>();
  readonly calls: Calls = {};
  /** Schedules per ListSchedules page (Scheduler's own maximum is 100). */
  pageSize = 100;
  before: (op: string, args: unknown[]) => void = () => {};

  constructor(private readonly now: () => number) {}

  private static id(group: string, name: string): string {
    return `${group}/${name}`;
  }

  schedule(group: string, name: string): FakeSchedule | undefined {
    return this.schedules.get(FakeProjection.id(group, name));
  }

  /** A schedule as it would be after a put of `r` with `t`, written now (or at `at`). */
  project(r: RegisteredSchedule, t: KeyedJobTemplate, at = this.now()): void {
    this.schedules.set(FakeProjection.id(t.group, r.scheduleName), {
      name: r.scheduleName,
      group: t.group,
      state: r.state === 'PAUSED' ? 'DISABLED' : 'ENABLED',
      lastModifiedAt: iso(at),
      version: r.version,
      templateHash: t.templateHash,
    });
  }

  /** A schedule made or changed by hand, in the console. */
  byHand(group: string, name: string, state: 'ENABLED' | 'DISABLED', at = this.now()): void {
    const before = this.schedule(group, name);
    this.schedules.set(FakeProjection.id(group, name), { ...before, name, group, state, lastModifiedAt: iso(at) });
  }

  delete(group: string, name: string): void {
    this.schedules.delete(FakeProjection.id(group, name));
  }

  async template(jobId: string): Promise<KeyedJobTemplate | undefined> {
    count(this.calls, 'template');
    this.before('template', [jobId]);
    return this.templates.get(jobId);
  }

  async put(r: RegisteredSchedule, t: KeyedJobTemplate): Promise<void> {
    count(this.calls, 'put');
    this.before('put', [r, t]);
    this.project(r, t);
  }

  async remove(t: KeyedJobTemplate, scheduleName: string): Promise<void> {
    count(this.calls, 'remove');
    this.before('remove', [t, scheduleName]);
    this.delete(t.group, scheduleName);
  }

  async listPage(
    t: KeyedJobTemplate,
    namePrefix: string,
    nextToken?: string,
  ): Promise<{ schedules: ProjectedScheduleSummary[]; nextToken?: string }> {
    count(this.calls, 'listPage');
    this.before('listPage', [t, namePrefix, nextToken]);
    const all = [...this.schedules.values()]
      .filter((s) => s.group === t.group && s.name.startsWith(namePrefix))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    const start = nextToken === undefined ? 0 : Number(nextToken);
    const page = all.slice(start, start + this.pageSize);
    const more = start + this.pageSize < all.length;
    return {
      schedules: page.map((s) => ({ name: s.name, state: s.state, lastModifiedAt: s.lastModifiedAt })),
      nextToken: more ? String(start + this.pageSize) : undefined,
    };
  }
}

export class FakeCursorStore implements AuditCursorStore {
  stored: StoredAuditCursor | undefined;
  writes = 0;
  /** Refuse the next write, as a concurrent run's claim would. */
  refuseNext = false;

  async read(): Promise<StoredAuditCursor | undefined> {
    return this.stored;
  }

  async write(next: AuditPosition, expectedVersion: number | undefined): Promise<boolean> {
    this.writes++;
    if (this.refuseNext || this.stored?.version !== expectedVersion) {
      this.refuseNext = false;
      return false;
    }
    this.stored = { ...next, version: (expectedVersion ?? 0) + 1 };
    return true;
  }
}
