/**
 * Long jobs (resumable-run.ts, resumable-delivery.ts, report-writer.ts) through the worker handler over the real
 * adapters, FakeAws and FakeMultipart, on fake timers: the yield at the invocation's end, the resume from the
 * checkpoint, maxRunSeconds, a lost lease during a part upload, and a crash between the commit and the row.
 */
import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import {
  type ExportOptions,
  exportLineCount,
  exportLines,
  ndjsonExportJob,
} from '../../examples/sample-app/jobs/ndjson-export';
import { S3MultipartUploads } from '../../functions/aws/multipart-report-store';
import { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { cancelOccurrence } from '../../functions/protocol/cancel-occurrence';
import { CHECKPOINT_STATE_MAX_BYTES, type RunCheckpoint } from '../../functions/protocol/checkpoint';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import { YieldRequestedError } from '../../functions/protocol/errors';
import type { JobDefinition } from '../../functions/protocol/ports';
import { MIN_PART_BYTES } from '../../functions/protocol/report-writer';
import { delay } from '../../functions/protocol/transient-retry';
import { faults } from '../../sim/fakes/fake-aws';
import { FakeMultipart } from '../../sim/fakes/fake-multipart';
import {
  type Harness,
  makeHarness,
  SCHEDULED,
  SEED_TIMING,
  startDelivery,
  T0,
  useHarnessTime,
} from '../support/harness';

const KEY = { jobId: 'report', scheduledTime: SCHEDULED };
const MESSAGE = encodeEnvelope(KEY);
const REPORT_KEY = `reports/report/${SCHEDULED}.ndjson`;
const MiB = 1024 * 1024;
/** 24 MiB of report, 1 MiB per 10 s step: 240 s of work, segments of 100 s (yield at 80 s). */
const EXPORT: Required<Omit<ExportOptions, 'pace'>> = { totalBytes: 24 * MiB, lineBytes: 1024, linesPerStep: 1024 };
const SEGMENT_SETTINGS = { id: 'report', ...SEED_TIMING, timeoutSeconds: 100 };

let h: Harness;
let s3: FakeMultipart;

/** A document client of the operator's own; the SDK mock is per client class, so it meets the same fake table. */
const documents = () =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: 'eu-central-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } }),
  );

useHarnessTime();

function setUp(job: JobDefinition, settings: Record<string, unknown> = {}) {
  h = makeHarness({ jobs: { report: job }, settings: [{ ...SEGMENT_SETTINGS, ...settings }] });
  s3 = new FakeMultipart(h.aws);
}

const pacedExport = (options: Partial<typeof EXPORT> = {}) =>
  ndjsonExportJob({ ...EXPORT, ...options, pace: (signal) => delay(10_000, signal) });

const row = () => h.aws.row(KEY.jobId, KEY.scheduledTime)!;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const expectedReport = (options: Partial<typeof EXPORT> = {}) =>
  [...exportLines(KEY, { ...EXPORT, ...options })].join('');

/** One invocation with `remainingMs` of Lambda time, the fake clock run until it ends. */
async function invoke(body = MESSAGE, remainingMs = 150_000): Promise<string[]> {
  const run = startDelivery(h, body, remainingMs);
  for (let i = 0; i < 200 && !run.settled(); i++) await vi.advanceTimersByTimeAsync(5_000);
  return run.promise;
}

/** Invoke, then invoke each message a continuation sends, until none is sent; returns the invocations. */
async function runAllSegments(limit = 10): Promise<number> {
  const sentBefore = h.aws.sent.length;
  await h.trigger(KEY);
  let delivered = sentBefore;
  let invocations = 0;
  while (delivered < h.aws.sent.length && invocations < limit) {
    const body = h.aws.sent[delivered++];
    await invoke(body);
    invocations++;
  }
  return invocations;
}

