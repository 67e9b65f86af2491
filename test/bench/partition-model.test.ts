import { describe, expect, it } from 'vitest';
import {
  busiestShardPerSecond,
  DEFAULT_ASSUMPTIONS,
  FLEXIBLE_15_MIN,
  formatKeyedOperations,
  formatKeyedPartitionModel,
  formatPartitionModel,
  KEYED_TICK_ASSUMPTIONS,
  keyedPartitionModel,
  keyedRowWriteUnits,
  keyedShardOf,
  keyedTickLoad,
  keyedTickRates,
  NO_WINDOW,
  partitionLoad,
  partitionModel,
  pauseReadsPerSecond,
  shardImbalance,
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

  it("after: an occurrence's four OPEN writes over 128 shards, and no heartbeat among them", () => {
    const at10k = partitionLoad(10_000, 'byStatusShard (after)');
    expect(at10k.hottestIndexPartition).toBe('OPEN#<shard>');
    expect(at10k.indexPartitionWcu).toBe((4 * 10_000) / STATUS_INDEX_SHARDS); // 312.5
    const at100k = partitionLoad(100_000, 'byStatusShard (after)');
    expect(at100k.indexPartitionWcu).toBe((4 * 20_000) / STATUS_INDEX_SHARDS); // 625
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
  it('128 shards hold 20,000 changes per second (four OPEN writes each) within the limit with room to spare', () => {
    expect(shardsNeeded(20_000)).toBe(80);
    expect(shardsNeeded(20_000, 0.625)).toBe(128);
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

describe('Run-time schedules: one job with N keys on one tick', () => {
  const a = KEYED_TICK_ASSUMPTIONS;

  it('sizes every write of a keyed row with its 2 KB input at 3 write units (the measured row plus ~2.1 KB)', () => {
    // insert 172 + 2,138 = 2,310 bytes; notify 634 + 2,138 + 37 = 2,809 bytes: all within 3 KB.
    expect(keyedRowWriteUnits(a)).toEqual({ insert: 3, claim: 3, complete: 3, notify: 3, heartbeat: 3 });
    expect(keyedRowWriteUnits({ ...a, inputBytes: 0 })).toEqual({
      insert: 1,
      claim: 1,
      complete: 1,
      notify: 1,
      heartbeat: 1,
    });
  });

  it('without a window, the tick arrives at the Scheduler rate; a 15-min window spreads N over 900 s', () => {
    const none = keyedTickRates(100_000, NO_WINDOW, a);
    expect(none.arrivals).toBe(1_000);
    // 200 reserved × batches of 5 = 1,000 slots claim in the first second, then 1,000 / 60.1 s a second.
    expect(none.claims).toBe(1_000);
    expect(none.claimsSteady).toBeCloseTo(1_000 / 60.1, 6);
    expect(none.heartbeats).toBe(1_000 / 40);
    expect(none.drainSeconds).toBeCloseTo(100_000 / (1_000 / 60.1), 6);
    const windowed = keyedTickRates(100_000, FLEXIBLE_15_MIN, a);
    expect(windowed.arrivals).toBeCloseTo(100_000 / 900, 6);
    // 1,000,000 / 900 s is over the Scheduler rate: the window changes nothing there.
    expect(keyedTickRates(1_000_000, FLEXIBLE_15_MIN, a).arrivals).toBe(1_000);
  });

  it('the trigger reserved concurrency caps the inserts below the Scheduler rate when it is the smaller', () => {
    const r = keyedTickRates(100_000, NO_WINDOW, { ...a, triggerConcurrency: 10 });
    expect(r.inserts).toBe(200); // 10 / 0.05 s
  });

  it('puts on each series key all of its one occurrence at most (14 units), and spreads the index over 128 shards', () => {
    const load = keyedTickLoad(100_000, NO_WINDOW, a);
    expect(load.tableKeyWcu).toBe(3 + 3 + 1 + 3 + 1 + 3);
    // OPEN takes 1,000 inserts + 1,000 claims + 1,000 completions + 1,000 announcements a second: 4,000 / 128 =
    // 31.25, plus three standard deviations.
    expect(load.hottestIndexKey).toBe('OPEN#<shard>');
    expect(load.hottestIndexWcu).toBeCloseTo(busiestShardPerSecond(4_000, 128), 6);
    expect(load.hottestIndexWcu).toBeGreaterThan(4_000 / 128);
    expect(load.hottestIndexWcu).toBeLessThan(50);
    expect(load.withinLimit).toBe(true);
    // Hashing the job id alone (shardOf before run-time schedules) puts the tick's OPEN writes on one key: four times its limit.
    expect(load.jobIdShardIndexWcu).toBe(4_000);
    // inserts 3,000 + claims with slot 4,000 + heartbeats 75 + completions with slot 4,000 + notifies 3,000.
    expect(load.tableWcu).toBeCloseTo(3_000 + 4_000 + 75 + 4_000 + 3_000, 6);
    expect(load.tablePartitionsNeeded).toBe(15);
  });

  it('a heartbeat writes the table only', () => {
    const beat = keyedTickLoad(100_000, NO_WINDOW, a).operations.find((o) => o.operation === 'heartbeat');
    expect(beat?.indexShardWcu).toBe(0);
    expect(beat?.tableWcu).toBe(25 * 3);
  });

  it('the real hash spreads the keys of one job evenly over the shards', () => {
    expect(shardImbalance(64_000)).toBeLessThan(1.15);
    const shards = new Set(Array.from({ length: 1_000 }, (_, i) => keyedShardOf('j', `k${i}`, 't', 64)));
    expect(shards.size).toBe(64);
  });

  it('covers 100,000 and 1,000,000 keys at the default quotas with and without a window, and raised', () => {
    const rows = keyedPartitionModel(a);
    expect(rows.map((r) => [r.keys, r.spread.label, r.withinLimit])).toEqual([
      [100_000, 'no flexible window', true],
      [100_000, 'flexible window 15 min', true],
      [100_000, 'no window, quotas raised', true],
      [1_000_000, 'no flexible window', true],
      [1_000_000, 'flexible window 15 min', true],
      [1_000_000, 'no window, quotas raised', true],
    ]);
    expect(formatKeyedPartitionModel(rows)).toContain('OPEN#<shard>');
    expect(formatKeyedOperations(rows[0] as (typeof rows)[number])).toContain("trigger's insert");
  });
});

describe('Function: pauseReadsPerSecond', () => {
  it('reads the whole job row once per start without a cache, at most once per container per 15 s with one', () => {
    expect(pauseReadsPerSecond(1_000, 200, 0)).toEqual({
      reads: 1_000,
      readUnits: 500,
      uncachedReads: 1_000,
      uncachedReadUnits: 500,
    });
    const cached = pauseReadsPerSecond(1_000, 200, 15);
    expect(cached.reads).toBeCloseTo(200 / 15, 6);
    expect(pauseReadsPerSecond(5, 200, 15).reads).toBe(5);
    // A batch of 5 run at once can miss together when the entry expires: at most 5 reads per container per 15 s.
    expect(pauseReadsPerSecond(1_000, 200, 15, 5).reads).toBeCloseTo(1_000 / 15, 6);
  });
});
