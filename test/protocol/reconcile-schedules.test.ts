/**
 * protocol/reconcile-schedules.ts against in-memory fakes of the registry and of Scheduler: the sweep repairs a
 * crash between a writer's two writes; the audit repairs each kind of drift (a schedule deleted, disabled or edited
 * by hand, projected from an older template, left without a row whatever its name), leaves a past one-off alone,
 * finishes a tombstone, walks its cursor K slices of every job per run and wraps, so that a cycle is the same number
 * of runs for 1, 10 or 50 jobs, and costs K slices per job per run whatever the number of schedules.
 */
import { describe, expect, it } from 'vitest';
import { AUDIT_SLICES, auditWindow, repairBoundRuns, runsPerCycle } from '../../functions/protocol/audit-slices';
import { DependencyError } from '../../functions/protocol/errors';
import { MetricName } from '../../functions/protocol/metric-names';
import type { Logger, Metrics } from '../../functions/protocol/ports';
import {
  AUDIT_JOB_CONCURRENCY,
  ORPHAN_MIN_AGE_MS,
  reconcileSchedules,
  type ScheduleReconcileDeps,
  type ScheduleReconcileLimits,
} from '../../functions/protocol/reconcile-schedules';
import { AUDIT_BUCKETS as AUDIT_BUCKET_COUNT } from '../../functions/protocol/schedule-registry';
import { FakeCursorStore, FakeProjection, FakeRegistry, iso, row, template } from './drift-fakes';

const T0 = Date.parse('2026-12-01T12:00:00.000Z');
const JOB = 'weekly-report';
const T = template(JOB);

interface World {
  now: number;
  registry: FakeRegistry;
  projection: FakeProjection;
  cursor: FakeCursorStore;
  logs: Array<{ level: string; message: string; fields?: Record<string, unknown> }>;
  metrics: Array<{ name: string; value: number; jobId: string }>;
  run(limits?: Partial<ScheduleReconcileLimits>, jobs?: string[]): ReturnType<typeof reconcileSchedules>;
}

function world(): World {
  const w = {
    now: T0,
    logs: [],
    metrics: [],
  } as unknown as World;
  w.registry = new FakeRegistry();
  w.projection = new FakeProjection(() => w.now);
  w.projection.templates.set(JOB, T);
  w.cursor = new FakeCursorStore();
  const logger: Logger = {
    info: (message, fields) => w.logs.push({ level: 'info', message, fields }),
    warn: (message, fields) => w.logs.push({ level: 'warn', message, fields }),
    error: (message, fields) => w.logs.push({ level: 'error', message, fields }),
  };
  const metrics: Metrics = { add: (name, value, jobId) => w.metrics.push({ name, value, jobId }) };
  w.run = (limits = {}, jobs = [JOB]) => {
    const deps: ScheduleReconcileDeps = {
      registry: w.registry,
      projection: w.projection,
      cursor: w.cursor,
      jobs,
      clock: { now: () => w.now },
      logger,
      metrics,
      limits,
    };
    return reconcileSchedules(deps);
  };
  return w;
}

/** A live row in `bucket`, synced an hour before T0, and its schedule as the writer projected it. */
function synced(w: World, key: string, bucket: number, fields = {}) {
  const r = row(JOB, key, bucket, T0 - 3_600_000, fields);
  w.registry.add(r);
  w.projection.project(r, T, T0 - 3_600_000);
  return r;
}

/** Audit every slice of every job in one run. */
const ALL = { auditSlicesPerRun: AUDIT_SLICES.length };

