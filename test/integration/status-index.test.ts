/**
 * The sharded status index on moto: the reconciler and the reader against the index as local-aws.ts creates it
 * (byStatusShard, INCLUDE projection), with the real adapters. Rows are seeded as the store writes them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SnsAnnouncer } from '../../functions/aws/announcer';
import { DynamoOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import { iso, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { noMetrics } from '../../functions/protocol/ports';
import { reconcile } from '../../functions/protocol/reconcile';
import { STATUS_INDEX_PROJECTION, shardOf } from '../../functions/protocol/table-schema';
import { workerLimits } from '../../functions/protocol/worker-limits';
import { createResources, type LocalClients, type LocalResources, localClients } from '../../testing/local/local-aws';
import { type MotoServer, startMotoServer } from '../../testing/local/moto-server';
import { HOURLY, putRows, row } from '../cli/support';

const { PENDING, RUNNING, SUCCEEDED } = OccurrenceStatus;
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
}, 60_000);
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
    const store = new DynamoOccurrenceStore(clients.documents, resources.tableName);
    const clock = { now: () => NOW };
    const report = await reconcile({
      index: new DynamoOccurrenceReader(clients.documents, resources.tableName),
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
      thresholds: {
        unannouncedAfterSeconds: 90_000,
        maxFixesPerRun: 10,
      },
    });
    expect(report.fixed.map((f) => [f.jobId, f.reason]).sort()).toEqual([
      ['dead-worker', 'lease-expired'],
      [HOURLY, 'never-announced'],
      [HOURLY, 'never-claimed'],
    ]);
    expect(report).toMatchObject({ errors: 0, skipped: 0, examined: 4 });
  });
});
