/**
 * The command line: commander splits the arguments, zod checks them (arguments.ts), the commands do the work. Each
 * command registers itself from its own file in commands/; this file holds what they share: the global options, how
 * they name the target, and how an error becomes a message and an exit code (the codes are listed in errors.ts).
 */
import { Command, CommanderError, Option } from 'commander';
import { z } from 'zod';
import { DependencyError, messageOf } from '../../functions/protocol/errors';
import { ReopenedNotEnqueuedError } from '../../functions/protocol/manual-retry';
import { type OperatorIdentity, operatorName, resolveOperatorIdentity } from '../../operations/operator-identity';
import { nameArgument, outputPrefixArgument, parseArguments, urlArgument, workerQueuesArgument } from './arguments';
import { registerBackfill } from './commands/backfill';
import { registerBulk } from './commands/bulk';
import { registerCancel } from './commands/cancel';
import { registerConsole } from './commands/console';
import { registerDescribe } from './commands/describe';
import { registerList } from './commands/list';
import { registerPause } from './commands/pause';
import { registerReindex } from './commands/reindex';
import { registerResume } from './commands/resume';
import { registerRetry } from './commands/retry';
import { registerRun } from './commands/run';
import { registerSchedules } from './commands/schedules';
import { registerShow } from './commands/show';
import { registerWatch } from './commands/watch';
import type { CliDeps, CommandSetup, Output } from './context';
import { CliError, EXIT, UsageError } from './errors';
import { LOCAL_RUN_FILE, readLocalTarget } from './local-target';
import { DEFAULT_STACK, type Needs, resolveTarget, type Target, type TargetOptions } from './target';

export async function runCli(argv: readonly string[], deps: CliDeps): Promise<number> {
  let exitCode: number = EXIT.ok;
  let identity: Promise<OperatorIdentity> | undefined;
  const setup: CommandSetup = {
    deps,
    now: deps.clock.now(),
    connect: (cmd, needs) => connect(cmd, needs, deps),
    operator: async (target, given) => {
      if (given !== undefined) return given;
      const { callerArn } = deps;
      // Once per process: a bulk run of a thousand rows makes one STS call.
      identity ??= resolveOperatorIdentity({
        env: deps.env,
        callerArn: callerArn === undefined ? undefined : () => callerArn(target.clientConfig ?? {}),
        warn: deps.io.err,
      });
      return operatorName(await identity);
    },
    setExitCode: (code) => {
      exitCode = code;
    },
  };
  const program = withGlobalOptions(new Command('occurrences'), deps.io);
  registerList(program, setup);
  registerShow(program, setup);
  registerRetry(program, setup);
  registerCancel(program, setup);
  registerBackfill(program, setup);
  registerWatch(program, setup);
  registerDescribe(program, setup);
  registerPause(program, setup);
  registerResume(program, setup);
  registerRun(program, setup);
  registerSchedules(program, setup);
  registerConsole(program, setup);
  registerReindex(program, setup);
  registerBulk(program, setup);
  const activeCommand = followActiveCommand(program);
  showUsageAfterErrors(program);

  try {
    await program.parseAsync(withoutHelpOfUnknown(program, argv), { from: 'user' });
    if (argv.length === 0) {
      program.outputHelp({ error: true });
      return EXIT.usage;
    }
    return exitCode;
  } catch (error) {
    return reportError(error, activeCommand(), deps.io);
  }
}

