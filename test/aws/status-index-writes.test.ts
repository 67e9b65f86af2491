/**
 * What each store write costs the status index, counted by the fake the way DynamoDB bills it (sim/fakes/
 * status-index.ts): heartbeats and lease extensions must write the table only, and every status change must move
 * the row to the index key of its new status.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DynamoOccurrenceStore, OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { Lease } from '../../functions/protocol/ports';
import { STATUS_INDEX_PROJECTION, statusShardOf } from '../../functions/protocol/table-schema';
import { FakeAws } from '../../sim/fakes/fake-aws';
import { KEY, MINUTE, NOW, occurrence, SECOND, TABLE } from './fixtures';

const { PENDING, RUNNING, RETRY_WAIT, SUCCEEDED, FAILED } = OccurrenceStatus;
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

  it('the insert writes one entry in the PENDING shard of the key', async () => {
    const cost = await indexCost(() => store.create(occurrence()));
    expect(cost).toEqual({ writes: 1, partitions: [statusShardOf(KEY, PENDING)] });
    expect(row().statusShard).toBe(statusShardOf(KEY, PENDING));
  });

  it('each status change writes the shard attribute in the same update: a delete and a put in the index', async () => {
    await store.create(occurrence());
    expect(await indexCost(() => claim(store))).toEqual({
      writes: 2,
      partitions: [statusShardOf(KEY, PENDING), statusShardOf(KEY, RUNNING)],
    });
    expect(row().statusShard).toBe(statusShardOf(KEY, RUNNING));
    expect((await indexCost(() => store.release(lease, NOW + MINUTE, 'boom', NOW, 'm-1'))).writes).toBe(2);
    expect(row().statusShard).toBe(statusShardOf(KEY, RETRY_WAIT));
    const second = { ...lease, leaseId: 'lease-2', attempt: 2 };
    await store.claim(KEY, {
      leaseId: second.leaseId,
      owner: 'w',
      now: NOW + MINUTE,
      leaseExpiresAt: NOW + 3 * MINUTE,
      maxAttempts: 3,
    });
    expect((await indexCost(() => store.complete(second, 'reports/r.txt', NOW + 2 * MINUTE))).writes).toBe(2);
    expect(row().statusShard).toBe(statusShardOf(KEY, SUCCEEDED));
  });

  it('the shard is the same for every status of one key, so one occurrence stays in one shard number', () => {
    const shards = [PENDING, RUNNING, RETRY_WAIT, SUCCEEDED, FAILED].map((s) => statusShardOf(KEY, s).split('#')[1]);
    expect(new Set(shards).size).toBe(1);
  });

  it('fail, failUnheld, completeUnheld and reopen write the shard of the status they set', async () => {
    await store.create(occurrence());
    await claim(store);
    await store.fail(lease, 'down', NOW);
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

  it('recording the announcement changes one projected attribute: one index write, no move', async () => {
    await store.create(occurrence());
    await claim(store);
    await store.complete(lease, 'reports/r.txt', NOW);
    expect(await indexCost(() => store.markNotified(KEY, 'n-1', NOW))).toEqual({
      writes: 1,
      partitions: [statusShardOf(KEY, SUCCEEDED)],
    });
  });
});
