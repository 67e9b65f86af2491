/**
 * How occurrences look on a terminal: tables (cli-table3, without colours, since the output is often piped or
 * pasted) and times relative to the injected clock.
 */
import Table from 'cli-table3';
import type { Occurrence } from '../../functions/protocol/occurrence';

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

/** The one line that says most about a row: its error, its lease, its wait or its report. */
export function detail(o: Occurrence, now: number): string {
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
    default:
      return '';
  }
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
    (o as { manualRetryAt?: string }).manualRetryAt,
  ].filter((t): t is string => t !== undefined);
  return times.sort().at(-1) ?? '';
}

export function occurrenceTable(rows: readonly Occurrence[], now: number): string {
  const table = new Table({
    head: ['job', 'scheduled time', 'status', 'attempt', 'last change', 'detail'],
    style: PLAIN,
  });
  for (const o of rows) {
    const changed = lastChange(o);
    table.push([
      o.jobId,
      o.scheduledTime,
      o.status,
      String(o.attempt),
      changed ? `${duration(now - Date.parse(changed))} ago` : '',
      detail(o, now),
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
