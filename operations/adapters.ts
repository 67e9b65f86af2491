/**
 * The occurrence-table adapters of the operations entry point, typed by what an operator's tool uses of them.
 *
 * The classes are the ones the occurrences CLI builds (functions/aws/): OperatorOccurrenceReader and
 * OperatorOccurrenceStore extend the readers and stores the functions use, whose other methods (claim, extend,
 * complete, ...) are the workers' lease protocol and no operator's business. The values exported here are those
 * classes unchanged; their published types name only the operator's methods.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  type NewestFirstRange,
  OperatorOccurrenceReader as OccurrenceReaderClass,
} from '../functions/aws/occurrence-reader';
import { OperatorOccurrenceStore as OccurrenceStoreClass } from '../functions/aws/occurrence-store';
import type { Occurrence, OccurrenceKey, OccurrenceStatus } from '../functions/protocol/occurrence';
import type { CancellableStore, ReopenableStore } from '../functions/protocol/ports';

/** The occurrences table's reads an operator's own reports use: by status or by job, never a Scan. */
export interface OperatorOccurrenceReader {
  /**
   * Occurrences (full rows) with this status and `from <= scheduledTime < to`, oldest first, through the status
   * index. SUCCEEDED lists only the successes not yet announced: an announced one leaves the index (read a job's
   * successes with listJobNewestFirst).
   */
  listByStatus(status: OccurrenceStatus, from: string, to: string, signal?: AbortSignal): Promise<Occurrence[]>;
  /**
   * The keys of the status index's entries (not full rows) with this status and
   * `from <= scheduledTime < to`, oldest first: what a bulk selection counts before it reads any row.
   */
  listIndexed(status: OccurrenceStatus, from: string, to: string, signal?: AbortSignal): Promise<OccurrenceKey[]>;
  /** The full rows of these keys, in the order given; a key whose row is gone is left out. */
  readRows(keys: readonly OccurrenceKey[], signal?: AbortSignal): Promise<Occurrence[]>;
  /** One job's occurrences, newest first; with `statuses`, only those. */
  listJobNewestFirst(
    jobId: string,
    range: NewestFirstRange,
    statuses?: readonly OccurrenceStatus[],
  ): Promise<Occurrence[]>;
  /**
   * Occurrences of every job with this status (or these statuses), newest first, at most `range.limit`; SUCCEEDED
   * as in listByStatus.
   */
  listStatusNewestFirst(
    statuses: OccurrenceStatus | readonly OccurrenceStatus[],
    range: NewestFirstRange,
  ): Promise<Occurrence[]>;
}

/**
 * Reads the occurrences table `table` through `documents`: what connectJobOperations gives as `occurrences`.
 *
 * @param documents - a DynamoDB document client
 * @param table - the occurrences table's name (the stack output `OccurrenceTableName`)
 */
export const OperatorOccurrenceReader: new (
  documents: DynamoDBDocumentClient,
  table: string,
) => OperatorOccurrenceReader = OccurrenceReaderClass;

/** The occurrences table's writes an operator makes: read a row, reopen a FAILED one (retry), cancel one. */
export type OperatorOccurrenceStore = ReopenableStore & CancellableStore;

/**
 * Writes the occurrences table `table` through `documents` as a manual retry and a cancel do: the `store` of
 * `ops.retryDeps(job)`, and of cancelOccurrence's deps.
 *
 * @param documents - a DynamoDB document client
 * @param table - the occurrences table's name (the stack output `OccurrenceTableName`)
 */
export const OperatorOccurrenceStore: new (
  documents: DynamoDBDocumentClient,
  table: string,
) => OperatorOccurrenceStore = OccurrenceStoreClass;
