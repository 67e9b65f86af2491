/**
 * The reconciler's half for schedules created at run time: it keeps every job's Scheduler schedules the projection
 * of the registry's rows (schedule-registry-ports.ts), in two passes per run.
 *
 * 1. **The sweep** repairs a crash between a writer's two writes. Every write of a row sets `syncDueAt` (the write's
 *    time plus SYNC_GRACE_MS, the writer's own time to project) and puts the row in the sparse index `bySyncDue`;
 *    the writer's markSynced takes it out. A row still in the index after its `syncDueAt` is re-projected here (a
 *    put, or for a tombstone a remove and the row's removal). So a crash anywhere in a write is repaired within
 *    SYNC_GRACE_MS plus one reconciler period (60 s + 5 min). Cost: the index's SYNC_INDEX_SHARDS queries, and at most
 *    `sweepLimit` rows (default 200) re-projected, each at most MAX_WRITE_ATTEMPTS (5) Scheduler writes and registry writes.
 *
 * 2. **The rolling audit** finds what no write of ours left behind: a schedule deleted, disabled or edited by hand,
 *    a schedule the registry does not hold, whatever its name (an orphan), a schedule projected from an older
 *    template. It walks the slices of every job's group (audit-slices.ts: one per first character of a name, 65),
 *    `slicesPerRun` (K, default 4) of every job per run, from one cursor kept in the registry table
 *    (AuditCursorStore), comparing each slice's schedules (ListSchedules by the one-character name prefix) with the
 *    registry's rows of the buckets whose names start with it (the index `byAuditBucket`: 16 buckets for a hex digit,
 *    none for any other character, where every schedule listed is an orphan). A full cycle is ceil(65 / K) runs for
 *    any number of jobs: 17 runs, 85 minutes at K = 4 and a 5-minute period, and a drift is repaired by the 18th run
 *    after it (audit-slices.ts repairBoundRuns). A run's cost grows with the jobs instead: per job, K ListSchedules
 *    calls (one per slice, 100 schedules a page, so one more per 100 schedules of the slice that holds them: about
 *    N/1600 for the run's hex-digit slice, which the walk makes at most one of 4), and 16 Queries when a hex digit
 *    is among them; plus the repairs, at most `maxRepairsPerRun` (default 500). Jobs are audited
 *    AUDIT_JOB_CONCURRENCY at a time, so a run's time grows with a wave of 8 jobs, not with every job.
 *
 * Every repair is counted by kind (a metric and a log line): the sweep's `SchedulesSyncRepaired`; the audit's
 * `SchedulesRecreated` (missing), `SchedulesDriftCorrected` (state, edited by hand, stale template) and
 * `OrphanSchedulesRemoved`. A failed read or write is counted in the report's `errors`, logged, and the run goes on.
 *
 * Racing a writer is safe: the audit leaves a row with `syncDueAt` to its writer and the sweep, and every re-projection
 * ends with the conditional markSynced (or remove) of the version it projected; when that is refused, the row moved on
 * meanwhile, and the newer row is read and projected again, so the last projection written is of the last version
 * (a writer whose row write comes after our markSynced projects after our put).
 */

import { type AuditPosition, auditWindow, bucketsOfSlice, DEFAULT_AUDIT_SLICES_PER_RUN } from './audit-slices';
import { messageOf } from './errors';
import { repairSchedule } from './manage-schedule';
import { MetricName } from './metric-names';
import type { Clock, Logger, Metrics } from './ports';
import { isFinished } from './schedule-registry';
import type {
  KeyedJobTemplate,
  ProjectedScheduleSummary,
  RegisteredSchedule,
  ScheduleProjection,
  ScheduleRegistry,
} from './schedule-registry-ports';
import { JOB_ID_PATTERN, JobSettingsError, parseJsonVariable } from './setting-basics';

/**
 * Jobs whose slices one run audits at the same time. Each job's audit is a chain of ListSchedules pages and Queries
 * (one round trip after another); 8 chains keep a run of 50 jobs within the timeout while asking Scheduler for at most
 * 8 pages at once (about 80 ListSchedules a second at 100 ms a page).
 */