describe('resumable run: yield at the end of an invocation', () => {
  it('asks the job to yield a grace before the segment ends, records RUNNING with its lease given up, segment 1, the attempt given back, and sends a new message', async () => {
    const reasons: unknown[] = [];
    setUp({
      reportExtension: 'ndjson',
      resumable: true,
      async run(_o, { signal, checkpoint }) {
        await delay(10 * 60_000, signal).catch(() => undefined);
        reasons.push(signal.reason);
        await checkpoint({ step: 1 });
        throw signal.reason;
      },
    });
    await h.trigger(KEY);
    const failures = await invoke();

    expect(failures).toEqual([]); // acknowledged: a new message carries the occurrence on
    expect(reasons[0]).toBeInstanceOf(YieldRequestedError);
    expect(h.logs.find((l) => l.message === 'aborting job')).toBeUndefined();
    const r = row();
    expect(r).toMatchObject({ status: 'RUNNING', attempt: 0, segment: 1, leaseId: 'continued:lease-1' });
    expect(Date.parse(String(r.continuedAt)) - T0).toBe(80_000); // 100 s segment, 20 s grace
    expect(String(r.leaseExpiresAt) < String(r.continuedAt)).toBe(true);
    expect(JSON.parse((r.checkpoint as RunCheckpoint).state)).toEqual({ step: 1 });
    expect(h.aws.sent).toEqual([MESSAGE, MESSAGE]);
    expect(h.aws.hidden).toEqual([]);
  });

  it('counts a segment as no attempt: a run of five segments with maxAttempts 2 still finishes on attempt 1', async () => {
    setUp(pacedExport({ totalBytes: 40 * MiB }), { retry: { maxAttempts: 2 } });
    const invocations = await runAllSegments();

    expect(invocations).toBeGreaterThanOrEqual(5);
    expect(row()).toMatchObject({ status: 'SUCCEEDED', attempt: 1, segment: invocations - 1 });
  });
});

describe('resumable run: resume from the checkpoint', () => {
  it('runs the export over at least three invocations and commits, once, exactly the bytes an uninterrupted run writes', async () => {
    setUp(pacedExport());
    const invocations = await runAllSegments();

    expect(invocations).toBeGreaterThanOrEqual(3);
    const object = h.aws.objects.get(REPORT_KEY);
    expect(object?.contentType).toBe('application/x-ndjson');
    expect(sha256(object?.body ?? '')).toBe(sha256(expectedReport()));
    expect(h.aws.count('CompleteMultipartUpload')).toBe(1);
    expect(h.aws.count('CreateMultipartUpload')).toBe(1);
    expect(row()).toMatchObject({ status: 'SUCCEEDED', reportKey: REPORT_KEY });
    expect(s3.openUploads()).toEqual([]);
  });

  it('hands the job the last recorded checkpoint as resumeFrom, and a clean yield wastes no part numbers', async () => {
    const seen: unknown[] = [];
    const job = pacedExport();
    setUp({
      ...job,
      run: (o, c) => {
        seen.push(c.resumeFrom);
        return job.run(o, c);
      },
    });
    await runAllSegments();

    expect(seen[0]).toBeUndefined();
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen.slice(1).every((s) => typeof (s as { line?: number }).line === 'number')).toBe(true);
    // The continuation narrows the reservation to the parts its holder sent: the next holder goes on from there.
    const [upload] = s3.uploads.values();
    const listed = upload.committedParts ?? [];
    expect(listed).toEqual(listed.map((_, i) => i + 1));
  });

  it('records a checkpoint only at a part boundary: fewer than 5 MiB buffered is not recorded', async () => {
    const answers: boolean[] = [];
    setUp({
      reportExtension: 'ndjson',
      resumable: true,
      async run(_o, { report, checkpoint }) {
        await report.write('x'.repeat(MiB));
        answers.push(await checkpoint({ at: 1 }));
        await report.write('x'.repeat(MIN_PART_BYTES));
        answers.push(await checkpoint({ at: 2 }));
        return report.end();
      },
    });
    await h.trigger(KEY);
    await invoke();

    expect(answers).toEqual([false, true]);
    expect(h.aws.objects.get(REPORT_KEY)?.body.length).toBe(MiB + MIN_PART_BYTES);
  });

  it('shows progress in the row through the heartbeat, with no request of its own, and never lets done go back', async () => {
    setUp(pacedExport());
    await h.trigger(KEY);
    const run = startDelivery(h, MESSAGE, 150_000);
    await vi.advanceTimersByTimeAsync(46_000);
    const progress = row().progress as { done: number; total: number };

    expect(progress.total).toBe(exportLineCount(EXPORT));
    expect(progress.done).toBe(5 * 1024); // five steps by 40 s
    // The claim, the take of the job's running slot (overlap skip), the part reservation and the checkpoint at the
    // fifth step (5 MiB), and the extend at 45 s, which carried the progress: no request of its own.
    expect(h.aws.count('UpdateItem')).toBe(5);
    const extend = h.aws.ddb.commandCalls(UpdateCommand).at(-1)?.args[0].input;
    expect(extend?.UpdateExpression).toContain('#leaseExpiresAt = :expires');
    expect(extend?.ExpressionAttributeValues?.[':progress']).toMatchObject({ done: 5 * 1024 });

    for (let i = 0; i < 100 && !run.settled(); i++) await vi.advanceTimersByTimeAsync(5_000);
    const beforeResume = (row().progress as { done: number }).done;
    const checkpointed = JSON.parse((row().checkpoint as RunCheckpoint).state).line;
    expect(checkpointed).toBeLessThan(beforeResume); // the resumed job counts again from behind what the row shows
    const resumed = startDelivery(h, h.aws.sent[1], 150_000);
    const shown: number[] = [];
    for (let i = 0; i < 100 && !resumed.settled(); i++) {
      await vi.advanceTimersByTimeAsync(5_000);
      shown.push((row().progress as { done: number }).done);
    }
    expect(shown.every((done, k) => done >= beforeResume && (k === 0 || done >= shown[k - 1]))).toBe(true);
  });
});

