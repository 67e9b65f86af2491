/**
 * The sharded status index on moto: the reconciler and the reader against the index as local-aws.ts creates it
 * (byStatusShard, INCLUDE projection), with the real adapters. Rows are seeded as the store writes them (OPEN#k while
 * in flight or unannounced, no key once announced), or, for `occurrences reindex`, as releases before wrote them.
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reindex } from '../../bin/occurrences/commands/reindex';
import { SnsAnnouncer } from '../../functions/aws/announcer';
import { DynamoOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { DynamoOccurrenceStore, OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import { iso, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { noMetrics } from '../../functions/protocol/ports';
import { reconcile } from '../../functions/protocol/reconcile';
import {
  LEGACY_STATUS_INDEX_SHARDS,
  OCCURRENCE_TABLE,
  STATUS_INDEX_PROJECTION,
  STATUS_INDEX_SHARDS,
  shardOf,
} from '../../functions/protocol/table-schema';
import { workerLimits } from '../../functions/protocol/worker-limits';
import { createResources, type LocalClients, type LocalResources, localClients } from '../../testing/local/local-aws';
import { type MotoServer, startMotoServer } from '../../testing/local/moto-server';
import { HOURLY, putRows, row } from '../cli/support';

const { PENDING, RUNNING, SUCCEEDED, FAILED, RETRY_WAIT } = OccurrenceStatus;
const NOW = Date.parse('2026-11-30T12:00:00.000Z');
const HOUR = 3600_000;
const WORKER = 'reports';
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

let moto: MotoServer;
let clients: LocalClients;
let resources: LocalResources;

beforeAll(async () => {
  moto = await startMotoServer();
  clients = localClients(moto.endpoint);
});
afterAll(async () => moto?.stop());
beforeEach(async () => {
  await moto.reset();
  resources = await createResources(clients, { limits: workerLimits([]) });
});

/** Hourly occurrences of many jobs, so that they land on many shards. */
const times = (n: number) => Array.from({ length: n }, (_, i) => iso(NOW - (i + 3) * HOUR).replace('.000', ''));

