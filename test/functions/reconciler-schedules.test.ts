/**
 * The reconciler handler runs both halves: the occurrences' reconcile and the run-time schedules' (sweep and audit);
 * one failing does not stop the other, and a run with failures in either throws ReconcileIncompleteError carrying
 * both reports. What each half repairs is tested in test/protocol/reconcile.test.ts and reconcile-schedules.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseAuditSlicesPerRun } from '../../functions/protocol/audit-slices';
import { DependencyError } from '../../functions/protocol/errors';
import type { Logger, OccurrenceIndex, OccurrenceStore, RequeueStore } from '../../functions/protocol/ports';
import { parseRegistryJobs } from '../../functions/protocol/reconcile-schedules';
import { createReconcilerHandler, ReconcileIncompleteError } from '../../functions/reconciler';
import { FakeCursorStore, FakeProjection, FakeRegistry, row, template } from '../protocol/drift-fakes';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const JOB = 'weekly-report';
const T = template(JOB);

function setup(options: { indexFails?: boolean } = {}) {
  const logs: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  const logger: Logger = {
    info: (message, fields) => logs.push({ message, fields }),
    warn: (message, fields) => logs.push({ message, fields }),
    error: (message, fields) => logs.push({ message, fields }),
  };
  let indexReads = 0;
  const index = {
    async *shardPages() {
      indexReads++;
      if (options.indexFails) throw new DependencyError('transient', 'query the status index', new Error('throttled'));
      yield [];
    },
  } as unknown as OccurrenceIndex;
  const registry = new FakeRegistry();
  const projection = new FakeProjection(() => NOW);
  projection.templates.set(JOB, T);
  // A row whose writer crashed before its projection: the sweep's to repair.
  const r = row(JOB, 'cust-1', 1, NOW - 600_000, { version: 2, syncDueAt: new Date(NOW - 60_000).toISOString() });
  registry.add(r);
  const handler = (schedules: 'on' | 'off' = 'on') =>
    createReconcilerHandler({
      workers: new Map(),
      thresholds: { unannouncedAfterSeconds: 90_000, maxFixesPerRun: 10 },
      store: {} as OccurrenceStore & RequeueStore,
      index,
      announcer: { announce: async () => {} } as never,
      clock: { now: () => NOW },
      logger,
      bucketName: 'reports',
      schedules: schedules === 'on' ? { registry, projection, cursor: new FakeCursorStore(), jobs: [JOB] } : false,
    });
  return { logs, registry, projection, handler, row: r, indexReads: () => indexReads };
}

describe('reconciler handler: occurrences and run-time schedules', () => {
  it('runs both halves and reports both', async () => {
    const s = setup();
    const report = await s.handler()();
    expect(s.indexReads()).toBeGreaterThan(0);
    expect(report.schedules?.repairs).toMatchObject([{ kind: 'sync', scheduleKey: 'cust-1' }]);
    // The default: 4 slices of the one job.
    expect(report.schedules?.audited).toHaveLength(4);
    expect(s.projection.schedule(T.group, s.row.scheduleName)).toBeDefined();
  });

  it('still repairs schedules when the occurrences half fails, then throws with both reports', async () => {
    const s = setup({ indexFails: true });
    const error = (await s
      .handler()()
      .catch((e: unknown) => e)) as ReconcileIncompleteError;
    expect(error).toBeInstanceOf(ReconcileIncompleteError);
    expect(error.report.errors).toBeGreaterThan(0);
    expect(error.report.schedules?.repairs).toHaveLength(1);
    expect(s.projection.schedule(T.group, s.row.scheduleName)).toBeDefined();
  });

  it('still reconciles occurrences when the schedules half fails, then throws', async () => {
    const s = setup();
    s.registry.before = (op) => {
      if (op === 'dueForSync') throw new DependencyError('transient', 'query bySyncDue', new Error('throttled'));
    };
    s.projection.before = (op) => {
      if (op === 'template') throw new Error('scheduler down');
    };
    const error = (await s
      .handler()()
      .catch((e: unknown) => e)) as ReconcileIncompleteError;
    expect(error).toBeInstanceOf(ReconcileIncompleteError);
    expect(s.indexReads()).toBeGreaterThan(0);
    expect(error.report.errors).toBe(0);
    expect(error.report.schedules?.errors).toBeGreaterThan(0);
    expect(error.message).toMatch(/failed read\(s\) or write\(s\)/);
  });

  it('has no schedules half when the stack has no job that takes schedules at run time', async () => {
    const s = setup();
    const report = await s.handler('off')();
    expect(report.schedules).toBeUndefined();
    expect(s.projection.calls.put).toBeUndefined();
  });
});

describe('the stack’s settings of the schedules half', () => {
  it('reads REGISTRY_JOBS as a JSON array of job ids and names each bad one', () => {
    expect(parseRegistryJobs('["a","b","a"]', 'REGISTRY_JOBS')).toEqual(['a', 'b']);
    expect(parseRegistryJobs('[]', 'REGISTRY_JOBS')).toEqual([]);
    expect(() => parseRegistryJobs('{"a":1}', 'REGISTRY_JOBS')).toThrow(/REGISTRY_JOBS must be a JSON array/);
    expect(() => parseRegistryJobs('["ok","no#way",3]', 'REGISTRY_JOBS')).toThrow(
      /REGISTRY_JOBS\[1\] is not a job id: "no#way"[\s\S]*REGISTRY_JOBS\[2\] is not a job id: 3/,
    );
    expect(() => parseRegistryJobs(undefined, 'REGISTRY_JOBS')).toThrow(/REGISTRY_JOBS is not set/);
  });

  it('reads K, the slices per run, from 1 to 65, default unset', () => {
    expect(parseAuditSlicesPerRun(undefined, 'K')).toBeUndefined();
    expect(parseAuditSlicesPerRun('16', 'K')).toBe(16);
    expect(() => parseAuditSlicesPerRun('0', 'K')).toThrow(/K must be a whole number from 1 to 65, got 0/);
    expect(() => parseAuditSlicesPerRun('66', 'K')).toThrow(/from 1 to 65/);
    expect(() => parseAuditSlicesPerRun('4.5', 'K')).toThrow(/from 1 to 65, got 4.5/);
  });
});
