/**
 * What every command gets: where to write and the clock. Injected, so that tests run the commands with their own
 * clock and capture the output. What the commands work on (the table, the jobs, the worker queues) is the target
 * (target.ts), found from the deployed stack when a command connects.
 *
 * The types every command file imports live here, and this module imports no command: so no import cycle runs
 * through the commands (test/architecture/layers.test.ts).
 */
import type { Command } from 'commander';
import type { Clock } from '../../functions/protocol/ports';
import type { ExitCode } from './errors';
import type { ClientConfig, Needs, Target, TargetOptions } from './target';

export interface Output {
  /** One piece of the result, on stdout. */
  out(text: string): void;
  /** Progress and explanations, on stderr, so that stdout stays parseable. */
  err(text: string): void;
}

/** A bar (or nothing) that a long command advances once per item. */
export interface Progress {
  increment(): void;
  stop(): void;
}
/** A bar for `total` items; `label` names what advances it (`backfill` when not given). */
export type ProgressFactory = (total: number, label?: string) => Progress;

export interface CommandContext {
  readonly io: Output;
  readonly clock: Clock;
}

/** What the command line runs with (program.ts): the commands' context and the real world's pieces. */
export interface CliDeps extends CommandContext {
  readonly env: NodeJS.ProcessEnv;
  /** Finds the table, the jobs and the worker queues; tests may pass their own. */
  readonly connect?: (options: TargetOptions, needs: Needs) => Promise<Target>;
  readonly progress?: ProgressFactory;
  /** Stops `watch` (Ctrl-C in the real CLI). */
  readonly signal?: AbortSignal;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * The caller's ARN (STS GetCallerIdentity with the target's client config), for the operator's identity
   * (operations/operator-identity.ts). The real CLI passes stsCallerArn; without it the OS user and host alone are
   * recorded (a program calling runCli, tests), except by the console, which asks STS itself.
   */
  readonly callerArn?: (config: ClientConfig) => Promise<string | undefined>;
  /** Asks a yes/no question on the terminal (bulk actions without --yes); absent when stdin is not a TTY. */
  readonly confirm?: (question: string) => Promise<boolean>;
}

/** What a command's file gets from the program when it registers its command (`registerList` and the others). */
export interface CommandSetup {
  readonly deps: CliDeps;
  /** The time `now`, `7d` and the like are counted from: read once, when the command line starts. */
  readonly now: number;
  /** The table, bucket, jobs and worker queues named by the global options (or the stack's outputs). */
  connect(cmd: Command, needs: Needs): Promise<Target>;
  /**
   * Who runs the command, as its writes record it: `given` (`--by`) when there is one, else the operator's identity,
   * `<os user>@<host> (<STS caller ARN>)`, resolved once per process (operations/operator-identity.ts).
   */
  operator(target: Pick<Target, 'clientConfig'>, given?: string): Promise<string>;
  /** For a command that finished with an answer other than "done" (3 refused, 4 not found). */
  setExitCode(code: ExitCode): void;
}

// Waits `ms`, or less when the signal aborts (Ctrl-C ends a watch between two polls at once).
export { sleep } from '../../functions/protocol/transient-retry';