describe('reconcileSchedules: the sweep', () => {
  it('projects a row whose writer crashed after the registry write, once its grace has passed, and marks it synced', async () => {
    const w = world();
    const r = row(JOB, 'cust-1', 3, T0 - 120_000, {
      version: 2,
      syncedVersion: 1,
      syncDueAt: iso(T0 - 60_000),
      syncShard: '5',
      state: 'PAUSED',
    });
    w.registry.add(r);

    const report = await w.run({ auditSlicesPerRun: 0 });

    expect(report.repairs).toEqual([
      { jobId: JOB, scheduleKey: 'cust-1', scheduleName: r.scheduleName, kind: 'sync', action: 'put' },
    ]);
    expect(w.projection.schedule(T.group, r.scheduleName)).toMatchObject({ state: 'DISABLED', version: 2 });
    expect(w.registry.row(JOB, 'cust-1')).toMatchObject({ syncedVersion: 2, syncedAt: iso(T0) });
    expect(w.registry.row(JOB, 'cust-1')?.syncDueAt).toBeUndefined();
    expect(w.metrics).toEqual([{ name: MetricName.SchedulesSyncRepaired, value: 1, jobId: JOB }]);
  });

  it('leaves a row whose grace has not passed to its writer', async () => {
    const w = world();
    w.registry.add(row(JOB, 'cust-1', 3, T0, { version: 2, syncDueAt: iso(T0 + 1) }));
    const report = await w.run({ auditSlicesPerRun: 0 });
    expect(report.repairs).toEqual([]);
    expect(w.projection.calls.put).toBeUndefined();
  });

  it('finishes a delete that crashed after its tombstone: the schedule and then the row go', async () => {
    const w = world();
    const r = synced(w, 'gone', 7);
    w.registry.add({ ...r, version: 2, deletedAt: iso(T0 - 90_000), syncDueAt: iso(T0 - 30_000), syncShard: '1' });

    const report = await w.run({ auditSlicesPerRun: 0 });

    expect(report.repairs).toMatchObject([{ kind: 'sync', action: 'removed' }]);
    expect(w.projection.schedule(T.group, r.scheduleName)).toBeUndefined();
    expect(w.registry.row(JOB, 'gone')).toBeUndefined();
  });

  it('does not recreate a one-off whose time has passed, but records the row as synced', async () => {
    const w = world();
    w.registry.add(
      row(JOB, 'once', 2, T0 - 86_400_000, {
        expression: 'at(2026-12-01T09:00:00)',
        timeZone: 'Etc/UTC',
        version: 1,
        syncedVersion: undefined,
        syncedAt: undefined,
        syncDueAt: iso(T0 - 86_000_000),
      }),
    );
    const report = await w.run({ auditSlicesPerRun: 0 });
    expect(report.repairs).toMatchObject([{ kind: 'sync', action: 'removed' }]);
    expect(w.projection.calls.put).toBeUndefined();
    expect(w.registry.row(JOB, 'once')?.syncDueAt).toBeUndefined();
  });

  it('projects the newer version when a writer changed the row between our put and our markSynced', async () => {
    const w = world();
    const r = row(JOB, 'race', 4, T0 - 120_000, { version: 2, syncDueAt: iso(T0 - 60_000) });
    w.registry.add(r);
    let raced = false;
    w.projection.before = (op) => {
      if (op === 'put' && !raced) {
        raced = true;
        // The writer's row v3 lands (and, say, its own projection), then our put of v2 lands over it.
        w.registry.add({ ...r, version: 3, state: 'PAUSED', syncDueAt: iso(T0 + 60_000) });
      }
    };
    await w.run({ auditSlicesPerRun: 0 });
    expect(w.projection.schedule(T.group, r.scheduleName)).toMatchObject({ version: 3, state: 'DISABLED' });
    expect(w.registry.row(JOB, 'race')).toMatchObject({ syncedVersion: 3 });
  });

  it('removes what it put when the row was deleted and removed meanwhile', async () => {
    const w = world();
    const r = row(JOB, 'race', 4, T0 - 120_000, { version: 2, syncDueAt: iso(T0 - 60_000) });
    w.registry.add(r);
    w.projection.before = (op) => {
      if (op === 'put') w.registry.rows.clear();
    };
    await w.run({ auditSlicesPerRun: 0 });
    expect(w.projection.schedule(T.group, r.scheduleName)).toBeUndefined();
  });

  it('re-projects at most sweepLimit rows per run and says it was truncated', async () => {
    const w = world();
    for (let i = 0; i < 5; i++)
      w.registry.add(row(JOB, `k${i}`, i, T0 - 120_000, { version: 2, syncDueAt: iso(T0 - 60_000 + i) }));
    const report = await w.run({ auditSlicesPerRun: 0, sweepLimit: 3 });
    expect(report.swept).toBe(3);
    expect(report.truncated).toBe(true);
    expect(w.projection.calls.put).toBe(3);
    expect((await w.run({ auditSlicesPerRun: 0, sweepLimit: 3 })).swept).toBe(2);
  });

  it('counts a failed Scheduler write, logs it, and goes on with the next row', async () => {
    const w = world();
    w.registry.add(row(JOB, 'a', 1, T0, { version: 2, syncDueAt: iso(T0 - 2) }));
    w.registry.add(row(JOB, 'b', 1, T0, { version: 2, syncDueAt: iso(T0 - 1) }));
    let first = true;
    w.projection.before = (op) => {
      if (op === 'put' && first) {
        first = false;
        throw new DependencyError('transient', 'put a schedule', new Error('ThrottlingException'));
      }
    };
    const report = await w.run({ auditSlicesPerRun: 0 });
    expect(report.errors).toBe(1);
    expect(report.repairs.map((r) => r.scheduleKey)).toEqual(['b']);
    expect(w.registry.row(JOB, 'a')?.syncDueAt).toBeDefined(); // the next run retries it
    expect(w.logs.find((l) => l.level === 'error')?.fields).toMatchObject({ scheduleKey: 'a' });
  });

  it('leaves a row of a job it does not know, and a job without a template, and says so', async () => {
    const w = world();
    w.registry.add(row('other', 'x', 1, T0, { version: 2, syncDueAt: iso(T0 - 1) }));
    w.projection.templates.clear();
    w.registry.add(row(JOB, 'y', 1, T0, { version: 2, syncDueAt: iso(T0 - 1) }));
    const report = await w.run({ auditSlicesPerRun: 0 });
    expect(report.skipped).toBe(2);
    expect(report.repairs).toEqual([]);
  });
});

