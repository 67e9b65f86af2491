import { HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { S3ReportStore } from '../../functions/aws/report-store';
import { DependencyError } from '../../functions/protocol/errors';

const BUCKET = 'reports-bucket';
const REPORT_KEY = 'reports/daily-report/2026-11-30T06:00:00Z.md';
const REPORT = { body: '# Report\n', contentType: 'text/markdown; charset=utf-8' };
const METADATA = { jobid: 'daily-report', attempt: '1' };

const s3Error = (name: string, httpStatusCode: number) =>
  new S3ServiceException({
    name,
    $fault: httpStatusCode >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode },
    message: name,
  });

const s3Mock = mockClient(S3Client);
let reports: S3ReportStore;

beforeEach(() => {
  s3Mock.reset();
  reports = new S3ReportStore(new S3Client({ region: 'eu-west-1' }), BUCKET);
});

describe('S3ReportStore.putIfAbsent', () => {
  it('writes the object only if absent (If-None-Match: *) with its content type and metadata, and reports created', async () => {
    s3Mock.on(PutObjectCommand).resolves({ ETag: '"abc"' });
    await expect(reports.putIfAbsent(REPORT_KEY, REPORT, METADATA)).resolves.toBe('created');
    expect(s3Mock).toHaveReceivedCommandTimes(PutObjectCommand, 1);
    expect(s3Mock).toHaveReceivedCommandWith(PutObjectCommand, {
      Bucket: BUCKET,
      Key: REPORT_KEY,
      Body: REPORT.body,
      ContentType: REPORT.contentType,
      Metadata: METADATA,
      IfNoneMatch: '*',
    });
  });

  it("returns 'existed' and does not throw when S3 answers 412 PreconditionFailed (never overwrites)", async () => {
    s3Mock.on(PutObjectCommand).rejects(s3Error('PreconditionFailed', 412));
    await expect(reports.putIfAbsent(REPORT_KEY, REPORT, METADATA)).resolves.toBe('existed');
    // One attempt only: an existing report is an answer, not a reason to write again.
    expect(s3Mock).toHaveReceivedCommandTimes(PutObjectCommand, 1);
  });

  it('passes the abort signal to the put, so an aborted attempt does not keep writing', async () => {
    s3Mock.on(PutObjectCommand).resolves({});
    const controller = new AbortController();
    await reports.putIfAbsent(REPORT_KEY, REPORT, METADATA, controller.signal);
    expect((s3Mock.call(0).args as unknown[])[1]).toEqual({ abortSignal: controller.signal });
  });

  it('throws a transient DependencyError on 409 ConditionalRequestConflict (a racing write; retry later)', async () => {
    s3Mock.on(PutObjectCommand).rejects(s3Error('ConditionalRequestConflict', 409));
    const error = await reports.putIfAbsent(REPORT_KEY, REPORT, METADATA).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'transient', operation: 'commit report' });
  });

  it('throws a fatal DependencyError on 403 AccessDenied', async () => {
    s3Mock.on(PutObjectCommand).rejects(s3Error('AccessDenied', 403));
    const error = await reports.putIfAbsent(REPORT_KEY, REPORT, METADATA).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'fatal', operation: 'commit report' });
  });

  it('throws a transient DependencyError on 503 SlowDown', async () => {
    s3Mock.on(PutObjectCommand).rejects(s3Error('SlowDown', 503));
    await expect(reports.putIfAbsent(REPORT_KEY, REPORT, METADATA)).rejects.toMatchObject({
      name: 'DependencyError',
      kind: 'transient',
    });
  });
});

describe('S3ReportStore.exists', () => {
  it('is true when HeadObject succeeds, asking for the right bucket and key', async () => {
    s3Mock.on(HeadObjectCommand).resolves({ ContentLength: 10 });
    await expect(reports.exists(REPORT_KEY)).resolves.toBe(true);
    expect(s3Mock).toHaveReceivedCommandWith(HeadObjectCommand, { Bucket: BUCKET, Key: REPORT_KEY });
  });

  it('is false on 404 NotFound', async () => {
    s3Mock.on(HeadObjectCommand).rejects(s3Error('NotFound', 404));
    await expect(reports.exists(REPORT_KEY)).resolves.toBe(false);
  });

  it('is false on a 404 whatever its name (HeadObject has no body to name the error)', async () => {
    s3Mock.on(HeadObjectCommand).rejects(s3Error('UnknownError', 404));
    await expect(reports.exists(REPORT_KEY)).resolves.toBe(false);
  });

  it('throws a fatal DependencyError on 403 (a missing key without s3:ListBucket must not read as absent)', async () => {
    s3Mock.on(HeadObjectCommand).rejects(s3Error('Forbidden', 403));
    const error = await reports.exists(REPORT_KEY).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'fatal', operation: 'look for committed report' });
  });

  it('throws a transient DependencyError on a 500', async () => {
    s3Mock.on(HeadObjectCommand).rejects(s3Error('InternalError', 500));
    await expect(reports.exists(REPORT_KEY)).rejects.toMatchObject({ name: 'DependencyError', kind: 'transient' });
  });
});
