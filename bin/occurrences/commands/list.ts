/**
 * `occurrences list`: occurrences newest first, by job (a Query on the table key), by status (Queries on the status
 * index's shards) or both; never a Scan.
 *
 * Across jobs the index lists every status but one kind of row: a success leaves the index once its announcement is
 * recorded (table-schema.ts). So when the listing wants SUCCEEDED rows without `--job`, it reads each deployed job's
 * partition for them (the jobs from the schedule group, when the target knows it); otherwise it lists only the
 * successes not yet announced, and its footer says so.
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
      // Successes across jobs are read per deployed job: the schedule group is worth reading then, too.
      const target = await setup.connect(cmd, { knownJobs: o.job !== undefined || wantsSuccesses(query) });
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
  // One listing of every status asked for: the open ones share their shards, read once.
  return reader.listStatusNewestFirst(statuses, range);
}

/** Whether a listing across jobs wants SUCCEEDED rows, which the status index holds only until announced. */
export function wantsSuccesses(q: Pick<ListQuery, 'jobId' | 'statuses'>): boolean {
  return q.jobId === undefined && (q.statuses.length === 0 || q.statuses.includes(OccurrenceStatus.SUCCEEDED));
}

/**
 * The listing across jobs, with the successes the index no longer holds: each deployed job's SUCCEEDED rows in the
 * range (a Query on its partition), merged with the index's rows. Without the jobs, the index's rows and a note.
 */
export async function listAcrossJobs(
  sources: Pick<ListSources, 'reader' | 'jobs'>,
  q: ListQuery,
): Promise<{ rows: Occurrence[]; note?: string }> {
  const indexed = await listOccurrences(sources.reader, q);
  if (!wantsSuccesses(q)) return { rows: indexed };
  if (sources.jobs === undefined) {
    return {
      rows: indexed,
      note:
        'SUCCEEDED: only those not yet announced (an announced success leaves the status index); pass --job, or ' +
        '--schedule-group or --stack, to read the successes of every deployed job',
    };
  }
  const jobIds = await sources.jobs.jobIds();
  const range = { from: isoSeconds(Math.ceil(q.from / 1000) * 1000), to: isoSeconds(Math.ceil(q.to / 1000) * 1000) };
  const perJob = await Promise.all(
    jobIds.map((jobId) =>
      sources.reader.listJobNewestFirst(jobId, { ...range, limit: q.limit }, [OccurrenceStatus.SUCCEEDED]),
    ),
  );
  // An unannounced success is in both its job's partition and the index: once.
  const byKey = new Map(
    [...indexed, ...perJob.flat()].map((o) => [`${o.jobId}\u0000${o.scheduleKey ?? ''}\u0000${o.scheduledTime}`, o]),
  );
  return {
    rows: [...byKey.values()].sort(newestFirst).slice(0, q.limit),
    note:
      `SUCCEEDED read from the partitions of the ${jobIds.length} job(s) in schedule group ${sources.jobs.group}` +
      ' (the successes of a run-time schedule: --job <id> --key <scheduleKey>)',
  };
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
  const { rows, note } =
    q.jobId === undefined ? await listAcrossJobs(sources, q) : { rows: await listOccurrences(sources.reader, q) };
  // An unknown --job finds nothing too: refuse it rather than say "no occurrences".
  const evidence =
    rows.length === 0 && q.jobId !== undefined && q.scheduleKey === undefined
      ? await requireKnownJob(sources, q.jobId)
      : undefined;
  if (json) {
    ctx.io.out(JSON.stringify(rows, null, 2));
    if (note !== undefined) ctx.io.err(note);
    return rows;
  }
  const listed = note === undefined ? '' : `; ${note}`;
  const what = [
    q.jobId ? `job ${q.jobId}${q.scheduleKey === undefined ? '' : ` schedule ${q.scheduleKey}`}` : 'all jobs',
    q.statuses.length > 0 ? q.statuses.join('/') : 'any status',
  ].join(', ');
  if (rows.length === 0) {
    const known = evidence === undefined ? '' : `; ${evidenceText(evidence)}`;
    ctx.io.out(`no occurrences (${what}, scheduled ${describeRange(q)})${known}${listed}`);
    return rows;
  }
  ctx.io.out(occurrenceTable(rows, ctx.clock.now(), await bufferedJobStates(sources.states, rows)));
  const more =
    rows.length === q.limit
      ? `; --limit ${q.limit} reached, there may be more (narrow --from/--to or raise --limit)`
      : '';
  ctx.io.out(`${rows.length} occurrence(s), newest first (${what}, scheduled ${describeRange(q)})${more}${listed}`);
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