describe('status index on moto', () => {
  it('lists one status from every shard, merged oldest first, with only the projected attributes', async () => {
    const rows = times(40).map((t, i) =>
      row(`job-${i}`, t, RUNNING, NOW, { claimedAt: t, leaseExpiresAt: iso(NOW + 60_000), heartbeatAt: t }),
    );
    await putRows(clients, resources.tableName, rows);
    expect(new Set(rows.map((r) => shardOf(r))).size).toBeGreaterThan(10);
    const reader = new DynamoOccurrenceReader(clients.documents, resources.tableName);
    const entries = await reader.listIndexed(RUNNING, '2026-11-28T00:00:00Z', iso(NOW));
    expect(entries.map((e) => e.scheduledTime)).toEqual(rows.map((r) => r.scheduledTime).sort());
    const allowed = new Set<string>(['jobId', 'scheduledTime', 'statusShard', ...STATUS_INDEX_PROJECTION]);
    for (const e of entries) expect(Object.keys(e).filter((k) => !allowed.has(k))).toEqual([]);
    const full = await reader.readRows(entries);
    expect(full.every((r) => r.leaseExpiresAt !== undefined)).toBe(true);
  });

  it('the reconciler finds a never-claimed row, an expired lease and an unannounced report, and leaves a live lease', async () => {
    const old = iso(NOW - 2 * HOUR).replace('.000', '');
    await putRows(clients, resources.tableName, [
      row(HOURLY, old, PENDING, NOW, { createdAt: iso(NOW - 2 * HOUR), worker: WORKER }),
      row('dead-worker', old, RUNNING, NOW, {
        claimedAt: iso(NOW - 2 * HOUR),
        leaseId: 'dead',
        leaseExpiresAt: iso(NOW - HOUR),
        worker: WORKER,
      }),
      // Claimed as long ago, but its heartbeats keep the lease alive: read, and left alone.
      row('long-job', old, RUNNING, NOW, {
        claimedAt: iso(NOW - 2 * HOUR),
        leaseId: 'live',
        leaseExpiresAt: iso(NOW + 60_000),
        worker: WORKER,
      }),
      row(HOURLY, iso(NOW - 30 * HOUR).replace('.000', ''), SUCCEEDED, NOW, {
        reportKey: 'reports/x.txt',
        succeededAt: iso(NOW - 30 * HOUR),
      }),
    ]);
    const report = await reconcileOnMoto();
    expect(report.fixed.map((f) => [f.jobId, f.reason]).sort()).toEqual([
      ['dead-worker', 'lease-expired'],
      [HOURLY, 'never-announced'],
      [HOURLY, 'never-claimed'],
    ]);
    expect(report).toMatchObject({ errors: 0, skipped: 0, examined: 4 });
    // The announced success left the index in the same write that recorded the announcement.
    const announced = await rowOf(HOURLY, iso(NOW - 30 * HOUR).replace('.000', ''));
    expect(announced).toMatchObject({ status: SUCCEEDED, notifiedAt: iso(NOW) });
    expect(announced).not.toHaveProperty('statusShard');
  });

  it('an idle reconciler run sends one Query per open shard (64), and nothing else', async () => {
    let requests = 0;
    const counted = {
      send: (command: never) => {
        requests++;
        return clients.documents.send(command);
      },
    };
    const report = await reconcileOnMoto(counted as unknown as typeof clients.documents);
    expect(report).toMatchObject({ examined: 0, errors: 0, fixed: [] });
    expect(requests).toBe(STATUS_INDEX_SHARDS);
  });

  it('the happy path updates one index item in place under OPEN#k, and the announcement removes it', async () => {
    const store = new DynamoOccurrenceStore(clients.documents, resources.tableName);
    const key = { jobId: HOURLY, scheduledTime: '2026-11-30T11:30:00Z' };
    const open = `OPEN#${shardOf(key)}`;
    const entries = async () => {
      const out = await clients.documents.send(
        new QueryCommand({
          TableName: resources.tableName,
          IndexName: OCCURRENCE_TABLE.statusIndex.name,
          KeyConditionExpression: 'statusShard = :shard',
          ExpressionAttributeValues: { ':shard': open },
        }),
      );
      return (out.Items ?? []).map((i) => i.status);
    };
    await store.create(row(HOURLY, key.scheduledTime, PENDING, NOW, { worker: WORKER }));
    expect(await entries()).toEqual([PENDING]);
    const lease = { key, leaseId: 'lease-1', attempt: 1 };
    expect(
      await store.claim(key, {
        leaseId: lease.leaseId,
        owner: 'w',
        now: NOW,
        leaseExpiresAt: NOW + 60_000,
        maxAttempts: 3,
      }),
    ).toMatchObject({ claimed: true });
    expect(await entries()).toEqual([RUNNING]);
    await store.complete(lease, 'reports/r.txt', NOW + 1_000);
    expect(await entries()).toEqual([SUCCEEDED]);
    expect(await store.markNotified(key, 'n-1', NOW + 2_000)).toBe(true);
    expect(await entries()).toEqual([]);
    expect(await rowOf(key.jobId, key.scheduledTime)).not.toHaveProperty('statusShard');
  });
});

