/**
 * What each store write costs the status index, counted by the fake the way DynamoDB bills it (sim/fakes/
 * status-index.ts): heartbeats and lease extensions must write the table only; a change among the open statuses
 * (in flight, and SUCCEEDED until announced) rewrites the entry in place under `OPEN#<shard>`; a change to FAILED,
 * SKIPPED or CANCELLED moves it to that status's key; recording the announcement takes it out of the index.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DynamoOccurrenceStore, OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { Lease } from '../../functions/protocol/ports';
import { OPEN_STATUSES, STATUS_INDEX_PROJECTION, shardOf, statusShardOf } from '../../functions/protocol/table-schema';
import { FakeAws } from '../../sim/fakes/fake-aws';
import { KEY, MINUTE, NOW, occurrence, SECOND, TABLE } from './fixtures';

const { PENDING, RUNNING, RETRY_WAIT, SUCCEEDED, FAILED, BUFFERED } = OccurrenceStatus;
let aws: FakeAws;
let store: OperatorOccurrenceStore;
const lease: Lease = { key: KEY, leaseId: 'lease-1', attempt: 1 };

beforeEach(() => {
  aws = new FakeAws(() => NOW);
  const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
  store = new OperatorOccurrenceStore(documents, TABLE);
});
afterEach(() => aws.restore());

const row = () => aws.row(KEY.jobId, KEY.scheduledTime)!;
const claim = (s: DynamoOccurrenceStore, now = NOW) =>
  s.claim(KEY, { leaseId: lease.leaseId, owner: 'w', now, leaseExpiresAt: now + 2 * MINUTE, maxAttempts: 3 });

/** The index writes of one store call, and the index partitions they touched. */
async function indexCost(write: () => Promise<unknown>) {
  const before = aws.statusIndex.log.length;
  const writes = aws.statusIndex.writes;
  await write();
  return {
    writes: aws.statusIndex.writes - writes,
    partitions: aws.statusIndex.log.slice(before).flatMap((w) => w.partitions),
  };
}

