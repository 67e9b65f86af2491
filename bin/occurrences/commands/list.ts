/**
 * `occurrences list`: occurrences newest first, by job (a Query on the table key), by status (a Query on the
 * byStatus index, once per status) or both; never a Scan.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import type { OperatorOccurrenceReader } from '../../../functions/aws/occurrence-reader';
import { isoSeconds, type Occurrence, OccurrenceStatus } from '../../../functions/protocol/occurrence';
import { jobIdArgument, parseArguments, statusListArgument, timeArgument, wholeNumberArgument } from '../arguments';
import type { CommandContext, CommandSetup } from '../context';
import { UsageError } from '../errors';
import { occurrenceTable } from '../format';

export function registerList(program: Command, setup: CommandSetup): void {
  rangeOptions(program.command('list').description('occurrences newest first, as a table (or --json)'))
    .option('--limit <n>', 'at most this many, 1-1000', '50')
    .option('--json', 'JSON array of the rows, for scripts')
    .action(async (raw, cmd: Command) => {
      const o = parseArguments(
        rangeArguments(setup.now).extend({ limit: wholeNumberArgument(1, 1000), json: z.boolean().default(false) }),
        raw,
      );
      const query = toListQuery(o, o.limit);
      const target = await setup.connect(cmd, {});
      await runList(setup.deps, target.reader, query, o.json);
    });
}

const DEFAULT_LIST_FROM = '7d';

/** The options `list` and `watch` share: which job, which statuses, scheduled between which times. */
export function rangeOptions(cmd: Command): Command {
  return cmd
    .option('--job <id>', 'only this job (a query on the table key)')
    .option('--status <statuses>', 'only these statuses, comma-separated: PENDING,RUNNING,RETRY_WAIT,SUCCEEDED,FAILED')
    .option(
      '--from <time>',
      "scheduled at or after: ISO date/time with zone, 'now', or a time ago (90m, 6h, 7d)",
      DEFAULT_LIST_FROM,
    )
    .option('--to <time>', 'scheduled before (same forms; default: no end)');
}

/** The schema of rangeOptions' values; times are counted back from `now`. */
export function rangeArguments(now: number) {
  return z.object({
    job: jobIdArgument.optional(),
    status: statusListArgument.optional(),
    from: timeArgument(now),
    to: timeArgument(now).optional(),
  });
}

export function toListQuery(o: z.output<ReturnType<typeof rangeArguments>>, limit: number): ListQuery {
  if (o.to !== undefined && o.from >= o.to) throw new UsageError(`--from must be before --to`);
  return { jobId: o.job, statuses: o.status ?? [], from: o.from, to: o.to ?? MAX_TIME, limit };
}

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
