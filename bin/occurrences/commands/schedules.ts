/**
 * `occurrences schedules ...`: the schedules a job takes at run time (operations/schedules.ts), one per schedule
 * key: upsert, get, list, pause, resume, delete, and import (the bulk upsert of operations/bulk-schedules.ts, from
 * an NDJSON or JSON file, with a progress bar). A wrong spec is a bad argument naming its flag (exit 2); a job that
 * takes no schedules at run time is a bad `<jobId>`; a key without a schedule is "not found" (exit 4); an import with
 * any failed item exits 1 after its summary.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { z } from 'zod';
import { ScheduleNotFoundError, UnknownScheduleJobError } from '../../../functions/protocol/manage-schedule';
import { quoteValue } from '../../../functions/protocol/quote-value';
import { InvalidScheduleError } from '../../../functions/protocol/schedule-registry';
import type { ScheduleSpec } from '../../../functions/protocol/schedule-registry-ports';
import { type BulkUpsertResult, DEFAULT_BULK_RATE, upsertSchedules } from '../../../operations/bulk-schedules';
import {
  deleteSchedule,
  getSchedule,
  listSchedules,
  pauseSchedule,
  type RuntimeSchedule,
  resumeSchedule,
  upsertSchedule,
} from '../../../operations/schedules';
import {
  byArgument,
  jobIdArgument,
  nameArgument,
  outputPrefixArgument,
  parseArguments,
  urlArgument,
  wholeNumberArgument,
} from '../arguments';
import type { CommandContext, CommandSetup } from '../context';
import { EXIT, UsageError } from '../errors';
import { readLocalTarget } from '../local-target';
import type { TargetOptions } from '../target';
import {
  resolveScheduleTarget,
  type ScheduleCliDeps,
  type ScheduleTarget,
  type ScheduleTargetOptions,
} from './schedules-target';

/** The flag of each field of a spec, so that the registry's problems name what the user typed. */
const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  jobId: '<jobId>',
  scheduleKey: '<key>',
  expression: '--expression',
  timeZone: '--time-zone',
  startDate: '--start',
  endDate: '--end',
  input: '--input',
  description: '--description',
  enabled: '--paused',
  limit: '--limit',
  cursor: '--cursor',
  prefix: '--prefix',
};

/** The key argument: checked by the registry (its message names `<key>`), only non-empty here. */
const keyArgument = z.string().min(1, { error: 'must not be empty' });

/** The --by option of every command that changes schedules: one wording for the author the registry records. */
const BY_OPTION = ['--by <who>', 'who makes the change (default: <os user>@<host> (<AWS caller ARN>))'] as const;

/**
 * The arguments of a command on one key's schedule: `<jobId>` and `<key>` with the command's own options, so that
 * each such command checks both positionals the same way and names them the same way in its errors.
 */
function parseKeyArguments<S extends z.ZodRawShape>(jobId: string, key: string, raw: object, options: S) {
  return parseArguments(z.object({ jobId: jobIdArgument, key: keyArgument, ...options }), { jobId, key, ...raw }, [
    'jobId',
    'key',
  ]);
}

const jsonArgument = z.string().transform((value, ctx) => {
  try {
    return JSON.parse(value) as unknown;
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `must be JSON (${(error as Error).message}), got ${quoteValue(value)}` });
    return z.NEVER;
  }
});

const rateArgument = z.string().transform((value, ctx) => {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(n > 0) || n > 10_000) {
    ctx.addIssue({
      code: 'custom',
      message: `must be a number of requests per second from 0 to 10000, got ${quoteValue(value)}`,
    });
    return z.NEVER;
  }
  return n;
});

const targetArguments = z.object({
  stack: nameArgument.optional(),
  outputPrefix: outputPrefixArgument.optional(),
  registryTable: nameArgument.optional(),
  scheduleGroup: nameArgument.optional(),
  occurrenceTable: nameArgument.optional(),
  endpoint: urlArgument.optional(),
  region: nameArgument.optional(),
});

/** The schedule operations a command's options name (its own and the program's), as every schedules command finds them. */
export function connectSchedulesOf(
  cmd: Command,
  deps: CommandSetup['deps'] & ScheduleCliDeps,
): Promise<ScheduleTarget> {
  const all = cmd.optsWithGlobals();
  // --local: the kept run's file names the registry, the group, the table and the emulator; flags still win.
  const local = typeof all.local === 'string' ? localScheduleTarget(all.local) : undefined;
  const options = parseArguments(targetArguments, {
    stack: all.stack,
    outputPrefix: all.outputPrefix,
    registryTable: all.registryTable ?? local?.registryTable,
    scheduleGroup: all.scheduleGroup ?? local?.scheduleGroup,
    occurrenceTable: all.table ?? local?.table,
    endpoint: all.endpoint ?? local?.endpoint,
    region: all.region ?? local?.region,
  });
  // The default --stack counts as unset, as for the other commands.
  const stack = cmd.getOptionValueSourceWithGlobals('stack') === 'default' ? undefined : options.stack;
  const given: ScheduleTargetOptions = { ...options, stack };
  return (deps.connectSchedules ?? ((o) => resolveScheduleTarget(o, deps.env)))(given);
}

