/**
 * How a long job's run looks on a terminal: its progress (a bar, the rate between two polls, the time left), the
 * checkpoint's age and what it covers, and the segment count (functions/protocol/checkpoint.ts has the fields).
 */
import type { ResumableOccurrence, RunProgress } from '../../functions/protocol/checkpoint';
import type { Occurrence } from '../../functions/protocol/occurrence';
import { duration, when } from './format';

const BAR_WIDTH = 24;

/** `[##########..............]  42%`, or the count alone when the total is unknown. */
export function progressBar(progress: Pick<RunProgress, 'done' | 'total'>): string {
  const { done, total } = progress;
  if (total === undefined || total <= 0) return `${done} done`;
  const share = Math.min(1, done / total);
  const filled = Math.round(share * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(share * 100)).padStart(3)}%`;
}

/** Units per second from an earlier reading to this one; undefined when there is no earlier one or no time passed. */
export function rateOf(earlier: RunProgress | undefined, later: RunProgress): number | undefined {
  if (earlier === undefined) return undefined;
  const seconds = (Date.parse(later.at) - Date.parse(earlier.at)) / 1000;
  if (!(seconds > 0) || later.done < earlier.done) return undefined;
  return (later.done - earlier.done) / seconds;
}

/** The bar, done/total, the note, and with a rate the time left at that rate. */
export function progressText(progress: RunProgress, rate: number | undefined): string {
  const counts = progress.total === undefined ? `${progress.done}` : `${progress.done}/${progress.total}`;
  const parts = [progressBar(progress), counts + (progress.note ? ` ${progress.note}` : '')];
  if (rate !== undefined) {
    parts.push(`${formatRate(rate)}/s`);
    if (progress.total !== undefined && rate > 0) {
      parts.push(`~${duration(((progress.total - progress.done) / rate) * 1000)} left`);
    }
  }
  return parts.join('  ');
}

const formatRate = (rate: number): string =>
  rate >= 10_000 ? `${Math.round(rate / 1000)}k` : rate >= 10 ? String(Math.round(rate)) : rate.toFixed(1);

/** Whether the row's lease was given up at the end of a segment (not lost): the next invocation claims it. */
export const isContinued = (row: Occurrence): boolean =>
  row.status === 'RUNNING' && (row.leaseId ?? '').startsWith('continued:');

/** The lease line of a continued row, instead of "EXPIRED (the worker died)". */
export function continuedLeaseText(row: ResumableOccurrence, now: number): string {
  return `given up at the end of segment ${row.segment ?? '?'} ${when(row.continuedAt, now)}; the next invocation claims it`;
}

/** The `show` fields of a run: progress, checkpoint, segments, run start. Empty for a row that has none. */
export function runFields(row: ResumableOccurrence, now: number): Array<readonly [string, string | undefined]> {
  const checkpoint = row.checkpoint;
  const upload = checkpoint?.upload;
  const covers =
    upload === undefined
      ? 'no report bytes yet'
      : `${mebibytes(upload.bytes)} of report in ${upload.parts.length} part(s)`;
  return [
    [
      'progress',
      row.progress ? `${progressText(row.progress, undefined)}, reported ${when(row.progress.at, now)}` : undefined,
    ],
    ['checkpoint', checkpoint ? `${duration(now - Date.parse(checkpoint.at))} old, ${covers}` : undefined],
    ['segments', row.segment ? `${row.segment} ended by a yield, last ${when(row.continuedAt, now)}` : undefined],
    ['run started', row.runStartedAt ? when(row.runStartedAt, now) : undefined],
  ];
}

const mebibytes = (bytes: number): string => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;
