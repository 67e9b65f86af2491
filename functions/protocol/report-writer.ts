/**
 * A large report, streamed as an S3 multipart upload across the segments of a resumable run.
 *
 *   write(chunk) ─▶ buffer ─(≥ partBytes)─▶ UploadPart n  (n above the row's reservation, recorded before use)
 *   checkpoint  ─▶ buffer ≥ 5 MiB: upload it as a part; buffer empty: nothing to send; otherwise not a boundary
 *   end()       ─▶ the rest as the last part ─▶ CompleteMultipartUpload(If-None-Match: *) in commit
 *
 * Memory stays at about one part. A checkpoint records exactly the parts its state covers, so a resumed run sends
 * the bytes after them once, in order. Part numbers are reserved in the row before a holder uses them, and a next
 * holder starts above the reservation: a stale holder's late UploadPart can only land on a number no checkpoint
 * names, never replace a part of the report. An upload opened but never checkpointed is aborted by the next holder.
 *
 * The writer works only while its signal (the lease guard's) vouches for the lease: once it aborts (a lost lease, the
 * segment's end, a yield the job did not honour in time) every write, checkpoint boundary and end is refused, and no
 * new request is sent. A job still running in the background after its segment was recorded as continued cannot
 * add to the upload (docs/long-jobs.md, "A late yield").
 */
import type { OpenUpload, RunFields, UploadCheckpoint, UploadedPart } from './checkpoint';
import type { Lease, MultipartUploads, ReportWriter, RunStateStore, StreamedReport } from './ports';

// Job files that stream a report import its type from here, beside the writer.
export type { ReportWriter, StreamedReport } from './ports';

/** S3's smallest part but the last. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
/** S3's most parts in one upload. */
export const MAX_PARTS = 10_000;
/** The part size the writer aims for: 8 MiB, so 200 MB is 25 parts and the largest report about 80 GB. */
export const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
/** Part numbers reserved per row write: a reservation costs one write per 32 parts (256 MiB). */
export const PART_RESERVATION_BLOCK = 32;

export const isStreamedReport = (value: unknown): value is StreamedReport =>
  typeof value === 'object' && value !== null && (value as { streamed?: unknown }).streamed === true;

export interface WriterOptions {
  readonly uploads: MultipartUploads;
  readonly runs: RunStateStore;
  readonly lease: Lease;
  readonly reportKey: string;
  readonly contentType: string;
  readonly metadata: Record<string, string>;
  readonly signal: AbortSignal;
  readonly now: () => number;
  /** Default the uploads' target (DEFAULT_PART_BYTES for S3); at least their minimum. */
  readonly partBytes?: number;
}

export class MultipartReportWriter implements ReportWriter {
  private uploadId: string | undefined;
  private parts: UploadedPart[];
  private committedBytes: number;
  private reservedThrough: number;
  private nextPartNumber: number;
  private buffer: Uint8Array[] = [];
  private buffered = 0;
  private busy = false;
  private ended = false;
  private abandoned: string | undefined;
  /** The highest part number this holder sent, if any. */
  private highestSent: number | undefined;
  private readonly partBytes: number;
  private readonly minPartBytes: number;

  /** Resume from the row as claimed: the last checkpoint's upload, above the last holder's reservation. */
  constructor(
    private readonly options: WriterOptions,
    row: RunFields,
  ) {
    this.minPartBytes = options.uploads.partBytes?.min ?? MIN_PART_BYTES;
    this.partBytes = Math.max(
      this.minPartBytes,
      options.partBytes ?? options.uploads.partBytes?.target ?? DEFAULT_PART_BYTES,
    );
    const covered = row.checkpoint?.upload;
    this.uploadId = covered?.uploadId;
    this.parts = [...(covered?.parts ?? [])];
    this.committedBytes = covered?.bytes ?? 0;
    const open = row.openUpload;
    // An upload a holder opened that no checkpoint covers holds no part of the report: abort it (see start()).
    if (open !== undefined && open.uploadId !== covered?.uploadId) this.abandoned = open.uploadId;
    const reserved = open !== undefined && open.uploadId === covered?.uploadId ? open.reservedThrough : 0;
    const lastPart = this.parts.at(-1)?.partNumber ?? 0;
    this.reservedThrough = Math.max(reserved, lastPart);
    this.nextPartNumber = this.reservedThrough + 1;
  }

  get bytesWritten(): number {
    return this.committedBytes + this.buffered;
  }

  /** Whether the job wrote anything through the writer, in this segment or an earlier one. */
  get used(): boolean {
    return this.uploadId !== undefined || this.buffered > 0 || this.ended;
  }