/** The kept local run's target; a UsageError when its stack has no registry (no job takes run-time schedules). */
function localScheduleTarget(file: string): TargetOptions {
  const target = readLocalTarget(file);
  if (target.registryTable === undefined)
    throw new UsageError(
      `--local: the kept local run at ${file} has no schedule registry: no job of its stack takes schedules at run time (runtimeSchedules: true)`,
    );
  return target;
}

export function registerSchedules(program: Command, setup: CommandSetup): void {
  const deps = setup.deps as CommandSetup['deps'] & ScheduleCliDeps;
  const schedules = program
    .command('schedules')
    .description(
      "manage a job's run-time schedules, one per schedule key: upsert, get, list, pause, resume, delete, import",
    )
    .option(
      '--registry-table <name>',
      'the schedule registry table (instead of the stack output ScheduleRegistryTableName)',
    );

  const connect = (cmd: Command): Promise<ScheduleTarget> => connectSchedulesOf(cmd, deps);
  // Who acts, as every operator write records it: STS asked with the registry's client config (operator-identity.ts).
  const by = (target: ScheduleTarget, given: string | undefined) => setup.operator(target, given);

  schedules
    .command('upsert')
    .description('create the schedule of a key, or replace it (the same twice changes nothing)')
    .argument('<jobId>', 'a job deployed with runtimeSchedules: true')
    .argument('<key>', 'the schedule key: 1-128 letters, digits and . _ - : @ + =')
    .requiredOption('--expression <expr>', 'cron(...), rate(...) or at(yyyy-mm-ddThh:mm:ss)')
    .option('--time-zone <zone>', 'IANA time zone the expression is read in (default Etc/UTC)')
    .option('--start <time>', 'no occurrence before this ISO-8601 time with a zone')
    .option('--end <time>', 'no occurrence after this ISO-8601 time with a zone')
    .option('--input <json>', "JSON handed to each occurrence's job as `input` (at most 2,048 bytes)")
    .option('--description <text>', 'for people reading the registry and the Scheduler console')
    .option('--paused', 'create it paused (its Scheduler schedule DISABLED)')
    .option(...BY_OPTION)
    .option('--json', 'the schedule after the change, as JSON')
    .action(async (jobId: string, key: string, raw, cmd: Command) => {
      const o = parseKeyArguments(jobId, key, raw, {
        expression: z.string(),
        timeZone: z.string().optional(),
        start: z.string().optional(),
        end: z.string().optional(),
        input: jsonArgument.optional(),
        description: z.string().optional(),
        paused: z.boolean().default(false),
        by: byArgument.optional(),
        json: z.boolean().default(false),
      });
      const spec: ScheduleSpec = {
        expression: o.expression,
        ...(o.timeZone === undefined ? {} : { timeZone: o.timeZone }),
        ...(o.start === undefined ? {} : { startDate: o.start }),
        ...(o.end === undefined ? {} : { endDate: o.end }),
        ...(raw.input === undefined ? {} : { input: o.input as ScheduleSpec['input'] }),
        ...(o.description === undefined ? {} : { description: o.description }),
        ...(o.paused ? { enabled: false } : {}),
      };
      const target = await connect(cmd);
      const { ops } = target;
      const who = await by(target, o.by);
      const result = await asCliErrors(() => upsertSchedule(ops, o.jobId, o.key, spec, { by: who }));
      if (o.json) deps.io.out(JSON.stringify(result, null, 2));
      else deps.io.out(`${result.outcome} ${scheduleLine(result.schedule)}`);
    });

  schedules
    .command('get')
    .description('show the schedule of a key')
    .argument('<jobId>', 'the job')
    .argument('<key>', 'the schedule key')
    .option('--json', 'as JSON')
    .action(async (jobId: string, key: string, raw, cmd: Command) => {
      const o = parseKeyArguments(jobId, key, raw, { json: z.boolean().default(false) });
      const { ops, where } = await connect(cmd);
      const schedule = await asCliErrors(() => getSchedule(ops, o.jobId, o.key));
      if (schedule === undefined) {
        deps.io.err(`job ${o.jobId} has no schedule with key ${quoteValue(o.key)} in ${where}`);
        setup.setExitCode(EXIT.notFound);
        return;
      }
      if (o.json) deps.io.out(JSON.stringify(schedule, null, 2));
      else printSchedule(deps, schedule);
    });

  schedules
    .command('list')
    .description("list a job's schedules in key order, a page at a time")
    .argument('<jobId>', 'the job')
    .option('--prefix <prefix>', 'only keys that start with this')
    .option('--limit <n>', 'at most this many (1-1000)', '100')
    .option('--cursor <cursor>', 'the next page: the cursor the previous page printed')
    .option('--json', 'the page as JSON ({ schedules, cursor })')
    .action(async (jobId: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({
          jobId: jobIdArgument,
          prefix: z.string().optional(),
          limit: wholeNumberArgument(1, 1000),
          cursor: z.string().min(1).optional(),
          json: z.boolean().default(false),
        }),
        { jobId, ...raw },
        ['jobId'],
      );
      const { ops } = await connect(cmd);
      const page = await asCliErrors(() =>
        listSchedules(ops, o.jobId, { prefix: o.prefix, limit: o.limit, cursor: o.cursor }),
      );
      if (o.json) {
        deps.io.out(JSON.stringify(page, null, 2));
        return;
      }
      if (page.schedules.length === 0)
        deps.io.err(`job ${o.jobId} has no schedules${o.prefix ? ` with keys ${o.prefix}*` : ''}`);
      for (const s of page.schedules) deps.io.out(listLine(s));
      if (page.cursor !== undefined) deps.io.err(`more: --cursor ${page.cursor}`);
    });

  for (const [name, state] of [
    ['pause', 'PAUSED'],
    ['resume', 'ENABLED'],
  ] as const) {
    schedules
      .command(name)
      .description(
        name === 'pause'
          ? 'pause the schedule of a key: its Scheduler schedule is DISABLED'
          : 'resume the schedule of a key: its Scheduler schedule is ENABLED again (missed times are not run)',
      )
      .argument('<jobId>', 'the job')
      .argument('<key>', 'the schedule key')
      .option(...BY_OPTION)
      .option('--json', 'the schedule after the change, as JSON')
      .action(async (jobId: string, key: string, raw, cmd: Command) => {
        const o = parseKeyArguments(jobId, key, raw, { by: byArgument.optional(), json: z.boolean().default(false) });
        const target = await connect(cmd);
        const { ops } = target;
        const who = await by(target, o.by);
        const change = state === 'PAUSED' ? pauseSchedule : resumeSchedule;
        const schedule = await asCliErrors(() => change(ops, o.jobId, o.key, { by: who }), setup);
        if (schedule === undefined) return;
        if (o.json) deps.io.out(JSON.stringify(schedule, null, 2));
        else deps.io.out(`${state === 'PAUSED' ? 'paused' : 'resumed'} ${scheduleLine(schedule)}`);
      });
  }

  schedules
    .command('delete')
    .description('delete the schedule of a key (its occurrences in flight finish)')
    .argument('<jobId>', 'the job')
    .argument('<key>', 'the schedule key')
    .option(...BY_OPTION)
    .action(async (jobId: string, key: string, raw, cmd: Command) => {
      const o = parseKeyArguments(jobId, key, raw, { by: byArgument.optional() });
      const target = await connect(cmd);
      const { ops } = target;
      const who = await by(target, o.by);
      const { deleted } = await asCliErrors(() => deleteSchedule(ops, o.jobId, o.key, { by: who }));
      if (deleted) deps.io.out(`deleted ${o.jobId}/${o.key}: its Scheduler schedule and its registry row`);
      else {
        deps.io.err(`job ${o.jobId} has no schedule with key ${quoteValue(o.key)}: nothing to delete`);
        setup.setExitCode(EXIT.notFound);
      }
    });

  schedules
    .command('import')
    .description(
      `create or update many schedules from a file: NDJSON (one {"scheduleKey", "expression", ...} per line) or a JSON array; at most --rate per second (default ${DEFAULT_BULK_RATE}), resumable`,
    )
    .argument('<jobId>', 'the job')
    .argument('<file>', 'an .ndjson file (one schedule per line) or a .json file (an array of schedules)')
    .option(
      '--rate <n>',
      `schedules started per second at most (default ${DEFAULT_BULK_RATE}; Scheduler allows 1,000/s per account and Region)`,
    )
    .option('--concurrency <n>', 'schedules in flight at once at most (default 10)')
    .option(
      '--checkpoint <file>',
      'where to keep how far the import got; an import started again with it goes on from there',
    )
    .option(...BY_OPTION)
    .option('--json', 'the summary as JSON')
    .action(async (jobId: string, file: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({
          jobId: jobIdArgument,
          file: z.string().min(1),
          rate: rateArgument.optional(),
          concurrency: wholeNumberArgument(1, 100).optional(),
          checkpoint: z.string().min(1).optional(),
          by: byArgument.optional(),
          json: z.boolean().default(false),
        }),
        { jobId, file, ...raw },
        ['jobId', 'file'],
      );
      const source = readItems(o.file);
      const items = source.items;
      const startAt = o.checkpoint === undefined ? 0 : readCheckpoint(o.checkpoint, items.length);
      const target = await connect(cmd);
      const { ops } = target;
      const who = await by(target, o.by);
      const progress = importProgress(deps, items.length, startAt);
      let result: BulkUpsertResult;
      try {
        result = await asCliErrors(() =>
          upsertSchedules(ops, o.jobId, items, {
            rate: o.rate,
            concurrency: o.concurrency,
            by: who,
            signal: deps.signal,
            onProgress: (p) => progress.update(p.done, p.failed),
            checkpoint: {
              startAt,
              save:
                o.checkpoint === undefined ? undefined : (next) => writeFileSync(o.checkpoint as string, `${next}\n`),
            },
          }),
        );
      } finally {
        progress.stop();
      }
      printImport(deps, o.jobId, o.file, source, result, startAt, o.checkpoint, o.json);
      if (result.failed.length > 0 || source.unreadable.length > 0 || result.stopped !== undefined)
        setup.setExitCode(EXIT.failed);
    });
}

