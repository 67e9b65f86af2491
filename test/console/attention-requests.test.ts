/**
 * The attention view's requests on moto at 10, 100 and 1,000 jobs (console/server/attention.ts, on the CLI's real
 * adapters): the DynamoDB and Scheduler requests one view makes, counted by command on the clients, do not grow with
 * the number of jobs. Each stack has one FAILED occurrence per job, plus the same few RUNNING, late and paused ones
 * (bench/console-attention-seed.ts). Counts, never times: bench/console-attention-bench.ts prints those.
 */
import { describe, expect, it } from 'vitest';
import { countedAttentionView, LATE, PAUSED, RUNNING, seedAttentionStack } from '../../bench/console-attention-seed';
import { STATUS_INDEX_SHARDS } from '../../functions/protocol/table-schema';
import { useCliEmulator } from '../cli/support';

const emulator = useCliEmulator();

describe('the attention view on moto', () => {
  it.each([10, 100, 1_000])('makes the same DynamoDB and Scheduler requests at %i jobs', async (jobs) => {
    const now = Date.now();
    const table = emulator.resources.tableName;
    await seedAttentionStack(emulator.moto.endpoint, table, jobs, now);
    const counts = new Map<string, number>();
    const view = await countedAttentionView(emulator.moto.endpoint, table, now, counts);
    expect(view.total).toEqual({ FAILED: jobs, RUNNING, PENDING: LATE });
    expect(view.paused).toHaveLength(PAUSED);
    // FAILED first: at 1,000 jobs they fill the list, and the counts still cover every one.
    expect(view.items.filter((i) => i.kind === 'late')).toHaveLength(jobs < 200 ? LATE : 0);
    expect(view.truncated).toBe(jobs + RUNNING + LATE > 200);
    const byName = Object.fromEntries(counts);
    // Every OPEN and FAILED shard once; no shard holds a second page (1,000 FAILED over 128 shards).
    expect(byName.QueryCommand).toBe(2 * STATUS_INDEX_SHARDS);
    // The FAILED and RUNNING rows listed (at most 200 FAILED): up to 100 keys a request.
    expect(byName.BatchGetItemCommand).toBe(Math.ceil((Math.min(jobs, 200) + RUNNING) / 100));
    // The paused jobs: ListSchedules of the DISABLED schedules only (one page here), their job-state rows.
    expect(byName.ListSchedulesCommand).toBe(1);
    expect(byName.GetItemCommand).toBe(PAUSED);
    // The lateAfter of the jobs with a waiting occurrence only.
    expect(byName.GetScheduleCommand).toBe(LATE);
    console.log(`attention view on moto at ${jobs} jobs: ${JSON.stringify(byName)}`);
  });
});
