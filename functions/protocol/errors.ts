/**
 * The errors the functions throw on purpose, one family under ScheduledJobsError, and the three kinds every failed
 * AWS call is sorted into.
 *
 * - conditional: the store said no to a condition; a definitive answer about state, never retried.
 * - transient: throttling, 5xx, timeouts, network, S3's 409 ConditionalRequestConflict; retrying may succeed.
 * - fatal: anything else (access denied, validation, missing resource); retrying the same call will not help.
 *
 * This module imports nothing, so that every module may import it. An error that carries a protocol type is declared
 * where it belongs, still in this family: DeliveryNotAcknowledgedError beside DeliveryResult (delivery.ts),
 * ReopenedNotEnqueuedError beside the manual retry that throws it (manual-retry.ts).
 */
export type FailureKind = 'conditional' | 'transient' | 'fatal';

/**
 * The base of every error the functions throw on purpose: `instanceof ScheduledJobsError` tells them from an SDK's or
 * a job's own errors. Every subclass's name ends in `Error`. The reconciler handler's ReconcileIncompleteError
 * extends it beside its handler.
 *
 * Each subclass names itself with a string literal (`override readonly name = 'LeaseLostError'`), and the compiler
 * insists on it: the Lambda bundles are minified, so the class's own name (`new.target.name`) would reach the logs
 * as a one-letter identifier.
 *
 * @example
 * ```ts
 * export class LeaseLostError extends ScheduledJobsError {
 *   override readonly name = 'LeaseLostError';
 *   constructor(readonly operation: string, detail: string) {
 *     super(`lease lost at ${operation}: ${detail}`);
 *   }
 * }
 * ```
 */
export abstract class ScheduledJobsError extends Error {
  /** The subclass's name, set by each subclass so that it survives minification. */
  abstract override readonly name: string;
}

/** An AWS call failed transiently or fatally (conditional failures are returned as results, not thrown). */
export class DependencyError extends ScheduledJobsError {
  override readonly name = 'DependencyError';

  constructor(
    readonly kind: Exclude<FailureKind, 'conditional'>,
    readonly operation: string,
    readonly cause: unknown,
  ) {
    super(`${operation} failed (${kind}): ${messageOf(cause)}`);
  }
}

/** The occurrence is no longer held by this lease: another worker claimed it, or it was finished. */
export class LeaseLostError extends ScheduledJobsError {
  /** Always `'LeaseLostError'`. */
  override readonly name = 'LeaseLostError';

  constructor(
    /** The store operation that found the lease gone. */
    readonly operation: string,
    detail: string,
  ) {
    super(`lease lost at ${operation}: ${detail}`);
  }
}

/** No extend was confirmed in time: the worker gives the lease up before it may have expired. */
export class LeaseExpiringError extends ScheduledJobsError {
  override readonly name = 'LeaseExpiringError';

  constructor(
    readonly confirmedUntil: string,
    readonly lastError: unknown,
  ) {
    super(
      `no lease extend confirmed before the safety margin (lease confirmed until ${confirmedUntil}); last extend error: ${messageOf(lastError)}`,
    );
  }
}

/** The job ran past its time limit, or too close to the Lambda's own timeout. */
export class JobTimeoutError extends ScheduledJobsError {
  /** Always `'JobTimeoutError'`. */
  override readonly name = 'JobTimeoutError';

  constructor(
    /** The time limit the job ran into, ISO-8601 UTC. */
    readonly deadline: string,
  ) {
    super(`job did not finish by ${deadline}`);
  }
}

/** An input (schedule event, queue message) that can never be processed as it is. */
export class InvalidInputError extends ScheduledJobsError {
  override readonly name = 'InvalidInputError';

  constructor(
    readonly where: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid ${where}: ${problems.join('; ')}`);
  }
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** How many causes below the error `messageWithCauses` follows: a chain deeper than this is a loop or noise. */
const MAX_CAUSES = 5;

/**
 * An error's `name: message`, then each of its causes' (`error.cause`) after ` <- `, so that what a failed attempt
 * records keeps what failed underneath: `fetch` throws `TypeError: fetch failed` and puts the reason
 * (`Error: getaddrinfo ENOTFOUND api.example.com`) only in its cause. An `AggregateError` (a connection refused on
 * both IPv4 and IPv6) contributes its errors' messages. A cause whose text the chain already holds (a
 * DependencyError quotes its cause) is left out, at most MAX_CAUSES are followed, and the whole is cut to
 * `maxLength` characters, ending in `…` when cut.
 */
export function messageWithCauses(error: unknown, maxLength = 1000): string {
  let text = messageOf(error);
  if (error instanceof AggregateError) text = withInnerErrors(text, error);
  const seen = new Set<unknown>([error]);
  let cause = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; cause !== undefined && cause !== null && depth < MAX_CAUSES && !seen.has(cause); depth++) {
    seen.add(cause);
    let part = messageOf(cause);
    if (cause instanceof AggregateError) part = withInnerErrors(part, cause);
    const message = cause instanceof Error ? cause.message : part;
    if (message === '' || !text.includes(message)) text = `${text} <- ${part}`;
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return text.length <= maxLength ? text : `${text.slice(0, maxLength - 1)}…`;
}

function withInnerErrors(text: string, error: AggregateError): string {
  const inner = error.errors.map(messageOf).join('; ');
  return inner === '' ? text : `${text} (${inner})`;
}

export function isTransient(error: unknown): boolean {
  return error instanceof DependencyError && error.kind === 'transient';
}

/**
 * The worker asks a resumable job to stop and checkpoint: its invocation's time is nearly spent, and a fresh
 * invocation will resume it. The job's signal carries this as its reason; unlike a lost lease or the job's time
 * limit, it is no failure and costs no attempt.
 */
export class YieldRequestedError extends ScheduledJobsError {
  /** Always `'YieldRequestedError'`. */
  override readonly name = 'YieldRequestedError';

  constructor(
    /** When the worker must have recorded the continuation, ISO-8601 UTC: checkpoint and return before it. */
    readonly continueBy: string,
  ) {
    super(
      `yield: the invocation ends soon; checkpoint and return (the worker records the continuation by ${continueBy})`,
    );
  }
}

/** A checkpoint or progress the job handed over that cannot be recorded as it is (too large, not JSON). */
export class CheckpointRejectedError extends ScheduledJobsError {
  /** Always `'CheckpointRejectedError'`. */
  override readonly name = 'CheckpointRejectedError';

  constructor(
    /** What was refused, such as `checkpoint state` or `report`. */
    readonly what: string,
    /** Why it was refused. */
    readonly problem: string,
  ) {
    super(`${what} rejected: ${problem}`);
  }
}
