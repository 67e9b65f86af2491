/**
 * `occurrences bulk retry|cancel <jobId>`: retry or cancel many occurrences of one job, selected by status and
 * scheduled-time range (operations/bulk-occurrences.ts has the rules: the cap, the rate, the run id).
 *
 * The order of things, so that a mistake writes nothing: the arguments are checked, the rows selected (a larger match
 * than --max is refused), a --dry-run lists them and stops; otherwise the operator confirms (on a terminal, or
 * --yes), the run's state file is written (`~/.occurrences/bulk/<id>.json`, or --state-file), and only then does
 * the first row change. An interrupted run is resumed with `--resume <id>`: the filter is read back from its state
 * file and the rows the run acted on already are skipped.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { cancelOccurrence } from '../../../functions/protocol/cancel-occurrence';
import { InvalidInputError } from '../../../functions/protocol/errors';
import type { ManualRetryDeps } from '../../../functions/protocol/manual-retry';
import { iso, isoSeconds, type Occurrence, OccurrenceStatus } from '../../../functions/protocol/occurrence';
import { quoteValue } from '../../../functions/protocol/quote-value';
import {
  BULK_ID_PATTERN,
  BULK_STATUSES,
  type BulkAction,
  type BulkCancel,
  type BulkFilter,
  type BulkRunOptions,
  type BulkRunResult,
  bulkCancel,
  bulkRetry,
  checkBulkFilter,
  DEFAULT_BULK_MAX,
  DEFAULT_BULK_OCCURRENCE_RATE,
  newBulkId,
  selectOccurrences,
  TooManyOccurrencesError,
} from '../../../operations/bulk-occurrences';
import {
  byArgument,
  jobIdArgument,
  noteArgument,
  parseArguments,
  statusListArgument,
  timeArgument,
  wholeNumberArgument,
} from '../arguments';
import type { CliDeps, CommandContext, CommandSetup } from '../context';
import { EXIT, UsageError } from '../errors';
import { catalogueOf, queueFor, queuesOf, type Target } from '../target';
import { deployedJob } from './backfill';

/**
 * Builds the cancel a bulk cancel runs for each row: cancelOccurrence (functions/protocol/cancel-occurrence.ts)
 * bound to the target's store, the clock, who cancels and the note.
 */
export type BulkCancelFactory = (
  target: Target,
  context: CommandContext,
  request: { readonly by: string; readonly note: string },
) => BulkCancel;

/** The real cancel of `occurrences bulk cancel`: cancelOccurrence on the target's store, as `occurrences cancel` runs it. */
const cancelOnTarget: BulkCancelFactory =
  (target, context, { by, note }) =>
  (key) =>
    cancelOccurrence({ store: target.store, clock: context.clock, newId: randomUUID }, key, {
      by,
      ...(note === '' ? {} : { note }),
    });

/** What the bulk command takes from the program's dependencies beyond CliDeps: tests pass their own. */
export interface BulkCliDeps {
  /** The cancel of bulk cancel. @defaultValue cancelOccurrence on the target's store */
  readonly cancelFor?: BulkCancelFactory;
  /** How a run waits between rows (tests pass a fake). @defaultValue a timer */
  readonly bulkSleep?: (ms: number) => Promise<void>;
}

/** What a state file holds: the run's id, its action and filter, and how far it got. */
interface BulkState extends BulkFilter {
  readonly bulkId: string;
  readonly action: BulkAction;
  readonly max: number;
  readonly startedAt: string;
  readonly by: string;
  readonly note?: string;
  readonly result?: Omit<BulkRunResult, 'refused' | 'failed'> & { refused: number; failed: number };
  readonly finishedAt?: string;
}

const ACTION_WORDS: Record<BulkAction, { verb: string; done: string }> = {
  retry: { verb: 'retry', done: 'retried' },
  cancel: { verb: 'cancel', done: 'cancelled' },
};

export function registerBulk(program: Command, setup: CommandSetup): void {
  const bulk = program
    .command('bulk')
    .description('retry or cancel many occurrences of a job, by status and time range (dry run, cap, rate, resume)');
  for (const action of ['retry', 'cancel'] as const) registerAction(bulk, setup, action);
}

