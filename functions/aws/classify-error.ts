/**
 * Sorts a failed AWS SDK call into conditional, transient or fatal (see protocol/errors.ts).
 */
import type { FailureKind } from '../protocol/errors';
import { DependencyError } from '../protocol/errors';

const CONDITIONAL = new Set(['ConditionalCheckFailedException', 'PreconditionFailed']);
const TRANSIENT = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'ProvisionedThroughputExceededException',
  'SlowDown',
  'RequestThrottled',
  'RequestThrottledException',
  'TransactionConflictException',
  // S3's 409 for a conditional write racing another write to the same key: retry it.
  'ConditionalRequestConflict',
  'InternalServerError',
  'InternalError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'AbortError',
  'NetworkingError',
  'KMSThrottlingException',
]);
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ESOCKETTIMEDOUT',
]);

interface SdkErrorShape {
  name?: string;
  code?: string;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number };
}

export function classifyAwsError(error: unknown): FailureKind {
  const e = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorShape;
  const name = e.name ?? '';
  const status = e.$metadata?.httpStatusCode;
  if (CONDITIONAL.has(name) || status === 412) return 'conditional';
  if (TRANSIENT.has(name) || e.$retryable) return 'transient';
  if (e.code !== undefined && NETWORK_CODES.has(e.code)) return 'transient';
  if (status !== undefined && (status === 429 || status >= 500)) return 'transient';
  return 'fatal';
}

export const isConditionalFailure = (error: unknown): boolean => classifyAwsError(error) === 'conditional';

/** Rethrow a non-conditional failure as a DependencyError that says which call failed and how. */
export function asDependencyError(operation: string, error: unknown): DependencyError {
  const kind = classifyAwsError(error);
  return new DependencyError(kind === 'conditional' ? 'fatal' : kind, operation, error);
}