describe('reconcileSchedules: the audit', () => {
  it('recreates a schedule deleted behind the registry’s back', async () => {
    const w = world();
    const r = synced(w, 'cust-1', 0);
    w.projection.delete(T.group, r.scheduleName);
    const report = await w.run(ALL);
    expect(report.repairs).toMatchObject([{ kind: 'missing', action: 'put', scheduleKey: 'cust-1' }]);
    expect(w.projection.schedule(T.group, r.scheduleName)).toMatchObject({ state: 'ENABLED', version: 1 });
    expect(w.metrics).toEqual([{ name: MetricName.SchedulesRecreated, value: 1, jobId: JOB }]);
  });

  it('removes a schedule no row registered (an orphan), but not one made less than a minute ago', async () => {
    const w = world();
    synced(w, 'cust-1', 5);
    w.projection.byHand(T.group, '05.stray.ffffffffffffffff', 'ENABLED', T0 - ORPHAN_MIN_AGE_MS - 1);
    w.projection.byHand(T.group, '05.young.eeeeeeeeeeeeeeee', 'ENABLED', T0 - 1_000);
    const report = await w.run(ALL);
    expect(report.repairs).toEqual([
      { jobId: JOB, scheduleName: '05.stray.ffffffffffffffff', kind: 'orphan', action: 'removed' },
    ]);
    expect(w.projection.schedule(T.group, '05.young.eeeeeeeeeeeeeeee')).toBeDefined();
    expect(w.metrics).toEqual([{ name: MetricName.OrphanSchedulesRemoved, value: 1, jobId: JOB }]);
  });

  it('puts back the state of a schedule disabled by hand, and of a paused one enabled by hand', async () => {
    const w = world();
    const on = synced(w, 'on', 9);
    const off = synced(w, 'off', 9, { state: 'PAUSED' });
    // By hand, but at the same second as the sync: only the state differs.
    w.projection.byHand(T.group, on.scheduleName, 'DISABLED', T0 - 3_600_000);
    w.projection.byHand(T.group, off.scheduleName, 'ENABLED', T0 - 3_600_000);
    const report = await w.run(ALL);
    expect(report.repairs.map((r) => [r.scheduleKey, r.kind])).toEqual([
      ['on', 'state'],
      ['off', 'state'],
    ]);
    expect(w.projection.schedule(T.group, on.scheduleName)?.state).toBe('ENABLED');
    expect(w.projection.schedule(T.group, off.scheduleName)?.state).toBe('DISABLED');
    expect(w.metrics.map((m) => m.name)).toEqual([
      MetricName.SchedulesDriftCorrected,
      MetricName.SchedulesDriftCorrected,
    ]);
  });

  it('puts back a schedule edited by hand after its sync, and records the sync so the next audit leaves it', async () => {
    const w = world();
    const r = synced(w, 'edited', 17);
    w.projection.byHand(T.group, r.scheduleName, 'ENABLED', T0 - 600_000);
    expect((await w.run(ALL)).repairs).toMatchObject([{ kind: 'edited', action: 'put' }]);
    expect(w.registry.row(JOB, 'edited')?.syncedAt).toBe(iso(T0));
    w.now += 300_000;
    expect((await w.run(ALL)).repairs).toEqual([]);
  });

  it('leaves a schedule whose change is within the clock margin of its sync', async () => {
    const w = world();
    const r = synced(w, 'ok', 17);
    w.projection.byHand(T.group, r.scheduleName, 'ENABLED', T0 - 3_600_000 + 2_000);
    expect((await w.run(ALL)).repairs).toEqual([]);
  });

  it('puts a schedule projected from an older template', async () => {
    const w = world();
    const r = synced(w, 'old', 33, { syncedTemplateHash: 'h0' });
    const fresh = synced(w, 'fresh', 33, { syncedTemplateHash: 'h1' });
    const report = await w.run(ALL);
    expect(report.repairs.map((x) => [x.scheduleKey, x.kind])).toEqual([['old', 'stale-template']]);
    expect(w.projection.schedule(T.group, r.scheduleName)?.templateHash).toBe('h1');
    expect(fresh).toBeDefined();
  });

  it('puts every schedule of a job whose template changed after their sync', async () => {
    const w = world();
    synced(w, 'a', 1);
    w.projection.templates.set(JOB, { ...T, lastModifiedAt: iso(T0 - 60_000) } as typeof T);
    const report = await w.run(ALL);
    expect(report.repairs.map((x) => x.kind)).toEqual(['stale-template']);
  });

  it('does not recreate an at() whose time has passed', async () => {
    const w = world();
    const r = synced(w, 'once', 40, { expression: 'at(2026-12-01T12:30:00)', timeZone: 'Europe/Paris' });
    w.projection.delete(T.group, r.scheduleName); // it fired at 11:30 UTC and deleted itself
    expect((await w.run(ALL)).repairs).toEqual([]);
    expect(w.projection.calls.put).toBeUndefined();
  });

  it('does not recreate a schedule past its end date', async () => {
    const w = world();
    const r = synced(w, 'ended', 41, { endDate: iso(T0 - 60_000) });
    w.projection.delete(T.group, r.scheduleName);
    expect((await w.run(ALL)).repairs).toEqual([]);
  });

  it('recreates an at() still to come', async () => {
    const w = world();
    const r = synced(w, 'later', 40, { expression: 'at(2026-12-01T14:30:00)', timeZone: 'Europe/Paris' });
    w.projection.delete(T.group, r.scheduleName);
    expect((await w.run(ALL)).repairs).toMatchObject([{ kind: 'missing' }]);
  });

  it('finishes a tombstone left without syncDueAt: its schedule and its row go', async () => {
    const w = world();
    const r = synced(w, 'bye', 50);
    w.registry.add({ ...r, version: 2, deletedAt: iso(T0 - 600_000) });
    const report = await w.run(ALL);
    expect(report.repairs).toMatchObject([{ kind: 'tombstone', action: 'removed' }]);
    expect(w.registry.row(JOB, 'bye')).toBeUndefined();
    expect(w.projection.schedule(T.group, r.scheduleName)).toBeUndefined();
  });

  it('leaves a row with syncDueAt (a writer in flight) and changes nothing when all agree', async () => {
    const w = world();
    synced(w, 'a', 60);
    const b = row(JOB, 'b', 60, T0, { version: 2, syncDueAt: iso(T0 + 30_000) });
    w.registry.add(b); // written, not yet projected
    const report = await w.run(ALL);
    expect(report.repairs).toEqual([]);
    expect(w.projection.calls.put ?? 0).toBe(0);
    expect(w.projection.calls.remove ?? 0).toBe(0);
  });

  it('reads every page of a slice’s schedules', async () => {
    const w = world();
    w.projection.pageSize = 2;
    for (let i = 0; i < 5; i++) synced(w, `k${i}`, 70);
    w.projection.byHand(T.group, '46.orphan.0000000000000000', 'ENABLED', T0 - 3_600_000);
    const report = await w.run(ALL);
    expect(report.repairs.map((r) => r.kind)).toEqual(['orphan']);
  });

  it('goes on with the next slice when one slice cannot be read', async () => {
    const w = world();
    const a = synced(w, 'a', 1);
    const b = synced(w, 'b', 0x12);
    w.projection.delete(T.group, a.scheduleName);
    w.projection.delete(T.group, b.scheduleName);
    w.registry.before = (op, args) => {
      if (op === 'auditBucket' && args[1] === 1)
        throw new DependencyError('transient', 'query', new Error('throttled'));
    };
    const report = await w.run(ALL);
    expect(report.errors).toBe(1);
    expect(report.repairs.map((r) => r.scheduleKey)).toEqual(['b']);
  });

  it('stops at maxRepairsPerRun and says it was truncated', async () => {
    const w = world();
    for (let i = 0; i < 4; i++) w.projection.delete(T.group, synced(w, `k${i}`, 80).scheduleName);
    const report = await w.run({ ...ALL, maxRepairsPerRun: 3 });
    expect(report.repairs).toHaveLength(3);
    expect(report.truncated).toBe(true);
  });
});

