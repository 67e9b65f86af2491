/**
 * The sample export at full size on moto, for the figures in docs/long-jobs.md: a 200 MB NDJSON report streamed over
 * several segments by the local pipeline's worker, its peak memory (RSS of this process, sampled every 50 ms, and
 * process.memoryUsage's peak external and array-buffer bytes), the requests each segment made, and a SHA-256 check of the
 * committed object against what the job meant to write.
 *
 * It also tallies the worker's warnings and errors and its continuations from the handlers' log lines (`events`):
 * a segment that missed its yield grace shows there, with the outcome it had.
 *
 *   npx tsx scripts/long-export.ts [--megabytes 200] [--segment-seconds 20]
 *   stress-ng --cpu 8 --timeout 300s & npx tsx scripts/long-export.ts --segment-seconds 4   # under a CPU hog
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { exportLines, ndjsonExportJob } from '../examples/sample-app/jobs/ndjson-export';
import { documentClient, s3Client, sqsClient } from '../functions/aws/clients';
import type { ResumableOccurrence } from '../functions/protocol/checkpoint';
import { withDefaults } from '../functions/protocol/job-settings';
import { isoSeconds } from '../functions/protocol/occurrence';
import { startMotoServer } from '../testing/local/moto-server';
import { LocalPipeline } from './local/pipeline';

const { values } = parseArgs({
  options: { megabytes: { type: 'string', default: '200' }, 'segment-seconds': { type: 'string', default: '20' } },
});
const totalBytes = Number(values.megabytes) * 1_000_000;
const segmentSeconds = Number(values['segment-seconds']);

/** The worker's log lines worth counting: every warning and error (with the error's name), and each continuation. */
function tallyEvents(events: Map<string, number>): (line: string) => void {
  return (line) => {
    const entry = JSON.parse(line) as { level: string; fn: string; message: string; reason?: string; error?: string };
    if (entry.fn !== 'worker' || (entry.level === 'INFO' && !entry.message.startsWith('segment yielded'))) return;
    const cause = /\b(\w+Error)\b/.exec(entry.reason ?? entry.error ?? '')?.[1];
    const name = `${entry.level} ${entry.message}${cause === undefined ? '' : ` (${cause})`}`;
    events.set(name, (events.get(name) ?? 0) + 1);
  };
}

/** Counts each handler request by operation (a middleware on the handlers' own clients). */
function countRequests(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const client of [documentClient(), s3Client(), sqsClient()]) {
    (client.middlewareStack as unknown as { add: (m: unknown, o: object) => void }).add(
      (next: (a: unknown) => Promise<unknown>, context: { commandName?: string }) => (args: unknown) => {
        const name = String(context.commandName).replace(/Command$/, '');
        counts.set(name, (counts.get(name) ?? 0) + 1);
        return next(args);
      },
      { step: 'initialize', name: 'countRequests', override: true },
    );
  }
  return counts;
}

/** The committed report's size, and whether its SHA-256 equals that of the lines the job meant to write. */
async function checkReport(pipeline: LocalPipeline, reportKey: string, key: { jobId: string; scheduledTime: string }) {
  const object = await pipeline.clients.s3.send(
    new GetObjectCommand({ Bucket: pipeline.resources.bucketName, Key: reportKey }),
  );
  const actual = createHash('sha256');
  let bytes = 0;
  for await (const chunk of object.Body as AsyncIterable<Uint8Array>) {
    actual.update(chunk);
    bytes += chunk.byteLength;
  }
  const expected = createHash('sha256');
  for (const line of exportLines(key, { totalBytes })) expected.update(line);
  return { bytes, checksumMatches: actual.digest('hex') === expected.digest('hex') };
}

async function main(): Promise<void> {
  const moto = await startMotoServer();
  const events = new Map<string, number>();
  const settings = withDefaults({
    id: 'export',
    leaseSeconds: 60,
    heartbeatSeconds: 10,
    leaseSafetyMarginSeconds: 10,
    timeoutSeconds: segmentSeconds,
    maxRunSeconds: 3600,
    retry: { maxAttempts: 3, deadlineSeconds: 7200 },
  });
  const pipeline = await LocalPipeline.create({
    endpoint: moto.endpoint,
    settings: [settings],
    jobs: { export: ndjsonExportJob({ totalBytes }) },
    workers: 1,
    log: tallyEvents(events),
  });
  const counts = countRequests();
  const key = { jobId: 'export', scheduledTime: isoSeconds(Date.now()) };
  const before = process.memoryUsage();
  let peak = { rss: before.rss, external: before.external, arrayBuffers: before.arrayBuffers };
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peak = {
      rss: Math.max(peak.rss, m.rss),
      external: Math.max(peak.external, m.external),
      arrayBuffers: Math.max(peak.arrayBuffers, m.arrayBuffers),
    };
  }, 50);
  const started = Date.now();
  try {
    await pipeline.fire([key]);
    pipeline.start();
    const [row] = (await pipeline.waitUntilSettled([key], 60 * 60_000)) as ResumableOccurrence[];
    const seconds = (Date.now() - started) / 1000;
    clearInterval(sampler);
    await pipeline.stop();
    const report = row.status === 'SUCCEEDED' ? await checkReport(pipeline, String(row.reportKey), key) : undefined;
    const invocations = (row.segment ?? 0) + row.attempt;
    const mb = (n: number) => Math.round((n / 1_000_000) * 10) / 10;
    console.log(
      JSON.stringify(
        {
          status: row.status,
          reportBytes: report?.bytes ?? 0,
          checksumMatches: report?.checksumMatches ?? false,
          lastError: row.lastError,
          seconds,
          invocations,
          attempt: row.attempt,
          segments: row.segment ?? 0,
          progress: row.progress === undefined ? undefined : `${row.progress.done} of ${row.progress.total} lines`,
          history: row.history?.map((h) => `${h.attempt}: ${h.outcome}${h.error ? ` (${h.error.slice(0, 80)})` : ''}`),
          segmentSeconds,
          rssBeforeMB: mb(before.rss),
          peakRssMB: mb(peak.rss),
          peakExternalMB: mb(peak.external),
          peakArrayBuffersMB: mb(peak.arrayBuffers),
          events: Object.fromEntries(events),
          requests: Object.fromEntries(counts),
          requestsPerInvocation: Math.round(([...counts.values()].reduce((a, b) => a + b, 0) / invocations) * 10) / 10,
        },
        null,
        2,
      ),
    );
  } finally {
    clearInterval(sampler);
    await pipeline.stop();
    await moto.stop();
  }
}

void main();
