/**
 * What a resumable run keeps in its occurrence row between segments, and the rules for its size.
 *
 * The row holds the job's last checkpoint (its own JSON state plus the multipart upload of its report as far as the
 * state covers it), the upload in progress with the part numbers its holder reserved, the progress the job last
 * reported, and the run's segment count. Everything here is plain data; the store writes it with fenced updates.
 */
import { CheckpointRejectedError } from './errors';
import type { Occurrence } from './occurrence';

/** The largest job state a checkpoint takes, as UTF-8 JSON (the row's 400 KB item limit keeps room for the rest). */
export const CHECKPOINT_STATE_MAX_BYTES = 64 * 1024;
/** The longest progress note shown in the row. */
export const PROGRESS_NOTE_MAX_CHARS = 200;

/** One uploaded part of the report: its number and ETag (what CompleteMultipartUpload needs, nothing more). */
export interface UploadedPart {
  readonly partNumber: number;
  readonly etag: string;
}

/** The report's multipart upload as a checkpoint covers it. */
export interface UploadCheckpoint {
  readonly uploadId: string;
  /** The parts the state covers, in order; the report is these parts and what the job writes after the state. */
  readonly parts: readonly UploadedPart[];
  /** Bytes in those parts. */
  readonly bytes: number;
}

/** The upload a holder has opened, recorded before any part of it is sent so that a next holder can find it. */
export interface OpenUpload {
  readonly uploadId: string;
  /**
   * The highest part number a holder may have sent. A holder records a higher one before it uses it, so a next
   * holder starts above it and a stale holder's late part can never replace one the report is made of.
   */
  readonly reservedThrough: number;
}

export interface RunCheckpoint {
  /** The job's state as JSON text (at most CHECKPOINT_STATE_MAX_BYTES). */
  readonly state: string;
  readonly upload?: UploadCheckpoint;
  readonly at: string;
}

export interface RunProgress {
  readonly done: number;
  readonly total?: number;
  readonly note?: string;
  readonly at: string;
}

/** The attributes a resumable run adds to its occurrence row. */
export interface RunFields {
  /** Segments ended by a yield so far: the run's invocations less one. Absent before the first continuation. */
  readonly segment?: number;
  /** When the run's first claim started it: `maxRunSeconds` counts from here. */
  readonly runStartedAt?: string;
  /** When the last segment yielded. */
  readonly continuedAt?: string;
  readonly checkpoint?: RunCheckpoint;
  readonly openUpload?: OpenUpload;
  readonly progress?: RunProgress;
}

export type ResumableOccurrence = Occurrence & RunFields;

/**
 * The state as the checkpoint stores it: JSON text of at most CHECKPOINT_STATE_MAX_BYTES. Throws
 * CheckpointRejectedError naming the problem otherwise (a job's bug: the attempt fails, the row keeps the last good one).
 */
export function encodeCheckpointState(state: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(state);
  } catch (error) {
    throw new CheckpointRejectedError('checkpoint state', `not serialisable as JSON (${(error as Error).message})`);
  }
  if (text === undefined) throw new CheckpointRejectedError('checkpoint state', 'must be a JSON value, got undefined');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > CHECKPOINT_STATE_MAX_BYTES) {
    throw new CheckpointRejectedError(
      'checkpoint state',
      `${bytes} bytes of JSON, more than the ${CHECKPOINT_STATE_MAX_BYTES} a row keeps`,
    );
  }
  return text;
}

/** The job's state from the last checkpoint, parsed; undefined when the run has none yet. */
export function resumeStateOf(row: RunFields): unknown {
  return row.checkpoint === undefined ? undefined : JSON.parse(row.checkpoint.state);
}

/** Progress as a job reports it, checked: whole or fractional numbers, done at least 0, total at least done. */
export function checkedProgress(input: { done: number; total?: number; note?: string }, at: string): RunProgress {
  const { done, total, note } = input;
  if (!Number.isFinite(done) || done < 0) {
    throw new CheckpointRejectedError('progress', `done must be a finite number of at least 0, got ${String(done)}`);
  }
  if (total !== undefined && (!Number.isFinite(total) || total < done)) {
    throw new CheckpointRejectedError(
      'progress',
      `total must be a finite number of at least done (${done}), got ${String(total)}`,
    );
  }
  return {
    done,
    ...(total === undefined ? {} : { total }),
    ...(note === undefined ? {} : { note: String(note).slice(0, PROGRESS_NOTE_MAX_CHARS) }),
    at,
  };
}

/**
 * The fencing token of a claim: it grows with every claim of the occurrence. Every claim adds one to `attempt`; a
 * continuation takes one off again (a segment is not an attempt) and adds one to `segment`; an operator's reopen
 * moves `attempt` into `previousAttempts`. So their sum is the number of claims so far.
 */
export interface Fence {
  /** Claims of this occurrence so far, this one included. */
  readonly sequence: number;
  /** The lease of this claim. */
  readonly leaseId: string;
  /** `sequence` zero-padded to 10 digits, a colon, the lease id: sorts as the claims happened. */
  readonly token: string;
}

export function fenceOf(row: ResumableOccurrence & { previousAttempts?: number }, leaseId: string): Fence {
  const sequence = (row.previousAttempts ?? 0) + row.attempt + (row.segment ?? 0);
  return { sequence, leaseId, token: `${String(sequence).padStart(10, '0')}:${leaseId}` };
}
