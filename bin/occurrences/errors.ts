/**
 * The CLI's exit codes and its errors, one family: each class sets its `name` and carries the exit code the command
 * line ends with, and what it is about. Failures of AWS calls are the protocol's DependencyError
 * (functions/protocol/errors.ts), not these.
 *
 * Exit codes: 0 done; 1 an AWS call or the occurrence failed (the message says which and how: the failure is
 * classified as in functions/aws/classify-error.ts), or a schedule could not be read as a job; 2 a bad argument
 * (the message and the usage line); 3 `retry` refused (the message says why); 4 `show` found no such occurrence.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, refused: 3, notFound: 4 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * An error the CLI expects and explains; the base of the others. Each names itself with a string literal ending in
 * `Error`, as the protocol's errors do (functions/protocol/errors.ts).
 */
export abstract class CliError extends Error {
  abstract override readonly name: string;

  constructor(
    message: string,
    readonly exitCode: ExitCode,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A bad argument: printed with the command's usage line, exit code 2. scripts/local.ts uses it too. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';

  constructor(message: string, options?: ErrorOptions) {
    super(message, EXIT.usage, options);
  }
}

/**
 * A schedule of the schedule group that the CLI cannot read as a job (its Target.Input is not a schedule event): a
 * deployment problem, not a bad argument, so exit code 1.
 */
export class ScheduleInputError extends CliError {
  override readonly name = 'ScheduleInputError';

  constructor(message: string) {
    super(message, EXIT.failed);
  }
}

/** Ctrl-C stopped a backfill before it had recorded every occurrence it planned; running it again is safe. */
export class BackfillInterruptedError extends CliError {
  override readonly name = 'BackfillInterruptedError';

  constructor(
    readonly done: number,
    readonly planned: number,
  ) {
    super(`backfill interrupted after ${done} of ${planned} occurrence(s)`, EXIT.failed);
  }
}
