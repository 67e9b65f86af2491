/**
 * The ports of a job's concurrency cap (`maxConcurrency`, concurrency-cap.ts): one capacity row per capped job, and a
 * waiting list per job in fair order. Plain data, no SDK: the DynamoDB adapter keeps both in the occurrence table (the
 * row under the job's own partition, the list as items whose sort key is the fair order), the simulation and the
 * tests keep them in memory.
 */
import type { OccurrenceKey } from './occurrence';

/** One running occurrence's hold on a unit of its job's capacity. */
export interface CapacityHold {
  /** The occurrence that holds it (occurrenceIdOf): one hold per occurrence, whatever its attempt. */
  readonly occurrence: string;
  /** The lease of the attempt that took it: only that attempt's release removes it. */
  readonly leaseId: string;
  /**
   * Epoch ms after which the hold counts as free: the end of the invocation that took it (a Lambda cannot run past
   * its timeout), plus the clock skew the protocol tolerates. A dead worker's unit frees by then without a release.
   */
  readonly expiresAt: number;
}

/** The capacity row of one capped job. */
export interface CapacityRow {
  readonly jobId: string;
  /** The holds, expired ones included until a write prunes them. */
  readonly holds: readonly CapacityHold[];
  /**
   * The fair sequence of the last waiting occurrence that started: the list's "virtual time". A key that starts to
   * wait gets a sequence no lower, so that a key that waited for nothing cannot jump ahead of the others' backlog.
   */
  readonly servedSeq: number;
  /** Compare-and-swap token; every write increments it. */
  readonly version: number;
}

/** What a write of the capacity row sets. */
export interface CapacityWrite {
  readonly holds: readonly CapacityHold[];
  readonly servedSeq: number;
}

/** One occurrence waiting for a unit of its job's capacity. */
export interface WaitingEntry {
  readonly key: OccurrenceKey;
  /** The fairness key it was counted under (fairnessKeyOf). */
  readonly fairnessKey: string;
  /** Its place in its fairness key's own line: the list is ordered by (seq, scheduledTime, schedule key). */
  readonly seq: number;
  /** Epoch ms when it started to wait. */
  readonly since: number;
}

export interface CapacityStore {
  /** The job's capacity row, read consistently; undefined before its first take. */
  read(jobId: string): Promise<CapacityRow | undefined>;
  /** A compare-and-swap on `version` (undefined: the row must not exist yet); false when the row changed. */
  writeIfVersion(jobId: string, version: number | undefined, write: CapacityWrite): Promise<boolean>;
  /**
   * The next sequence number of a fairness key's line: max(its last + 1, floor), recorded atomically (two callers
   * never get the same number for one key).
   */
  nextSeq(jobId: string, fairnessKey: string, floor: number): Promise<number>;
  /** Add an occurrence to the waiting list; adding one already there keeps its first entry (its place). */
  addWaiting(entry: WaitingEntry): Promise<void>;
  /** Take an occurrence off the waiting list; absent is fine. */
  removeWaiting(jobId: string, occurrence: string): Promise<void>;
  /** The occurrence's entry, if it waits. */
  findWaiting(jobId: string, occurrence: string): Promise<WaitingEntry | undefined>;
  /** The first `limit` entries in fair order: (seq, scheduledTime, schedule key). */
  firstWaiting(jobId: string, limit: number): Promise<readonly WaitingEntry[]>;
}

/** How a waiting occurrence's row says so, and whether a woken head is still worth waiting for. */
export interface WaitingOccurrences {
  /** Record the claimed occurrence as waiting for capacity, undoing the claim (fenced by its lease). */
  recordWaiting(key: OccurrenceKey, leaseId: string, fairnessKey: string, now: number): Promise<void>;
  /** Whether the occurrence's row is final (it will never start): its entry is then dropped from the list. */
  isFinal(key: OccurrenceKey): Promise<boolean>;
}

/** What a worker (or the reconciler) needs for its capped jobs. */
export interface CapacityPorts {
  readonly store: CapacityStore;
  readonly waiting: WaitingOccurrences;
}
