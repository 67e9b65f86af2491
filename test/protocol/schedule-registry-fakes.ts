/**
 * In-memory ScheduleRegistry and ScheduleProjection for the tests of manage-schedule.ts (and of anything else that
 * runs on the two ports): the registry keeps the conditional semantics of the DynamoDB store, the projection
 * counts its calls and can be told to fail the next one.
 */
import type { Clock } from '../../functions/protocol/ports';
import { auditBucketKey, isFinished } from '../../functions/protocol/schedule-registry';
import type {
  KeyedJobTemplate,
  ProjectedScheduleSummary,
  RegisteredSchedule,
  RegistryPage,
  RegistryWriteResult,
  RowVersion,
  ScheduleProjection,
  ScheduleRegistry,
} from '../../functions/protocol/schedule-registry-ports';

export const JOB = 'weekly-report';
export const NOW = Date.parse('2026-12-01T09:00:00.000Z');

export function fakeClock(start = NOW): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

/**
 * The event in a job's template schedule as lib/ deploys it (without the keyed group): shared by the projection's
 * unit test and the moto tests so that the template they read and the keyed schedules they check agree.
 */
export function templateEvent(jobId = JOB) {
  return {
    jobId,
    scheduledTime: '<aws.scheduler.scheduled-time>',
    worker: 'reports',
    deadlineSeconds: 3600,
    retentionDays: 30,
    catchupWindowSeconds: 600,
  };
}

export function template(jobId = JOB): KeyedJobTemplate {
  return {
    jobId,
    group: `${jobId}-keyed`,
    event: { jobId, worker: 'reports', deadlineSeconds: 3600, retentionDays: 30, catchupWindowSeconds: 600 },
    target: { Arn: 'arn:aws:lambda:eu-central-1:123456789012:function:trigger', RoleArn: 'arn:role' },
    flexibleTimeWindow: { Mode: 'OFF' },
    templateHash: 'abc',
  };
}

const keyOf = (jobId: string, key: string): string => `${jobId}\u0000${key}`;

/** Whether `row` is at `expected`: the same version of the same life (createdAt) of the row. */
const isAt = (row: RegisteredSchedule | undefined, expected: RowVersion | undefined): boolean =>
  expected === undefined
    ? row === undefined
    : row?.version === expected.version && row.createdAt === expected.createdAt;

export class FakeRegistry implements ScheduleRegistry {
  readonly rows = new Map<string, RegisteredSchedule>();
  puts = 0;
  /** Called before each put is decided: a test's chance to write the row under the writer. */
  beforePut?: (row: RegisteredSchedule) => void;

  row(jobId: string, key: string): RegisteredSchedule | undefined {
    return this.rows.get(keyOf(jobId, key));
  }

  async get(jobId: string, key: string, _consistent = true): Promise<RegisteredSchedule | undefined> {
    return this.row(jobId, key);
  }

  async put(row: RegisteredSchedule, expected: RowVersion | undefined): Promise<RegistryWriteResult> {
    this.beforePut?.(row);
    const current = this.row(row.jobId, row.scheduleKey);
    if (!isAt(current, expected)) return { written: false, current };
    this.puts++;
    this.rows.set(keyOf(row.jobId, row.scheduleKey), row);
    return { written: true, current: row };
  }

  async markSynced(
    jobId: string,
    key: string,
    expected: RowVersion,
    now: number,
    templateHash: string,
  ): Promise<RegistryWriteResult> {
    const current = this.row(jobId, key);
    if (current === undefined || !isAt(current, expected)) return { written: false, current };
    const { syncDueAt: _due, syncShard: _shard, ...rest } = current;
    const synced = {
      ...rest,
      syncedVersion: expected.version,
      syncedAt: new Date(now).toISOString(),
      syncedTemplateHash: templateHash,
    };
    this.rows.set(keyOf(jobId, key), synced);
    return { written: true, current: synced };
  }

