import { describe, expect, it } from 'vitest';
import { itemSize } from '../../bench/item-size';
import {
  AUDIT_BUCKETS,
  auditRun,
  bulkCreateSeconds,
  RECONCILER_RUNS_PER_MONTH,
  registryBulkLoad,
  registryRow,
  upsertUnits,
} from '../../bench/registry-model';

describe('Function: upsertUnits', () => {
  it('a row without input is one write unit: put and markSynced on the table and on both indexes, 6 in all', () => {
    expect(itemSize(registryRow(0))).toBeLessThan(1024);
    expect(upsertUnits(0)).toMatchObject({ readUnits: 1, tableWriteUnits: 2, totalWriteUnits: 6 });
  });

  it('a 2 KB input makes each of those six writes 3 units (the indexes project ALL)', () => {
    const u = upsertUnits(2_048);
    expect(u.rowBytes).toBeGreaterThan(2_048);
    expect(u.rowBytes).toBeLessThanOrEqual(3 * 1024);
    expect(u).toMatchObject({
      tableWriteUnits: 6,
      syncIndexWriteUnits: 6,
      auditIndexWriteUnits: 6,
      totalWriteUnits: 18,
    });
  });
});

describe('Function: registryBulkLoad', () => {
  it("puts every upsert's two writes on the job's one partition key: 500 a second fill one partition", () => {
    const at500 = registryBulkLoad(500, 0);
    expect(at500.jobKeyWcu).toBe(1_000);
    expect(at500.withinOnePartition).toBe(true);
    expect(at500.onePartitionUpsertsPerSecond).toBe(500);
    const at1000 = registryBulkLoad(1_000, 0);
    expect(at1000.jobKeyWcu).toBe(2_000);
    expect(at1000.withinOnePartition).toBe(false);
    // With the largest input, one partition takes 166 upserts a second.
    expect(registryBulkLoad(1_000, 2_048).onePartitionUpsertsPerSecond).toBe(166);
    expect(registryBulkLoad(1_000, 2_048).jobKeyWcu).toBe(6_000);
  });

  it('spreads the index writes over 16 sync shards and 256 audit buckets', () => {
    const load = registryBulkLoad(1_000, 0);
    expect(load.syncShardWcu).toBeGreaterThan((1_000 / 16) * 2);
    expect(load.syncShardWcu).toBeLessThan(200);
    expect(load.auditBucketWcu).toBeLessThan(25);
  });
});

describe('Function: bulkCreateSeconds', () => {
  it('100,000 at 1,000 a second take 100 s once the key is split; 200 s within one partition', () => {
    expect(bulkCreateSeconds(100_000, 1_000, 0, true)).toBe(100);
    expect(bulkCreateSeconds(100_000, 1_000, 0, false)).toBe(200);
    expect(bulkCreateSeconds(100_000, 5_000, 0, true)).toBe(20);
  });
});

describe('Function: auditRun', () => {
  it('reads K = 8 of 256 buckets a run: pages of 100 schedules and the rows of those buckets', () => {
    const run = auditRun(100_000, 0);
    expect(run.perBucket).toBe(391);
    expect(run.listPages).toBe(8 * 4);
    // 391 rows × 370 bytes = 144,670 bytes: 36 units of 4 KB, half each.
    expect(run.queryReadUnits).toBe(8 * 18);
    expect(run.sweepReadUnits).toBe(8);
    expect(run.fullCycleMinutes).toBe(160);
    const big = auditRun(1_000_000, 0);
    expect(big.listPages).toBe(8 * 40);
    // At least what a ListSchedules quota of 50 a second allows.
    expect(big.seconds).toBeGreaterThanOrEqual(320 / 50);
    expect(AUDIT_BUCKETS * big.perBucket).toBeGreaterThanOrEqual(1_000_000);
    expect(RECONCILER_RUNS_PER_MONTH).toBe(8_640);
  });
});