/**
 * Runs an operation, turning what the user got wrong into a UsageError naming the argument: a spec's problems
 * (each field's flag), a job that takes no schedules at run time (`<jobId>`). With `setup`, a key without a schedule
 * is "not found" (exit 4) and gives undefined.
 */
async function asCliErrors<T>(operation: () => Promise<T>): Promise<T>;
async function asCliErrors<T>(operation: () => Promise<T>, setup: CommandSetup): Promise<T | undefined>;
async function asCliErrors<T>(operation: () => Promise<T>, setup?: CommandSetup): Promise<T | undefined> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof InvalidScheduleError) throw new UsageError(error.problems.map(withFlag).join('\n       '));
    if (error instanceof UnknownScheduleJobError) throw new UsageError(`<jobId>: ${error.message}`);
    if (error instanceof ScheduleNotFoundError && setup !== undefined) {
      setup.deps.io.err(error.message);
      setup.setExitCode(EXIT.notFound);
      return undefined;
    }
    throw error;
  }
}

/** `expression must be ...` → `--expression: expression must be ...`. */
function withFlag(problem: string): string {
  const field = /^[A-Za-z]+/.exec(problem)?.[0] ?? '';
  const flag = FLAG_OF_FIELD[field];
  return flag === undefined ? problem : `${flag}: ${problem}`;
}