export const AUDIT_JOB_CONCURRENCY = 8;
/** Rows the sweep re-projects per run at most; the rest wait for the next run (they stay in the index). */
export const DEFAULT_SWEEP_LIMIT = 200;
/** Repairs (Scheduler writes) of the audit per run at most; the rest are found again in the bucket's next audit. */
export const DEFAULT_MAX_REPAIRS_PER_RUN = 500;
/**
 * A schedule whose LastModificationDate is later than the row's syncedAt by more than this was changed by someone
 * else. The margin absorbs the difference between Scheduler's clock and ours: without it, a clock a little ahead
 * would make every schedule look edited, and be put again on every audit.
 */
export const EDITED_BY_HAND_MARGIN_MS = 5_000;
/** A schedule without a row is an orphan only when it was last changed at least this long ago (isYoung). */
export const ORPHAN_MIN_AGE_MS = 60_000;

export type { AuditPosition } from './audit-slices';

/** The stored cursor: the position and its version (the compare-and-swap token). */
export interface StoredAuditCursor extends AuditPosition {
  readonly version: number;
}

/**
 * The audit's cursor, kept as one row of the registry table (functions/aws/audit-cursor-store.ts: jobId '#audit',
 * scheduleKey '#cursor', which no job id or key can be, outside both indexes). Kept in the table, not in the rule's
 * input, so that it survives between runs with no other state; written conditionally, so that two overlapping runs
 * never claim the same buckets.
 */
export interface AuditCursorStore {
  read(): Promise<StoredAuditCursor | undefined>;
  /** Write `next` if the stored version is `expectedVersion` (undefined: only if there is none); false if refused. */
  write(next: AuditPosition, expectedVersion: number | undefined): Promise<boolean>;
}

export interface ScheduleReconcileLimits {
  /** K: the slices of every job's group audited per run (audit-slices.ts). */
  readonly auditSlicesPerRun: number;
  readonly sweepLimit: number;
  readonly maxRepairsPerRun: number;
}

export const DEFAULT_SCHEDULE_RECONCILE_LIMITS: ScheduleReconcileLimits = {
  auditSlicesPerRun: DEFAULT_AUDIT_SLICES_PER_RUN,
  sweepLimit: DEFAULT_SWEEP_LIMIT,
  maxRepairsPerRun: DEFAULT_MAX_REPAIRS_PER_RUN,
};

export interface ScheduleReconcileDeps {
  readonly registry: ScheduleRegistry;
  readonly projection: ScheduleProjection;
  readonly cursor: AuditCursorStore;
  /** The jobs that take schedules at run time (the stack's REGISTRY_JOBS). */
  readonly jobs: readonly string[];
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly limits?: Partial<ScheduleReconcileLimits>;
}

/**
 * What a repair was for. The sweep's: `sync` (a row whose projection lagged past its grace). The audit's: `missing`
 * (no schedule for a live row), `orphan` (a schedule without a row), `state` (ENABLED/DISABLED differs from the
 * row), `edited` (changed after the row's sync, by someone else), `stale-template` (projected from an older
 * template), `tombstone` (a deleted row whose removal was not finished).
 */
export type ScheduleRepairKind = 'sync' | 'missing' | 'orphan' | 'state' | 'edited' | 'stale-template' | 'tombstone';

export interface ScheduleRepair {
  readonly jobId: string;
  /** The schedule's name in the job's group; the key, when there is a row. */
  readonly scheduleName: string;
  readonly scheduleKey?: string;
  readonly kind: ScheduleRepairKind;
  readonly action: 'put' | 'removed';
}

export interface ScheduleReconcileReport {
  /** Rows the sweep found due. */
  readonly swept: number;
  /** The (job, slice) pairs audited, `jobId#c` (c the first character of the slice's names). */
  readonly audited: readonly string[];
  readonly repairs: readonly ScheduleRepair[];
  /** Rows that changed between our read and our write more often than MAX_WRITE_ATTEMPTS: the next run goes on. */
  readonly changedMeanwhile: number;
  /** Rows of a job without a template (not deployed as taking run-time schedules); left alone and logged. */
  readonly skipped: number;
  readonly errors: number;
  /** True when a limit stopped the run; the next run continues. */
  readonly truncated: boolean;
  /** The cursor after this run, or undefined when no audit ran (no job, or another run claimed the buckets). */
  readonly cursor?: AuditPosition;
}

const METRIC_OF: Readonly<Record<ScheduleRepairKind, MetricName>> = {
  sync: MetricName.SchedulesSyncRepaired,
  missing: MetricName.SchedulesRecreated,
  orphan: MetricName.OrphanSchedulesRemoved,
  state: MetricName.SchedulesDriftCorrected,
  edited: MetricName.SchedulesDriftCorrected,
  'stale-template': MetricName.SchedulesDriftCorrected,
  tombstone: MetricName.SchedulesDriftCorrected,
};