function withGlobalOptions(program: Command, io: Output): Command {
  return program
    .description(
      'Operate the scheduled-jobs stack: list, show, retry (one or in bulk), cancel in bulk, backfill and watch occurrences; describe, pause, resume and run jobs; manage run-time schedules; serve the browser console.',
    )
    .option(
      '--stack <name>',
      'CloudFormation stack whose outputs name the table, bucket, schedule group and worker queues',
      DEFAULT_STACK,
    )
    .option(
      '--output-prefix <prefix>',
      'the outputPrefix of the ScheduledJobs to operate, when the stack holds several: its outputs are <prefix>OccurrenceTableName, ... (default: none)',
    )
    .option('--table <name>', 'occurrences table (instead of the stack output OccurrenceTableName)')
    .option(
      '--bucket <name>',
      'reports bucket, to show where a report is (instead of the stack output ReportBucketName)',
    )
    .option(
      '--schedule-group <name>',
      "the jobs' schedule group: one schedule per job, named by the job id (instead of the output ScheduleGroupName)",
    )
    .option(
      '--worker-queue <workerId=url>',
      "a worker's job queue (repeatable; instead of the stack's outputs WorkerQueue<n>)",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .addOption(new Option('--queue-url <url>').hideHelp())
    .option(
      '--endpoint <url>',
      'AWS endpoint for every service, such as the local emulator (default: AWS_ENDPOINT_URL)',
    )
    .option('--region <region>', "AWS region (default: the SDK's default chain)")
    .option(
      '--local <file>',
      `a kept local run's emulator, table, bucket, schedule group and worker queues, from the file it wrote (${LOCAL_RUN_FILE} where it was started)`,
    )
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .exitOverride();
}

const globalArguments = z.object({
  stack: nameArgument.optional(),
  outputPrefix: outputPrefixArgument.optional(),
  table: nameArgument.optional(),
  bucket: nameArgument.optional(),
  scheduleGroup: nameArgument.optional(),
  workerQueue: workerQueuesArgument,
  // Each worker has a queue of its own now; say so instead of "unknown option" to those who used the one queue.
  queueUrl: z
    .undefined({ error: 'there is no single job queue any more: pass --worker-queue <workerId>=<url> per worker' })
    .optional(),
  endpoint: urlArgument.optional(),
  region: nameArgument.optional(),
  local: z.string().min(1).optional(),
});

/** The target the global options of `cmd` name. */
async function connect(cmd: Command, needs: Needs, deps: CliDeps): Promise<Target> {
  const { workerQueue, queueUrl: _, local, ...options } = parseArguments(globalArguments, cmd.optsWithGlobals());
  // The default --stack counts as unset: flags alone must not need CloudFormation.
  const stack = cmd.getOptionValueSourceWithGlobals('stack') === 'default' ? undefined : options.stack;
  const given: TargetOptions = { ...options, stack, workerQueues: workerQueue };
  const target = local === undefined ? given : withFlagsFirst(readLocalTarget(local), given);
  return (deps.connect ?? ((o, n) => resolveTarget(o, n, deps.env)))(target, needs);
}

/** The kept local run's target, with every option also given as a flag taken from the flag. */
function withFlagsFirst(local: TargetOptions, flags: TargetOptions): TargetOptions {
  // No --worker-queue parses to an empty map: it must not hide the run's queues.
  const given = ([, v]: [string, unknown]) => v !== undefined && !(v instanceof Map && v.size === 0);
  return { ...local, ...Object.fromEntries(Object.entries(flags).filter(given)) };
}

/** The command commander chose to run, so that an error in its action is followed by that command's usage line. */
function followActiveCommand(program: Command): () => Command {
  let active: Command = program;
  program.hook('preAction', (_, actionCommand) => {
    active = actionCommand;
  });
  return () => active;
}

/**
 * `help <name>` of a command that does not exist: commander prints the whole program help after no message, exit
 * 2. Parsed as `<name>` alone, it gets the unknown command's message, the suggestion and the one-line pointer.
 */
function withoutHelpOfUnknown(program: Command, argv: readonly string[]): string[] {
  const [first, name] = argv;
  const known = (n: string) => program.commands.some((c) => c.name() === n || c.aliases().includes(n));
  if (first === 'help' && name !== undefined && !name.startsWith('-') && !known(name)) return [name];
  return [...argv];
}

/** Every command throws instead of exiting, and follows a parse error with its own usage line. */
function showUsageAfterErrors(program: Command): void {
  // Subcommands too (`schedules upsert`).
  const all = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(all)];
  for (const cmd of all(program)) {
    cmd.exitOverride().showHelpAfterError(usageHint(cmd));
  }
}

function usageHint(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c !== null; c = c.parent) names.unshift(c.name());
  const name = names.join(' ');
  return `Usage: ${name} ${cmd.usage()}\nRun "${name} --help" for the options.`;
}

function reportError(error: unknown, cmd: Command, io: Output): number {
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
