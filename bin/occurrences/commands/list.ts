/**
 * `occurrences list`: occurrences newest first, by job (a Query on the table key), by status (a Query on the
 * byStatus index, once per status) or both; never a Scan.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import type { OperatorOccurrenceReader } from '../../../functions/aws/occurrence-reader';
import { isoSeconds, type Occurrence, OccurrenceStatus } from '../../../functions/protocol/occurrence';
import type { JobStateStore } from '../../../functions/protocol/ports';
import {
  jobIdArgument,
  parseArguments,
  STATUS_NAMES,
  scheduleKeyArgument,
  statusListArgument,
  timeArgument,
  wholeNumberArgument,
} from '../arguments';
import type { CommandContext, CommandSetup } from '../context';
import { UsageError } from '../errors';
import { type JobStates, jobCell, occurrenceTable } from '../format';
import { evidenceText, type JobSources, requireKnownJob } from '../known-job';

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
      const target = await setup.connect(cmd, { knownJobs: o.job !== undefined });
      await runList(setup.deps, target, query, o.json);
    });
}

const DEFAULT_LIST_FROM = '7d';

/** The options `list` and `watch` share: which job, which statuses, scheduled between which times. */
export function rangeOptions(cmd: Command): Command {
  return cmd
    .option('--job <id>', 'only this job (a query on the table key)')
    .option('--key <scheduleKey>', 'with --job: only this schedule of a job that takes schedules at run time')
    .option('--status <statuses>', `only these statuses, comma-separated: ${STATUS_NAMES.join(',')}`)
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
    key: scheduleKeyArgument.optional(),
    status: statusListArgument.optional(),
    from: timeArgument(now),
    to: timeArgument(now).optional(),
  });
}

export function toListQuery(o: z.output<ReturnType<typeof rangeArguments>>, limit: number): ListQuery {
  if (o.to !== undefined && o.from >= o.to) throw new UsageError(`--from must be before --to`);
  if (o.key !== undefined && o.job === undefined) throw new UsageError('--key: needs --job (the job of the schedule)');
  const key = o.key === undefined ? {} : { scheduleKey: o.key };
  return { jobId: o.job, ...key, statuses: o.status ?? [], from: o.from, to: o.to ?? MAX_TIME, limit };
}

export interface ListQuery {
  readonly jobId?: string;
  /** With jobId: one schedule of a job that takes schedules at run time (its occurrences are a partition of their own). */
  readonly scheduleKey?: string;
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
  if (q.jobId !== undefined) return reader.listJobNewestFirst(q.jobId, range, q.statuses, q.scheduleKey);
  const statuses = q.statuses.length > 0 ? q.statuses : Object.values(OccurrenceStatus);
  // Each status's query returns its newest `limit`; the newest `limit` of all of them are among those.
  const perStatus = await Promise.all(statuses.map((s) => reader.listStatusNewestFirst(s, range)));
  return perStatus.flat().sort(newestFirst).slice(0, q.limit);
}

export function newestFirst(a: Occurrence, b: Occurrence): number {
  return b.scheduledTime.localeCompare(a.scheduledTime) || jobCell(a).localeCompare(jobCell(b));
}

/** What `list` reads: the rows, and for an empty answer or a BUFFERED row, the job-state rows and the schedules. */
export type ListSources = JobSources;

export async function runList(
  ctx: CommandContext,
  sources: ListSources,
  q: ListQuery,
  json: boolean,
): Promise<Occurrence[]> {
  const rows = await listOccurrences(sources.reader, q);
  // An unknown --job finds nothing too: refuse it rather than say "no occurrences".
  const evidence =
    rows.length === 0 && q.jobId !== undefined && q.scheduleKey === undefined
      ? await requireKnownJob(sources, q.jobId)
      : undefined;
  if (json) {
    ctx.io.out(JSON.stringify(rows, null, 2));
    return rows;
  }
  const what = [
    q.jobId ? `job ${q.jobId}${q.scheduleKey === undefined ? '' : ` schedule ${q.scheduleKey}`}` : 'all jobs',
    q.statuses.length > 0 ? q.statuses.join('/') : 'any status',
  ].join(', ');
  if (rows.length === 0) {
    const known = evidence === undefined ? '' : `; ${evidenceText(evidence)}`;
    ctx.io.out(`no occurrences (${what}, scheduled ${describeRange(q)})${known}`);
    return rows;
  }
  ctx.io.out(occurrenceTable(rows, ctx.clock.now(), await bufferedJobStates(sources.states, rows)));
  const more =
    rows.length === q.limit
      ? `; --limit ${q.limit} reached, there may be more (narrow --from/--to or raise --limit)`
      : '';
  ctx.io.out(`${rows.length} occurrence(s), newest first (${what}, scheduled ${describeRange(q)})${more}`);
  return rows;
}

/**
 * The job-state rows of the jobs with a BUFFERED row among `rows`: what those wait for (the occurrence holding the
 * running slot) and their place in the buffer are there. One read per such job; none when nothing is buffered.
 */
export async function bufferedJobStates(
  states: JobStateStore | undefined,
  rows: readonly Occurrence[],
): Promise<JobStates | undefined> {
  if (states === undefined) return undefined;
  const jobs = [...new Set(rows.filter((o) => o.status === OccurrenceStatus.BUFFERED).map((o) => o.jobId))];
  return new Map(await Promise.all(jobs.map(async (jobId) => [jobId, await states.read(jobId)] as const)));
}

export function describeRange(q: Pick<ListQuery, 'from' | 'to'>): string {
  const to = q.to >= MAX_TIME ? 'onwards' : `up to ${isoSeconds(q.to)} (excluded)`;
  return `${isoSeconds(q.from)} ${to}`;
}

/** "No upper bound": the largest time the key format can hold. */
export const MAX_TIME = Date.parse('9999-12-31T23:59:59Z');