/**
 * The template's own last change, if the projection reads it (`lastModifiedAt`): with the hash a row records when it
 * is synced (`syncedTemplateHash`), either says a row's schedule was projected from an older template.
 */
interface TemplateChange {
  readonly lastModifiedAt?: string;
}

/** Why a live row's existing schedule must be put again, or undefined when it matches. */
export function driftOf(
  row: RegisteredSchedule,
  schedule: ProjectedScheduleSummary,
  template: KeyedJobTemplate,
): 'state' | 'edited' | 'stale-template' | undefined {
  const wanted = row.state === 'PAUSED' ? 'DISABLED' : 'ENABLED';
  if (schedule.state !== wanted) return 'state';
  const syncedAt = row.syncedAt === undefined ? Number.NaN : Date.parse(row.syncedAt);
  const modifiedAt = schedule.lastModifiedAt === undefined ? Number.NaN : Date.parse(schedule.lastModifiedAt);
  if (!Number.isNaN(syncedAt) && !Number.isNaN(modifiedAt) && modifiedAt > syncedAt + EDITED_BY_HAND_MARGIN_MS)
    return 'edited';
  const traced = row.syncedTemplateHash;
  if (traced !== undefined && traced !== template.templateHash) return 'stale-template';
  const templateChanged = (template as KeyedJobTemplate & TemplateChange).lastModifiedAt;
  const changedAt = templateChanged === undefined ? Number.NaN : Date.parse(templateChanged);
  if (!Number.isNaN(syncedAt) && !Number.isNaN(changedAt) && changedAt > syncedAt) return 'stale-template';
  return undefined;
}

/** One run: the sweep, then the audit of the next K (job, bucket) pairs. Never throws; failures are in `errors`. */
export async function reconcileSchedules(deps: ScheduleReconcileDeps): Promise<ScheduleReconcileReport> {
  const run = new ScheduleReconcileRun(deps);
  await sweep(run);
  const cursor = await audit(run);
  const report = run.report(cursor);
  const count = (kind: ScheduleRepairKind) => report.repairs.filter((r) => r.kind === kind).length;
  deps.logger.info('schedule reconcile done', {
    swept: report.swept,
    audited: report.audited.length,
    repaired: report.repairs.length,
    sync: count('sync'),
    missing: count('missing'),
    orphan: count('orphan'),
    state: count('state'),
    edited: count('edited'),
    staleTemplate: count('stale-template'),
    tombstone: count('tombstone'),
    changedMeanwhile: report.changedMeanwhile,
    skipped: report.skipped,
    errors: report.errors,
    truncated: report.truncated,
    cursor: report.cursor,
  });
  return report;
}

class ScheduleReconcileRun {
  readonly now: number;
  readonly limits: ScheduleReconcileLimits;
  readonly repairs: ScheduleRepair[] = [];
  readonly audited: string[] = [];
  private readonly templates = new Map<string, Promise<KeyedJobTemplate | undefined>>();
  swept = 0;
  auditRepairs = 0;
  changedMeanwhile = 0;
  skipped = 0;
  errors = 0;
  truncated = false;

  constructor(readonly deps: ScheduleReconcileDeps) {
    this.now = deps.clock.now();
    this.limits = { ...DEFAULT_SCHEDULE_RECONCILE_LIMITS, ...deps.limits };
  }

  /** The job's template, read once per run; undefined (logged, counted) for a job that has none. */
  async template(jobId: string): Promise<KeyedJobTemplate | undefined> {
    let pending = this.templates.get(jobId);
    if (pending === undefined) {
      pending = this.deps.projection.template(jobId);
      this.templates.set(jobId, pending);
    }
    try {
      const template = await pending;
      if (template === undefined) {
        this.skipped++;
        this.deps.logger.warn('schedule reconcile found no template for a job with run-time schedules', { jobId });
      }
      return template;
    } catch (error) {
      this.templates.delete(jobId);
      this.failed('read the template of a job', { jobId }, error);
      return undefined;
    }
  }

  repaired(repair: ScheduleRepair): void {
    this.repairs.push(repair);
    this.deps.metrics.add(METRIC_OF[repair.kind], 1, repair.jobId);
    this.deps.logger.info('schedule repaired', { ...repair });
  }

