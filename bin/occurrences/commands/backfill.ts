/**
 * `occurrences backfill`: record and enqueue the occurrences a job's schedule would have produced in a time range,
 * for example after the schedule was disabled or the trigger was broken.
 *
 * The job's schedule, time zone and route (its worker, deadline and retention) are those of its deployed schedule
 * (catalogue.ts). Each occurrence goes through recordOccurrence, the trigger's own logic, with the schedule event its
 * schedule would have sent: a conditional put on the occurrence key, then an enqueue on the job's worker queue. So a
 * backfill is idempotent: an occurrence that exists is not written again, and runs at most once; one still PENDING
 * is enqueued again (the earlier run may have stopped between its put and its enqueue), which is harmless because
 * claims are conditional.
 *
 * The deadline choice: the trigger counts an occurrence's retry deadline from its scheduled time, so an occurrence
 * backfilled later than that would be FAILED by its first delivery without running. A backfill counts the deadline
 * (and the retention) from the time it runs instead (`countFrom`), giving each backfilled occurrence the job's full
 * retry window. Ranges that reach into the future are refused: the Scheduler fires those, and recording them early
 * would run the job before its time.
 *
 * The overlap policy (`--overlap`, default bufferAll) is written on each row, and the worker applies it as for any
 * occurrence: under bufferAll the occurrences are recorded one at a time in scheduled-time order, and start one at a
 * time in that order. Under allowAll they run side by side, at most `--concurrency` at once: the backfill waits for
 * one to end (or pass its deadline) before it records the next.
 *
 * The planning, the dry run's count and the recording are the library's (operations/backfill.ts, which the console's
 * backfill runs too); this file parses the arguments, turns the library's refusals into usage errors and prints.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import type { OverlapPolicy } from '../../../functions/protocol/job-settings';
import { isoSeconds, type OccurrenceStatus } from '../../../functions/protocol/occurrence';
import type { WorkQueue } from '../../../functions/protocol/ports';
import type { TriggerResult } from '../../../functions/protocol/record-occurrence';
import { ScheduleError } from '../../../functions/protocol/schedule-times';
import {
  BACKFILL_CONCURRENCY,
  type BackfillPlan,
  type BackfillRows,
  type BackfillStore,
  backfillRangeProblem,
  planBackfill as planTimes,
  previewBackfill,
  recordBackfill,
} from '../../../operations/backfill';
import {
  byArgument,
  jobIdArgument,
  overlapArgument,
  parseArguments,
  scheduleKeyArgument,
  timeArgument,
  wholeNumberArgument,
} from '../arguments';
import { type DeployedJob, type JobCatalogue, unknownJobMessage } from '../catalogue';
import { type CommandContext, type CommandSetup, type ProgressFactory, sleep } from '../context';
import { BackfillInterruptedError, UsageError } from '../errors';
import { catalogueOf, queueFor, queuesOf } from '../target';
import { jobOrScheduleOf } from './keyed-job';

export { BACKFILL_POLL_MS } from '../../../operations/backfill';
// The library's plan and constants, as this command's before the lift (operations/backfill.ts).
export type { BackfillPlan };
export { BACKFILL_CONCURRENCY };

export function registerBackfill(program: Command, setup: CommandSetup): void {
  program
    .command('backfill')
    .description("record and enqueue the occurrences a job's schedule would have produced in a time range (idempotent)")
    .requiredOption('--job <id>', "the job (its schedule's name in the schedule group)")
    .option(
      '--key <scheduleKey>',
      'one schedule of a job that takes schedules at run time: its times in the range, each carrying its key and input',
    )
    .requiredOption(
      '--from <time>',
      'start of the range, included: ISO date/time with zone, or a time ago (7d); the range is [--from, --to)',
    )
    .option(
      '--to <time>',
      'end of the range, excluded: a time exactly at --to is not backfilled (--to 2026-11-29 stops before that ' +
        'day); not in the future',
      'now',
    )
    .option('--max <n>', 'refuse a range with more occurrences than this, 1-100000', '1000')
    .option(
      '--overlap <policy>',
      "the occurrences' overlap policy, written on each row: bufferAll (one at a time, in order), allowAll " +
        '(side by side, up to --concurrency), skip, bufferOne or cancelOther',
      'bufferAll',
    )
    .option(
      '--concurrency <n>',
      `with --overlap allowAll: how many run at once, 1-100 (default ${BACKFILL_CONCURRENCY})`,
    )
    .option('--by <who>', 'who asks, recorded on each row (default: <os user>@<host> (<AWS caller ARN>))')
    .option('--dry-run', 'say what would be recorded; write nothing')
    .option('--json', 'the summary as JSON')
    .action(async (raw, cmd: Command) => {
      const o = parseArguments(backfillArguments(setup.now), raw);
      checkRange(o.from, o.to, setup.deps.clock.now());
      if (o.concurrency !== undefined && o.overlap !== 'allowAll')
        throw new UsageError(
          `--concurrency: applies to --overlap allowAll only; under ${o.overlap} the worker starts them one at a time`,
        );
      const target = await setup.connect(cmd, { jobs: true, queues: !o.dryRun });
      const job = await jobOrScheduleOf(cmd, setup, await deployedJob(catalogueOf(target), o.job), o.key, 'backfill');
      const plan = planBackfill(job, o.from, o.to, o.max);
      if (o.dryRun) await runDryRun(setup.deps, target.reader, plan, o.json);
      else {
        const queues = queuesOf(target);
        queueFor(queues, job); // an unknown queue is refused here, before anything is written
        await runBackfill(setup.deps, { store: target.store, queues: queues.byWorker }, plan, {
          json: o.json,
          progress: setup.deps.progress,
          signal: setup.deps.signal,
          overlap: o.overlap,
          concurrency: o.concurrency ?? BACKFILL_CONCURRENCY,
          by: await setup.operator(target, o.by),
          sleep: setup.deps.sleep ?? sleep,
        });
      }
    });
}

function backfillArguments(now: number) {
  return z.object({
    job: jobIdArgument,
    key: scheduleKeyArgument.optional(),
    from: timeArgument(now),
    to: timeArgument(now),
    max: wholeNumberArgument(1, 100_000),
    overlap: overlapArgument,
    concurrency: wholeNumberArgument(1, 100).optional(),
    by: byArgument.optional(),
    dryRun: z.boolean().default(false),
    json: z.boolean().default(false),
  });
}

/** A range must end no later than now: the Scheduler fires the occurrences after that. Checked before connecting. */
export function checkRange(from: number, to: number, now: number): void {
  const problem = backfillRangeProblem(from, to, now);
  if (problem?.parameter === 'from')
    throw new UsageError(`--from (${isoSeconds(from)}) must be before --to (${isoSeconds(to)})`);
  if (problem !== undefined) throw new UsageError(`--to ${problem.problem}`);
}

