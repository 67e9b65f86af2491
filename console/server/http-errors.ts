/**
 * How the server says no: an HttpError carries its status, and errorAnswer turns any error into the status and
 * `{ error }` body the contract lists (console/contract.ts): 400 a bad parameter (the message names it), 404 no
 * such job, schedule or occurrence, 409 refused by the row's state, 502 AWS failed.
 */
import { DependencyError, InvalidInputError, messageOf } from '../../functions/protocol/errors';
import { ScheduleNotFoundError, UnknownScheduleJobError } from '../../functions/protocol/manage-schedule';
import { ReopenedNotEnqueuedError } from '../../functions/protocol/manual-retry';
import { InvalidScheduleError } from '../../functions/protocol/schedule-registry';
import { ScheduleError } from '../../functions/protocol/schedule-times';

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 500 | 502 | 503;

/** An answer other than 200, with the sentence the page shows. */
export class HttpError extends Error {
  override readonly name = 'HttpError';

  constructor(
    readonly status: ErrorStatus,
    message: string,
  ) {
    super(message);
  }
}

/** A 400 that names the parameter: `from: must be ...`. */
export const badParameter = (parameter: string, problem: string): HttpError =>
  new HttpError(400, `${parameter}: ${problem}`);

/** The status and message of an error thrown while answering. */
export function errorAnswer(error: unknown): { readonly status: ErrorStatus; readonly error: string } {
  if (error instanceof HttpError) return { status: error.status, error: error.message };
  if (error instanceof InvalidInputError || error instanceof InvalidScheduleError || error instanceof ScheduleError)
    return { status: 400, error: error.message };
  if (error instanceof ScheduleNotFoundError || error instanceof UnknownScheduleJobError)
    return { status: 404, error: error.message };
  if (error instanceof DependencyError || error instanceof ReopenedNotEnqueuedError)
    return { status: 502, error: error.message };
  return { status: 500, error: `the console failed: ${messageOf(error)}` };
}