describe('resumable run: maxRunSeconds', () => {
  it('stops the run at maxRunSeconds from its first claim and records FAILED without a retry', async () => {
    setUp(pacedExport({ totalBytes: 200 * MiB }), { maxRunSeconds: 250, retry: { maxAttempts: 5 } });
    const invocations = await runAllSegments();

    expect(invocations).toBe(3); // 0-100, 100-200, 200-250 s
    const r = row();
    expect(r.status).toBe('FAILED');
    expect(String(r.lastError)).toContain('maxRunSeconds (250 s)');
    expect(Date.parse(String(r.failedAt)) - T0).toBeGreaterThanOrEqual(250_000);
    expect(h.aws.count('CompleteMultipartUpload')).toBe(0);
  });

  it('rejects a checkpoint larger than 64 KB with an error naming its size, and the attempt fails', async () => {
    setUp({
      reportExtension: 'ndjson',
      resumable: true,
      async run(_o, { checkpoint }) {
        await checkpoint({ big: 'x'.repeat(CHECKPOINT_STATE_MAX_BYTES) });
        throw new Error('not reached');
      },
    });
    await h.trigger(KEY);
    await invoke();

    expect(row()).toMatchObject({ status: 'RETRY_WAIT' });
    expect(String(row().lastError)).toMatch(/checkpoint state rejected: \d+ bytes of JSON, more than the 65536/);
    expect(row().checkpoint).toBeUndefined();
  });
});

