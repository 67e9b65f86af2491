/**
 * `occurrences backfill`: record and enqueue the occurrences a job's schedule would have produced in a time range,
 * for example after the schedule was disabled or the trigger was broken.
 *
 * Each occurrence goes through recordOccurrence, the trigger's own logic: a conditional put on the occurrence key,
 * then an enqueue. So a backfill is idempotent: an occurrence that exists is not written again, and runs at most
 * once; one still PENDING is enqueued again (the earlier run may have stopped between its put and its enqueue),
 * which is harmless because claims are conditional.
 *
 * The deadline choice: the trigger counts an occurrence's retry deadline from its scheduled time, so an occurrence
 * backfilled later than that would be FAILED by its first delivery without running. A backfill counts the deadline
 * (and the retention) from the time it runs instead (`countFrom`), giving each backfilled occurrence the job's full
 * retry window. Ranges that reach into the future are refused: the Scheduler fires those, and recording them early
 * would run the job before its time.
 */
import type { OperatorOccurrenceReader } from '../../../functions/aws/occurrence-reader';
import { isoSeconds, type OccurrenceStatus } from '../../../functions/protocol/occurrence';
import type { Logger, OccurrenceStore, WorkQueue } from '../../../functions/protocol/ports';
import { quoteValue } from '../../../functions/protocol/quote-value';
import { recordOccurrence, type TriggerResult } from '../../../functions/protocol/record-occurrence';
import type { ResolvedJobConfig } from '../../../lib/job-config';
import { ScheduleError, scheduleTimesBetween } from '../../../lib/schedule-times';
import { UsageError } from '../arguments';
import { type CommandContext, settingsById } from '../context';

export interface BackfillPlan {
  readonly job: ResolvedJobConfig;
  readonly from: number;
  readonly to: number;
  /** Scheduled times, oldest first, in the key format. */
  readonly times: readonly string[];
}

/** Requests in flight at once: a large range goes faster, and DynamoDB on demand and SQS take it easily. */
export const BACKFILL_CONCURRENCY = 8;

export function planBackfill(ctx: CommandContext, jobId: string, from: number, to: number, max: number): BackfillPlan {
  const job = ctx.jobs.find((j) => j.settings.id === jobId);
  if (job === undefined) {
    throw new UsageError(
      `--job: ${quoteValue(jobId)} is not a configured job (bin/jobs.ts has: ${ctx.jobs.map((j) => j.settings.id).join(', ')})`,
    );
  }
  const now = ctx.clock.now();
  if (from >= to) throw new UsageError(`--from (${isoSeconds(from)}) must be before --to (${isoSeconds(to)})`);
  if (to > now) {
    throw new UsageError(
      `--to (${isoSeconds(to)}) is in the future: the Scheduler fires those occurrences itself, and recording ` +
        'them now would run the job early; end the range at now or before',
    );
  }
  try {
    const times = scheduleTimesBetween(
      { schedule: job.schedule, timeZone: job.timeZone },
      new Date(from),
      new Date(to),
      max,
    );
    return { job, from, to, times: times.map((t) => isoSeconds(t.getTime())) };
  } catch (error) {
    if (error instanceof ScheduleError) throw new UsageError(`${error.message} (or raise --max, now ${max})`);
    throw error;
  }
}

export class BackfillInterruptedError extends Error {
  constructor(
    readonly done: number,
    readonly planned: number,
  ) {
    super(`backfill interrupted after ${done} of ${planned} occurrence(s)`);
    this.name = 'BackfillInterruptedError';
  }
}

export interface Progress {
  increment(): void;
  stop(): void;
}
export type ProgressFactory = (total: number) => Progress;
const noProgress: ProgressFactory = () => ({ increment: () => undefined, stop: () => undefined });

export interface BackfillDeps {
  readonly store: OccurrenceStore;
  readonly queue: WorkQueue;
  readonly reader: OperatorOccurrenceReader;
}