function registerAction(bulk: Command, setup: CommandSetup, action: BulkAction): void {
  const statuses = BULK_STATUSES[action].join(',');
  const command = bulk
    .command(action)
    .description(
      action === 'retry'
        ? 'reopen and enqueue the FAILED occurrences of a job in a time range'
        : 'cancel the waiting and running occurrences of a job in a time range (CANCELLED, with who and why)',
    )
    .argument('<jobId>', 'the job')
    .option('--status <list>', `the statuses to select, comma-separated (default ${statuses})`)
    .option('--from <time>', 'the earliest scheduled time, included: ISO, or a time ago such as 7d (required)')
    .option('--to <time>', 'the latest scheduled time, excluded (default now)')
    .option('--dry-run', 'list what would change, and change nothing')
    .option('--yes', 'go ahead without asking (needed where there is no terminal to ask on)')
    .option('--max <n>', `refuse a selection larger than this (default ${DEFAULT_BULK_MAX})`)
    .option('--rate <n>', `rows per second at most (default ${DEFAULT_BULK_OCCURRENCE_RATE})`)
    .option('--resume <bulkId>', "go on with an interrupted run: its filter is read from the run's state file")
    .option('--state-file <path>', "the run's state file (default ~/.occurrences/bulk/<bulkId>.json)")
    .option('--by <who>', 'who does it, recorded on each row (default: <os user>@<host> (<AWS caller ARN>))')
    .option('--json', 'the selection (dry run) or the summary as JSON');
  if (action === 'cancel') command.option('--note <text>', 'why, recorded on each row (default: the run id)');
  command.action(async (jobId: string, raw, cmd: Command) => {
    const o = parseArguments(bulkArguments(setup.now), { jobId, ...raw }, ['jobId']);
    await runBulkCommand(setup, cmd, action, o);
  });
}

function bulkArguments(now: number) {
  return z.object({
    jobId: jobIdArgument,
    status: statusListArgument.optional(),
    from: timeArgument(now).optional(),
    to: timeArgument(now).optional(),
    dryRun: z.boolean().default(false),
    yes: z.boolean().default(false),
    max: wholeNumberArgument(1, 1_000_000).optional(),
    rate: z
      .string()
      .transform(Number)
      .refine((n) => Number.isFinite(n) && n > 0 && n <= 1000, { error: 'must be a number above 0, up to 1000' })
      .optional(),
    resume: z
      .string()
      .regex(BULK_ID_PATTERN, { error: 'must be a bulk run id such as bulk-20261202T161700Z-3fa9c1' })
      .optional(),
    stateFile: z.string().min(1).optional(),
    by: byArgument.optional(),
    note: noteArgument.optional(),
    json: z.boolean().default(false),
  });
}

type BulkArguments = z.output<ReturnType<typeof bulkArguments>>;

