/**
 * The errors of the CDK side. They join the package's one family (`ScheduledJobsError`, functions/protocol/errors.ts),
 * each class setting `name`, so that `instanceof ScheduledJobsError` tells a problem the package found from a bug,
 * and the name survives in logs and stack traces.
 */
import { ScheduledJobsError } from '../functions/protocol/errors';

export { ScheduledJobsError };

/**
 * A configuration that would not deploy or would not run, found while the app builds its constructs and before any
 * function is bundled. It lists every problem at once, each naming the call and the property, for example
 * `addJob(weekly-export).timeout: ...`. Named as the CDK's own validation errors are, so it reads as one.
 *
 * @example
 * ```ts
 * try {
 *   jobs.addJob('weekly-export', { schedule, entry: 'src/jobs/weekly-export.ts', timeout: Duration.hours(1) });
 * } catch (error) {
 *   if (error instanceof ValidationError) console.error(error.problems.join('\n'));
 *   throw error;
 * }
 * ```
 */
export class ValidationError extends ScheduledJobsError {
  /** Always `'ValidationError'`, also after minification. */
  override readonly name = 'ValidationError';

  /** @param problems - each problem as `where.property: what is wrong, got <value>`. */
  constructor(
    /** Every problem found, each as `where.property: what is wrong, got <value>`. */
    readonly problems: readonly string[],
  ) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/**
 * Runs `build` for the public method `method`, and when it throws a ValidationError, restarts the error's stack
 * trace at the app's call of `method`: the frames inside this package say nothing to a user, and their files may not
 * ship.
 */
export function validatedCall<T>(
  method: ((...args: never[]) => unknown) | (abstract new (...args: never[]) => unknown),
  build: () => T,
): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof ValidationError) Error.captureStackTrace(error, method);
    throw error;
  }
}