describe('resumable run: crashes and lost leases', () => {
  it('a lease lost during a part upload: the stale part lands late, and the next holder still commits each part once, in order', async () => {
    setUp(pacedExport({ totalBytes: 16 * MiB }), { timeoutSeconds: 600 });
    await h.trigger(KEY);
    let release: (() => void) | undefined;
    let held = 0;
    s3.beforePart = (input) => {
      // Hold the first holder's second part in flight.
      if (input.PartNumber !== 2 || held++ > 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    };
    const first = startDelivery(h, MESSAGE, 900_000);
    await vi.advanceTimersByTimeAsync(95_000);
    expect(release).toBeDefined();
    // Another worker takes the occurrence (the first one stalled past its lease).
    h.aws.table.set(`report|${SCHEDULED}`, { ...row(), leaseId: 'thief', attempt: 2 });
    await vi.advanceTimersByTimeAsync(45_000);
    expect(first.settled()).toBe(true);
    expect(await first.promise).toEqual([]);
    // The thief's worker died; its lease runs out and the next delivery resumes from the checkpoint.
    h.aws.table.set(`report|${SCHEDULED}`, { ...row(), leaseExpiresAt: new Date(T0).toISOString() });
    const second = startDelivery(h, MESSAGE, 900_000);
    await vi.advanceTimersByTimeAsync(30_000);
    release?.(); // the stale part 2 lands now
    for (let i = 0; i < 100 && !second.settled(); i++) await vi.advanceTimersByTimeAsync(5_000);
    await second.promise;

    expect(row().status).toBe('SUCCEEDED');
    expect(sha256(h.aws.objects.get(REPORT_KEY)?.body ?? '')).toBe(sha256(expectedReport({ totalBytes: 16 * MiB })));
    // The stale holder's part 2 is in the upload, but the report is part 1 (checkpointed) and the next holder's
    // parts, numbered above the first holder's reservation.
    const [upload] = s3.uploads.values();
    expect(upload.parts.has(2)).toBe(true);
    expect(upload.committedParts?.[0]).toBe(1);
    expect(upload.committedParts?.slice(1).every((n) => n > 32)).toBe(true);
    expect(h.aws.count('CompleteMultipartUpload')).toBe(1);
  });

  it('a crash between the commit and the row: the next holder adopts the committed report and uploads nothing', async () => {
    setUp(pacedExport({ totalBytes: 8 * MiB }), { timeoutSeconds: 600 });
    await h.trigger(KEY);
    s3.afterComplete = () => {
      // The worker is cut off right after its commit: no write of it reaches the row any more.
      s3.afterComplete = undefined;
      h.aws.failAlways('UpdateItem', faults.accessDenied);
    };
    const first = await invoke(MESSAGE, 900_000);
    expect(first).toEqual(['msg-1']); // outcome not recorded: the message comes back
    expect(row()).toMatchObject({ status: 'RUNNING', attempt: 1 });
    const parts = h.aws.count('UploadPart');
    h.aws.clearFaults();
    h.aws.table.set(`report|${SCHEDULED}`, { ...row(), leaseExpiresAt: new Date(T0).toISOString() });
    await invoke(MESSAGE, 900_000);

    expect(row()).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
    expect(h.aws.count('UploadPart')).toBe(parts);
    expect(h.aws.count('CompleteMultipartUpload')).toBe(1);
    expect(h.logs.some((l) => l.message.startsWith('report already committed by an earlier attempt'))).toBe(true);
  });

  it('aborts the upload a holder opened and never checkpointed, and starts a new one', async () => {
    setUp(pacedExport({ totalBytes: 8 * MiB }), { timeoutSeconds: 600 });
    await h.trigger(KEY);
    // A holder opened an upload, recorded it, and died before its first checkpoint.
    const uploads = new S3MultipartUploads(new S3Client({ region: 'eu-central-1' }), 'reports-bucket');
    const abandoned = await uploads.create(REPORT_KEY, 'application/x-ndjson', {});
    h.aws.table.set(`report|${SCHEDULED}`, {
      ...row(),
      status: 'RUNNING',
      attempt: 1,
      leaseId: 'dead',
      claimedAt: new Date(T0).toISOString(),
      leaseExpiresAt: new Date(T0).toISOString(),
      openUpload: { uploadId: abandoned, reservedThrough: 32 },
    });
    vi.setSystemTime(T0 + 1_000);
    await invoke(MESSAGE, 900_000);

    expect(s3.uploads.get(abandoned)?.state).toBe('aborted');
    expect(s3.uploads.size).toBe(2);
    expect(row().status).toBe('SUCCEEDED');
    expect(s3.openUploads()).toEqual([]);
    expect(sha256(h.aws.objects.get(REPORT_KEY)?.body ?? '')).toBe(sha256(expectedReport({ totalBytes: 8 * MiB })));
  });
});

describe('resumable run: an operator cancel', () => {
  const operatorCancel = () =>
    cancelOccurrence(
      {
        store: new OperatorOccurrenceStore(documents(), 'occurrences'),
        clock: { now: () => Date.now() },
        newId: () => 'u1',
      },
      KEY,
      { by: 'alice', note: 'not needed any more' },
    );

  it('between two segments: the run is closed, the continuation finds it finished, and no upload is completed', async () => {
    setUp(pacedExport());
    await h.trigger(KEY);
    await invoke(); // the first segment yields: RUNNING under continued:lease-1
    expect(row()).toMatchObject({ status: 'RUNNING', leaseId: 'continued:lease-1' });

    expect(await operatorCancel()).toMatchObject({ outcome: 'cancelled', previous: { status: 'RUNNING' } });
    expect(await operatorCancel()).toMatchObject({ outcome: 'refused', status: 'CANCELLED' });
    const continuation = h.aws.sent.at(-1);
    expect(await invoke(continuation)).toEqual([]);

    expect(row()).toMatchObject({ status: 'CANCELLED', cancelledByOperator: 'alice' });
    expect([...s3.uploads.values()].map((u) => u.state)).not.toContain('completed');
    expect(h.aws.objects.has(REPORT_KEY)).toBe(false);
  });

  it('during a segment: the job stops at its next heartbeat, and neither the upload nor the row records a success', async () => {
    setUp(pacedExport());
    await h.trigger(KEY);
    const run = startDelivery(h, MESSAGE, 150_000);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(await operatorCancel()).toMatchObject({ outcome: 'cancelled', stopsBy: expect.any(String) });
    for (let i = 0; i < 40 && !run.settled(); i++) await vi.advanceTimersByTimeAsync(5_000);

    expect(await run.promise).toEqual([]);
    expect(row()).toMatchObject({ status: 'CANCELLED', leaseId: 'cancelled-by-operator-u1' });
    expect([...s3.uploads.values()].map((u) => u.state)).not.toContain('completed');
    expect(h.aws.objects.has(REPORT_KEY)).toBe(false);
  });
});

describe('resumable run: the job signal', () => {
  it('takes one listener per concurrent request of a busy job without a leak warning, as the guard signal did', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    setUp({
      reportExtension: 'txt',
      async run(_o, { signal }) {
        for (let i = 0; i < 64; i++) signal.addEventListener('abort', () => undefined);
        return { body: 'done', contentType: 'text/plain' };
      },
    });
    await h.trigger(KEY);
    await invoke();

    expect(row().status).toBe('SUCCEEDED');
    expect(warn.mock.calls.filter(([w]) => String(w).includes('MaxListeners'))).toEqual([]);
    warn.mockRestore();
  });
});

describe('resumable run: the fence', () => {
  it('grows with every claim: a continuation, a retry after a failure and a takeover each give a higher token', async () => {
    const tokens: string[] = [];
    let runs = 0;
    setUp({
      reportExtension: 'txt',
      resumable: true,
      async run(_o, { signal, fence }) {
        tokens.push(fence.token);
        runs++;
        if (runs === 2) throw new Error('downstream refused');
        if (runs === 1) {
          await delay(10 * 60_000, signal).catch(() => undefined);
          throw signal.reason;
        }
        return { body: 'done', contentType: 'text/plain' };
      },
    });
    await h.trigger(KEY);
    await invoke(); // segment 1, yields
    await invoke(h.aws.sent[1]); // fails: retry
    vi.setSystemTime(Date.parse(String(row().nextAttemptAt)) + 1_000);
    await invoke(h.aws.sent[1]);

    expect(tokens).toHaveLength(3);
    expect([...tokens].sort()).toEqual(tokens);
    expect(new Set(tokens).size).toBe(3);
    expect(tokens.map((t) => Number(t.split(':')[0]))).toEqual([1, 2, 3]);
  });
});
