/**
 * `occurrences bulk retry` on moto, through the command line and the real adapters: 200 FAILED occurrences, the run
 * interrupted (Ctrl-C) after about 100, then resumed with its id. Every occurrence is reopened and enqueued exactly
 * once, the ones that failed again between the two runs included (they hold the run's id, so the resumed run skips
 * them), and each row's history names who retried it and the run.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { CliDeps } from '../../bin/occurrences/context';
import { runCli } from '../../bin/occurrences/program';
import type { ManualRetryFields, ReopenRecord } from '../../functions/protocol/manual-retry';
import { type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { cliDeps, deployedFlags, HOURLY, messagesIn, putRows, row, useCliEmulator } from '../cli/support';

const { FAILED, PENDING } = OccurrenceStatus;
const ROWS = 200;
const ARN = 'arn:aws:sts::123456789012:assumed-role/Operators/alice';
const emulator = useCliEmulator({ deployed: true });

type Row = Occurrence & ManualRetryFields;

async function hourlyRows(): Promise<Row[]> {
  const rows: Row[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await emulator.clients.documents.send(
      new QueryCommand({
        TableName: emulator.resources.tableName,
        KeyConditionExpression: 'jobId = :j',
        ExpressionAttributeValues: { ':j': HOURLY },
        ExclusiveStartKey: startKey,
      }),
    );
    rows.push(...((page.Items ?? []) as Row[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return rows;
}

/** The CLI as an operator runs it, with Ctrl-C pressed after `stopAfter` rows are done. */
async function bulkRetry(args: string[], home: string, stopAfter = Number.POSITIVE_INFINITY) {
  const stop = new AbortController();
  let done = 0;
  const deps: CliDeps & { captured: ReturnType<typeof cliDeps>['captured'] } = {
    ...cliDeps({ now: () => Date.now() }),
    env: { HOME: home, USER: 'alice' },
    signal: stop.signal,
    callerArn: async () => ARN,
    progress: () => ({
      increment: () => {
        done++;
        if (done === stopAfter) stop.abort();
      },
      stop: () => undefined,
    }),
  };
  const started = Date.now();
  const code = await runCli(['bulk', 'retry', HOURLY, ...args, ...deployedFlags(emulator)], deps);
  return {
    code,
    ms: Date.now() - started,
    out: deps.captured.out.join('\n'),
    err: deps.captured.err.join('\n'),
  };
}

describe('bulk retry on moto', () => {
  it('retries 200 FAILED occurrences exactly once across an interruption and a resume', async () => {
    const now = Date.now();
    const first = Date.parse('2026-11-01T00:00:00Z');
    const times = Array.from({ length: ROWS }, (_, i) =>
      new Date(first + i * 3600_000).toISOString().replace('.000Z', 'Z'),
    );
    await putRows(
      emulator.clients,
      emulator.resources.tableName,
      times.map((t) => row(HOURLY, t, FAILED, now, { lastError: 'Error: upstream down', failedAt: t })),
    );
    const home = mkdtempSync(join(tmpdir(), 'bulk-home-'));
    const range = ['--from', '2026-11-01', '--to', '2026-12-01', '--yes', '--rate', '100'];

    const interrupted = await bulkRetry(range, home, 100);

    expect(interrupted.code).toBe(1);
    const bulkId = /bulk run (bulk-\d{8}T\d{6}Z-[0-9a-f]{6})/.exec(interrupted.err)?.[1] as string;
    expect(bulkId).toBeDefined();
    expect(interrupted.err).toContain(`go on with: occurrences bulk retry ${HOURLY} --resume ${bulkId}`);
    const afterFirst = await hourlyRows();
    const reopenedFirst = afterFirst.filter((r) => r.status === PENDING);
    // The workers in flight when Ctrl-C came finish their rows; no new one starts.
    expect(reopenedFirst.length).toBeGreaterThanOrEqual(100);
    expect(reopenedFirst.length).toBeLessThan(110);

    // Ten of the reopened ones have failed again since: FAILED, and holding the run's id.
    for (const again of reopenedFirst.slice(0, 10)) {
      await emulator.clients.documents.send(
        new UpdateCommand({
          TableName: emulator.resources.tableName,
          Key: { jobId: again.jobId, scheduledTime: again.scheduledTime },
          UpdateExpression: 'SET #s = :failed',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':failed': FAILED },
        }),
      );
    }

    const resumed = await bulkRetry(['--resume', bulkId, '--yes', '--rate', '100'], home);

    expect(resumed.err).not.toContain('refused');
    expect(resumed.code).toBe(0);
    expect(resumed.out).toBe(
      `bulk retry ${bulkId}: retried ${ROWS - reopenedFirst.length} of ${ROWS - reopenedFirst.length + 10}, ` +
        '10 done by this run before, 0 refused, 0 failed.',
    );
    const rows = await hourlyRows();
    expect(rows).toHaveLength(ROWS);
    for (const r of rows) {
      expect(r.manualRetries).toBe(1);
      expect([...(r.bulkActions ?? [])]).toEqual([bulkId]);
      const reopenings = (r.history ?? []).filter((h) => h.outcome === 'reopened') as ReopenRecord[];
      expect(reopenings).toEqual([
        expect.objectContaining({ by: expect.stringMatching(`^alice@.* \\(${ARN}\\)$`), bulkId }),
      ]);
    }
    const messages = (await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)) as {
      scheduledTime: string;
    }[];
    expect(messages).toHaveLength(ROWS);
    expect(new Set(messages.map((m) => m.scheduledTime)).size).toBe(ROWS);
    // Figures for the closing note: the wall time of each half at --rate 100 on moto.
    console.info(
      `bulk retry on moto: ${reopenedFirst.length} rows in ${interrupted.ms} ms, then ${ROWS - reopenedFirst.length} in ${resumed.ms} ms`,
    );
  });
});
