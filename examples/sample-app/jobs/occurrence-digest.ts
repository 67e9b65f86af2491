/**
 * Sample job: a digest of the previous 24 hours of occurrences across all jobs, as Markdown.
 * It needs no outside data, so a fresh deployment produces a real report on its first run.
 */

import { type JobDefinition, type Occurrence, OccurrenceStatus, type ReportBody } from '../../../functions/index';

/** What the digest reads: the package's OperatorOccurrenceReader is one, a test passes its own. */
export interface OccurrenceReader {
  /** Occurrences (full rows) with this status and `from <= scheduledTime < to`, oldest first. */
  listByStatus(status: OccurrenceStatus, from: string, to: string, signal?: AbortSignal): Promise<Occurrence[]>;
  /** One job's occurrences with these statuses, `from <= scheduledTime < to`, newest first, at most `limit`. */
  listJobNewestFirst(
    jobId: string,
    range: { from: string; to: string; limit: number },
    statuses?: readonly OccurrenceStatus[],
  ): Promise<Occurrence[]>;
}

export const DIGEST_PERIOD_MS = 24 * 60 * 60 * 1000;
/** The most successes of one job a digest reads: a day of one-minute runs, and more. */
const MAX_SUCCESSES_PER_JOB = 10_000;

/**
 * The digest of every status across jobs. The status index lists every status but announced successes (they leave
 * it once announced): those are read from each job's own partition, so the digest names the jobs it covers.
 */
export function occurrenceDigestJob(
  reader: () => OccurrenceReader,
  jobIds: readonly string[],
): JobDefinition<ReportBody> {
  return {
    reportExtension: 'md',
    async run(occurrence, { signal, logger }) {
      const to = occurrence.scheduledTime;
      const from = new Date(Date.parse(to) - DIGEST_PERIOD_MS).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const source = reader();
      const rows: Occurrence[] = [];
      for (const status of Object.values(OccurrenceStatus)) {
        if (status !== OccurrenceStatus.SUCCEEDED) rows.push(...(await source.listByStatus(status, from, to, signal)));
      }
      for (const jobId of jobIds) {
        const range = { from, to, limit: MAX_SUCCESSES_PER_JOB };
        rows.push(...(await source.listJobNewestFirst(jobId, range, [OccurrenceStatus.SUCCEEDED])));
      }
      logger.info('digest collected', { from, to, occurrences: rows.length });
      return { body: renderDigest(rows, from, to), contentType: 'text/markdown; charset=utf-8' };
    },
  };
}

/** Pure: the Markdown of a digest over [from, to). */
export function renderDigest(rows: readonly Occurrence[], from: string, to: string): string {
  const statuses = Object.values(OccurrenceStatus);
  const byJob = new Map<string, Occurrence[]>();
  for (const row of rows) byJob.set(row.jobId, [...(byJob.get(row.jobId) ?? []), row]);
  const jobs = [...byJob.keys()].sort();

  const lines = [`# Occurrence digest`, '', `Period: ${from} to ${to} (scheduled times, UTC).`, ''];
  if (rows.length === 0) {
    lines.push('No occurrences were scheduled in this period.');
    return `${lines.join('\n')}\n`;
  }
  lines.push(
    `| job | ${statuses.join(' | ')} | retries | median run (s) |`,
    `|---|${statuses.map(() => '---:').join('|')}|---:|---:|`,
  );
  for (const job of jobs) {
    const list = byJob.get(job) ?? [];
    const counts = statuses.map((s) => list.filter((o) => o.status === s).length);
    const retries = list.reduce((sum, o) => sum + Math.max(0, o.attempt - 1), 0);
    lines.push(
      `| ${job} | ${counts.join(' | ')} | ${retries} | ${formatSeconds(median(list.map(runSeconds).filter(isNumber)))} |`,
    );
  }
  const failed = rows.filter((o) => o.status === OccurrenceStatus.FAILED).sort(byTime);
  if (failed.length > 0) {
    lines.push('', '## Failed', '');
    for (const o of failed)
      lines.push(
        `- ${o.jobId} at ${o.scheduledTime}, after ${o.attempt} attempt(s): ${oneLine(o.lastError ?? '(no error recorded)')}`,
      );
  }
  const open = rows
    .filter((o) => o.status !== OccurrenceStatus.SUCCEEDED && o.status !== OccurrenceStatus.FAILED)
    .sort(byTime);
  if (open.length > 0) {
    lines.push('', '## Not finished', '');
    for (const o of open)
      lines.push(
        `- ${o.jobId} at ${o.scheduledTime}: ${o.status}, attempt ${o.attempt}${o.nextAttemptAt ? `, next at ${o.nextAttemptAt}` : ''}`,
      );
  }
  return `${lines.join('\n')}\n`;
}

/** Seconds from the last claim to success: the successful attempt's run time. */
function runSeconds(o: Occurrence): number | undefined {
  if (o.status !== OccurrenceStatus.SUCCEEDED || !o.claimedAt || !o.succeededAt) return undefined;
  return (Date.parse(o.succeededAt) - Date.parse(o.claimedAt)) / 1000;
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const isNumber = (v: number | undefined): v is number => v !== undefined;
const formatSeconds = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(1));
const byTime = (a: Occurrence, b: Occurrence) =>
  a.scheduledTime.localeCompare(b.scheduledTime) || a.jobId.localeCompare(b.jobId);
const oneLine = (s: string) => s.replace(/\s+/g, ' ').replace(/\|/g, '\\|');
