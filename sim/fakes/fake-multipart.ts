/**
 * S3 multipart uploads for FakeAws, as S3 (and moto) behave: parts of at least 5 MiB but the last
 * (EntityTooSmall), each part's ETag checked at the commit (InvalidPart), CompleteMultipartUpload with
 * If-None-Match: * answering 412 when the key holds an object, a repeated complete of a completed upload answering
 * success, and an aborted upload gone (NoSuchUpload). A committed report lands in `aws.objects` like a put one.
 */
import { createHash } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  type AbortMultipartUploadCommandInput,
  CompleteMultipartUploadCommand,
  type CompleteMultipartUploadCommandInput,
  CreateMultipartUploadCommand,
  type CreateMultipartUploadCommandInput,
  S3ServiceException,
  UploadPartCommand,
  type UploadPartCommandInput,
} from '@aws-sdk/client-s3';
import type { FakeAws } from './fake-aws';

const S3_MIN_PART_BYTES = 5 * 1024 * 1024;
/** The simulation's parts: 1 KiB at the least, 2 KiB aimed for, so that a run's report costs kilobytes, not megabytes. */
export const SIM_PART_BYTES = { min: 1024, target: 2048 } as const;

interface FakeUpload {
  readonly key: string;
  readonly contentType?: string;
  readonly metadata?: Record<string, string>;
  readonly parts: Map<number, { body: Buffer; etag: string }>;
  state: 'open' | 'completed' | 'aborted';
  /** The part numbers the commit listed, in order. */
  committedParts?: number[];
}

type Operation = 'CreateMultipartUpload' | 'UploadPart' | 'CompleteMultipartUpload' | 'AbortMultipartUpload';

export class FakeMultipart {
  readonly uploads = new Map<string, FakeUpload>();
  private readonly faults = new Map<Operation, (() => Error)[]>();
  /** Awaited before an UploadPart applies: a test holds a part in flight here. */
  beforePart?: (input: UploadPartCommandInput) => Promise<void>;
  /** Runs after a complete applied and before it answers: throw to model "committed, then the worker died". */
  afterComplete?: () => void;
  private nextUploadId = 1;

  /** `minPartBytes`: S3's 5 MiB unless told (the simulation takes smaller parts). */
  constructor(
    private readonly aws: FakeAws,
    private readonly minPartBytes = S3_MIN_PART_BYTES,
  ) {
    aws.s3
      .on(CreateMultipartUploadCommand)
      .callsFake((input) => this.run('CreateMultipartUpload', () => this.create(input)));
    aws.s3.on(UploadPartCommand).callsFake(async (input) => {
      await this.beforePart?.(input);
      return this.run('UploadPart', () => this.uploadPart(input));
    });
    aws.s3
      .on(CompleteMultipartUploadCommand)
      .callsFake((input) => this.run('CompleteMultipartUpload', () => this.complete(input)));
    aws.s3
      .on(AbortMultipartUploadCommand)
      .callsFake((input) => this.run('AbortMultipartUpload', () => this.abort(input)));
  }

  failNext(operation: Operation, fault: () => Error): void {
    this.faults.set(operation, [...(this.faults.get(operation) ?? []), fault]);
  }

  /** Uploads neither completed nor aborted: what a lifecycle rule would have to clean up. */
  openUploads(): string[] {
    return [...this.uploads].filter(([, u]) => u.state === 'open').map(([id]) => id);
  }

  reset(): void {
    this.uploads.clear();
    this.nextUploadId = 1;
    this.faults.clear();
    this.beforePart = undefined;
    this.afterComplete = undefined;
  }

  private run<T>(operation: Operation, apply: () => T): T {
    this.aws.calls.push(operation);
    const fault = this.faults.get(operation)?.shift();
    if (fault) throw fault();
    return apply();
  }

  private create(input: CreateMultipartUploadCommandInput): unknown {
    const id = `upload-${this.nextUploadId++}`;
    this.uploads.set(id, {
      key: String(input.Key),
      contentType: input.ContentType,
      metadata: input.Metadata,
      parts: new Map(),
      state: 'open',
    });
    return { UploadId: id };
  }

  private uploadPart(input: UploadPartCommandInput): unknown {
    const upload = this.openUpload(input.UploadId);
    const body = Buffer.from(input.Body as Uint8Array);
    const etag = createHash('md5').update(body).digest('hex');
    upload.parts.set(Number(input.PartNumber), { body, etag });
    return { ETag: `"${etag}"` };
  }

  private complete(input: CompleteMultipartUploadCommandInput): unknown {
    const upload = this.uploads.get(String(input.UploadId));
    if (upload?.state === 'completed') return { Key: upload.key };
    const open = this.openUpload(input.UploadId);
    if (input.IfNoneMatch === '*' && this.aws.objects.has(open.key)) throw s3Error('PreconditionFailed', 412);
    const listed = input.MultipartUpload?.Parts ?? [];
    const bodies = listed.map((p, i) => {
      const part = open.parts.get(Number(p.PartNumber));
      if (part === undefined || `"${part.etag}"` !== p.ETag) throw s3Error('InvalidPart', 400);
      if (i > 0 && Number(p.PartNumber) <= Number(listed[i - 1].PartNumber)) throw s3Error('InvalidPartOrder', 400);
      if (i < listed.length - 1 && part.body.byteLength < this.minPartBytes) throw s3Error('EntityTooSmall', 400);
      return part.body;
    });
    open.state = 'completed';
    open.committedParts = listed.map((p) => Number(p.PartNumber));
    this.aws.objects.set(open.key, {
      body: Buffer.concat(bodies).toString('utf8'),
      contentType: open.contentType,
      metadata: open.metadata,
    });
    this.afterComplete?.();
    return { Key: open.key };
  }

  private abort(input: AbortMultipartUploadCommandInput): unknown {
    const upload = this.openUpload(input.UploadId);
    upload.state = 'aborted';
    return {};
  }

  private openUpload(uploadId: string | undefined): FakeUpload {
    const upload = this.uploads.get(String(uploadId));
    if (upload === undefined || upload.state !== 'open') throw s3Error('NoSuchUpload', 404);
    return upload;
  }
}

const attached = new WeakMap<FakeAws, FakeMultipart>();

/** The one FakeMultipart of a FakeAws (the simulation reuses one FakeAws for all its runs), reset for a new run. */
export function multipartOf(aws: FakeAws, minPartBytes?: number): FakeMultipart {
  let fake = attached.get(aws);
  if (fake === undefined) {
    fake = new FakeMultipart(aws, minPartBytes);
    attached.set(aws, fake);
  }
  fake.reset();
  return fake;
}

function s3Error(name: string, status: number): Error {
  return new S3ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: status }, message: name });
}