describe('reconcileSchedules: a schedule of any name in the group that the registry does not hold', () => {
  it('is removed as an orphan, whatever its first character, and the registry’s own schedules are left alone', async () => {
    const w = world();
    const kept = synced(w, 'cust-1', 0xa3);
    const stray = ['hand-made-by-ops', 'a-ops', 'A', 'Zeta', '_x', '-x', '.x', 'a3', 'a3-not-a-bucket', 'deadbeef'];
    for (const name of stray) w.projection.byHand(T.group, name, 'ENABLED', T0 - ORPHAN_MIN_AGE_MS - 1);
    const report = await w.run(ALL);
    expect(report.repairs.map((r) => [r.scheduleName, r.kind, r.action]).sort()).toEqual(
      stray.map((name) => [name, 'orphan', 'removed']).sort(),
    );
    expect(w.projection.schedule(T.group, kept.scheduleName)).toBeDefined();
    for (const name of stray) expect(w.projection.schedule(T.group, name)).toBeUndefined();
  });
});

describe('reconcileSchedules: the cursor and the cost of a run', () => {
  it('audits K slices per run, advances the cursor by K, and wraps to the first slice after the last', async () => {
    const w = world();
    const first = await w.run({ auditSlicesPerRun: 4 });
    expect(first.audited).toEqual(AUDIT_SLICES.slice(0, 4).map((c) => `${JOB}#${c}`));
    expect(w.cursor.stored).toMatchObject({ slice: 4, cycle: 0 });
    for (let i = 1; i < runsPerCycle(4); i++) await w.run({ auditSlicesPerRun: 4 });
    // 17 runs of 4 are 68 slices: the cycle wrapped after 65, three slices into the next.
    expect(w.cursor.stored).toMatchObject({ slice: 3, cycle: 1 });
  });

  it('walks 65 slices, one per first character of a name, with at most one hex digit in any 4 in a row', () => {
    expect(new Set(AUDIT_SLICES).size).toBe(65);
    expect([...AUDIT_SLICES].sort().join('')).toBe('-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz');
    const isHex = (c: string) => /^[0-9a-f]$/.test(c);
    for (let i = 0; i < AUDIT_SLICES.length; i++) {
      const window = [0, 1, 2, 3].map((j) => AUDIT_SLICES[(i + j) % AUDIT_SLICES.length]);
      expect(window.filter(isHex).length, window.join('')).toBeLessThanOrEqual(1);
    }
    expect(auditWindow({ slice: 63, cycle: 3 }, 4)).toEqual({
      slices: [AUDIT_SLICES[63], AUDIT_SLICES[64], AUDIT_SLICES[0], AUDIT_SLICES[1]],
      next: { slice: 2, cycle: 4 },
    });
    // A cursor of the bucket walk (or a broken one) starts the slices over.
    expect(auditWindow({ slice: Number.NaN, cycle: 0 }, 1).slices).toEqual([AUDIT_SLICES[0]]);
  });

  it.each([1, 10, 50])(
    'with %i jobs, a drift in any job is repaired within the same bound of runs, and every slice of every job is audited each cycle',
    async (jobCount) => {
      const w = world();
      const jobs = Array.from({ length: jobCount }, (_, i) => `job-${String(i).padStart(2, '0')}`);
      for (const job of jobs) w.projection.templates.set(job, template(job));
      // The last job in id order, whose slices the bucket walk reached last: a hand-made schedule in its group.
      const last = jobs[jobs.length - 1];
      w.projection.byHand(template(last).group, 'hand-made-by-ops', 'ENABLED', T0 - 3_600_000);
      const audited = new Set<string>();
      let repairedAt: number | undefined;
      for (let run = 1; run <= runsPerCycle(4); run++) {
        const report = await w.run({ auditSlicesPerRun: 4 }, jobs);
        for (const pair of report.audited) audited.add(pair);
        if (repairedAt === undefined && report.repairs.some((r) => r.scheduleName === 'hand-made-by-ops'))
          repairedAt = run;
        w.now += 300_000;
      }
      expect(audited.size).toBe(jobCount * AUDIT_SLICES.length);
      expect(repairedAt).toBeDefined();
      expect(repairedAt).toBeLessThanOrEqual(repairBoundRuns(4));
    },
  );

  it('skips the audit when another run claimed the slices (its conditional write is refused)', async () => {
    const w = world();
    w.projection.delete(T.group, synced(w, 'a', 0).scheduleName);
    w.cursor.refuseNext = true;
    const report = await w.run();
    expect(report.audited).toEqual([]);
    expect(report.cursor).toBeUndefined();
    expect(w.projection.calls.put).toBeUndefined();
  });

  it('costs K slices per job per run however many schedules: one listing per slice, 16 bucket reads per hex digit', async () => {
    const w = world();
    for (let i = 0; i < 2_000; i++) synced(w, `c${i}`, i % AUDIT_BUCKET_COUNT);
    const report = await w.run({ auditSlicesPerRun: 4 });
    // The first 4 slices: the digit 0 (buckets 00 to 0f, 16 x 8 = 128 schedules: two pages) and three others.
    expect(report.audited).toEqual(AUDIT_SLICES.slice(0, 4).map((c) => `${JOB}#${c}`));
    expect(w.registry.calls.auditBucket).toBe(16);
    expect(w.projection.calls.listPage).toBe(2 + 3);
    expect(w.projection.calls.template).toBe(1);
    expect(w.registry.calls.dueForSync).toBe(1);
  });
});

