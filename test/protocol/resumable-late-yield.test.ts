/**
 * A late yield (resumable-delivery.ts, overdueYield): a resumable job asked to yield that has not stopped when its
 * segment ends is continued from its last recorded checkpoint, costing no attempt, and can write nothing to the row or
 * the report afterwards; the run still ends at maxRunSeconds, and a lost lease or a real failure still ends the
 * attempt. Through the worker handler over the real adapters, FakeAws and FakeMultipart, on fake timers.
 */
import { createHash } from 'node:crypto';
import { HeadObjectCommand, S3ServiceException } from '@aws-sdk/client-s3';
import { describe, expect, it, vi } from 'vitest';
import { exportLines, ndjsonExportJob } from '../../examples/sample-app/jobs/ndjson-export';
import type { RunCheckpoint } from '../../functions/protocol/checkpoint';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import type { JobDefinition, Lease, MultipartUploads, RunStateStore } from '../../functions/protocol/ports';
import { MIN_PART_BYTES, MultipartReportWriter } from '../../functions/protocol/report-writer';
import { delay } from '../../functions/protocol/transient-retry';
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
/** Segments of 100 s: the job is asked to yield at 80 s (a grace of 20 s), and the segment ends at 100 s. */
const SEGMENT_SETTINGS = { id: 'report', ...SEED_TIMING, timeoutSeconds: 100, retry: { maxAttempts: 5 } };
const LATE_WARNING =
  'the job did not stop within its yield grace: the segment continues from its last recorded checkpoint';

let h: Harness;
let s3: FakeMultipart;

useHarnessTime();

function setUp(job: JobDefinition, settings: Record<string, unknown> = {}) {
  h = makeHarness({ jobs: { report: job }, settings: [{ ...SEGMENT_SETTINGS, ...settings }] });
  s3 = new FakeMultipart(h.aws);
}

const row = () => h.aws.row(KEY.jobId, KEY.scheduledTime)!;
const stateOf = (r: Record<string, unknown>) => JSON.parse((r.checkpoint as RunCheckpoint).state);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** One invocation with `remainingMs` of Lambda time, the fake clock run until it ends. */
async function invoke(body = MESSAGE, remainingMs = 150_000): Promise<string[]> {
  const run = startDelivery(h, body, remainingMs);
  for (let i = 0; i < 200 && !run.settled(); i++) await vi.advanceTimersByTimeAsync(5_000);
  return run.promise;
}

/** Invoke, then invoke each message a continuation sends, until none is sent; returns the invocations. */
async function runAllSegments(limit = 12): Promise<number> {
  await h.trigger(KEY);
  let delivered = 0;
  let invocations = 0;
  while (delivered < h.aws.sent.length && invocations < limit) {
    await invoke(h.aws.sent[delivered++]);
    invocations++;
  }
  return invocations;
}

/**
 * A job that works in steps of 7 s (none ends at a segment's end), each writing 1 MiB of report and checkpointing
 * `{ step }` (recorded at a part boundary: every fifth step), and that goes on for `overrunMs` after it is asked to
 * yield before it honours the request: what a job looks like whose CPU is starved or whose last upload is slow.
 * What the worker refused it is pushed to `refused`.
 */
function slowToStopJob(overrunMs: number, refused: unknown[] = []): JobDefinition {
  return {
    reportExtension: 'ndjson',
    resumable: true,
    async run(_o, { signal, checkpoint, report, resumeFrom }) {
      let step = (resumeFrom as { step: number } | undefined)?.step ?? 0;
      let askedAt: number | undefined;
      const refuse = (error: unknown) => void refused.push(error);
      for (;;) {
        if (signal.aborted) askedAt ??= Date.now();
        if (askedAt !== undefined && Date.now() - askedAt >= overrunMs) throw signal.reason;
        await delay(7_000);
        step++;
        await report.write('x'.repeat(MiB)).catch(refuse);
        await checkpoint({ step }).catch(refuse);
      }
    },
  };
}