/** `weekly-report/cust-42: cron(0 8 ? * MON *) Europe/Paris, ENABLED, v3, in sync`. */
function scheduleLine(s: RuntimeSchedule): string {
  return `${s.jobId}/${s.scheduleKey}: ${s.expression} ${s.timeZone}, ${s.state}, v${s.version}, ${s.inSync ? 'in sync' : 'Scheduler not yet in sync (the reconciler repairs it within minutes)'}`;
}

function listLine(s: RuntimeSchedule): string {
  return [s.scheduleKey, s.state, s.expression, s.timeZone, `v${s.version}`, s.inSync ? 'in sync' : 'syncing'].join(
    '\t',
  );
}

function printSchedule(ctx: CommandContext, s: RuntimeSchedule): void {
  const fields: Array<[string, string | undefined]> = [
    ['job', s.jobId],
    ['key', s.scheduleKey],
    ['expression', s.expression],
    ['time zone', s.timeZone],
    ['start', s.startDate],
    ['end', s.endDate],
    ['input', s.input === undefined ? undefined : JSON.stringify(s.input)],
    ['description', s.description],
    ['state', s.state],
    ['version', String(s.version)],
    ['Scheduler', `${s.scheduleName} (${s.inSync ? 'in sync' : 'not yet in sync'})`],
    ['created', s.createdAt],
    ['updated', `${s.updatedAt}${s.updatedBy ? ` by ${s.updatedBy}` : ''}`],
  ];
  for (const [name, value] of fields) if (value !== undefined) ctx.io.out(`${`${name}:`.padEnd(13)}${value}`);
}

