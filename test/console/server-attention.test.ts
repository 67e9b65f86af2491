/**
 * GET /api/attention (console/server/attention.ts): what needs an operator across jobs, most urgent first (FAILED,
 * late, RUNNING, BUFFERED), with counts by status per job, read through the status index: the same number of index
 * Queries at 10, 100 and 1,000 jobs.
 */
import { describe, expect, it } from 'vitest';
import { type AttentionView, EXPECTED_START_SECONDS } from '../../console/contract';
import type { AttentionIndex, ConsoleDeps } from '../../console/server/deps';
import type { DeployedJob } from '../../functions/protocol/job-control';
import { JOB_STATE_SORT_KEY, type JobState } from '../../functions/protocol/job-state';
import { type Occurrence, type OccurrenceKey, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { JobStateStore } from '../../functions/protocol/ports';
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

async function depsWith(rows: readonly Occurrence[], jobs: readonly DeployedJob[], paused: readonly JobState[] = []) {
  const w = await world();
  const index = new FakeIndex(rows);
  const routeReads: string[] = [];
  const stateReads: string[] = [];
  const listings: number[] = [];
  for (const state of paused) w.states.rows.set(state.jobId, state);
  const states: JobStateStore = {
    write: (...change) => w.states.write(...change),
    read: (id) => {
      stateReads.push(id);
      return w.states.read(id);
    },
  };
  const deps: ConsoleDeps = {
    ...w.deps,
    index,
    states,
    jobs: {
      jobIds: async () => jobs.map((j) => j.id),
      job: async (id) => {
        routeReads.push(id);
        return jobs.find((j) => j.id === id);
      },
      disabledJobIds: async () => {
        listings.push(1);
        return jobs.filter((j) => j.state === 'DISABLED').map((j) => j.id);
      },
    },
  };
  return { deps, index, routeReads, stateReads, listings };
}

/** A job paused by an operator, as pauseJob leaves it: its schedule DISABLED, its job-state row saying who and why. */
const PAUSED_JOB: DeployedJob = { ...hourlyJob, id: 'paused-sync', state: 'DISABLED' };
const pausedState = (jobId: string, at: string, cause: 'operator' | 'failures' = 'operator'): JobState => ({
  jobId,
  scheduledTime: JOB_STATE_SORT_KEY,
  version: 2,
  pausedAt: at,
  pausedBy: 'alice via console (arn:aws:sts::123:assumed-role/oncall/alice)',
  pauseNote: 'upstream maintenance',
  pauseCause: cause,
});

const pausedFields = (jobId: string, at: string) => ({
  jobId,
  at,
  by: 'alice via console (arn:aws:sts::123:assumed-role/oncall/alice)',
  note: 'upstream maintenance',
  cause: 'operator',
});

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

  it('judges a PENDING occurrence of a job without lateAfter late past its expected start, never a BUFFERED one', async () => {
    const rows = [
      row(QUIET_JOB.id, '2026-12-01T11:50:00Z', OccurrenceStatus.PENDING),
      row(QUIET_JOB.id, '2026-12-01T11:56:00Z', OccurrenceStatus.PENDING),
      row(QUIET_JOB.id, '2026-12-01T01:00:00Z', OccurrenceStatus.BUFFERED, { attempt: 0 }),
    ];
    const { deps } = await depsWith(rows, [QUIET_JOB]);
    const view = (await (await signedIn(appOf(deps), DAY)).json()) as AttentionView;
    // NOW is 12:00: 11:50 is 10 min past, 5 min past its expected start; 11:56 is within it.
    expect(view.items.map((i) => [i.kind, i.scheduledTime, i.lateByMs, i.lateAgainst])).toEqual([
      ['late', '2026-12-01T11:50:00Z', 600_000 - EXPECTED_START_SECONDS * 1000, 'expectedStart'],
      ['buffered', '2026-12-01T01:00:00Z', undefined, undefined],
    ]);
  });

  it('lists the stalest heartbeat first among RUNNING ones', async () => {
    const rows = [
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

  it('lists the paused jobs with who, why and since when, from the DISABLED schedules only, the longest paused first', async () => {
    const older = { ...hourlyJob, id: 'failing-feed', state: 'DISABLED' };
    const template = { ...hourlyJob, id: 'per-customer', state: 'DISABLED', runtimeScheduleGroup: 'per-customer' };
    const { deps, stateReads, listings } = await depsWith(
      [],
      [hourlyJob, PAUSED_JOB, older, template],
      [
        pausedState(PAUSED_JOB.id, '2026-12-01T09:00:00.000Z'),
        pausedState(older.id, '2026-11-30T22:00:00.000Z', 'failures'),
      ],
    );
    const view = (await (await signedIn(appOf(deps), DAY)).json()) as AttentionView;
    expect(view.paused).toEqual([
      { ...pausedFields(older.id, '2026-11-30T22:00:00.000Z'), cause: 'failures' },
      pausedFields(PAUSED_JOB.id, '2026-12-01T09:00:00.000Z'),
    ]);
    // One listing; a job-state row for the DISABLED schedules only (the not-paused template is read, not listed).
    expect(listings).toHaveLength(1);
    expect(stateReads.sort()).toEqual([older.id, PAUSED_JOB.id, template.id].sort());
  });

  it('lists a run-time-schedule job paused as a whole (its template always DISABLED, its row paused)', async () => {
    const template = { ...hourlyJob, id: 'per-customer', state: 'DISABLED', runtimeScheduleGroup: 'per-customer' };
    const { deps } = await depsWith([], [template], [pausedState(template.id, '2026-12-01T10:00:00.000Z')]);
    const view = (await (await signedIn(appOf(deps), DAY)).json()) as AttentionView;
    expect(view.paused.map((p) => p.jobId)).toEqual([template.id]);
  });

  it('filters by job and by kind: the counts and items of that job, the kinds asked for, paused included', async () => {
    const { deps, stateReads } = await depsWith(
      attentionRows(),
      [hourlyJob, LATE_JOB, QUIET_JOB, PAUSED_JOB],
      [pausedState(PAUSED_JOB.id, '2026-12-01T09:00:00.000Z')],
    );
    const app = appOf(deps);
    const oneJob = (await (await signedIn(app, `${DAY}&job=${HOURLY}`)).json()) as AttentionView;
    expect(oneJob.items.map((i) => [i.kind, i.jobId])).toEqual([
      ['failed', HOURLY],
      ['running', HOURLY],
    ]);
    expect(oneJob.total).toEqual({ FAILED: 1, RUNNING: 1 });
    expect(oneJob.paused).toEqual([]);
    expect(oneJob.job).toBe(HOURLY);
    const kinds = (await (await signedIn(app, `${DAY}&kind=late,paused`)).json()) as AttentionView;
    expect(kinds.items.map((i) => i.kind)).toEqual(['late']);
    expect(kinds.paused.map((p) => p.jobId)).toEqual([PAUSED_JOB.id]);
    expect(kinds.kinds).toEqual(['late', 'paused']);
    // Without `paused` asked for, no job-state row is read.
    stateReads.length = 0;
    const noPaused = (await (await signedIn(app, `${DAY}&kind=failed`)).json()) as AttentionView;
    expect(noPaused.items.map((i) => i.kind)).toEqual(['failed']);
    expect(stateReads).toEqual([]);
    const bad = await signedIn(app, `${DAY}&kind=failed,lost`);
    expect(bad.status).toBe(400);
    expect(await errorOf(bad)).toContain(
      'kind: must be a comma-separated list of failed, late, running, buffered, paused',
    );
  });

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
