/**
 * The capacity row and the waiting list of concurrency-ports.ts in memory, with the semantics the DynamoDB adapter
 * must have: a compare-and-swap on the row's version, an atomic per-key sequence, a waiting list read in fair order.
 * Used by the protocol's unit tests and the capacity world (sim/capacity-world.ts).
 */

import { occurrenceIdOf } from '../../functions/protocol/concurrency-cap';
import type {
  CapacityRow,
  CapacityStore,
  CapacityWrite,
  WaitingEntry,
} from '../../functions/protocol/concurrency-ports';

/** The list's order: (seq, scheduledTime, schedule key), as the adapter's sort key spells it. */
export const fairOrder = (a: WaitingEntry, b: WaitingEntry): number =>
  a.seq - b.seq ||
  a.key.scheduledTime.localeCompare(b.key.scheduledTime) ||
  (a.key.scheduleKey ?? '').localeCompare(b.key.scheduleKey ?? '');

export class MemoryCapacityStore implements CapacityStore {
  readonly rows = new Map<string, CapacityRow>();
  readonly waiting = new Map<string, Map<string, WaitingEntry>>();
  readonly lastSeq = new Map<string, number>();
  /** Requests per kind, for the cost figures. */
  readonly calls = { read: 0, write: 0, nextSeq: 0, addWaiting: 0, removeWaiting: 0, findWaiting: 0, firstWaiting: 0 };

  async read(jobId: string): Promise<CapacityRow | undefined> {
    this.calls.read++;
    return this.rows.get(jobId);
  }

  async writeIfVersion(jobId: string, version: number | undefined, write: CapacityWrite): Promise<boolean> {
    this.calls.write++;
    const row = this.rows.get(jobId);
    if (row?.version !== version) return false;
    this.rows.set(jobId, { jobId, holds: [...write.holds], servedSeq: write.servedSeq, version: (version ?? 0) + 1 });
    return true;
  }

  async nextSeq(jobId: string, fairnessKey: string, floor: number): Promise<number> {
    this.calls.nextSeq++;
    const at = `${jobId}\u0000${fairnessKey}`;
    const seq = Math.max((this.lastSeq.get(at) ?? 0) + 1, floor);
    this.lastSeq.set(at, seq);
    return seq;
  }

  async addWaiting(entry: WaitingEntry): Promise<void> {
    this.calls.addWaiting++;
    const list = this.listOf(entry.key.jobId);
    const id = occurrenceIdOf(entry.key);
    if (!list.has(id)) list.set(id, entry);
  }

  async removeWaiting(jobId: string, occurrence: string): Promise<void> {
    this.calls.removeWaiting++;
    this.listOf(jobId).delete(occurrence);
  }

  async findWaiting(jobId: string, occurrence: string): Promise<WaitingEntry | undefined> {
    this.calls.findWaiting++;
    return this.listOf(jobId).get(occurrence);
  }

  async firstWaiting(jobId: string, limit: number): Promise<readonly WaitingEntry[]> {
    this.calls.firstWaiting++;
    return [...this.listOf(jobId).values()].sort(fairOrder).slice(0, Math.max(0, limit));
  }

  private listOf(jobId: string): Map<string, WaitingEntry> {
    let list = this.waiting.get(jobId);
    if (list === undefined) {
      list = new Map();
      this.waiting.set(jobId, list);
    }
    return list;
  }
}
