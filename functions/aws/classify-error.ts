/**
 * Sorts a failed AWS SDK call into conditional, transient or fatal (see protocol/errors.ts).
 *
 * Transient failures are the SDK's own classification (@smithy/core/retry, which the SDK's retry strategy uses and
 * which the deprecated @smithy/service-error-classification now re-exports: the throttling names,
 * 429, 5xx, TimeoutError/RequestTimeout, four socket codes, the `$retryable` trait, a corrected clock skew). What it
 * does not know is listed here: the conditional failures (a retry library has no notion of them), and the transient
 * names and socket codes the SDK's own retries do not look for.
 */

import { unmarshall } from '@aws-sdk/util-dynamodb';
import { isRetryableByTrait, isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import type { FailureKind } from '../protocol/errors';
import { DependencyError } from '../protocol/errors';

type SdkError = Parameters<typeof isTransientError>[0];

/** A definitive "no" to a condition: DynamoDB's condition check, S3's If-None-Match on an existing key (412). */
const CONDITIONAL_NAMES = new Set(['ConditionalCheckFailedException', 'PreconditionFailed']);
const PRECONDITION_FAILED_STATUS = 412;

/** Transient by name, whatever the status; the library does not know these names. */
const TRANSIENT_NAMES = new Set([
  // S3's 409 for a conditional write racing another write to the same key: retry it.
  'ConditionalRequestConflict',
  // DynamoDB: the item is being changed by a transaction.
  'TransactionConflictException',
  'KMSThrottlingException',
  // Service-side failures, also when they arrive without a 5xx status (the library goes by the status alone).
  'InternalServerError',
  'InternalError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  // Cancelled or cut off on our side (an AbortSignal, a dropped connection); the library knows TimeoutError only.
  'AbortError',
  'NetworkingError',
]);

/** Node socket error codes beyond the four the library knows (ECONNRESET, ECONNREFUSED, EPIPE, ETIMEDOUT). */
const TRANSIENT_SOCKET_CODES = new Set([
  'EAI_AGAIN',
  'ENOTFOUND',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ESOCKETTIMEDOUT',
]);

export function classifyAwsError(error: unknown): FailureKind {
  if (typeof error !== 'object' || error === null) return 'fatal';
  const e = error as SdkError & { code?: unknown };
  if (CONDITIONAL_NAMES.has(e.name) || e.$metadata?.httpStatusCode === PRECONDITION_FAILED_STATUS) {
    return 'conditional';
  }
  // Before the status checks: an HTML error page with a 500 is no AWS service failing for a moment.
  if (isNotAnAwsResponse(e)) return 'fatal';
  if (isThrottlingError(e) || isTransientError(e) || isServerError(e) || isRetryableByTrait(e)) return 'transient';
  if (TRANSIENT_NAMES.has(e.name)) return 'transient';
  if (typeof e.code === 'string' && TRANSIENT_SOCKET_CODES.has(e.code)) return 'transient';
  return 'fatal';
}

/**
 * The SDK could not read the response as the service's JSON or XML: the endpoint is no AWS service (a web server's
 * `<!doctype html>` page, an emulator's crash page for a resource it does not have). Asking again gets the same page,
 * so it is fatal whatever the status; the SDK reports it as a SyntaxError ("Deserialization error").
 */
function isNotAnAwsResponse(e: { name?: unknown; message?: unknown }): boolean {
  return e.name === 'SyntaxError' || (typeof e.message === 'string' && e.message.includes('Deserialization error'));
}

export const isConditionalFailure = (error: unknown): boolean => classifyAwsError(error) === 'conditional';

/**
 * The item a refused conditional write returned (ReturnValuesOnConditionCheckFailure: ALL_OLD), in plain JSON, or
 * undefined when there was none. The document client does not unmarshall the item on an exception: it arrives as
 * AttributeValues.
 */
export function refusedItem<T>(error: unknown): T | undefined {
  const item = (error as { Item?: Record<string, unknown> }).Item;
  if (item === undefined || Object.keys(item).length === 0) return undefined;
  const marshalled = Object.values(item).every((v) => typeof v === 'object' && v !== null && !Array.isArray(v));
  return (marshalled ? unmarshall(item as Parameters<typeof unmarshall>[0]) : item) as T;
}

/** Rethrow a non-conditional failure as a DependencyError that says which call failed and how. */
export function asDependencyError(operation: string, error: unknown): DependencyError {
  const kind = classifyAwsError(error);
  return new DependencyError(kind === 'conditional' ? 'fatal' : kind, operation, error);
}
