/**
 * The all-jobs timeline's requests on moto at 10, 100 and 1,000 jobs (console/server/all-timelines.ts, on the CLI's
 * real adapters): one page reads at most SERIES_PER_PAGE series partitions and the schedules of the jobs on it,
 * whatever the number of jobs; only the listing of the job ids (ListSchedules, a page at a time) grows with them. The stack
 * is the attention view's (bench/console-attention-seed.ts): N jobs with a FAILED occurrence each. Counts, not times.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ATTENTION_GROUP, counted, jobIdOf, PAUSED, seedAttentionStack } from '../../bench/console-attention-seed';
import { allTimelines, SERIES_PER_PAGE } from '../../console/server/all-timelines';
import type { ConsoleDeps } from '../../console/server/deps';
import { TIMELINE_ATTRIBUTES } from '../../console/server/timeline';
import { DynamoJobStateStore } from '../../functions/aws/job-state-store';
import { OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { SchedulerJobCatalogue } from '../../operations';
import { LOCAL_REGION } from '../../testing/local/local-aws';
import { useCliEmulator } from '../cli/support';

const emulator = useCliEmulator();

const emulated = (endpoint: string) => ({
  endpoint,
  region: LOCAL_REGION,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

describe('the all-jobs timeline on moto', () => {
  it.each([10, 100, 1_000])('reads at most SERIES_PER_PAGE partitions a page at %i jobs', async (jobs) => {
    const now = Date.now();
    const endpoint = emulator.moto.endpoint;
    const table = emulator.resources.tableName;
    await seedAttentionStack(endpoint, table, jobs, now);
    const counts = new Map<string, number>();
    const dynamo = counted(new DynamoDBClient(emulated(endpoint)), counts);
    const scheduler = counted(new SchedulerClient(emulated(endpoint)), counts);
    const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
    const reader = new OperatorOccurrenceReader(documents, table);
    // Only the ports the timeline reads: the catalogue, the job-state rows, the series' rows and the clock.
    const deps = {
      clock: { now: () => now },
      jobs: new SchedulerJobCatalogue(scheduler, ATTENTION_GROUP),
      states: new DynamoJobStateStore(documents, table),
      occurrences: {
        newestFirst: (series: string, range: { from: string; to: string; limit: number }) =>
          reader.listSeriesNewestFirst(series, range, TIMELINE_ATTRIBUTES),
      },
    } as unknown as ConsoleDeps;
    try {
      const view = await allTimelines(deps, { from: now - 86_400_000, to: now + 3_600_000, buckets: 200 });
      const onPage = Math.min(jobs, SERIES_PER_PAGE);
      expect(view.rows).toHaveLength(onPage);
      expect(view.jobCount).toBe(jobs);
      expect(view.cursor).toBe(jobs > SERIES_PER_PAGE ? jobIdOf(SERIES_PER_PAGE - 1) : undefined);
      // Each job's FAILED occurrence of three hours ago, counted in its bucket; the paused ones fire nothing ahead.
      for (const row of view.rows) expect(row.buckets.map(([, c]) => c.FAILED ?? 0).reduce((a, b) => a + b, 0)).toBe(1);
      expect(view.rows.filter((r) => r.paused)).toHaveLength(Math.min(PAUSED, onPage));
      const byName = Object.fromEntries(counts);
      // One Query per job on the page, one GetSchedule per job on the page; no GetItem for a fixed-schedule job.
      expect(byName.QueryCommand).toBe(onPage);
      expect(byName.GetScheduleCommand).toBe(onPage);
      expect(byName.GetItemCommand).toBeUndefined();
      // The job ids: ListSchedules, a page at a time (the only count that grows with the jobs; Scheduler, not
      // DynamoDB). The catalogue asks no page size, and moto answers 50 a page.
      expect(byName.ListSchedulesCommand).toBe(Math.ceil(jobs / 50));
      console.log(`all-jobs timeline on moto at ${jobs} jobs: ${JSON.stringify(byName)}`);
    } finally {
      dynamo.destroy();
      scheduler.destroy();
    }
  });
});
