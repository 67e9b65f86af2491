/**
 * The bulk creation figure on moto: each schedule of the anchor and of the registry's path leaves one registry row
 * and one Scheduler schedule in the job's group (the registry's rows synced), so the figure counts what it says. Not timed: the rate is a benchmark
 * figure (`npm run bench -- --only schedules`), not an assertion.
 */

import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { ListSchedulesCommand } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureAnchor, measureRegistry } from '../../bench/bulk-create';
import { localClients } from '../../testing/local/local-aws';
import { type MotoServer, startMotoServer } from '../../testing/local/moto-server';

describe('bulk creation on moto', () => {
  let moto: MotoServer;
  beforeAll(async () => {
    moto = await startMotoServer();
  });
  afterAll(async () => {
    await moto?.stop();
  });

  it('the anchor makes one row and one schedule per key', async () => {
    const clients = localClients(moto.endpoint);
    const run = await measureAnchor(clients, () => moto.reset(), { schedules: 25, concurrency: 4, inputBytes: 2_048 });

    expect(run.schedules).toBe(25);
    expect(run.perSecond).toBeGreaterThan(0);
    const rows = await clients.dynamo.send(new ScanCommand({ TableName: 'bench-registry', Select: 'COUNT' }));
    expect(rows.Count).toBe(25);
    const listed = await clients.scheduler.send(new ListSchedulesCommand({ GroupName: 'weekly-report' }));
    expect(listed.Schedules?.length).toBe(25);
    expect(new Set(listed.Schedules?.map((s) => s.Name)).size).toBe(25);
  });

  it("the registry's path makes one synced row and one schedule per key", async () => {
    const clients = localClients(moto.endpoint);
    const run = await measureRegistry(clients, () => moto.reset(), {
      schedules: 20,
      concurrency: 4,
      inputBytes: 2_048,
    });

    expect(run.schedules).toBe(20);
    const rows = await clients.dynamo.send(new ScanCommand({ TableName: 'bench-registry' }));
    expect(rows.Items?.length).toBe(20);
    expect(rows.Items?.filter((r) => r.syncDueAt !== undefined)).toEqual([]);
    const listed = await clients.scheduler.send(new ListSchedulesCommand({ GroupName: 'weekly-report' }));
    expect(listed.Schedules?.length).toBe(20);
  });
});
