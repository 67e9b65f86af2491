/**
 * `occurrences watch`: follow occurrences as they change, by polling the same queries as `list` (the table key or
 * the byStatus index) and printing what changed between two polls: new rows, status and attempt changes, the
 * announcement. Polling, not the table's stream: the stream's shards are the notifier's, and an operator's terminal
 * should need no more than read access to the table.
 *
 * A row that leaves a filtered view (`--status RUNNING`, and it SUCCEEDED) is read once by its key to say where it
 * went. A poll that fails transiently (throttling, a dropped connection) is reported and tried again next interval.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import type { OperatorOccurrenceReader } from '../../../functions/aws/occurrence-reader';
import type { ResumableOccurrence, RunProgress } from '../../../functions/protocol/checkpoint';
import { isTransient } from '../../../functions/protocol/errors';
import type { Occurrence } from '../../../functions/protocol/occurrence';
import type { OccurrenceStore } from '../../../functions/protocol/ports';
import { parseArguments, wholeNumberArgument } from '../arguments';
import { type CommandContext, type CommandSetup, sleep } from '../context';
import { detail } from '../format';
import { type JobSources, requireKnownJob } from '../known-job';
import { progressText, rateOf } from '../run-progress';
import { type ListQuery, listOccurrences, rangeArguments, rangeOptions, toListQuery } from './list';

export function registerWatch(program: Command, setup: CommandSetup): void {
  rangeOptions(program.command('watch').description('follow occurrences as they change (polls; Ctrl-C to stop)'))
    .option('--interval <seconds>', 'seconds between polls, 1-300', '2')
    .option('--limit <n>', 'newest occurrences followed, 1-1000', '200')
    .option('--json', 'one JSON object per change')
    .action(async (raw, cmd: Command) => {
      const o = parseArguments(
        rangeArguments(setup.now).extend({
          interval: wholeNumberArgument(1, 300),
          limit: wholeNumberArgument(1, 1000),
          json: z.boolean().default(false),
        }),
        raw,
      );
      const query = toListQuery(o, o.limit);
      const target = await setup.connect(cmd, { knownJobs: o.job !== undefined });
      await runWatch(setup.deps, target, query, {
        intervalMs: o.interval * 1000,
        json: o.json,
        signal: setup.deps.signal ?? new AbortController().signal,
        sleep: setup.deps.sleep ?? sleep,
      });
    });
}

export interface Change {
  readonly at: string;
  readonly jobId: string;
  readonly scheduledTime: string;
  /** undefined: first seen. */
  readonly from?: string;
  readonly to: string;
  readonly attempt?: number;
  readonly detail: string;
}

