/**
 * `occurrences list`: occurrences newest first, by job (a Query on the table key), by status (a Query on the
 * byStatus index, once per status) or both; never a Scan.
 */
import type { OperatorOccurrenceReader } from '../../../functions/aws/occurrence-reader';
import { isoSeconds, type Occurrence, OccurrenceStatus } from '../../../functions/protocol/occurrence';
import type { CommandContext } from '../context';
import { occurrenceTable } from '../format';

export interface ListQuery {
  readonly jobId?: string;
  /** Empty: every status. */
  readonly statuses: readonly OccurrenceStatus[];
  /** Epoch ms, inclusive. */
  readonly from: number;
  /** Epoch ms, exclusive. */
  readonly to: number;
  readonly limit: number;
}

export async function listOccurrences(reader: OperatorOccurrenceReader, q: ListQuery): Promise<Occurrence[]> {
  // The key is whole seconds: a bound with milliseconds starts at the next whole second.
  const range = {
    from: isoSeconds(Math.ceil(q.from / 1000) * 1000),
    to: isoSeconds(Math.ceil(q.to / 1000) * 1000),
    limit: q.limit,
  };
  if (q.jobId !== undefined) return reader.listJobNewestFirst(q.jobId, range, q.statuses);
  const statuses = q.statuses.length > 0 ? q.statuses : Object.values(OccurrenceStatus);
  // Each status's query returns its newest `limit`; the newest `limit` of all of them are among those.
  const perStatus = await Promise.all(statuses.map((s) => reader.listStatusNewestFirst(s, range)));
  return perStatus.flat().sort(newestFirst).slice(0, q.limit);
}

export function newestFirst(a: Occurrence, b: Occurrence): number {
  return b.scheduledTime.localeCompare(a.scheduledTime) || a.jobId.localeCompare(b.jobId);
}

export async function runList(
  ctx: CommandContext,
  reader: OperatorOccurrenceReader,
  q: ListQuery,
  json: boolean,
): Promise<Occurrence[]> {
  const rows = await listOccurrences(reader, q);
  if (json) {
    ctx.io.out(JSON.stringify(rows, null, 2));
    return rows;
  }
  const what = [
    q.jobId ? `job ${q.jobId}` : 'all jobs',
    q.statuses.length > 0 ? q.statuses.join('/') : 'any status',
  ].join(', ');
  if (rows.length === 0) {
    ctx.io.out(`no occurrences (${what}, scheduled ${describeRange(q)})`);
    return rows;
  }
  ctx.io.out(occurrenceTable(rows, ctx.clock.now()));
  const more =
    rows.length === q.limit
      ? `; --limit ${q.limit} reached, there may be more (narrow --from/--to or raise --limit)`
      : '';
  ctx.io.out(`${rows.length} occurrence(s), newest first (${what}, scheduled ${describeRange(q)})${more}`);
  return rows;
}

export function describeRange(q: Pick<ListQuery, 'from' | 'to'>): string {
  const to = q.to >= MAX_TIME ? 'onwards' : `until ${isoSeconds(q.to)}`;
  return `${isoSeconds(q.from)} ${to}`;
}

/** "No upper bound": the largest time the key format can hold. */
export const MAX_TIME = Date.parse('9999-12-31T23:59:59Z');