describe('a late yield: the job asked to yield has not stopped when its segment ends', () => {
  it('ends the segment as a continuation with its last recorded checkpoint, and the attempt is given back', async () => {
    setUp(slowToStopJob(60_000));
    await h.trigger(KEY);
    const failures = await invoke();

    expect(failures).toEqual([]); // acknowledged: a new message carries the occurrence on
    const r = row();
    expect(r).toMatchObject({ status: 'RUNNING', attempt: 0, segment: 1, leaseId: 'continued:lease-1' });
    expect(r.lastError).toBeUndefined();
    expect(Date.parse(String(r.continuedAt)) - T0).toBe(100_000); // at the segment's end, not at the yield (80 s)
    expect(stateOf(r)).toEqual({ step: 10 }); // recorded at 70 s with the second part; steps 11 to 14 are lost
    expect(h.aws.sent).toEqual([MESSAGE, MESSAGE]);
    expect(h.aws.hidden).toEqual([]); // no retry scheduled
    const warning = h.logs.find((l) => l.message === LATE_WARNING);
    expect(warning?.level).toBe('WARN');
    expect(warning?.fields.checkpointAt).toBe(new Date(T0 + 70_000).toISOString());
  });

  it('refuses every write of the job still running in the background once the segment has ended', async () => {
    const refused: unknown[] = [];
    setUp(slowToStopJob(60_000, refused));
    await h.trigger(KEY);
    await invoke();
    const writesAtContinuation = h.aws.count('UpdateItem');
    const partsAtContinuation = h.aws.count('UploadPart');
    const checkpointAtContinuation = row().checkpoint;

    // The job goes on writing until 147 s: at 105 s its buffer holds 5 MiB again, a part its reservation would cover.
    await vi.advanceTimersByTimeAsync(60_000);

    expect(refused.length).toBeGreaterThanOrEqual(6); // a write and a checkpoint at 105, 112, 119 s, ...
    expect(refused.every((e) => (e as Error).name === 'JobTimeoutError')).toBe(true);
    expect(h.aws.count('UploadPart')).toBe(partsAtContinuation);
    expect(h.aws.count('UpdateItem')).toBe(writesAtContinuation); // not even sent: the guard's stop is in force
    expect(row().checkpoint).toEqual(checkpointAtContinuation);
  });

  it('resumes from that checkpoint in the next invocation and finishes on the attempt the run started with', async () => {
    const seen: unknown[] = [];
    let runs = 0;
    const late = slowToStopJob(60_000);
    setUp({
      ...late,
      async run(o, c) {
        seen.push(c.resumeFrom);
        if (++runs === 1) return late.run(o, c);
        return { body: 'done', contentType: 'application/x-ndjson' };
      },
    });
    const invocations = await runAllSegments();

    expect(invocations).toBe(2);
    expect(seen).toEqual([undefined, { step: 10 }]);
    expect(row()).toMatchObject({ status: 'SUCCEEDED', attempt: 1, segment: 1 });
    expect((row().history as { outcome: string }[]).map((e) => e.outcome)).toEqual(['succeeded']);
  });

  it('continues a segment whose time ran out before the job was even asked to yield (a slow start), at no attempt', async () => {
    const stoppedBy: string[] = [];
    setUp({
      reportExtension: 'ndjson',
      resumable: true,
      async run(_o, { signal, checkpoint }) {
        await checkpoint({ step: stoppedBy.length + 1 });
        await delay(10 * 60_000, signal).catch(() => undefined);
        stoppedBy.push((signal.reason as Error).name);
        throw signal.reason;
      },
    });
    await h.trigger(KEY);
    await invoke(); // yields cleanly at 80 s
    // The resumed segment first looks for a committed report; the look-up takes 101 s of its 100 (a starved CPU).
    h.aws.s3.on(HeadObjectCommand).callsFake(async () => {
      await delay(101_000);
      throw new S3ServiceException({ name: 'NotFound', $fault: 'client', $metadata: { httpStatusCode: 404 } });
    });
    const failures = await invoke(h.aws.sent[1]);

    expect(failures).toEqual([]);
    expect(stoppedBy).toEqual(['YieldRequestedError', 'JobTimeoutError']); // the second run was never asked to yield
    expect(row()).toMatchObject({ status: 'RUNNING', attempt: 0, segment: 2, leaseId: 'continued:lease-2' });
    expect(row().lastError).toBeUndefined();
    expect(stateOf(row())).toEqual({ step: 2 }); // recorded as it started, while the lease was still its own
    expect(h.aws.sent).toHaveLength(3);
    expect(h.aws.hidden).toEqual([]);
    expect(h.logs.filter((l) => l.message === LATE_WARNING)).toHaveLength(1);
  });

  it('keeps a part in flight at the segment end out of the report: the next holder numbers its parts above the reservation, and the report is exact', async () => {
    // 24 MiB, 1 MiB per 10 s step, a 5 MiB part with the checkpoint at 40 s and at 90 s. The second part's upload is
    // held for 40 s: the job is still in it at the yield (95 s) and at the segment's end (115 s), and it lands at 130 s.
    const options = { totalBytes: 24 * MiB, lineBytes: 1024, linesPerStep: 1024 };
    setUp(ndjsonExportJob({ ...options, pace: (signal) => delay(10_000, signal) }), { timeoutSeconds: 115 });
    let held = 0;
    s3.beforePart = (input) => (input.PartNumber === 2 && held++ === 0 ? delay(40_000) : Promise.resolve());
    const invocations = await runAllSegments();
    await vi.advanceTimersByTimeAsync(60_000);

    expect(invocations).toBeGreaterThanOrEqual(3);
    expect(row()).toMatchObject({ status: 'SUCCEEDED', attempt: 1 });
    expect(h.aws.hidden).toEqual([]);
    expect(h.logs.filter((l) => l.message === LATE_WARNING)).toHaveLength(1);
    const [upload] = s3.uploads.values();
    expect(upload.parts.has(2)).toBe(true); // the late part landed, after the continuation
    expect(upload.committedParts?.[0]).toBe(1);
    // Not narrowed to the last part answered (1): an aborted upload may still land under a number it reserved.
    expect(upload.committedParts?.slice(1).every((n) => n > 32)).toBe(true);
    const expected = [...exportLines(KEY, options)].join('');
    expect(sha256(h.aws.objects.get(REPORT_KEY)?.body ?? '')).toBe(sha256(expected));
    expect(h.aws.count('CompleteMultipartUpload')).toBe(1);
  });
});

