/**
 * A job's maxConcurrency against moto's DynamoDB (the capacity row's compare-and-swap, the waiting list's Query in
 * sort-key order, its deletes) and SQS (the wake-ups), through the real trigger and worker handlers of scripts/local
 * with 4 pollers: a job with maxConcurrency 2 and 10 occurrences fired at once never runs more than 2 at once, seen
 * both by the job itself and on the capacity row, and all 10 SUCCEED.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { CAPACITY_SORT_KEY, WAIT_PREFIX } from '../../functions/aws/capacity-store';
import type { JobDefinition } from '../../functions/protocol/ports';
import { JOB_ID, occurrences, pipeline, testSettings, useMoto } from './emulator';

const emulator = useMoto();
const SETTLE_MS = 60_000;

describe('maxConcurrency on moto', () => {
  it('runs 10 occurrences at most 2 at a time; the capacity row never holds more than 2; all SUCCEED', async () => {
    const seen = { running: 0, most: 0 };
    const job: JobDefinition = {
      reportExtension: 'txt',
      async run(occurrence) {
        seen.running++;
        seen.most = Math.max(seen.most, seen.running);
        await new Promise((resolve) => setTimeout(resolve, 700));
        seen.running--;
        return { body: `report of ${occurrence.scheduledTime}`, contentType: 'text/plain' };
      },
    };
    const p = await pipeline(emulator, {
      jobs: { [JOB_ID]: job },
      settings: [testSettings({ overlap: 'allowAll', maxConcurrency: 2 })],
      workers: 4,
    });
    const keys = occurrences(10);
    p.start();
    await p.fire(keys);
    // Watch the capacity row while they drain (bounded: the settle wait below ends the loop).
    let mostHolds = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const row = await p.clients.documents.send(
          new GetCommand({
            TableName: p.resources.tableName,
            Key: { jobId: JOB_ID, scheduledTime: CAPACITY_SORT_KEY },
            ConsistentRead: true,
          }),
        );
        const holds = (row.Item?.holds as { expiresAt: number }[] | undefined) ?? [];
        mostHolds = Math.max(mostHolds, holds.filter((h) => h.expiresAt > Date.now()).length);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const rows = await p.waitUntilSettled(keys, SETTLE_MS);
    watching = false;
    await watch;
    await p.stop();
    expect(rows.map((r) => r?.status)).toEqual(keys.map(() => 'SUCCEEDED'));
    expect(seen.most).toBe(2);
    expect(mostHolds).toBeGreaterThan(0);
    expect(mostHolds).toBeLessThanOrEqual(2);
    const waiting = await p.clients.documents.send(
      new QueryCommand({
        TableName: p.resources.tableName,
        KeyConditionExpression: 'jobId = :j AND begins_with(scheduledTime, :w)',
        ExpressionAttributeValues: { ':j': JOB_ID, ':w': WAIT_PREFIX },
      }),
    );
    expect(waiting.Items).toEqual([]);
  });
});