  failed(what: string, fields: Record<string, unknown>, error: unknown): void {
    this.errors++;
    this.deps.logger.error(`schedule reconcile could not ${what}`, { ...fields, error: messageOf(error) });
  }

  report(cursor: AuditPosition | undefined): ScheduleReconcileReport {
    return {
      swept: this.swept,
      audited: this.audited,
      repairs: this.repairs,
      changedMeanwhile: this.changedMeanwhile,
      skipped: this.skipped,
      errors: this.errors,
      truncated: this.truncated,
      cursor,
    };
  }
}

async function sweep(run: ScheduleReconcileRun): Promise<void> {
  const { registry } = run.deps;
  let due: readonly RegisteredSchedule[];
  try {
    due = await registry.dueForSync(run.now, run.limits.sweepLimit + 1);
  } catch (error) {
    run.failed('read the rows due for sync', {}, error);
    return;
  }
  if (due.length > run.limits.sweepLimit) run.truncated = true;
  const jobs = new Set(run.deps.jobs);
  for (const row of due.slice(0, run.limits.sweepLimit)) {
    run.swept++;
    if (!jobs.has(row.jobId)) {
      // A job removed from the stack, or a stack without the job in REGISTRY_JOBS: its rows are not ours to project.
      run.skipped++;
      run.deps.logger.warn('schedule reconcile found a row of a job it does not know', {
        jobId: row.jobId,
        scheduleKey: row.scheduleKey,
      });
      continue;
    }
    const template = await run.template(row.jobId);
    if (template === undefined) continue;
    await reproject(run, row, template, 'sync');
  }
}

/**
 * Make Scheduler hold the projection of `row`, or of the row it has become meanwhile, and record it
 * (manage-schedule.ts's repairSchedule, the writers' own: put and markSynced a live row; remove the schedule of a
 * finished one, and the schedule and the row of a tombstone). Returns whether the row is settled.
 */
async function reproject(
  run: ScheduleReconcileRun,
  row: RegisteredSchedule,
  template: KeyedJobTemplate,
  kind: ScheduleRepairKind,
): Promise<boolean> {
  const ids = { jobId: row.jobId, scheduleKey: row.scheduleKey, scheduleName: row.scheduleName };
  try {
    const after = await repairSchedule(run.deps, row, template);
    if (after !== undefined && after.syncDueAt !== undefined) {
      // Still due after the writers' number of attempts: the row keeps changing; the next run goes on.
      run.changedMeanwhile++;
      run.deps.logger.warn('schedule reconcile found the row changing under it; the next run goes on', ids);
      return false;
    }
    const action = after === undefined || isFinished(after, run.deps.clock.now()) ? 'removed' : 'put';
    run.repaired({ ...ids, kind, action });
    return true;
  } catch (error) {
    run.failed('re-project a schedule', { ...ids, kind }, error);
    return false;
  }
}

/** Claims the next K slices (a conditional write of the cursor), then audits them in every job. Returns the cursor after. */
async function audit(run: ScheduleReconcileRun): Promise<AuditPosition | undefined> {
  const { cursor, jobs } = run.deps;
  if (jobs.length === 0) return undefined;
  let claimed: ReturnType<typeof auditWindow>;
  try {
    const stored = await cursor.read();
    claimed = auditWindow(stored, run.limits.auditSlicesPerRun);
    // Claimed before the audit, not recorded after: an overlapping run gets refused instead of auditing the same
    // slices, and a slice whose audit fails (or times the run out) cannot stop the walk; it comes round next cycle.
    if (!(await cursor.write(claimed.next, stored?.version))) {
      run.deps.logger.info('schedule audit skipped: another reconciler run claimed the slices', {});
      return undefined;
    }
  } catch (error) {
    run.failed('read or advance the audit cursor', {}, error);
    return undefined;
  }
  const ids = [...new Set(jobs)].sort();
  for (const jobId of ids) for (const slice of claimed.slices) run.audited.push(`${jobId}#${slice}`);
  // Jobs side by side, AUDIT_JOB_CONCURRENCY at a time, each job's slices in turn: a run's time then grows with
  // ceil(jobs / AUDIT_JOB_CONCURRENCY), not with the jobs (bench/audit-bound.ts: 50 jobs of 100,000 schedules, the
  // heaviest run from 346 s to under 50 s against the reconciler's 120-s timeout).
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const jobId = ids[next++];
      for (const slice of claimed.slices) await auditSlice(run, jobId, slice);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AUDIT_JOB_CONCURRENCY, ids.length) }, worker));
  return claimed.next;
}