describe('occurrences reindex on moto', () => {
  /** A row as a release before the OPEN key wrote it: its status's own key. */
  const legacy = (jobId: string, status: OccurrenceStatus, extra: object = {}) => {
    const r = row(jobId, '2026-11-30T10:00:00Z', status, NOW, { worker: WORKER, ...extra });
    // Under the 64 shards of before: reindex reads those.
    return { ...r, statusShard: `${status}#${shardOf(r, LEGACY_STATUS_INDEX_SHARDS)}` };
  };
  const sources = () => ({
    reader: new DynamoOccurrenceReader(clients.documents, resources.tableName),
    store: new OperatorOccurrenceStore(clients.documents, resources.tableName),
  });

  it('moves in-flight and unannounced legacy entries to OPEN#k, takes announced successes out, leaves FAILED; a second run finds nothing', async () => {
    const rows = [
      legacy('pending', PENDING),
      legacy('running', RUNNING, { leaseExpiresAt: iso(NOW) }),
      legacy('retrying', RETRY_WAIT, { nextAttemptAt: iso(NOW) }),
      legacy('unannounced', SUCCEEDED, { reportKey: 'r', succeededAt: iso(NOW) }),
      legacy('announced', SUCCEEDED, { reportKey: 'r', succeededAt: iso(NOW), notifiedAt: iso(NOW) }),
      legacy('failed', FAILED, { lastError: 'boom' }),
    ];
    for (const item of rows)
      await clients.documents.send(new PutCommand({ TableName: resources.tableName, Item: item }));

    const dry = await reindex(sources(), { dryRun: true });
    expect(dry).toEqual({ examined: 5, movedToOpen: 4, removed: 1, changedMeanwhile: 0, errors: 0 });
    expect((await rowOf('pending', '2026-11-30T10:00:00Z'))?.statusShard).toBe(rows[0]?.statusShard);

    expect(await reindex(sources(), { dryRun: false })).toEqual(dry);
    for (const r of rows) {
      const now = await rowOf(r.jobId, r.scheduledTime);
      const expected =
        r.jobId === 'announced' ? undefined : r.jobId === 'failed' ? r.statusShard : `OPEN#${shardOf(r)}`;
      expect([r.jobId, now?.statusShard]).toEqual([r.jobId, expected]);
    }
    expect(await reindex(sources(), { dryRun: false })).toMatchObject({ examined: 0, movedToOpen: 0, removed: 0 });
  });

  it('leaves a row whose key a writer changed meanwhile, and counts it', async () => {
    const stale = legacy('claimed', PENDING);
    await clients.documents.send(new PutCommand({ TableName: resources.tableName, Item: stale }));
    const { reader, store } = sources();
    // The entry is read under PENDING#k; before its move, a worker's claim gives the row the new key.
    const racing = {
      async *shardPages(shard: string, from: string, to: string) {
        for await (const page of reader.shardPages(shard, from, to)) {
          for (const e of page)
            await clients.documents.send(
              new PutCommand({
                TableName: resources.tableName,
                Item: { ...stale, status: RUNNING, statusShard: `OPEN#${shardOf(e)}` },
              }),
            );
          yield page;
        }
      },
    };
    expect(await reindex({ reader: racing, store }, { dryRun: false })).toMatchObject({
      examined: 1,
      movedToOpen: 0,
      changedMeanwhile: 1,
    });
    expect(await rowOf('claimed', stale.scheduledTime)).toMatchObject({
      status: RUNNING,
      statusShard: `OPEN#${shardOf(stale)}`,
    });
  });
});

async function rowOf(jobId: string, scheduledTime: string) {
  const out = await clients.documents.send(
    new GetCommand({ TableName: resources.tableName, Key: { jobId, scheduledTime } }),
  );
  return out.Item;
}

/** One reconciler run on moto as deployed, at NOW, through `documents` (to count its requests). */
function reconcileOnMoto(documents = clients.documents) {
  const store = new DynamoOccurrenceStore(clients.documents, resources.tableName);
  const clock = { now: () => NOW };
  return reconcile({
    index: new DynamoOccurrenceReader(documents, resources.tableName),
    store,
    workers: new Map([
      [WORKER, { queue: new SqsWorkQueue(clients.sqs, resources.jobQueueUrl), stuckAfterSeconds: 1_200 }],
    ]),
    announce: {
      store,
      announcer: new SnsAnnouncer(clients.sns, resources.reportReadyTopicArn),
      clock,
      logger: quiet,
      bucketName: resources.bucketName,
    },
    clock,
    logger: quiet,
    metrics: noMetrics,
    thresholds: { unannouncedAfterSeconds: 90_000, maxFixesPerRun: 10 },
  });
}
