/**
 * Named errors of the protocol, and the three kinds every failed AWS call is sorted into.
 *
 * - conditional: the store said no to a condition; a definitive answer about state, never retried.
 * - transient: throttling, 5xx, timeouts, network, S3's 409 ConditionalRequestConflict; retrying may succeed.
 * - fatal: anything else (access denied, validation, missing resource); retrying the same call will not help.
 */
export type FailureKind = 'conditional' | 'transient' | 'fatal';

/** An AWS call failed transiently or fatally (conditional failures are returned as results, not thrown). */
export class DependencyError extends Error {
  constructor(
    readonly kind: Exclude<FailureKind, 'conditional'>,
    readonly operation: string,
    readonly cause: unknown,
  ) {
    super(`${operation} failed (${kind}): ${messageOf(cause)}`);
    this.name = 'DependencyError';
  }
}

/** The occurrence is no longer held by this lease: another worker claimed it, or it was finished. */
export class LeaseLostError extends Error {
  constructor(
    readonly operation: string,
    detail: string,
  ) {
    super(`lease lost at ${operation}: ${detail}`);
    this.name = 'LeaseLostError';
  }
}

/** No extend was confirmed in time: the worker gives the lease up before it may have expired. */
export class LeaseExpiringError extends Error {
  constructor(
    readonly confirmedUntil: string,
    readonly lastError: unknown,
  ) {
    super(
      `no lease extend confirmed before the safety margin (lease confirmed until ${confirmedUntil}); last extend error: ${messageOf(lastError)}`,
    );
    this.name = 'LeaseExpiringError';
  }
}

/** The job ran past its time limit, or too close to the Lambda's own timeout. */
export class JobTimeoutError extends Error {
  constructor(readonly deadline: string) {
    super(`job did not finish by ${deadline}`);
    this.name = 'JobTimeoutError';
  }
}

/** An input (schedule event, queue message) that can never be processed as it is. */
export class InvalidInputError extends Error {
  constructor(
    readonly where: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid ${where}: ${problems.join('; ')}`);
    this.name = 'InvalidInputError';
  }
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

export function isTransient(error: unknown): boolean {
  return error instanceof DependencyError && error.kind === 'transient';
}