async function runBulkCommand(setup: CommandSetup, cmd: Command, action: BulkAction, o: BulkArguments) {
  const deps = setup.deps as CliDeps & BulkCliDeps;
  const cancelFor = deps.cancelFor ?? cancelOnTarget;
  const plan = planOf(setup, action, o);
  const words = ACTION_WORDS[action];
  const target = await setup.connect(cmd, { jobs: true, queues: action === 'retry' && !o.dryRun });
  const job = await deployedJob(catalogueOf(target), plan.filter.jobId, '<jobId>');
  // An unknown worker queue is refused here, before the selection and anything written.
  const retryDeps: ManualRetryDeps | undefined =
    action === 'retry' && !o.dryRun
      ? {
          store: target.store,
          queues: new Map([[job.route.worker, queueFor(queuesOf(target), job)]]),
          clock: deps.clock,
          jobs: new Map([[job.id, job.route]]),
        }
      : undefined;
  let rows: Occurrence[];
  try {
    rows = await selectOccurrences(target.reader, job, plan.filter, plan.max);
  } catch (error) {
    if (!(error instanceof TooManyOccurrencesError)) throw error;
    deps.io.err(`refused: ${error.message}`);
    setup.setExitCode(EXIT.refused);
    return;
  }
  const what = `${plan.filter.statuses.join('/')} occurrence(s) of ${job.id} scheduled from ${plan.filter.from} to ${plan.filter.to}`;
  if (rows.length === 0) {
    deps.io.err(`nothing to ${words.verb}: no ${what}${plan.resumed ? ' left' : ''}; nothing was changed.`);
    setup.setExitCode(EXIT.notFound);
    return;
  }
  if (o.dryRun) {
    printSelection(deps, rows, o.json);
    deps.io.out(`dry run: ${rows.length} ${what} would be ${words.done}; nothing was changed.`);
    return;
  }
  if (!o.yes && !(await confirmed(deps, `${words.verb} ${rows.length} ${what}?`))) {
    setup.setExitCode(EXIT.refused);
    return;
  }
  const by = await setup.operator(target, o.by);
  const bulkId = plan.resumed?.bulkId ?? newBulkId(deps.clock);
  const note = o.note ?? plan.resumed?.note ?? `bulk cancel ${bulkId}`;
  const statePath = o.stateFile ?? defaultStatePath(deps.env, bulkId);
  const state: BulkState = plan.resumed ?? {
    bulkId,
    action,
    ...plan.filter,
    max: plan.max,
    startedAt: iso(deps.clock.now()),
    by,
    ...(action === 'cancel' ? { note } : {}),
  };
  writeState(statePath, state);
  deps.io.err(`bulk run ${bulkId} (state in ${statePath}): ${words.verb} ${rows.length} ${what}`);
  const progress = deps.progress?.(rows.length, `bulk ${action}`);
  const options: BulkRunOptions = {
    rate: o.rate,
    signal: deps.signal,
    clock: deps.clock,
    onProgress: () => progress?.increment(),
    ...(deps.bulkSleep === undefined ? {} : { sleep: deps.bulkSleep }),
  };
  let result: BulkRunResult;
  try {
    if (retryDeps !== undefined) {
      result = await bulkRetry(retryDeps, rows, { bulkId, by }, options);
    } else {
      result = await bulkCancel(cancelFor(target, deps, { by, note }), rows, options);
    }
  } finally {
    progress?.stop();
  }
  writeState(statePath, {
    ...state,
    result: { ...result, refused: result.refused.length, failed: result.failed.length },
    ...(result.stopped === undefined ? { finishedAt: iso(deps.clock.now()) } : {}),
  });
  printResult(deps, { action, jobId: job.id, bulkId, statePath, result, json: o.json });
  if (result.stopped !== undefined || result.failed.length > 0) setup.setExitCode(EXIT.failed);
  else if (result.refused.length > 0) setup.setExitCode(EXIT.refused);
}

/** The filter and cap of the run: from the flags, or from the state file of the run being resumed. */
function planOf(
  setup: CommandSetup,
  action: BulkAction,
  o: BulkArguments,
): { filter: BulkFilter; max: number; resumed?: BulkState } {
  if (o.resume !== undefined) {
    const given = (['status', 'from', 'to'] as const).filter((flag) => o[flag] !== undefined);
    if (given.length > 0)
      throw new UsageError(
        `${given.map((f) => `--${f}`).join(', ')}: a resumed run keeps its own filter (from its state file); drop them`,
      );
    const resumed = readState(o.stateFile ?? defaultStatePath(setup.deps.env, o.resume), o.resume);
    if (resumed.action !== action || resumed.jobId !== o.jobId)
      throw new UsageError(
        `--resume: run ${o.resume} was a bulk ${resumed.action} of ${resumed.jobId}, not a bulk ${action} of ${o.jobId}`,
      );
    const max = o.max ?? resumed.max;
    checked(action, resumed, max);
    return { filter: pick(resumed), max, resumed };
  }
  if (o.from === undefined) throw new UsageError('--from: required (or --resume <bulkId>)');
  const filter: BulkFilter = {
    jobId: o.jobId,
    statuses: o.status ?? BULK_STATUSES[action],
    // Whole seconds, as the keys are: a bound with milliseconds would not sort with them.
    from: isoSeconds(Math.ceil(o.from / 1000) * 1000),
    to: isoSeconds(Math.ceil((o.to ?? setup.now) / 1000) * 1000),
  };
  const max = o.max ?? DEFAULT_BULK_MAX;
  checked(action, filter, max);
  return { filter, max };
}

