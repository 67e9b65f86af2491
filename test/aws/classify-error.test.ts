import {
  ConditionalCheckFailedException,
  ProvisionedThroughputExceededException,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { NotFound, S3ServiceException } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { asDependencyError, classifyAwsError, isConditionalFailure } from '../../functions/aws/classify-error';
import { DependencyError } from '../../functions/protocol/errors';

const meta = (httpStatusCode: number) => ({ httpStatusCode });

const s3Error = (name: string, httpStatusCode: number) =>
  new S3ServiceException({
    name,
    $fault: httpStatusCode >= 500 ? 'server' : 'client',
    $metadata: meta(httpStatusCode),
    message: name,
  });

/** A plain error with extra fields, the shape the SDK and Node produce for non-modelled failures. */
const errorWith = (fields: Record<string, unknown>): Error => Object.assign(new Error('boom'), fields);

describe('classifyAwsError: conditional failures (a definitive "no" from the store)', () => {
  it('a DynamoDB ConditionalCheckFailedException is conditional', () => {
    const error = new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      $metadata: meta(400),
    });
    expect(classifyAwsError(error)).toBe('conditional');
    expect(isConditionalFailure(error)).toBe(true);
  });

  it("S3's 412 PreconditionFailed (If-None-Match on an existing key) is conditional", () => {
    expect(classifyAwsError(s3Error('PreconditionFailed', 412))).toBe('conditional');
  });

  it('any 412 is conditional even when the error name is unmodelled', () => {
    expect(classifyAwsError(errorWith({ name: 'Unknown', $metadata: meta(412) }))).toBe('conditional');
  });
});

describe('classifyAwsError: transient failures (retrying may succeed)', () => {
  it.each([
    'ThrottlingException',
    'Throttling',
    'TooManyRequestsException',
    'RequestLimitExceeded',
    'SlowDown',
    'TransactionConflictException',
    'InternalServerError',
    'ServiceUnavailable',
  ])('error name %s is transient', (name) => {
    expect(classifyAwsError(errorWith({ name, $metadata: meta(400) }))).toBe('transient');
  });

  it('DynamoDB ProvisionedThroughputExceededException is transient', () => {
    const error = new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: meta(400) });
    expect(classifyAwsError(error)).toBe('transient');
  });

  it.each([500, 502, 503, 504])('an unnamed HTTP %i is transient', (status) => {
    expect(classifyAwsError(errorWith({ name: 'UnknownError', $metadata: meta(status) }))).toBe('transient');
  });

  it('HTTP 429 is transient', () => {
    expect(classifyAwsError(errorWith({ name: 'UnknownError', $metadata: meta(429) }))).toBe('transient');
  });

  it('an error the SDK marks $retryable is transient', () => {
    expect(
      classifyAwsError(errorWith({ name: 'SomethingOdd', $retryable: { throttling: false }, $metadata: meta(400) })),
    ).toBe('transient');
  });

  it.each(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN'])(
    'a socket error with code %s is transient',
    (code) => {
      expect(classifyAwsError(errorWith({ code }))).toBe('transient');
    },
  );

  it("S3's 409 ConditionalRequestConflict (a racing conditional write) is transient, not conditional", () => {
    const error = s3Error('ConditionalRequestConflict', 409);
    expect(classifyAwsError(error)).toBe('transient');
    expect(isConditionalFailure(error)).toBe(false);
  });

  it('an error after the SDK corrected its clock skew is transient (the next call signs with the corrected clock)', () => {
    const error = errorWith({
      name: 'InvalidSignatureException',
      $metadata: { httpStatusCode: 400, clockSkewCorrected: true },
    });
    expect(classifyAwsError(error)).toBe('transient');
  });

  it('AbortError and TimeoutError are transient', () => {
    expect(classifyAwsError(errorWith({ name: 'AbortError' }))).toBe('transient');
    expect(classifyAwsError(errorWith({ name: 'TimeoutError' }))).toBe('transient');
    // What AbortSignal.timeout() really throws.
    expect(classifyAwsError(new DOMException('timed out', 'TimeoutError'))).toBe('transient');
  });
});

describe('classifyAwsError: fatal failures (the same call will not succeed)', () => {
  it('S3 AccessDenied 403 is fatal', () => {
    expect(classifyAwsError(s3Error('AccessDenied', 403))).toBe('fatal');
  });

  it('ValidationException 400 is fatal', () => {
    expect(classifyAwsError(errorWith({ name: 'ValidationException', $metadata: meta(400) }))).toBe('fatal');
  });

  it('DynamoDB ResourceNotFoundException is fatal', () => {
    expect(classifyAwsError(new ResourceNotFoundException({ message: 'no table', $metadata: meta(400) }))).toBe(
      'fatal',
    );
  });

  it('S3 NotFound 404 is fatal when classified on its own (exists() treats it specially)', () => {
    expect(classifyAwsError(new NotFound({ message: 'NotFound', $metadata: meta(404) }))).toBe('fatal');
  });

  it("an endpoint that answers HTML with a 500 (the SDK's SyntaxError, as moto's error page gives) is fatal, not transient", () => {
    // The shape the SDK throws when the body is no JSON: measured against moto_server, CreateSchedule in no group.
    const htmlPage = Object.assign(
      new SyntaxError(
        'Unexpected token \'<\', "<!doctype "... is not valid JSON\n  Deserialization error: to see the raw response, inspect the hidden field {error}.$response on this object.',
      ),
      { $metadata: meta(500) },
    );
    expect(classifyAwsError(htmlPage)).toBe('fatal');
    expect(asDependencyError('create schedule x in group g', htmlPage).kind).toBe('fatal');
  });

  it('a deserialization error under another name (an XML body the SDK could not read) is fatal whatever its status', () => {
    const error = errorWith({ name: 'Error', message: 'Deserialization error: char <', $metadata: meta(503) });
    expect(classifyAwsError(error)).toBe('fatal');
  });

  it('non-objects and bare errors are fatal rather than crashing the classifier', () => {
    expect(classifyAwsError(undefined)).toBe('fatal');
    expect(classifyAwsError(null)).toBe('fatal');
    expect(classifyAwsError('a string')).toBe('fatal');
    expect(classifyAwsError(new Error('plain'))).toBe('fatal');
  });
});

describe('asDependencyError', () => {
  it('keeps the kind, the operation and the cause of a transient failure', () => {
    const cause = errorWith({ name: 'ThrottlingException', $metadata: meta(400) });
    const error = asDependencyError('claim occurrence', cause);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error.kind).toBe('transient');
    expect(error.operation).toBe('claim occurrence');
    expect(error.cause).toBe(cause);
    expect(error.message).toContain('claim occurrence');
    expect(error.message).toContain('ThrottlingException');
  });

  it('keeps a fatal kind', () => {
    const error = asDependencyError('commit report', s3Error('AccessDenied', 403));
    expect(error.kind).toBe('fatal');
    expect(error.operation).toBe('commit report');
  });

  it('turns a conditional failure reaching it into fatal (a DependencyError is never conditional)', () => {
    const error = asDependencyError('x', new ConditionalCheckFailedException({ message: 'no', $metadata: meta(400) }));
    expect(error.kind).toBe('fatal');
  });
});