describe('a late yield: what still ends a run or an attempt', () => {
  it('a job that never stops in time is still stopped at maxRunSeconds, FAILED without a retry, on its first attempt', async () => {
    setUp(slowToStopJob(60_000), { maxRunSeconds: 250 });
    const invocations = await runAllSegments();

    expect(invocations).toBe(3); // 0-100 and 100-200 s end late and are continued; 200-250 s ends the run
    const r = row();
    expect(r).toMatchObject({ status: 'FAILED', attempt: 1, segment: 2 });
    expect(String(r.lastError)).toContain('maxRunSeconds (250 s)');
    expect(h.logs.filter((l) => l.message === LATE_WARNING)).toHaveLength(2);
  });

  it('a job that fails before it is asked to yield still uses up an attempt', async () => {
    setUp({
      reportExtension: 'ndjson',
      resumable: true,
      async run(_o, { checkpoint }) {
        await checkpoint({ step: 1 });
        await delay(30_000);
        throw new Error('upstream refused');
      },
    });
    await h.trigger(KEY);
    await invoke();

    expect(row()).toMatchObject({ status: 'RETRY_WAIT', attempt: 1 });
    expect(String(row().lastError)).toContain('upstream refused');
    expect(h.logs.find((l) => l.message === LATE_WARNING)).toBeUndefined();
  });

  it('a job whose lease is taken during its grace is not continued: the new holder keeps the occurrence', async () => {
    setUp(slowToStopJob(60_000));
    await h.trigger(KEY);
    const run = startDelivery(h, MESSAGE, 150_000);
    await vi.advanceTimersByTimeAsync(85_000);
    // Another worker takes the occurrence (this one stalled past its lease, say).
    h.aws.table.set(`report|${SCHEDULED}`, { ...row(), leaseId: 'thief', attempt: 2 });
    for (let i = 0; i < 100 && !run.settled(); i++) await vi.advanceTimersByTimeAsync(5_000);

    expect(await run.promise).toEqual([]);
    expect(row()).toMatchObject({ status: 'RUNNING', leaseId: 'thief', attempt: 2 });
    expect(row().segment).toBeUndefined();
    expect(h.aws.sent).toEqual([MESSAGE]); // no continuation message
  });
});