export interface BackfillSummary {
  readonly planned: number;
  /** By recordOccurrence's result; empty for a dry run. */
  readonly results: Partial<Record<TriggerResult, number>>;
  /** Dry run: the occurrences in the range that already have a row, by status. */
  readonly existing?: Partial<Record<OccurrenceStatus, number>>;
}

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export async function runBackfill(
  ctx: CommandContext,
  deps: BackfillDeps,
  plan: BackfillPlan,
  options: { dryRun: boolean; json: boolean; progress?: ProgressFactory; signal?: AbortSignal },
): Promise<BackfillSummary> {
  const { job, times } = plan;
  const jobId = job.settings.id;
  const range = `${isoSeconds(plan.from)} to ${isoSeconds(plan.to)}`;
  if (options.dryRun) {
    const summary = await dryRun(deps.reader, plan);
    if (options.json) {
      ctx.io.out(JSON.stringify({ dryRun: true, jobId, ...summary, times }, null, 2));
    } else {
      const existing = Object.entries(summary.existing ?? {})
        .map(([s, n]) => `${n} ${s}`)
        .join(', ');
      const already = Object.values(summary.existing ?? {}).reduce((a, b) => a + (b ?? 0), 0);
      ctx.io.out(
        `dry run: ${job.schedule} (${job.timeZone}) fires ${times.length} time(s) from ${range}; ` +
          `${already} of them already recorded${existing ? ` (${existing})` : ''}, ${times.length - already} would be recorded and enqueued.`,
      );
      if (times.length > 0) ctx.io.out(listTimes(times));
      ctx.io.out('nothing was written.');
    }
    return summary;
  }

  const results: Partial<Record<TriggerResult, number>> = {};
  const deadline = job.settings.retry.deadlineSeconds;
  const progress = (options.progress ?? noProgress)(times.length);
  const triggerDeps = {
    store: deps.store,
    queue: deps.queue,
    clock: ctx.clock,
    logger: quiet,
    jobs: settingsById(ctx.jobs),
  };
  let next = 0;
  let failure: unknown;
  const countFrom = ctx.clock.now();
  const worker = async (): Promise<void> => {
    // Stop taking new times after the first failure or Ctrl-C; the ones in flight finish.
    while (failure === undefined && !options.signal?.aborted && next < times.length) {
      const scheduledTime = times[next++];
      try {
        const result = await recordOccurrence(triggerDeps, { jobId, scheduledTime }, { countFrom });
        results[result] = (results[result] ?? 0) + 1;
        progress.increment();
      } catch (error) {
        failure ??= error;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(BACKFILL_CONCURRENCY, times.length) }, worker));
  } finally {
    progress.stop();
  }
  const summary: BackfillSummary = { planned: times.length, results };
  const done = Object.values(results).reduce((a, b) => a + (b ?? 0), 0);
  if (failure !== undefined || done < times.length) {
    ctx.io.err(
      `backfill stopped after ${done} of ${times.length} occurrence(s)${failure === undefined ? ' (interrupted)' : ''}; ` +
        `${describeResults(results)}. Running it again is safe: it is idempotent.`,
    );
    throw failure ?? new BackfillInterruptedError(done, times.length);
  }
  if (options.json) {
    ctx.io.out(JSON.stringify({ dryRun: false, jobId, ...summary }, null, 2));
  } else {
    ctx.io.out(
      `backfilled ${jobId} from ${range}: ${times.length} occurrence(s) in the schedule; ${describeResults(results)}.`,
    );
    if ((results.recorded ?? 0) > 0) {
      ctx.io.out(
        `new occurrences may be retried until ${isoSeconds(countFrom + deadline * 1000)} (the retry deadline counts from this backfill).`,
      );
    }
  }
  return summary;
}

async function dryRun(reader: OperatorOccurrenceReader, plan: BackfillPlan): Promise<BackfillSummary> {
  // One key-range Query for the whole range, rather than a read per time.
  const rows = await reader.listJobNewestFirst(plan.job.settings.id, {
    from: isoSeconds(plan.from),
    to: isoSeconds(Math.ceil(plan.to / 1000) * 1000),
    limit: Number.MAX_SAFE_INTEGER /* every row: pages are capped by the reader */,
  });
  const planned = new Set(plan.times);
  const existing: Partial<Record<OccurrenceStatus, number>> = {};
  for (const row of rows) if (planned.has(row.scheduledTime)) existing[row.status] = (existing[row.status] ?? 0) + 1;
  return { planned: plan.times.length, results: {}, existing };
}

const RESULT_WORDS: Record<TriggerResult, string> = {
  recorded: 'recorded and enqueued',
  'pending-re-enqueued': 'already recorded but still PENDING, enqueued again (harmless: claims are conditional)',
  'duplicate-suppressed': 'already recorded and claimed or finished, left alone',
};

function describeResults(results: Partial<Record<TriggerResult, number>>): string {
  const parts = (Object.keys(RESULT_WORDS) as TriggerResult[])
    .filter((r) => results[r])
    .map((r) => `${results[r]} ${RESULT_WORDS[r]}`);
  return parts.length > 0 ? parts.join('; ') : 'nothing to do';
}

/** The first and last few times of a long list. */
function listTimes(times: readonly string[]): string {
  const shown =
    times.length <= 12 ? times : [...times.slice(0, 5), `… ${times.length - 10} more …`, ...times.slice(-5)];
  return shown.map((t) => `  ${t}`).join('\n');
}
