/**
 * Write-once reports on S3: PutObject with If-None-Match: * (412 when the key exists).
 */
import { HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ReportBody, ReportStore } from '../protocol/ports';
import { asDependencyError, isConditionalFailure } from './classify-error';

export class S3ReportStore implements ReportStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucketName: string,
  ) {}

  async exists(reportKey: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucketName, Key: reportKey }));
      return true;
    } catch (error) {
      // 404 needs s3:ListBucket; without it S3 answers 403 for a missing key, which is fatal here on purpose.
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if ((error as Error).name === 'NotFound' || status === 404) return false;
      throw asDependencyError('look for committed report', error);
    }
  }

  async putIfAbsent(
    reportKey: string,
    report: ReportBody,
    metadata: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<'created' | 'existed'> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucketName,
          Key: reportKey,
          Body: report.body,
          ContentType: report.contentType,
          Metadata: metadata,
          IfNoneMatch: '*',
        }),
        { abortSignal: signal },
      );
      return 'created';
    } catch (error) {
      // 412: already committed, maybe by our own earlier request whose response was lost. Never overwrite.
      if (isConditionalFailure(error)) return 'existed';
      throw asDependencyError('commit report', error);
    }
  }
}
