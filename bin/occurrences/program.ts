/**
 * The command line: commander splits the arguments, zod checks them (arguments.ts), the commands do the work. The
 * exit codes are listed in errors.ts.
 */
import { Command, CommanderError } from 'commander';
import { z } from 'zod';
import { DependencyError, messageOf } from '../../functions/protocol/errors';
import { ReopenedNotEnqueuedError } from '../../functions/protocol/manual-retry';
import {
  jobIdArgument,
  nameArgument,
  parseArguments,
  scheduledTimeArgument,
  statusListArgument,
  timeArgument,
  urlArgument,
  wholeNumberArgument,
} from './arguments';
import { type ProgressFactory, planBackfill, runBackfill } from './commands/backfill';
import { MAX_TIME, runList } from './commands/list';
import { runRetry } from './commands/retry';
import { runShow } from './commands/show';
import { runWatch } from './commands/watch';
import type { CommandContext } from './context';
import { CliError, EXIT, UsageError } from './errors';
import { type Needs, resolveTarget, type Target, type TargetOptions } from './target';

export interface CliDeps extends CommandContext {
  readonly env: NodeJS.ProcessEnv;
  /** Finds the table and queue; tests may pass their own. */
  readonly connect?: (options: TargetOptions, needs: Needs) => Promise<Target>;
  readonly progress?: ProgressFactory;
  /** Stops `watch` (Ctrl-C in the real CLI). */
  readonly signal?: AbortSignal;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const DEFAULT_LIST_FROM = '7d';

export async function runCli(argv: readonly string[], deps: CliDeps): Promise<number> {
  const { io } = deps;
  let exitCode: number = EXIT.ok;
  const now = deps.clock.now();
  const program = new Command('occurrences')
    .description('Operate the scheduled-jobs stack: list, show, retry, backfill and watch occurrences.')
    .option('--stack <name>', 'CloudFormation stack whose outputs name the table, queue and bucket', 'ScheduledJobs')
    .option('--table <name>', 'occurrences table (instead of the stack output OccurrenceTableName)')
    .option('--queue-url <url>', 'job queue URL (instead of the stack output JobQueueUrl)')
    .option(
      '--bucket <name>',
      'reports bucket, to show where a report is (instead of the stack output ReportBucketName)',
    )
    .option(
      '--endpoint <url>',
      'AWS endpoint for every service, such as the local emulator (default: AWS_ENDPOINT_URL)',
    )
    .option('--region <region>', "AWS region (default: the SDK's default chain)")
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .exitOverride();

  const globals = z.object({
    stack: nameArgument.optional(),
    table: nameArgument.optional(),
    queueUrl: urlArgument.optional(),
    bucket: nameArgument.optional(),
    endpoint: urlArgument.optional(),
    region: nameArgument.optional(),
  });
  const connect = async (cmd: Command, needs: Needs): Promise<Target> => {
    const options = parseArguments(globals, cmd.optsWithGlobals());
    // The default --stack counts as unset: flags alone must not need CloudFormation.
    const stack = cmd.getOptionValueSourceWithGlobals('stack') === 'default' ? undefined : options.stack;
    return (deps.connect ?? ((o, n) => resolveTarget(o, n, deps.env)))({ ...options, stack }, needs);
  };

  const rangeOptions = (cmd: Command) =>
    cmd
      .option('--job <id>', 'only this job (a query on the table key)')
      .option(
        '--status <statuses>',
        'only these statuses, comma-separated: PENDING,RUNNING,RETRY_WAIT,SUCCEEDED,FAILED',
      )
      .option(
        '--from <time>',
        "scheduled at or after: ISO date/time with zone, 'now', or a time ago (90m, 6h, 7d)",
        DEFAULT_LIST_FROM,
      )
      .option('--to <time>', 'scheduled before (same forms; default: no end)');
  const rangeSchema = z.object({
    job: jobIdArgument.optional(),
    status: statusListArgument.optional(),
    from: timeArgument(now),
    to: timeArgument(now).optional(),
  });
  const toQuery = (o: z.output<typeof rangeSchema>, limit: number) => {
    if (o.to !== undefined && o.from >= o.to) throw new UsageError(`--from must be before --to`);
    return { jobId: o.job, statuses: o.status ?? [], from: o.from, to: o.to ?? MAX_TIME, limit };
  };

  rangeOptions(program.command('list').description('occurrences newest first, as a table (or --json)'))
    .option('--limit <n>', 'at most this many, 1-1000', '50')
    .option('--json', 'JSON array of the rows, for scripts')
    .action(async (raw, cmd: Command) => {
      const o = parseArguments(
        rangeSchema.extend({ limit: wholeNumberArgument(1, 1000), json: z.boolean().default(false) }),
        raw,
      );
      const query = toQuery(o, o.limit);
      const target = await connect(cmd, { queue: false });
      await runList(deps, target.reader, query, o.json);
    });

  program
    .command('show')
    .description('one occurrence in full: lease age, attempts, errors, report location')
    .argument('<jobId>', 'the job')
    .argument('<scheduledTime>', 'its scheduled time, ISO-8601 with a zone')
    .option('--json', 'the raw row as JSON')
    .action(async (jobId: string, scheduledTime: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({ jobId: jobIdArgument, scheduledTime: scheduledTimeArgument, json: z.boolean().default(false) }),
        { jobId, scheduledTime, ...raw },
        ['jobId', 'scheduledTime'],
      );
      const target = await connect(cmd, { queue: false, bucket: true });
      const row = await runShow(
        deps,
        target.store,
        { jobId: o.jobId, scheduledTime: o.scheduledTime },
        { json: o.json, bucketName: target.bucketName },
      );
      if (row === undefined) {
        io.err(`no occurrence ${o.jobId} ${o.scheduledTime} in ${target.where}`);
        exitCode = EXIT.notFound;
      }
    });

