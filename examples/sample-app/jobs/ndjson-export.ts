/**
 * The sample long job: an export that streams a generated NDJSON report (200 MB unless told otherwise) through the
 * report writer, checkpointing the next line to write, so that it runs across as many invocations as it needs and
 * resumes where its last checkpoint left it. Each line is a function of the occurrence and its number, so a
 * resumed run writes exactly the bytes an uninterrupted one would (exportLines gives them, for checking).
 */
import type { JobContext, JobDefinition, Occurrence, OccurrenceKey, StreamedReport } from '../../../functions/index';

export interface ExportOptions {
  /** The report's size in bytes (rounded up to whole lines). Default 200 MB. */
  readonly totalBytes?: number;
  /** Bytes per line, newline included; at least 64. Default 1 KiB. */
  readonly lineBytes?: number;
  /** Lines written between checkpoints. Default 1024 (1 MiB of report). */
  readonly linesPerStep?: number;
  /** Awaited after every step: the time a real export spends reading its source (tests pace it on a fake clock). */
  readonly pace?: (signal: AbortSignal) => Promise<void>;
}

export const EXPORT_DEFAULTS = { totalBytes: 200_000_000, lineBytes: 1024, linesPerStep: 1024 } as const;

interface ExportState {
  readonly line: number;
}

/** Line `n` of the export of `key`, newline included, exactly `lineBytes` long. */
export function exportLine(key: OccurrenceKey, n: number, lineBytes: number): string {
  const head = JSON.stringify({ n, job: key.jobId, scheduledTime: key.scheduledTime, pad: '' });
  return `${head.slice(0, -2)}${'x'.repeat(Math.max(0, lineBytes - head.length - 1))}"}\n`;
}

export function exportLineCount(options: ExportOptions = {}): number {
  const { totalBytes, lineBytes } = { ...EXPORT_DEFAULTS, ...options };
  return Math.ceil(totalBytes / lineBytes);
}

/** The export's lines from `from`, in order: what the report must be, for a checksum. */
export function* exportLines(key: OccurrenceKey, options: ExportOptions = {}, from = 0): Generator<string> {
  const { lineBytes } = { ...EXPORT_DEFAULTS, ...options };
  const count = exportLineCount(options);
  for (let n = from; n < count; n++) yield exportLine(key, n, lineBytes);
}

export function ndjsonExportJob(options: ExportOptions = {}): JobDefinition<StreamedReport> {
  const { lineBytes, linesPerStep } = { ...EXPORT_DEFAULTS, ...options };
  if (!Number.isInteger(lineBytes) || lineBytes < 64)
    throw new RangeError(`lineBytes must be at least 64, got ${lineBytes}`);
  const total = exportLineCount(options);
  return {
    reportExtension: 'ndjson',
    resumable: true,
    async run(occurrence: Occurrence, context: JobContext): Promise<StreamedReport> {
      const { signal, report, progress, logger } = context;
      let line = (context.resumeFrom as ExportState | undefined)?.line ?? 0;
      logger.info('export starts', { fromLine: line, lines: total, segment: context.segment });
      let recorded = line;
      const checkpoint = async () => {
        if (line !== recorded && (await context.checkpoint({ line } satisfies ExportState))) recorded = line;
      };
      while (line < total) {
        // Asked to yield (or stopped): keep what is done, then stop with the signal's reason.
        if (signal.aborted) {
          await checkpoint();
          signal.throwIfAborted();
        }
        const end = Math.min(total, line + linesPerStep);
        for (let n = line; n < end; n++) await report.write(exportLine(occurrence, n, lineBytes));
        line = end;
        progress({ done: line, total, note: 'lines exported' });
        await checkpoint();
        await options.pace?.(signal).catch(() => undefined);
      }
      return report.end();
    },
  };
}