describe('a late yield: the report writer once the guard stopped it', () => {
  /** A writer over uploads that behave as the SDK does on abort: the call rejects at once, the request lands anyway. */
  function writerWithSdkAborts() {
    const guard = new AbortController();
    const landed: number[] = [];
    const uploads: MultipartUploads = {
      create: async () => 'upload-1',
      uploadPart: (request, signal) =>
        new Promise((resolve, reject) => {
          const land = () => {
            landed.push(request.partNumber);
            resolve({ partNumber: request.partNumber, etag: `etag-${request.partNumber}` });
          };
          // The first part is answered; the second is on its way when the guard stops the writer.
          if (request.partNumber === 1) return land();
          signal?.addEventListener('abort', () => {
            reject(signal.reason);
            setTimeout(land, 1_000);
          });
        }),
      complete: async () => 'created',
      abort: async () => {},
    };
    const noop = async () => {};
    const runs: RunStateStore = { checkpoint: noop, recordUpload: noop, extendWithProgress: noop, continueRun: noop };
    const lease: Lease = { key: KEY, leaseId: 'lease-1' };
    const writer = new MultipartReportWriter(
      {
        uploads,
        runs,
        lease,
        reportKey: REPORT_KEY,
        contentType: 'application/x-ndjson',
        metadata: {},
        signal: guard.signal,
        now: () => Date.now(),
      },
      {},
    );
    return { guard, writer, landed };
  }

  it('keeps the recorded reservation when a part was in flight: its aborted request may still land under its number', async () => {
    const { guard, writer, landed } = writerWithSdkAborts();
    await writer.write('x'.repeat(MIN_PART_BYTES));
    await writer.boundary(); // part 1, answered
    await writer.write('x'.repeat(MIN_PART_BYTES));
    const inFlight = writer.boundary(); // part 2, on its way
    await vi.advanceTimersByTimeAsync(0);
    guard.abort(new Error('the segment ended'));
    await expect(inFlight).rejects.toThrow('the segment ended');

    // Nothing is busy any more, and part 1 was the last answered: narrowing to it would hand number 2 to the next holder.
    expect(writer.settledReservation()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(landed).toEqual([1, 2]);
  });

  it('refuses writes, checkpoint boundaries and the end once stopped, and sends nothing more', async () => {
    const { guard, writer, landed } = writerWithSdkAborts();
    await writer.write('x'.repeat(MIN_PART_BYTES));
    await writer.boundary();
    guard.abort(new Error('the segment ended'));

    await expect(writer.write('x'.repeat(MIN_PART_BYTES))).rejects.toThrow('the segment ended');
    await expect(writer.boundary()).rejects.toThrow('the segment ended');
    await expect(writer.end()).rejects.toThrow('the segment ended');
    expect(landed).toEqual([1]);
  });
});