async function auditSlice(run: ScheduleReconcileRun, jobId: string, slice: string): Promise<void> {
  const template = await run.template(jobId);
  if (template === undefined) return;
  const rows: RegisteredSchedule[] = [];
  const schedules = new Map<string, ProjectedScheduleSummary>();
  try {
    // Schedules first, rows second: a schedule listed was put after its row was written, so its row is in the index
    // by the time the index is read (but for the index's own lag, which ORPHAN_MIN_AGE_MS covers).
    let token: string | undefined;
    do {
      const page = await run.deps.projection.listPage(template, slice, token);
      for (const s of page.schedules) schedules.set(s.name, s);
      token = page.nextToken;
    } while (token !== undefined);
    for (const bucket of bucketsOfSlice(slice)) rows.push(...(await run.deps.registry.auditBucket(jobId, bucket)));
  } catch (error) {
    run.failed('audit a slice', { jobId, slice }, error);
    return;
  }
  const rowNames = new Set(rows.map((r) => r.scheduleName));
  for (const row of rows) {
    if (!hasRoom(run)) return;
    // A row with syncDueAt is being written, or is the sweep's: its projection may lag, by design, until then.
    if (row.syncDueAt !== undefined) continue;
    const schedule = schedules.get(row.scheduleName);
    const kind = auditKind(row, schedule, template, run.now);
    if (kind === undefined) continue;
    run.auditRepairs++;
    await reproject(run, row, template, kind);
  }
  for (const [name, schedule] of schedules) {
    if (rowNames.has(name) || isYoung(schedule, run.now) || !hasRoom(run)) continue;
    run.auditRepairs++;
    await removeOrphan(run, jobId, slice, name, template);
  }
}

/** What the audit repairs for one row and its schedule (or none), or undefined when they agree. */
function auditKind(
  row: RegisteredSchedule,
  schedule: ProjectedScheduleSummary | undefined,
  template: KeyedJobTemplate,
  now: number,
): ScheduleRepairKind | undefined {
  if (row.deletedAt !== undefined) return 'tombstone';
  // A finished schedule (an at() whose time has passed, or past its end date) is not recreated: its projection is none.
  if (isFinished(row, now)) return undefined;
  if (schedule === undefined) return 'missing';
  return driftOf(row, schedule, template);
}

async function removeOrphan(
  run: ScheduleReconcileRun,
  jobId: string,
  slice: string,
  scheduleName: string,
  template: KeyedJobTemplate,
): Promise<void> {
  try {
    await run.deps.projection.remove(template, scheduleName);
    run.repaired({ jobId, scheduleName, kind: 'orphan', action: 'removed' });
  } catch (error) {
    run.failed('remove an orphan schedule', { jobId, slice, scheduleName }, error);
  }
}

/**
 * A schedule changed less than ORPHAN_MIN_AGE_MS ago is not taken for an orphan yet: the audit index is eventually
 * consistent, and a writer's row written a moment before its schedule may not show in it. A schedule name does not
 * give back its key, so the row cannot be read directly instead; an orphan that young is removed a cycle later.
 */
function isYoung(schedule: ProjectedScheduleSummary, now: number): boolean {
  const at = schedule.lastModifiedAt === undefined ? Number.NaN : Date.parse(schedule.lastModifiedAt);
  return !Number.isNaN(at) && at > now - ORPHAN_MIN_AGE_MS;
}

function hasRoom(run: ScheduleReconcileRun): boolean {
  if (run.auditRepairs < run.limits.maxRepairsPerRun) return true;
  run.truncated = true;
  return false;
}

/**
 * The jobs that take schedules at run time, as the stack passes them to the reconciler (REGISTRY_JOBS): a JSON array
 * of job ids, possibly empty. Throws JobSettingsError naming each problem.
 */
export function parseRegistryJobs(json: string | undefined, source: string): readonly string[] {
  const parsed = parseJsonVariable(json, source);
  if (!Array.isArray(parsed)) throw new JobSettingsError([`${source} must be a JSON array of job ids`]);
  const problems = parsed.flatMap((id, i) =>
    typeof id === 'string' && JOB_ID_PATTERN.test(id) ? [] : [`${source}[${i}] is not a job id: ${JSON.stringify(id)}`],
  );
  if (problems.length > 0) throw new JobSettingsError(problems);
  return [...new Set(parsed as string[])];
}
