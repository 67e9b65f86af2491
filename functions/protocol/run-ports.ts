/**
 * What a resumable run needs from the world beside ports.ts: fenced writes of its checkpoint, progress and
 * continuation to the occurrence row, and the multipart upload of its report. The AWS adapters are
 * functions/aws/run-state-store.ts and functions/aws/multipart-report-store.ts.
 */
import type { OpenUpload, RunCheckpoint, RunProgress, UploadedPart } from './checkpoint';
import type { Lease } from './ports';

/**
 * Fenced writes of a resumable run. Each applies only while the row is RUNNING under the lease, and throws
 * LeaseLostError otherwise; other failures are DependencyError. A retried write that finds its own result succeeds.
 */
export interface RunStateStore {
  /** Record the job's checkpoint (and the upload it covers). */
  checkpoint(lease: Lease, checkpoint: RunCheckpoint, now: number): Promise<void>;
  /** Record the upload this holder opened, or a higher part reservation, before a part above the old one is sent. */
  recordUpload(lease: Lease, upload: OpenUpload, now: number): Promise<void>;
  /** The heartbeat's extend with the job's latest progress in the same write. */
  extendWithProgress(
    lease: Lease,
    leaseExpiresAt: number,
    now: number,
    progress: RunProgress,
    signal?: AbortSignal,
  ): Promise<void>;
  /**
   * End this segment: give the lease up (the row stays RUNNING with an expired lease, so the next delivery claims it
   * at once), count the segment, and take back the attempt the claim counted. `runStartedAt` is kept if recorded;
   * `progress`, the job's latest, goes in the same write, and so does `upload`, the part reservation narrowed to the
   * parts this holder sent (report-writer.ts, settledReservation).
   */
  continueRun(
    lease: Lease,
    runStartedAt: string,
    releasedLeaseExpiresAt: number,
    now: number,
    progress: RunProgress | undefined,
    upload: OpenUpload | undefined,
  ): Promise<void>;
}

export interface PartUploadRequest {
  readonly reportKey: string;
  readonly uploadId: string;
  readonly partNumber: number;
  readonly body: Uint8Array;
}

/** S3 multipart uploads of reports; the commit is write-once like putIfAbsent. */
export interface MultipartUploads {
  /**
   * The smallest part the service takes but the last, and the part size to aim for. Default S3's: 5 MiB and 8 MiB
   * (report-writer.ts); the simulation's fake takes smaller ones, so that thousands of runs stay cheap.
   */
  readonly partBytes?: { readonly min: number; readonly target: number };
  create(
    reportKey: string,
    contentType: string,
    metadata: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<string>;
  uploadPart(request: PartUploadRequest, signal?: AbortSignal): Promise<UploadedPart>;
  /** CompleteMultipartUpload with If-None-Match: *; 'existed' when an object is already at the key (412). */
  complete(
    reportKey: string,
    uploadId: string,
    parts: readonly UploadedPart[],
    signal?: AbortSignal,
  ): Promise<'created' | 'existed'>;
  /** Abort an upload nobody will complete; an upload already gone counts as aborted. */
  abort(reportKey: string, uploadId: string): Promise<void>;
}
