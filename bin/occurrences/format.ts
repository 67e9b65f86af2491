/**
 * How occurrences look on a terminal: tables (cli-table3, without colours, since the output is often piped or
 * pasted) and times relative to the injected clock.
 */
import Table from 'cli-table3';
import type { JobState } from '../../functions/protocol/job-state';
import type { Occurrence } from '../../functions/protocol/occurrence';
import { statusReason } from '../../functions/protocol/status-reason';

const PLAIN = { head: [] as string[], border: [] as string[] };

/** `3m 05s`, `2h 10m`, `4d 3h`: the two largest units, enough to judge a lease or a wait. */
export function duration(ms: number): string {
  const s = Math.floor(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** `2026-11-30T06:00:01.000Z (3m 05s ago)` or `(in 40s)`. */
export function when(isoTime: string | undefined, now: number): string {
  if (isoTime === undefined) return '';
  const t = Date.parse(isoTime);
  if (Number.isNaN(t)) return isoTime;
  return `${isoTime} (${t <= now ? `${duration(now - t)} ago` : `in ${duration(t - now)}`})`;
}

/**
 * What a list knows of a job beyond its rows: its job-state row (the running slot a BUFFERED occurrence waits for,
 * and the buffer's order), by job id. Absent: the detail says what the row alone says.
 */
export type JobStates = ReadonlyMap<string, JobState | undefined>;

/** The one line that says most about a row: its error, its lease, its wait, its report, or why it did not run. */
export function detail(o: Occurrence, now: number, states?: JobStates): string {
  switch (o.status) {
    case 'RUNNING':
      return o.leaseExpiresAt !== undefined && Date.parse(o.leaseExpiresAt) < now
        ? `lease expired ${duration(now - Date.parse(o.leaseExpiresAt))} ago`
        : `lease held by ${o.leaseOwner ?? '?'}`;
    case 'RETRY_WAIT': {
      const next = o.nextAttemptAt ? relative(o.nextAttemptAt, now) : '?';
      return `next attempt ${next}: ${truncate(o.lastError ?? '', 60)}`;
    }
    case 'FAILED':
      return truncate(o.lastError ?? '', 80);
    case 'SUCCEEDED':
      return o.reportKey ?? '';
    // Why it did not run: the words every reader of a row uses (statusReason), with what only the job-state row
    // knows for a BUFFERED one.
    case 'SKIPPED':
    case 'CANCELLED':
      return statusReason(o);
    case 'BUFFERED':
      return bufferDetail(o, states?.get(o.jobId));
    default:
      return '';
  }
}

/** How long after its scheduled time a missed occurrence was first recorded. */
export function lateBy(o: Occurrence): number | undefined {
  const recorded = o.skippedAt ?? o.createdAt;
  const late = Date.parse(recorded) - Date.parse(o.scheduledTime);
  // A row recorded before its own scheduled time was not missed by this much: say nothing rather than a wrong delay.
  return Number.isNaN(late) || late < 0 ? undefined : late;
}

/**
 * What a BUFFERED occurrence waits for: the occurrence holding the job's running slot, and its place in the buffer,
 * from the job-state row; without it (watch), statusReason's words: since when it waits.
 */
export function bufferDetail(o: Occurrence, state: JobState | undefined): string {
  if (state === undefined) return statusReason(o);
  const holder = state.slotTime ? `waiting for ${state.slotTime}` : 'waiting to be woken, the slot is free';
  const place = state.buffer?.indexOf(o.scheduledTime) ?? -1;
  const length = state.buffer?.length ?? 0;
  return place < 0
    ? `${holder} (not in the buffer: the reconciler wakes it)`
    : `${holder} (${place + 1} of ${length} in the buffer)`;
}

/** The latest time anything was recorded in the row. */
export function lastChange(o: Occurrence): string {
  const times = [
    o.createdAt,
    o.claimedAt,
    o.heartbeatAt,
    o.releasedAt,
    o.succeededAt,
    o.failedAt,
    o.notifiedAt,
    o.skippedAt,
    o.bufferedAt,
    o.cancelledAt,
    o.requeuedAt,
    (o as { manualRetryAt?: string }).manualRetryAt,
  ].filter((t): t is string => t !== undefined);
  return times.sort().at(-1) ?? '';
}

/** The job column: the job id, and `/scheduleKey` for an occurrence of a schedule created at run time. */
export const jobCell = (o: { readonly jobId: string; readonly scheduleKey?: string }): string =>
  o.scheduleKey === undefined ? o.jobId : `${o.jobId}/${o.scheduleKey}`;

export function occurrenceTable(rows: readonly Occurrence[], now: number, states?: JobStates): string {
  const table = new Table({
    head: ['job', 'scheduled time', 'status', 'attempt', 'last change', 'detail'],
    style: PLAIN,
  });
  for (const o of rows) {
    const changed = lastChange(o);
    table.push([
      jobCell(o),
      o.scheduledTime,
      o.status,
      String(o.attempt),
      changed ? `${duration(now - Date.parse(changed))} ago` : '',
      detail(o, now, states),
    ]);
  }
  return table.toString();
}

/** Rows of `[label, value]`, the empty ones left out. */
export function fieldTable(fields: ReadonlyArray<readonly [string, string | undefined]>): string {
  const table = new Table({ style: PLAIN });
  for (const [label, value] of fields) if (value !== undefined && value !== '') table.push({ [label]: value });
  return table.toString();
}

export function plainTable(head: string[], rows: string[][]): string {
  const table = new Table({ head, style: PLAIN });
  table.push(...rows);
  return table.toString();
}

function relative(isoTime: string, now: number): string {
  const t = Date.parse(isoTime);
  return t <= now ? `due since ${duration(now - t)}` : `in ${duration(t - now)}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