  program
    .command('retry')
    .description(
      're-enqueue a FAILED occurrence (conditional); --force re-enqueues a PENDING, RETRY_WAIT or expired RUNNING one',
    )
    .argument('<jobId>', 'the job')
    .argument('<scheduledTime>', 'its scheduled time, ISO-8601 with a zone')
    .option(
      '--force',
      'enqueue one more message for a PENDING, RETRY_WAIT or expired-lease RUNNING occurrence; never for SUCCEEDED or a live lease',
    )
    .action(async (jobId: string, scheduledTime: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({ jobId: jobIdArgument, scheduledTime: scheduledTimeArgument, force: z.boolean().default(false) }),
        { jobId, scheduledTime, ...raw },
        ['jobId', 'scheduledTime'],
      );
      const target = await connect(cmd, { queue: true });
      const result = await runRetry(
        deps,
        { store: target.store, queue: target.queue! },
        { jobId: o.jobId, scheduledTime: o.scheduledTime },
        { force: o.force },
      );
      if (result.outcome === 'refused') exitCode = EXIT.refused;
    });

  program
    .command('backfill')
    .description("record and enqueue the occurrences a job's schedule would have produced in a time range (idempotent)")
    .requiredOption('--job <id>', 'the job (from bin/jobs.ts)')
    .requiredOption('--from <time>', 'first scheduled time to consider: ISO date/time with zone, or a time ago (7d)')
    .option('--to <time>', 'end of the range, exclusive (not in the future)', 'now')
    .option('--max <n>', 'refuse a range with more occurrences than this, 1-100000', '1000')
    .option('--dry-run', 'say what would be recorded; write nothing')
    .option('--json', 'the summary as JSON')
    .action(async (raw, cmd: Command) => {
      const o = parseArguments(
        z.object({
          job: jobIdArgument,
          from: timeArgument(now),
          to: timeArgument(now),
          max: wholeNumberArgument(1, 100_000),
          dryRun: z.boolean().default(false),
          json: z.boolean().default(false),
        }),
        raw,
      );
      const plan = planBackfill(deps, o.job, o.from, o.to, o.max);
      const target = await connect(cmd, { queue: !o.dryRun });
      await runBackfill(deps, { store: target.store, queue: target.queue!, reader: target.reader }, plan, {
        dryRun: o.dryRun,
        json: o.json,
        progress: deps.progress,
        signal: deps.signal,
      });
    });

  rangeOptions(program.command('watch').description('follow occurrences as they change (polls; Ctrl-C to stop)'))
    .option('--interval <seconds>', 'seconds between polls, 1-300', '2')
    .option('--limit <n>', 'newest occurrences followed, 1-1000', '200')
    .option('--json', 'one JSON object per change')
    .action(async (raw, cmd: Command) => {
      const o = parseArguments(
        rangeSchema.extend({
          interval: wholeNumberArgument(1, 300),
          limit: wholeNumberArgument(1, 1000),
          json: z.boolean().default(false),
        }),
        raw,
      );
      const query = toQuery(o, o.limit);
      const target = await connect(cmd, { queue: false });
      await runWatch(deps, { reader: target.reader, store: target.store }, query, {
        intervalMs: o.interval * 1000,
        json: o.json,
        signal: deps.signal ?? new AbortController().signal,
        sleep: deps.sleep ?? sleep,
      });
    });

  let active: Command = program;
  program.hook('preAction', (_, actionCommand) => {
    active = actionCommand;
  });
  for (const cmd of [program, ...program.commands]) {
    cmd.exitOverride().showHelpAfterError(usageHint(cmd));
  }

  try {
    await program.parseAsync([...argv], { from: 'user' });
    if (argv.length === 0) {
      program.outputHelp({ error: true });
      return EXIT.usage;
    }
    return exitCode;
  } catch (error) {
    return reportError(error, active, io);
  }
}

function usageHint(cmd: Command): string {
  const name = cmd.parent ? `occurrences ${cmd.name()}` : 'occurrences';
  return `Usage: ${name} ${cmd.usage()}\nRun "${name} --help" for the options.`;
}

function reportError(error: unknown, cmd: Command, io: CliDeps['io']): number {
  if (error instanceof CommanderError) {
    // commander has printed its message and the usage line already; --help exits 0.
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof UsageError) {
    io.err(`error: ${error.message}\n${usageHint(cmd)}`);
    return error.exitCode;
  }
  if (error instanceof DependencyError || error instanceof ReopenedNotEnqueuedError) {
    io.err(`error: ${error.message}`);
    if (error instanceof DependencyError && error.kind === 'transient')
      io.err('(a transient failure: running the command again may succeed)');
    return EXIT.failed;
  }
  io.err(`error: ${messageOf(error)}`);
  return error instanceof CliError ? error.exitCode : EXIT.failed;
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
