/**
 * The bulk creation figure's anchor on moto: each of its schedules leaves one registry row and one Scheduler
 * schedule in the job's group, so the figure counts what it says it counts. Not timed: the rate is a benchmark
 * figure (`npm run bench -- --only schedules`), not an assertion.
 */

import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { ListSchedulesCommand } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureAnchor } from '../../bench/bulk-create';
import { localClients } from '../../testing/local/local-aws';
import { type MotoServer, startMotoServer } from '../../testing/local/moto-server';

describe('bulk creation on moto', () => {
  let moto: MotoServer;
  beforeAll(async () => {
    moto = await startMotoServer();
  }, 60_000);
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
});