/** A line of an NDJSON file that is not JSON: reported by its line number, the rest imported. */
interface UnreadableLine {
  readonly line: number;
  readonly error: string;
}

/** The schedules of a file, where each came from (for messages), and the lines that were not JSON. */
export interface ImportFile {
  readonly items: readonly unknown[];
  /** `line 12` of an NDJSON file, `item 12` (from 1) of a JSON array, for the item at an index. */
  where(index: number): string;
  readonly unreadable: readonly UnreadableLine[];
}

/**
 * The schedules of an NDJSON file (one per non-blank line; a line that is not JSON is reported by its number and the
 * others imported) or of a JSON file (an array).
 */
export function readItems(file: string): ImportFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`<file>: cannot read ${quoteValue(file)}: ${(error as Error).message}`);
  }
  if (file.endsWith('.json') || text.trimStart().startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`<file>: ${quoteValue(file)} is not JSON: ${(error as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new UsageError(`<file>: ${quoteValue(file)} must hold a JSON array of schedules`);
    return { items: parsed, where: (index) => `item ${index + 1}`, unreadable: [] };
  }
  const items: unknown[] = [];
  const lines: number[] = [];
  const unreadable: UnreadableLine[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      items.push(JSON.parse(line));
      lines.push(i + 1);
    } catch (error) {
      unreadable.push({ line: i + 1, error: `not JSON: ${(error as Error).message}` });
    }
  });
  return { items, where: (index) => `line ${lines[index]}`, unreadable };
}

function readCheckpoint(file: string, total: number): number {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch {
    return 0; // no checkpoint yet: from the start
  }
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > total)
    throw new UsageError(
      `--checkpoint: ${quoteValue(file)} must hold a line number from 0 to ${total}, got ${quoteValue(text)}`,
    );
  return n;
}

interface ImportProgress {
  update(done: number, failed: number): void;
  stop(): void;
}

/** A bar on a terminal; otherwise a plain line every tenth of the file (at least every 1,000 schedules). */
function importProgress(deps: CommandContext & ScheduleCliDeps, total: number, startAt: number): ImportProgress {
  const interactive = deps.interactive ?? process.stderr.isTTY === true;
  if (interactive) {
    const bar = new SingleBar(
      {
        stream: process.stderr,
        format: 'import [{bar}] {value}/{total} schedules, {failed} failed, {eta_formatted} left',
        hideCursor: true,
      },
      Presets.shades_classic,
    );
    bar.start(total, startAt, { failed: 0 });
    return { update: (done, failed) => bar.update(done, { failed }), stop: () => bar.stop() };
  }
  const every = Math.max(1, Math.min(1000, Math.ceil(total / 10)));
  let last = startAt;
  return {
    update: (done, failed) => {
      if (done - last < every && done < total) return;
      last = done;
      deps.io.err(`imported ${done}/${total} (${failed} failed)`);
    },
    stop: () => undefined,
  };
}

function printImport(
  ctx: CommandContext,
  jobId: string,
  file: string,
  source: ImportFile,
  result: BulkUpsertResult,
  startAt: number,
  checkpoint: string | undefined,
  json: boolean,
): void {
  const failures = [
    ...source.unreadable.map((u) => ({ at: `line ${u.line}`, order: u.line, scheduleKey: undefined, error: u.error })),
    ...result.failed.map((f) => ({
      at: source.where(f.index),
      order: f.index,
      scheduleKey: f.scheduleKey,
      error: f.error,
    })),
  ];
  if (json) {
    const { failed: _, ...counts } = result;
    const listed = failures.map(({ order: _o, ...f }) => f);
    ctx.io.out(JSON.stringify({ jobId, file, ...counts, skipped: startAt, failed: listed }, null, 2));
    return;
  }
  for (const f of failures)
    ctx.io.err(`${f.at}${f.scheduleKey === undefined ? '' : ` (${f.scheduleKey})`}: ${f.error}`);
  const skipped = startAt > 0 ? `, ${startAt} skipped (done by an earlier run)` : '';
  ctx.io.out(
    `imported ${file} into ${jobId}: ${result.written} created, updated or repaired, ${result.unchanged} unchanged, ` +
      `${failures.length} failed${skipped}; ${result.retries} throttled request(s) retried`,
  );
  if (result.stopped !== undefined) {
    const resume =
      checkpoint === undefined
        ? 'run it again (the done ones cost a read each)'
        : `run it again with --checkpoint ${checkpoint}`;
    const at = result.nextIndex < source.items.length ? ` before ${source.where(result.nextIndex)}` : '';
    ctx.io.err(`stopped${at}: ${result.stopped}; ${resume}`);
  }
}
