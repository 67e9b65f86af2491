/**
 * Long jobs on moto: the sample export with a shortened invocation budget runs over several invocations, a worker
 * process is killed (SIGKILL) mid-segment, and the committed object is byte for byte the report the job meant,
 * committed once and announced once. And the export when it is slow to stop at every yield (a starved CPU): each such
 * segment is continued from its last checkpoint at no attempt, and the report is still exact.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { GetObjectCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { type ExportOptions, exportLines, ndjsonExportJob } from '../../examples/sample-app/jobs/ndjson-export';
import type { ResumableOccurrence } from '../../functions/protocol/checkpoint';
import { YieldRequestedError } from '../../functions/protocol/errors';
import type { OccurrenceKey } from '../../functions/protocol/occurrence';
import { delay } from '../../functions/protocol/transient-retry';
import { JOB_ID, occurrences, pipeline, testSettings, useMoto } from './emulator';

const emulator = useMoto();
const MiB = 1024 * 1024;
/** 24 MiB, 1 MiB a step, 300 ms a step: about 7 s of work. */
const EXPORT: ExportOptions = { totalBytes: 24 * MiB, lineBytes: 1024, linesPerStep: 1024 };
const PACE_MS = 300;
/** Segments of 4 s: the job is asked to yield after 3 s (a quarter of the segment is its grace). */
const SETTINGS = testSettings({
  timeoutSeconds: 4,
  leaseSeconds: 10,
  heartbeatSeconds: 2,
  leaseSafetyMarginSeconds: 2,
});
const WORKER_SCRIPT = path.join(__dirname, '..', '..', 'scripts', 'local', 'export-worker-process.ts');

/** What the worker logs when it ends a segment whose job did not stop within its yield grace. */
const LATE_YIELD =
  'the job did not stop within its yield grace: the segment continues from its last recorded checkpoint';

function sha256OfExpected(key: OccurrenceKey): string {
  const hash = createHash('sha256');
  for (const line of exportLines(key, EXPORT)) hash.update(line);
  return hash.digest('hex');
}

/** A worker process polling the job queue; resolves once it logged `message`. */
function startWorkerProcess(): { child: ChildProcess; logged: (message: string) => Promise<void> } {
  // Node itself, with tsx as its loader: SIGKILL must reach the process that runs the worker, not a wrapper.
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_SCRIPT], {
    env: { ...process.env, EXPORT_OPTIONS: JSON.stringify(EXPORT), EXPORT_PACE_MS: String(PACE_MS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const waiters: { message: string; resolve: () => void }[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (const w of waiters) if (out.includes(`"message":"${w.message}"`)) w.resolve();
  });
  return {
    child,
    logged: (message) =>
      new Promise((resolve) => {
        if (out.includes(`"message":"${message}"`)) resolve();
        else waiters.push({ message, resolve });
      }),
  };
}

describe('long jobs on moto', () => {
  it('runs the export over at least three invocations, survives a killed worker process, and commits the exact report once, announced once', async () => {
    const p = await pipeline(emulator, {
      settings: [SETTINGS],
      jobs: { [JOB_ID]: ndjsonExportJob({ ...EXPORT, pace: (signal) => delay(PACE_MS, signal) }) },
      workers: 1,
      // The killed worker's message comes back after this; the lease (10 s) has expired by then.
      visibilityTimeoutSeconds: 12,
    });
    const [key] = occurrences(1);
    await p.fire([key]);
    const worker = startWorkerProcess();
    try {
      // Killed mid-segment, after its first recorded checkpoint (one part of the report uploaded).
      await worker.logged('export starts');
      for (let i = 0; i < 100; i++) {
        const [row] = (await p.rows([key])) as (ResumableOccurrence | undefined)[];
        if (row?.checkpoint?.upload !== undefined) break;
        await delay(100);
      }
      worker.child.kill('SIGKILL');
      await new Promise((resolve) => worker.child.once('exit', resolve));
      expect(worker.child.signalCode).toBe('SIGKILL');
      const [killedAt] = (await p.rows([key])) as ResumableOccurrence[];
      expect(killedAt.status).toBe('RUNNING');

      p.start();
      const [row] = (await p.waitUntilSettled([key], 90_000)) as ResumableOccurrence[];
      await p.stop();

      expect(row).toMatchObject({ status: 'SUCCEEDED', reportKey: `reports/${JOB_ID}/${key.scheduledTime}.ndjson` });
      // The killed invocation (attempt 1), the one that took over (attempt 2), and at least one continuation.
      expect(row.attempt).toBe(2);
      expect(row.segment).toBeGreaterThanOrEqual(1);
      const object = await p.clients.s3.send(
        new GetObjectCommand({ Bucket: p.resources.bucketName, Key: String(row.reportKey) }),
      );
      const hash = createHash('sha256');
      for await (const chunk of object.Body as AsyncIterable<Uint8Array>) hash.update(chunk);
      expect(hash.digest('hex')).toBe(sha256OfExpected(key));
      expect(await p.reportKeys()).toEqual([row.reportKey]);
      const open = await p.clients.s3.send(new ListMultipartUploadsCommand({ Bucket: p.resources.bucketName }));
      expect(open.Uploads ?? []).toEqual([]);
      expect(await p.drainAnnouncements()).toHaveLength(1);
      expect(await p.deadLetterCount()).toBe(0);
    } finally {
      worker.child.kill('SIGKILL');
      await p.stop();
    }
  });

  it('continues the export from its last checkpoint, at no attempt, when it is slow to stop at every yield, and commits the exact report once', async () => {
    // Asked to yield, the job goes on for 1.5 s without looking at its signal (a starved CPU): past its grace of 1 s.
    const slowToStop = async (signal: AbortSignal) => {
      await delay(PACE_MS, signal).catch(() => undefined);
      if (signal.reason instanceof YieldRequestedError) await delay(1_500);
    };
    const p = await pipeline(emulator, {
      settings: [SETTINGS],
      jobs: { [JOB_ID]: ndjsonExportJob({ ...EXPORT, pace: slowToStop }) },
      workers: 1,
    });
    const [key] = occurrences(1);
    try {
      await p.fire([key]);
      p.start();
      const [row] = (await p.waitUntilSettled([key], 90_000)) as ResumableOccurrence[];
      await p.stop();

      expect(row).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
      expect(row.history?.map((h) => h.outcome)).toEqual(['succeeded']); // no attempt failed
      const late = emulator.logs.filter((line) => line.includes(`"message":"${LATE_YIELD}"`));
      expect(late.length).toBeGreaterThanOrEqual(1);
      expect(row.segment).toBeGreaterThanOrEqual(late.length);
      const object = await p.clients.s3.send(
        new GetObjectCommand({ Bucket: p.resources.bucketName, Key: String(row.reportKey) }),
      );
      const hash = createHash('sha256');
      for await (const chunk of object.Body as AsyncIterable<Uint8Array>) hash.update(chunk);
      expect(hash.digest('hex')).toBe(sha256OfExpected(key));
      expect(await p.reportKeys()).toEqual([row.reportKey]);
      const open = await p.clients.s3.send(new ListMultipartUploadsCommand({ Bucket: p.resources.bucketName }));
      expect(open.Uploads ?? []).toEqual([]);
      expect(await p.drainAnnouncements()).toHaveLength(1);
      expect(await p.deadLetterCount()).toBe(0);
    } finally {
      await p.stop();
    }
  });
});