  async remove(jobId: string, key: string, expected: RowVersion): Promise<{ readonly removed: boolean }> {
    const current = this.row(jobId, key);
    if (!isAt(current, expected) || current?.deletedAt === undefined) return { removed: false };
    this.rows.delete(keyOf(jobId, key));
    return { removed: true };
  }

  async list(
    jobId: string,
    options: { readonly prefix?: string; readonly limit?: number; readonly cursor?: string },
  ): Promise<RegistryPage<RegisteredSchedule>> {
    const all = [...this.rows.values()]
      .filter((r) => r.jobId === jobId && r.scheduleKey.startsWith(options.prefix ?? ''))
      .filter((r) => options.cursor === undefined || r.scheduleKey > options.cursor)
      .sort((a, b) => (a.scheduleKey < b.scheduleKey ? -1 : 1));
    const items = all.slice(0, options.limit ?? 100);
    return items.length < all.length ? { items, cursor: items[items.length - 1].scheduleKey } : { items };
  }

  async dueForSync(now: number, limit: number): Promise<readonly RegisteredSchedule[]> {
    return [...this.rows.values()]
      .filter((r) => r.syncDueAt !== undefined && Date.parse(r.syncDueAt) <= now)
      .slice(0, limit);
  }

  async auditBucket(jobId: string, bucket: number): Promise<readonly RegisteredSchedule[]> {
    return [...this.rows.values()].filter((r) => r.auditBucket === auditBucketKey(jobId, bucket));
  }
}

type Call = 'template' | 'put' | 'remove' | 'listPage';

export class FakeProjection implements ScheduleProjection {
  /** The schedules, by group and name: the row each was last put from. */
  readonly schedules = new Map<string, RegisteredSchedule>();
  readonly templates = new Map<string, KeyedJobTemplate>([[JOB, template()]]);
  readonly calls: Call[] = [];
  /** The next call of this kind fails with this error (once). */
  failNext?: { readonly call: Call; readonly error: Error };
  /** Runs after a put, before it returns: a test's chance to change the registry meanwhile. */
  afterPut?: (row: RegisteredSchedule) => void;

  constructor(private readonly clock: Clock = fakeClock()) {}

  schedule(name: string, jobId = JOB): RegisteredSchedule | undefined {
    return this.schedules.get(`${jobId}-keyed/${name}`);
  }

  private call(call: Call): void {
    this.calls.push(call);
    if (this.failNext?.call === call) {
      const { error } = this.failNext;
      this.failNext = undefined;
      throw error;
    }
  }

  async template(jobId: string): Promise<KeyedJobTemplate | undefined> {
    this.call('template');
    return this.templates.get(jobId);
  }

  async put(row: RegisteredSchedule, t: KeyedJobTemplate): Promise<void> {
    this.call('put');
    if (isFinished(row, this.clock.now())) throw new Error('a finished schedule is never put');
    this.schedules.set(`${t.group}/${row.scheduleName}`, row);
    this.afterPut?.(row);
  }

  async remove(t: KeyedJobTemplate, name: string): Promise<void> {
    this.call('remove');
    this.schedules.delete(`${t.group}/${name}`);
  }

  async listPage(
    t: KeyedJobTemplate,
    prefix: string,
  ): Promise<{ readonly schedules: readonly ProjectedScheduleSummary[]; readonly nextToken?: string }> {
    this.call('listPage');
    const schedules = [...this.schedules.entries()]
      .filter(([k]) => k.startsWith(`${t.group}/${prefix}`))
      .map(([k, row]) => ({
        name: k.slice(t.group.length + 1),
        state: row.state === 'PAUSED' ? ('DISABLED' as const) : ('ENABLED' as const),
      }));
    return { schedules };
  }

  /** The Scheduler calls other than reading templates. */
  writes(): Call[] {
    return this.calls.filter((c) => c !== 'template');
  }
}