describe('status index writes', () => {
  it('the projection leaves out what a heartbeat changes', () => {
    expect(STATUS_INDEX_PROJECTION).not.toContain('leaseExpiresAt');
    expect(STATUS_INDEX_PROJECTION).not.toContain('heartbeatAt');
    expect(STATUS_INDEX_PROJECTION).not.toContain('leaseId');
  });

  it('a heartbeat (extend) writes the table only, not the index', async () => {
    await store.create(occurrence());
    await claim(store);
    const cost = await indexCost(() => store.extend(lease, NOW + 4 * MINUTE, NOW + MINUTE));
    expect(cost.writes).toBe(0);
    expect(row().leaseExpiresAt).toBe(new Date(NOW + 4 * MINUTE).toISOString());
  });

  it('the insert writes one entry in the OPEN shard of the key', async () => {
    const cost = await indexCost(() => store.create(occurrence()));
    expect(cost).toEqual({ writes: 1, partitions: [`OPEN#${shardOf(KEY)}`] });
    expect(row().statusShard).toBe(statusShardOf(KEY, PENDING));
  });

  it('the happy path costs 4 index writes: insert, claim and complete in place under OPEN, the announcement a removal', async () => {
    const open = `OPEN#${shardOf(KEY)}`;
    const costs = [
      await indexCost(() => store.create(occurrence())),
      await indexCost(() => claim(store)),
      await indexCost(() => store.complete(lease, 'reports/r.txt', NOW + SECOND)),
      await indexCost(() => store.markNotified(KEY, 'n-1', NOW + 2 * SECOND)),
    ];
    expect(costs).toEqual([1, 1, 1, 1].map((writes) => ({ writes, partitions: [open] })));
    // Before, with a key per status: 1 + 2 + 2 + 1 = 6.
    expect(costs.reduce((sum, c) => sum + c.writes, 0)).toBe(4);
    expect(row()).not.toHaveProperty('statusShard');
    expect(aws.statusIndex.entries('byStatusShard')).toEqual([]);
  });

  it('a change among the open statuses rewrites the entry in place: one write, the projected status changes', async () => {
    await store.create(occurrence());
    const open = statusShardOf(KEY, PENDING);
    expect(await indexCost(() => claim(store))).toEqual({ writes: 1, partitions: [open] });
    expect(row().statusShard).toBe(open);
    expect(await indexCost(() => store.release(lease, NOW + MINUTE, 'boom', NOW, 'm-1'))).toEqual({
      writes: 1,
      partitions: [open],
    });
    expect(aws.statusIndex.entries('byStatusShard')).toEqual([expect.objectContaining({ status: RETRY_WAIT })]);
    const second = { ...lease, leaseId: 'lease-2', attempt: 2 };
    await store.claim(KEY, {
      leaseId: second.leaseId,
      owner: 'w',
      now: NOW + MINUTE,
      leaseExpiresAt: NOW + 3 * MINUTE,
      maxAttempts: 3,
    });
    expect((await indexCost(() => store.bufferClaimed(second, NOW + MINUTE))).writes).toBe(1);
    expect(row()).toMatchObject({ status: BUFFERED, statusShard: open });
  });

  it('the shard is the same for every status of one key, so one occurrence stays in one shard number', () => {
    const shards = [PENDING, RUNNING, RETRY_WAIT, SUCCEEDED, FAILED].map((s) => statusShardOf(KEY, s).split('#')[1]);
    expect(new Set(shards).size).toBe(1);
  });

  it('every open status shares the OPEN key; FAILED, SKIPPED and CANCELLED keep their own', () => {
    const keyOf = (s: OccurrenceStatus) => statusShardOf(KEY, s).split('#')[0];
    expect(Object.values(OccurrenceStatus).map((s) => [s, keyOf(s)])).toEqual(
      Object.values(OccurrenceStatus).map((s) => [s, OPEN_STATUSES.includes(s) ? 'OPEN' : s]),
    );
    expect(OPEN_STATUSES).toEqual([PENDING, RUNNING, RETRY_WAIT, BUFFERED, SUCCEEDED]);
  });

  it('fail, failUnheld, completeUnheld and reopen write the key of the status they set', async () => {
    await store.create(occurrence());
    await claim(store);
    expect(await indexCost(() => store.fail(lease, 'down', NOW))).toEqual({
      writes: 2,
      partitions: [`OPEN#${shardOf(KEY)}`, `FAILED#${shardOf(KEY)}`],
    });
    expect(row().statusShard).toBe(statusShardOf(KEY, FAILED));
    await store.reopenFailed(KEY, { now: NOW + SECOND, deadlineAt: NOW + 60 * MINUTE, ttl: 1, worker: 'reports' });
    expect(row().statusShard).toBe(statusShardOf(KEY, PENDING));
    await store.failUnheld(KEY, 'out of attempts', NOW + 2 * SECOND);
    expect(row().statusShard).toBe(statusShardOf(KEY, FAILED));
    aws.table.clear();
    await store.create(occurrence());
    await store.completeUnheld(KEY, 'reports/r.txt', NOW);
    expect(row().statusShard).toBe(statusShardOf(KEY, SUCCEEDED));
  });

  it('recording the announcement removes the entry in the same write (one index write), and a repeat writes nothing', async () => {
    await store.create(occurrence());
    await claim(store);
    await store.complete(lease, 'reports/r.txt', NOW);
    expect(await indexCost(() => store.markNotified(KEY, 'n-1', NOW))).toEqual({
      writes: 1,
      partitions: [statusShardOf(KEY, SUCCEEDED)],
    });
    expect(row()).toMatchObject({ notifiedAt: new Date(NOW).toISOString(), notificationId: 'n-1' });
    expect(row()).not.toHaveProperty('statusShard');
    expect(await indexCost(() => store.markNotified(KEY, 'n-2', NOW))).toEqual({ writes: 0, partitions: [] });
  });
});