/**
 * The job an argument names (`--job` here, `<jobId>` in the job commands), as deployed; a UsageError naming the
 * group's jobs when it has no schedule.
 */
export async function deployedJob(catalogue: JobCatalogue, jobId: string, argument = '--job'): Promise<DeployedJob> {
  const job = await catalogue.job(jobId);
  if (job === undefined) throw new UsageError(`${argument}: ${await unknownJobMessage(catalogue, jobId)}`);
  return job;
}

/** The scheduled times of the deployed job's schedule in the range (checkRange), at most `max` of them. */
export function planBackfill(job: DeployedJob, from: number, to: number, max: number): BackfillPlan {
  try {
    return planTimes(job, { from, to, max });
  } catch (error) {
    if (error instanceof ScheduleError) throw new UsageError(`${error.message} (or raise --max, now ${max})`);
    throw error;
  }
}

const noProgress: ProgressFactory = () => ({ increment: () => undefined, stop: () => undefined });

export interface BackfillDeps {
  readonly store: BackfillStore;
  /** Each worker's job queue, by worker id: the job's worker's is used. */
  readonly queues: ReadonlyMap<string, WorkQueue>;
}

export interface BackfillOptions {
  readonly json: boolean;
  /** Written on each row. Default bufferAll. */
  readonly overlap?: OverlapPolicy;
  /** allowAll: occurrences running at once. Default BACKFILL_CONCURRENCY. */
  readonly concurrency?: number;
  /** Who asks. Default 'occurrences backfill'. */
  readonly by?: string;
  /** Waits between reads of the rows an allowAll backfill waits for. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly progress?: ProgressFactory;
  /** Ctrl-C: no new occurrence is started; the ones in flight finish. */
  readonly signal?: AbortSignal;
}

export interface BackfillSummary {
  readonly planned: number;
  /** By recordOccurrence's result; empty for a dry run. */
  readonly results: Partial<Record<TriggerResult, number>>;
  /** Dry run: the occurrences in the range that already have a row, by status. */
  readonly existing?: Partial<Record<OccurrenceStatus, number>>;
}

/** `--dry-run`: what a backfill of the plan would record, from one read of the range; writes nothing. */
export async function runDryRun(
  ctx: CommandContext,
  reader: BackfillRows,
  plan: BackfillPlan,
  json: boolean,
): Promise<BackfillSummary> {
  const { planned, existing } = await previewBackfill(reader, plan);
  const summary: BackfillSummary = { planned, results: {}, existing };
  if (json) {
    ctx.io.out(
      JSON.stringify({ dryRun: true, jobId: plan.job.id, ...keyOf(plan.job), ...summary, times: plan.times }, null, 2),
    );
  } else {
    printDryRun(ctx, plan, summary);
  }
  return summary;
}