/** checkBulkFilter, its problems named by the flags that set them. */
function checked(action: BulkAction, filter: BulkFilter, max: number): void {
  try {
    checkBulkFilter(action, filter, max);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    const flag = (problem: string) =>
      problem.replace(/^statuses:/, '--status:').replace(/^(from|to|max)\b/, (name) => `--${name}`);
    throw new UsageError(error.problems.map(flag).join('\n       '));
  }
}

const pick = (state: BulkState): BulkFilter => ({
  jobId: state.jobId,
  statuses: state.statuses,
  from: state.from,
  to: state.to,
});

async function confirmed(deps: CliDeps, question: string): Promise<boolean> {
  if (deps.confirm === undefined) {
    deps.io.err(`refused: ${question} Pass --yes to go ahead (there is no terminal to ask on); nothing was changed.`);
    return false;
  }
  if (await deps.confirm(question)) return true;
  deps.io.err('not confirmed; nothing was changed.');
  return false;
}

function defaultStatePath(env: NodeJS.ProcessEnv, bulkId: string): string {
  return join(env.HOME || homedir(), '.occurrences', 'bulk', `${bulkId}.json`);
}

function writeState(path: string, state: BulkState): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(state, null, 2)}\n`);
}

const STATUSES = Object.values(OccurrenceStatus) as string[];

/** The state file of run `bulkId`, checked: a missing or changed file is a bad argument naming it. */
function readState(path: string, bulkId: string): BulkState {
  let state: BulkState;
  try {
    state = JSON.parse(readFileSync(path, 'utf8')) as BulkState;
  } catch (error) {
    throw new UsageError(
      `--resume: cannot read the state file of run ${bulkId} at ${path} (${(error as Error).message}); pass --state-file`,
    );
  }
  const wellFormed =
    state?.bulkId === bulkId &&
    (state.action === 'retry' || state.action === 'cancel') &&
    typeof state.jobId === 'string' &&
    Array.isArray(state.statuses) &&
    state.statuses.every((s) => STATUSES.includes(s)) &&
    typeof state.from === 'string' &&
    typeof state.to === 'string' &&
    Number.isInteger(state.max);
  if (!wellFormed) throw new UsageError(`--resume: ${path} is not the state file of run ${quoteValue(bulkId)}`);
  return state;
}

function printSelection(ctx: CommandContext, rows: readonly Occurrence[], json: boolean): void {
  if (json) {
    const list = rows.map(({ jobId, scheduleKey, scheduledTime, status, attempt, lastError }) => ({
      jobId,
      ...(scheduleKey === undefined ? {} : { scheduleKey }),
      scheduledTime,
      status,
      attempt,
      ...(lastError === undefined ? {} : { lastError }),
    }));
    ctx.io.out(JSON.stringify(list, null, 2));
    return;
  }
  for (const row of rows) {
    const key = row.scheduleKey === undefined ? '' : ` ${row.scheduleKey}`;
    const error = row.lastError === undefined ? '' : `  ${row.lastError.slice(0, 100)}`;
    ctx.io.out(`${row.scheduledTime}${key}  ${row.status}  attempt ${row.attempt}${error}`);
  }
}

function printResult(
  ctx: CommandContext,
  run: {
    action: BulkAction;
    jobId: string;
    bulkId: string;
    statePath: string;
    result: BulkRunResult;
    json: boolean;
  },
): void {
  const { result } = run;
  if (run.json) {
    ctx.io.out(JSON.stringify({ bulkId: run.bulkId, action: run.action, ...result }, null, 2));
  } else {
    for (const { key, reason } of result.refused) ctx.io.err(`refused ${key.scheduledTime}: ${reason}`);
    for (const { key, reason } of result.failed) ctx.io.err(`failed ${key.scheduledTime}: ${reason}`);
    const skipped = result.already > 0 ? `, ${result.already} done by this run before` : '';
    ctx.io.out(
      `bulk ${run.action} ${run.bulkId}: ${ACTION_WORDS[run.action].done} ${result.acted} of ${result.total}` +
        `${skipped}, ${result.refused.length} refused, ${result.failed.length} failed.`,
    );
  }
  if (result.stopped !== undefined)
    ctx.io.err(
      `stopped (${result.stopped}); go on with: occurrences bulk ${run.action} ${run.jobId} --resume ${run.bulkId}` +
        (run.statePath.includes(`${run.bulkId}.json`) ? '' : ` --state-file ${run.statePath}`),
    );
}
