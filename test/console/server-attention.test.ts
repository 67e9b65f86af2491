/**
 * GET /api/attention (console/server/attention.ts): what needs an operator across jobs, most urgent first (FAILED,
 * late, RUNNING, BUFFERED), with counts by status per job, read through the status index: the same number of index
 * Queries at 10, 100 and 1,000 jobs.
 */
import { describe, expect, it } from 'vitest';
import type { AttentionView } from '../../console/contract';
import type { AttentionIndex, ConsoleDeps } from '../../console/server/deps';
import type { DeployedJob } from '../../functions/protocol/job-control';
import { type Occurrence, type OccurrenceKey, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { seriesOf } from '../../functions/protocol/schedule-key';
import { expectedStatusShard, STATUS_INDEX_SHARDS } from '../../functions/protocol/table-schema';
import { appOf, errorOf, HOURLY, hourlyJob, hourlyRows, NOW, row, signedIn, world } from './server-support';

/** The status index over some rows, as DynamoDB keeps it, counting the Queries and the keys read back. */
class FakeIndex implements AttentionIndex {
  readonly shardQueries: string[] = [];
  readonly rowsRead: OccurrenceKey[][] = [];

  constructor(private readonly rows: readonly Occurrence[]) {}

  async *shardPages(shard: string, from: string, to: string) {
    this.shardQueries.push(shard);
    yield this.rows
      .filter((r) => expectedStatusShard(r) === shard && r.scheduledTime >= from && r.scheduledTime < to)
      .map((r) => ({ jobId: r.jobId, scheduledTime: r.scheduledTime, status: r.status, attempt: r.attempt }));
  }

  async readRows(keys: readonly OccurrenceKey[]) {
    this.rowsRead.push([...keys]);
    const id = (k: OccurrenceKey) => `${seriesOf(k)}|${k.scheduledTime}`;
    const byId = new Map(this.rows.map((r) => [id(r), r]));
    return keys.flatMap((k) => byId.get(id(k)) ?? []);
  }
}

const LATE_JOB: DeployedJob = {
  ...hourlyJob,
  id: 'late-export',
  route: { ...hourlyJob.route, lateAfterSeconds: 600 },
};
const QUIET_JOB: DeployedJob = { ...hourlyJob, id: 'quiet-buffer' };

/** The hourly job's morning (world), a PENDING occurrence 50 min past its lateAfter, and a BUFFERED one on time. */
function attentionRows(): Occurrence[] {
  return [
    ...hourlyRows,
    row(LATE_JOB.id, '2026-12-01T11:00:00Z', OccurrenceStatus.PENDING),
    row(LATE_JOB.id, '2026-12-01T10:00:00Z', OccurrenceStatus.SUCCEEDED, { succeededAt: '2026-12-01T10:01:00.000Z' }),
    row(QUIET_JOB.id, '2026-12-01T11:30:00Z', OccurrenceStatus.BUFFERED, { attempt: 0 }),
  ];
}

async function depsWith(rows: readonly Occurrence[], jobs: readonly DeployedJob[]) {
  const w = await world();
  const index = new FakeIndex(rows);
  const routeReads: string[] = [];
  const deps: ConsoleDeps = {
    ...w.deps,
    index,
    jobs: {
      jobIds: async () => jobs.map((j) => j.id),
      job: async (id) => {
        routeReads.push(id);
        return jobs.find((j) => j.id === id);
      },
    },
  };
  return { deps, index, routeReads };
}

const DAY = '/api/attention?from=2026-12-01T00:00:00Z&to=2026-12-01T12:00:00Z';

describe('GET /api/attention', () => {
  it('lists FAILED, then late, then RUNNING, then BUFFERED, each with what says how urgent it is', async () => {
    const { deps } = await depsWith(attentionRows(), [hourlyJob, LATE_JOB, QUIET_JOB]);
    const view = (await (await signedIn(appOf(deps), DAY)).json()) as AttentionView;
    expect(view.items.map((i) => [i.kind, i.jobId, i.scheduledTime])).toEqual([
      ['failed', HOURLY, '2026-12-01T08:00:00Z'],
      ['late', LATE_JOB.id, '2026-12-01T11:00:00Z'],
      ['running', HOURLY, '2026-12-01T10:00:00Z'],
      ['buffered', QUIET_JOB.id, '2026-12-01T11:30:00Z'],
    ]);
    expect(view.items[0].error).toBe('Error: the database said no');
    expect(view.items[1].lateByMs).toBe(NOW - Date.parse('2026-12-01T11:00:00Z') - 600_000);
    expect(view.items[2]).toMatchObject({
      progress: { done: 60, total: 100, at: '2026-12-01T11:59:00.000Z' },
      leaseAgeMs: NOW - Date.parse('2026-12-01T10:00:02.000Z'),
    });
    expect(view.truncated).toBe(false);
  });

  it('counts by status per job and in total, leaving out SUCCEEDED (an announced one left the index)', async () => {
    const { deps } = await depsWith(attentionRows(), [hourlyJob, LATE_JOB, QUIET_JOB]);
    const view = (await (await signedIn(appOf(deps), DAY)).json()) as AttentionView;
    expect(view.total).toEqual({ FAILED: 1, RUNNING: 1, PENDING: 1, BUFFERED: 1 });
    expect(view.jobs).toEqual([
      { jobId: HOURLY, counts: { FAILED: 1, RUNNING: 1 } },
      { jobId: LATE_JOB.id, counts: { PENDING: 1 } },
      { jobId: QUIET_JOB.id, counts: { BUFFERED: 1 } },
    ]);
  });

  it('judges nothing late for a job without lateAfter, and lists the stalest heartbeat first among RUNNING ones', async () => {
    const rows = [
      row(QUIET_JOB.id, '2026-12-01T01:00:00Z', OccurrenceStatus.PENDING),
      row(HOURLY, '2026-12-01T09:00:00Z', OccurrenceStatus.RUNNING, {
        claimedAt: '2026-12-01T09:00:01.000Z',
        heartbeatAt: '2026-12-01T11:59:00.000Z',
      }),
      row(HOURLY, '2026-12-01T10:00:00Z', OccurrenceStatus.RUNNING, {
        claimedAt: '2026-12-01T10:00:01.000Z',
        heartbeatAt: '2026-12-01T11:00:00.000Z',
      }),
    ];
    const { deps } = await depsWith(rows, [hourlyJob, QUIET_JOB]);
    const view = (await (await signedIn(appOf(deps), DAY)).json()) as AttentionView;
    expect(view.items.map((i) => [i.kind, i.scheduledTime, i.heartbeatAgeMs])).toEqual([
      ['running', '2026-12-01T10:00:00Z', 3_600_000],
      ['running', '2026-12-01T09:00:00Z', 60_000],
    ]);
  });

  it.each([10, 100, 1_000])(
    'makes the same index Queries at %i jobs: every OPEN and FAILED shard once',
    async (jobs) => {
      const deployed = Array.from({ length: jobs }, (_, i) => ({
        ...hourlyJob,
        id: `job-${String(i).padStart(4, '0')}`,
      }));
      const rows = deployed.flatMap((job) => [
        row(job.id, '2026-12-01T08:00:00Z', OccurrenceStatus.FAILED, { lastError: 'Error: no' }),
        row(job.id, '2026-12-01T09:00:00Z', OccurrenceStatus.SUCCEEDED),
      ]);
      const { deps, index, routeReads } = await depsWith(rows, deployed);
      const answer = await signedIn(appOf(deps), DAY);
      const view = (await answer.json()) as AttentionView;
      expect(index.shardQueries).toHaveLength(2 * STATUS_INDEX_SHARDS);
      expect(new Set(index.shardQueries).size).toBe(2 * STATUS_INDEX_SHARDS);
      // The rows read back are the items listed (at most 200, in one call: 2 BatchGetItem of 100), not one per job.
      expect(index.rowsRead).toHaveLength(1);
      expect(index.rowsRead[0].length).toBe(Math.min(jobs, 200));
      expect(routeReads).toEqual([]);
      expect(view.total).toEqual({ FAILED: jobs });
      expect(view.items).toHaveLength(Math.min(jobs, 200));
      expect(view.truncated).toBe(jobs > 200);
      console.log(
        `attention view at ${jobs} jobs: ${index.shardQueries.length} index Queries, ` +
          `${Math.ceil(index.rowsRead[0].length / 100)} BatchGetItem, ${routeReads.length} GetSchedule`,
      );
    },
  );

  it('answers 400 to a range that is not one, and 404 without the status index', async () => {
    const { deps } = await depsWith([], [hourlyJob]);
    const backwards = await signedIn(appOf(deps), '/api/attention?from=2026-12-01T12:00:00Z&to=2026-12-01T00:00:00Z');
    expect(backwards.status).toBe(400);
    expect(await errorOf(backwards)).toBe('to: must be after from');
    const missing = await signedIn(appOf(deps), '/api/attention?to=2026-12-01T00:00:00Z');
    expect(missing.status).toBe(400);
    const { index: _, ...withoutIndex } = deps;
    const none = await signedIn(appOf(withoutIndex), DAY);
    expect(none.status).toBe(404);
  });
});