function printDryRun(ctx: CommandContext, plan: BackfillPlan, summary: BackfillSummary): void {
  const { job, times } = plan;
  const existing = Object.entries(summary.existing ?? {})
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  const already = total(summary.existing ?? {});
  const disabled = job.state === 'ENABLED' ? '' : ` (its schedule is ${job.state})`;
  ctx.io.out(
    `dry run: ${job.schedule} (${job.timeZone})${disabled} fires ${times.length} time(s) from ${rangeOf(plan)}; ` +
      `${already} of them already recorded${existing ? ` (${existing})` : ''}, ` +
      `${times.length - already} would be recorded and enqueued.`,
  );
  if (times.length > 0) ctx.io.out(listTimes(times));
  ctx.io.out('nothing was written.');
}

/**
 * Records the plan's occurrences (in order, or up to `concurrency` running at once under allowAll), and says what
 * happened. A failure or Ctrl-C stops
 * it (the occurrences in flight finish): it says how far it got, and throws the failure or a
 * BackfillInterruptedError.
 */
export async function runBackfill(
  ctx: CommandContext,
  deps: BackfillDeps,
  plan: BackfillPlan,
  options: BackfillOptions,
): Promise<BackfillSummary> {
  const { results, failure, countFrom } = await recordAll(ctx, deps, plan, options);
  const summary: BackfillSummary = { planned: plan.times.length, results };
  const done = total(results);
  if (failure !== undefined || done < plan.times.length) {
    ctx.io.err(
      `backfill stopped after ${done} of ${plan.times.length} occurrence(s)` +
        `${failure === undefined ? ' (interrupted)' : ''}; ` +
        `${describeResults(results)}. Running it again is safe: it is idempotent.`,
    );
    throw failure ?? new BackfillInterruptedError(done, plan.times.length);
  }
  if (options.json)
    ctx.io.out(JSON.stringify({ dryRun: false, jobId: plan.job.id, ...keyOf(plan.job), ...summary }, null, 2));
  else printBackfilled(ctx, plan, results, countFrom, options.overlap ?? 'bufferAll');
  return summary;
}

async function recordAll(
  ctx: CommandContext,
  deps: BackfillDeps,
  plan: BackfillPlan,
  options: BackfillOptions,
): ReturnType<typeof recordBackfill> {
  const progress = (options.progress ?? noProgress)(plan.times.length);
  try {
    return await recordBackfill({ ...deps, clock: ctx.clock }, plan, {
      overlap: options.overlap ?? 'bufferAll',
      concurrency: options.concurrency ?? BACKFILL_CONCURRENCY,
      by: options.by ?? 'occurrences backfill',
      sleep: options.sleep ?? sleep,
      onRecorded: () => progress.increment(),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } finally {
    progress.stop();
  }
}

function printBackfilled(
  ctx: CommandContext,
  plan: BackfillPlan,
  results: Partial<Record<TriggerResult, number>>,
  countFrom: number,
  overlap: OverlapPolicy,
): void {
  const { job } = plan;
  const jobId = job.scheduleKey === undefined ? job.id : `${job.id} schedule ${job.scheduleKey}`;
  ctx.io.out(
    `backfilled ${jobId} from ${rangeOf(plan)}: ${plan.times.length} occurrence(s) in the schedule; ` +
      `${describeResults(results)}.`,
  );
  if ((results.recorded ?? 0) > 0) ctx.io.out(`the new ones have overlap ${overlap}: ${OVERLAP_WORDS[overlap]}.`);
  if ((results.recorded ?? 0) > 0) {
    const until = isoSeconds(countFrom + plan.job.route.deadlineSeconds * 1000);
    ctx.io.out(`new occurrences may be retried until ${until} (the retry deadline counts from this backfill).`);
  }
}

/** `[from, to)`, in words: the end is excluded, so that ranges that meet do not overlap. */
const keyOf = (job: DeployedJob) => (job.scheduleKey === undefined ? {} : { scheduleKey: job.scheduleKey });

function rangeOf(plan: BackfillPlan): string {
  return `${isoSeconds(plan.from)} up to ${isoSeconds(plan.to)} (excluded)`;
}

function total(counts: Partial<Record<string, number>>): number {
  return Object.values(counts).reduce((a: number, b) => a + (b ?? 0), 0);
}

const OVERLAP_WORDS: Record<OverlapPolicy, string> = {
  bufferAll: 'the worker starts them one at a time, in scheduled-time order',
  allowAll: 'they ran side by side, at most --concurrency at once',
  skip: 'one runs, and those due while it runs are SKIPPED',
  bufferOne: 'one runs and one waits; the others are SKIPPED',
  cancelOther: 'each one cancels the one running before it',
};

const RESULT_WORDS: Record<TriggerResult, string> = {
  recorded: 'recorded and enqueued',
  'pending-re-enqueued': 'already recorded but still PENDING, enqueued again (harmless: claims are conditional)',
  'duplicate-suppressed': 'already recorded and claimed or finished, left alone',
  'recorded-missed': 'recorded as SKIPPED (missed: after the catch-up window)',
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