export interface WatchOptions {
  readonly intervalMs: number;
  readonly json: boolean;
  readonly signal: AbortSignal;
  /** Waits between polls; resolves early when the signal aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

const keyOf = (o: { jobId: string; scheduledTime: string }) => `${o.jobId}#${o.scheduledTime}`;

/** What changed from one poll to the next, as the operator cares about it. */
export function changesBetween(
  before: ReadonlyMap<string, Occurrence>,
  after: readonly Occurrence[],
  now: number,
): Change[] {
  const at = new Date(now).toISOString();
  const changes: Change[] = [];
  for (const o of after) {
    const old = before.get(keyOf(o));
    const base = { at, jobId: o.jobId, scheduledTime: o.scheduledTime, attempt: o.attempt, detail: detail(o, now) };
    if (old === undefined) changes.push({ ...base, to: o.status });
    else if (old.status !== o.status || old.attempt !== o.attempt)
      changes.push({ ...base, from: old.status, to: o.status });
    else if (old.notifiedAt === undefined && o.notifiedAt !== undefined)
      changes.push({
        ...base,
        from: o.status,
        to: 'ANNOUNCED',
        detail: `notification ${o.notificationId ?? ''}`.trim(),
      });
  }
  return changes;
}

/** What `watch` reads: the rows, each row that left the view, and (for an unknown --job) the job's other traces. */
export type WatchSources = JobSources & { readonly store: Pick<OccurrenceStore, 'get'> };

export async function runWatch(
  ctx: CommandContext,
  deps: WatchSources,
  query: ListQuery,
  options: WatchOptions,
): Promise<void> {
  let seen = new Map<string, Occurrence>();
  const progressSeen = new Map<string, RunProgress>();
  let first = true;
  if (!options.json) {
    const statuses = query.statuses.length ? ` (${query.statuses.join('/')})` : '';
    const every = `every ${options.intervalMs / 1000} s`;
    ctx.io.err(`watching ${query.jobId ?? 'all jobs'}${statuses}, ${every}; Ctrl-C to stop`);
  }
  while (!options.signal.aborted) {
    const rows = await poll(ctx, deps.reader, query, options.intervalMs);
    if (rows !== undefined) {
      // An unknown --job finds nothing too: refuse it at the first poll rather than watch it forever.
      if (first && rows.length === 0 && query.jobId !== undefined) await requireKnownJob(deps, query.jobId);
      const now = ctx.clock.now();
      const changes = changesBetween(seen, [...rows].reverse(), now);
      const current = new Map(rows.map((o) => [keyOf(o), o]));
      changes.push(...(await departures(deps.store, seen, current, now)));
      changes.push(...(await progressChanges(deps.store, rows, progressSeen, now)));
      for (const change of changes) ctx.io.out(options.json ? JSON.stringify(change) : formatChange(change, first));
      seen = current;
      first = false;
    }
    await options.sleep(options.intervalMs, options.signal);
  }
}

/** One poll. A transient failure is reported and gives undefined: the watch tries again after the interval. */
async function poll(
  ctx: CommandContext,
  reader: OperatorOccurrenceReader,
  query: ListQuery,
  intervalMs: number,
): Promise<Occurrence[] | undefined> {
  try {
    return await listOccurrences(reader, query);
  } catch (error) {
    // A throttled or dropped poll should not end a watch that may have run for hours; anything else does.
    if (!isTransient(error)) throw error;
    ctx.io.err(
      `${new Date(ctx.clock.now()).toISOString()}  poll failed, trying again in ${intervalMs / 1000} s: ` +
        (error as Error).message,
    );
    return undefined;
  }
}

/** The rows seen before that this poll did not return, each read once by its key to say where it went. */
async function departures(
  store: Pick<OccurrenceStore, 'get'>,
  seen: ReadonlyMap<string, Occurrence>,
  current: ReadonlyMap<string, Occurrence>,
  now: number,
): Promise<Change[]> {
  const changes: Change[] = [];
  for (const [key, old] of seen) {
    if (current.has(key)) continue;
    const row = await store.get(old);
    changes.push({
      at: new Date(now).toISOString(),
      jobId: old.jobId,
      scheduledTime: old.scheduledTime,
      from: old.status,
      to: row?.status ?? 'DELETED',
      attempt: row?.attempt,
      detail: row ? `${detail(row, now)} (no longer in this view)` : 'the row is gone (TTL)',
    });
  }
  return changes;
}

/**
 * A progress bar for each running occurrence whose job reported progress since the last poll, with the rate between
 * the two readings and the time left at that rate. The list's queries do not return the progress (the status index
 * does not project it), so each RUNNING row is read by its key: one read per running occurrence and poll.
 */
async function progressChanges(
  store: Pick<OccurrenceStore, 'get'>,
  rows: readonly Occurrence[],
  seen: Map<string, RunProgress>,
  now: number,
): Promise<Change[]> {
  const changes: Change[] = [];
  for (const o of rows) {
    if (o.status !== 'RUNNING') continue;
    const row = (await store.get(o)) as ResumableOccurrence | undefined;
    const progress = row?.progress;
    const earlier = seen.get(keyOf(o));
    if (row === undefined || progress === undefined || progress.at === earlier?.at) continue;
    seen.set(keyOf(o), progress);
    changes.push({
      at: new Date(now).toISOString(),
      jobId: o.jobId,
      scheduledTime: o.scheduledTime,
      from: 'RUNNING',
      to: 'PROGRESS',
      attempt: row.attempt,
      detail: progressText(progress, rateOf(earlier, progress)),
    });
  }
  return changes;
}

function formatChange(c: Change, first: boolean): string {
  const transition = c.from === undefined ? (first ? c.to : `new ${c.to}`) : `${c.from} -> ${c.to}`;
  const attempt = c.attempt !== undefined && c.attempt > 0 ? ` attempt ${c.attempt}` : '';
  return `${c.at}  ${c.jobId} ${c.scheduledTime}  ${transition}${attempt}${c.detail ? `  ${c.detail}` : ''}`;
}
