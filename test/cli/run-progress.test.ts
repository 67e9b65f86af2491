/**
 * bin/occurrences/run-progress.ts, and `show` and `watch` of a long job's row on the emulator: progress, the
 * checkpoint's age, the segment count, the progress bar with its rate and time left.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { runShow } from '../../bin/occurrences/commands/show';
import { runWatch } from '../../bin/occurrences/commands/watch';
import { progressBar, progressText, rateOf } from '../../bin/occurrences/run-progress';
import type { ResumableOccurrence } from '../../functions/protocol/checkpoint';
import { iso, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { context, HOURLY, putRows, row, targetOf, useCliEmulator } from './support';

const NOW = Date.parse('2026-11-30T12:00:20.000Z');
const clock = { now: () => NOW };
const SCHEDULED = '2026-11-30T11:00:00Z';
const emulator = useCliEmulator();

/** A row as a continuation leaves it: lease given up, segment 3, a checkpoint of one part. */
const continuedRow = (): Partial<ResumableOccurrence> => ({
  attempt: 0,
  leaseId: 'continued:lease-3',
  leaseExpiresAt: iso(NOW - 25_000),
  continuedAt: iso(NOW - 10_000),
  segment: 3,
  runStartedAt: iso(NOW - 3_600_000),
  progress: progress(420, NOW - 12_000),
  checkpoint: {
    state: '{"line":400}',
    at: iso(NOW - 90_000),
    upload: { uploadId: 'u', parts: [{ partNumber: 1, etag: 'e' }], bytes: 5 * 1024 * 1024 },
  },
});

const progress = (done: number, atMs: number) => ({ done, total: 1000, note: 'lines', at: iso(atMs) });

describe('run-progress', () => {
  it('draws a bar of 24 marks with the share done, and the count alone without a total', () => {
    expect(progressBar({ done: 250, total: 1000 })).toBe(`[${'#'.repeat(6)}${'.'.repeat(18)}]  25%`);
    expect(progressBar({ done: 1000, total: 1000 })).toBe(`[${'#'.repeat(24)}] 100%`);
    expect(progressBar({ done: 7 })).toBe('7 done');
  });

  it('computes the rate between two readings and the time left at it; none without an earlier reading', () => {
    const rate = rateOf(progress(100, NOW - 10_000), progress(300, NOW));
    expect(rate).toBe(20);
    expect(progressText(progress(300, NOW), rate)).toBe(
      `[${'#'.repeat(7)}${'.'.repeat(17)}]  30%  300/1000 lines  20/s  ~35s left`,
    );
    expect(rateOf(undefined, progress(300, NOW))).toBeUndefined();
    expect(rateOf(progress(300, NOW - 5_000), progress(200, NOW))).toBeUndefined(); // never a negative rate
  });
});

describe('show and watch of a long job', () => {
  it('show prints the progress, the checkpoint age and what it covers, the segments, and a continued lease as given up', async () => {
    await putRows(emulator.clients, emulator.resources.tableName, [
      row(HOURLY, SCHEDULED, OccurrenceStatus.RUNNING, NOW, continuedRow()),
    ]);
    const ctx = context(clock);
    await runShow(
      ctx,
      targetOf(emulator.clients, emulator.resources).store,
      { jobId: HOURLY, scheduledTime: SCHEDULED },
      {
        json: false,
      },
    );
    const text = ctx.captured.text();

    expect(text).toMatch(/progress\s*│ \[#+\.+\]\s+42%\s+420\/1000 lines, reported .* \(12s ago\)/);
    expect(text).toMatch(/checkpoint\s*│ 1m 30s old, 5 MiB of report in 1 part\(s\)/);
    expect(text).toMatch(/segments\s*│ 3 ended by a yield, last .* \(10s ago\)/);
    expect(text).toContain('given up at the end of segment 3');
    expect(text).not.toContain('EXPIRED');
  });

  it('watch draws a progress bar for a running occurrence each time its progress changes, with the rate and time left', async () => {
    const key = { jobId: HOURLY, scheduledTime: SCHEDULED };
    const running: Partial<ResumableOccurrence> = {
      attempt: 1,
      leaseId: 'lease-1',
      leaseExpiresAt: iso(NOW + 30_000),
      progress: progress(100, NOW - 10_000),
    };
    await putRows(emulator.clients, emulator.resources.tableName, [
      row(HOURLY, SCHEDULED, OccurrenceStatus.RUNNING, NOW, running),
    ]);
    const ctx = context(clock);
    const stop = new AbortController();
    const steps = [
      () =>
        emulator.clients.documents.send(
          new UpdateCommand({
            TableName: emulator.resources.tableName,
            Key: key,
            UpdateExpression: 'SET progress = :p',
            ExpressionAttributeValues: { ':p': progress(300, NOW) },
          }),
        ),
      async () => stop.abort(),
    ];
    await runWatch(
      ctx,
      targetOf(emulator.clients, emulator.resources),
      { jobId: HOURLY, statuses: [], from: 0, to: Date.parse('9999-01-01T00:00:00Z'), limit: 200 },
      { intervalMs: 2000, json: false, signal: stop.signal, sleep: async () => void (await steps.shift()?.()) },
    );
    const lines = ctx.captured
      .text()
      .split('\n')
      .filter((l) => l.includes('PROGRESS'));

    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('10%  100/1000 lines');
    expect(lines[1]).toContain('30%  300/1000 lines  20/s  ~35s left');
  });
});