  /** Abort the upload an earlier holder left without a checkpoint; a failure is left to the bucket's lifecycle rule. */
  async abortAbandoned(): Promise<string | undefined> {
    const abandoned = this.abandoned;
    this.abandoned = undefined;
    if (abandoned !== undefined) await this.options.uploads.abort(this.options.reportKey, abandoned);
    return abandoned;
  }

  async write(chunk: string | Uint8Array): Promise<void> {
    if (this.ended) throw new Error('report.write after report.end');
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    await this.exclusive(async () => {
      this.buffer.push(bytes);
      this.buffered += bytes.byteLength;
      if (this.buffered >= this.partBytes) await this.sendBuffer();
    });
  }

  async end(): Promise<StreamedReport> {
    await this.exclusive(async () => {
      if (this.ended) return;
      // The last part may be short (or empty, for a report with no bytes at all).
      if (this.buffered > 0 || this.parts.length === 0) await this.sendBuffer();
      this.ended = true;
    });
    return { streamed: true, bytes: this.committedBytes };
  }

  /**
   * The upload as a checkpoint taken now may record it: the buffer is sent first when it can be a part. Undefined
   * when the buffer is too short for a part (under 5 MiB): a checkpoint now would name bytes no part holds.
   */
  async boundary(): Promise<{ upload: UploadCheckpoint | undefined } | undefined> {
    return this.exclusive(async () => {
      if (this.buffered >= this.minPartBytes) await this.sendBuffer();
      if (this.buffered > 0) return undefined;
      if (this.uploadId === undefined) return { upload: undefined };
      return { upload: { uploadId: this.uploadId, parts: [...this.parts], bytes: this.committedBytes } };
    });
  }

  /**
   * The reservation a clean yield leaves for the next holder: up to the last part this holder sent, since all its
   * sends have been answered (nothing is in flight once the job stopped). Undefined when it sent none, a write is
   * still running, or the guard stopped the writer: then the recorded reservation stands. Without this every segment
   * would use up a block of 32 part numbers, and S3's 10,000 would end a run after about 300 segments.
   */
  settledReservation(): OpenUpload | undefined {
    // Stopped by the guard, a part may have been in flight: an aborted request can still land at S3 under its number.
    if (this.options.signal.aborted || this.busy || this.highestSent === undefined || this.uploadId === undefined)
      return undefined;
    return { uploadId: this.uploadId, reservedThrough: this.highestSent };
  }

  /** Commit the ended report write-once. */
  async commit(signal: AbortSignal): Promise<'created' | 'existed'> {
    if (!this.ended || this.uploadId === undefined) throw new Error('report.commit before report.end');
    return this.options.uploads.complete(this.options.reportKey, this.uploadId, this.parts, signal);
  }

  private async sendBuffer(): Promise<void> {
    const { uploads, reportKey, signal } = this.options;
    const uploadId = await this.openUpload();
    const partNumber = this.nextPartNumber;
    await this.reserve(partNumber);
    // The reservation's write takes no signal: the guard may have stopped the writer while it was on its way.
    signal.throwIfAborted();
    const body = Buffer.concat(this.buffer, this.buffered);
    const part = await uploads.uploadPart({ reportKey, uploadId, partNumber, body }, signal);
    this.parts.push(part);
    this.highestSent = partNumber;
    this.committedBytes += body.byteLength;
    this.nextPartNumber = partNumber + 1;
    this.buffer = [];
    this.buffered = 0;
  }

  private async openUpload(): Promise<string> {
    if (this.uploadId !== undefined) return this.uploadId;
    const { uploads, reportKey, contentType, metadata, signal } = this.options;
    this.uploadId = await uploads.create(reportKey, contentType, metadata, signal);
    // A fresh upload: its numbering starts at 1, and the row learns it before any part is sent.
    this.reservedThrough = 0;
    this.nextPartNumber = 1;
    return this.uploadId;
  }

  /** Record a reservation covering `partNumber` before the part is sent (one row write per block). */
  private async reserve(partNumber: number): Promise<void> {
    if (partNumber > MAX_PARTS) {
      throw new Error(`the report needs more than ${MAX_PARTS} parts; write larger parts (partBytes)`);
    }
    if (partNumber <= this.reservedThrough) return;
    const upload: OpenUpload = {
      uploadId: this.uploadId as string,
      reservedThrough: Math.min(MAX_PARTS, partNumber + PART_RESERVATION_BLOCK - 1),
    };
    await this.options.runs.recordUpload(this.options.lease, upload, this.options.now());
    this.reservedThrough = upload.reservedThrough;
  }

  /** One operation at a time, and none once the guard stopped the writer (its signal carries why). */
  private async exclusive<T>(operation: () => Promise<T>): Promise<T> {
    this.options.signal.throwIfAborted();
    if (this.busy) throw new Error('report writes overlap: await each report.write before the next');
    this.busy = true;
    try {
      return await operation();
    } finally {
      this.busy = false;
    }
  }
}