describe('reconcileSchedules: the audit of many jobs in one run', () => {
  it('audits AUDIT_JOB_CONCURRENCY jobs at a time, each job its slices in turn, and every (job, slice) once', async () => {
    const w = world();
    const jobs = Array.from({ length: 20 }, (_, i) => `job-${String(i).padStart(2, '0')}`);
    for (const jobId of jobs) w.projection.templates.set(jobId, template(jobId));
    const list = w.projection.listPage.bind(w.projection);
    let inFlight = 0;
    let most = 0;
    const listed: string[] = [];
    const perJob = new Map<string, number>();
    w.projection.listPage = async (t, prefix, token) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // One job never has two of its slices listed at once.
      perJob.set(t.jobId, (perJob.get(t.jobId) ?? 0) + 1);
      expect(perJob.get(t.jobId)).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1));
      perJob.set(t.jobId, (perJob.get(t.jobId) ?? 1) - 1);
      inFlight--;
      listed.push(`${t.jobId}#${prefix}`);
      return list(t, prefix, token);
    };
    const report = await w.run({ auditSlicesPerRun: 4 }, jobs);
    expect(most).toBe(AUDIT_JOB_CONCURRENCY);
    expect(listed.sort()).toEqual([...report.audited].sort());
    expect(new Set(report.audited).size).toBe(jobs.length * 4);
    expect(report.errors).toBe(0);
  });
});
