import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ASSUMPTIONS,
  formatPartitionModel,
  partitionLoad,
  partitionModel,
  shardsNeeded,
  statusChangesPerSecond,
} from '../../bench/partition-model';
import { STATUS_INDEX_SHARDS } from '../../functions/protocol/table-schema';

describe('Function: statusChangesPerSecond', () => {
  it('is bounded by the tick size, the Scheduler rate and what Lambda concurrency turns over', () => {
    expect(statusChangesPerSecond(500)).toBe(500);
    // 1,000 concurrent executions of 50 ms: 20,000 per second, also the Scheduler rate assumed.
    expect(statusChangesPerSecond(100_000)).toBe(20_000);
    expect(statusChangesPerSecond(100_000, { ...DEFAULT_ASSUMPTIONS, schedulerInvocationsPerSecond: 1_000 })).toBe(
      1_000,
    );
  });
});

describe('Function: partitionLoad', () => {
  it('before: one tick puts 2 writes per occurrence and second on one status key, plus the heartbeats on RUNNING', () => {
    const at10k = partitionLoad(10_000, 'byStatus (before)');
    // RUNNING: 10,000 claims + 10,000 completes + 1,000 running / 45 s heartbeats.
    expect(at10k.indexPartitionWcu).toBeCloseTo(20_000 + 1_000 / 45, 6);
    expect(at10k.hottestIndexPartition).toBe('RUNNING');
    expect(at10k.withinLimit).toBe(false);
    expect(partitionLoad(100_000, 'byStatus (before)').indexPartitionWcu).toBeCloseTo(40_000 + 1_000 / 45, 6);
  });

  it('before, even at the default Scheduler rate of 1,000 per second, the status key is over its limit', () => {
    const load = partitionLoad(100_000, 'byStatus (before)', {
      ...DEFAULT_ASSUMPTIONS,
      schedulerInvocationsPerSecond: 1_000,
    });
    expect(load.indexPartitionWcu).toBeGreaterThan(2_000);
    expect(load.withinLimit).toBe(false);
  });

  it('after: the same writes over 64 shards, and no heartbeat among them', () => {
    const at10k = partitionLoad(10_000, 'byStatusShard (after)');
    expect(at10k.indexPartitionWcu).toBe(20_000 / STATUS_INDEX_SHARDS); // 312.5
    const at100k = partitionLoad(100_000, 'byStatusShard (after)');
    expect(at100k.indexPartitionWcu).toBe(40_000 / STATUS_INDEX_SHARDS); // 625
    expect(at100k.withinLimit).toBe(true);
  });

  it('the table: one key takes a few writes a second, and the tick spreads over the partitions it needs', () => {
    const load = partitionLoad(100_000, 'byStatusShard (after)');
    expect(load.tableKeyWcu).toBe(2);
    expect(load.tableWcu).toBeCloseTo(80_000 + 1_000 / 45, 6);
    expect(load.tablePartitionsNeeded).toBe(81);
  });
});

describe('Function: shardsNeeded', () => {
  it('64 shards hold 20,000 changes per second within the limit with room to spare', () => {
    expect(shardsNeeded(20_000)).toBe(40);
    expect(shardsNeeded(20_000, 0.625)).toBe(64);
    expect(STATUS_INDEX_SHARDS).toBeGreaterThanOrEqual(shardsNeeded(20_000));
  });
});

describe('Function: partitionModel', () => {
  it('covers N = 10,000 and 100,000, before and after, and after is within the limit at both', () => {
    const rows = partitionModel();
    expect(rows.map((r) => [r.occurrences, r.design, r.withinLimit])).toEqual([
      [10_000, 'byStatus (before)', false],
      [10_000, 'byStatusShard (after)', true],
      [100_000, 'byStatus (before)', false],
      [100_000, 'byStatusShard (after)', true],
    ]);
    expect(formatPartitionModel(rows)).toContain('THROTTLED');
  });
});
