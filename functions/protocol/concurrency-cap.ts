/**
 * A job's concurrency cap (`maxConcurrency`) and its fairness across keys (docs/concurrency.md):
 *
 *   claimed ─▶ admit: the job's capacity row has a free unit and no fairer occurrence waits for it
 *                ─yes─▶ take it (CAS on the row's version) ─▶ the overlap policy, then run
 *                └─no──▶ join the waiting list at (its key's next sequence, scheduled time) ─▶ row WAITING, ack
 *   attempt ended (any way but a crash) ─▶ release: drop its hold ─▶ wake the first waiting, one per free unit
 *   crash ─▶ its hold expires with the invocation that took it (no release needed); the reconciler wakes what waits
 *
 * Fair order: each fairness key (the schedule key by default, or a tenant id read from the input) has its own line,
 * numbered 1, 2, 3… from the list's "virtual time" (the sequence last started), and the list is read in order of
 * (sequence, scheduled time). So keys take turns: a tenant with 10,000 waiting occurrences holds numbers up to
 * 10,000 ahead, and a tenant whose one occurrence arrives now gets the number being served, not the 10,001st place.
 *
 * A hold expires at the end of the invocation that took it (plus the tolerated clock skew), not at its lease: a Lambda
 * cannot run past its timeout, so no heartbeat has to extend it, and a dead worker's unit frees within one function
 * timeout. An attempt that ends without a crash (SUCCEEDED, FAILED, a retry scheduled, a lease lost, a segment
 * yielded, SKIPPED or BUFFERED by the overlap policy) releases at once.
 */

import type { CapacityHold, CapacityRow, CapacityStore, WaitingEntry, WaitingOccurrences } from './concurrency-ports';
import { encodeEnvelope } from './envelope';
import { DependencyError, messageOf } from './errors';
import type { OccurrenceKey } from './occurrence';
import type { Clock, Logger, WorkQueue } from './ports';

export interface CapacityDeps {
  readonly capacity: CapacityStore;
  readonly waiting: WaitingOccurrences;
  /** The job's worker queue: a woken occurrence is sent on it, and meets the cap again when it is claimed. */
  readonly queue: WorkQueue;
  readonly clock: Clock;
}

/** What of a job's settings the cap reads. */
export interface CapSettings {
  readonly id: string;
  /** Occurrences of the job running at once, across its keys and its fixed schedule; absent: no cap. */
  readonly maxConcurrency?: number;
  /** A top-level field of the schedule's input that names the tenant; absent: the schedule key. */
  readonly fairnessKey?: string;
}

/** An occurrence as the cap sees it: its key, and the input its fairness key may be read from. */
export interface CappedOccurrence extends OccurrenceKey {
  readonly input?: unknown;
}

/** Compare-and-swap rounds on the capacity row before the start is given up as contended (transient). */
export const MAX_CAPACITY_ROUNDS = 8;

/** The fixed schedule's own fairness key (its occurrences have no schedule key). */
export const FIXED_SCHEDULE_FAIRNESS_KEY = '(fixed schedule)';

/** One occurrence's id in the capacity row and the waiting list: unique within its job. */
export const occurrenceIdOf = (key: OccurrenceKey): string => `${key.scheduleKey ?? ''}@${key.scheduledTime}`;

/**
 * The line an occurrence waits in: the input's `fairnessKey` field when the job names one and the input has it as a
 * string or a number, else its schedule key, else the fixed schedule's.
 */
export function fairnessKeyOf(settings: CapSettings, occurrence: CappedOccurrence): string {
  const { input } = occurrence;
  if (settings.fairnessKey !== undefined && typeof input === 'object' && input !== null && !Array.isArray(input)) {
    const value = (input as Record<string, unknown>)[settings.fairnessKey];
    if (typeof value === 'string' || typeof value === 'number') return `input:${value}`;
  }
  return occurrence.scheduleKey ?? FIXED_SCHEDULE_FAIRNESS_KEY;
}

/** The holds that still count at `now`. */
export const liveHolds = (row: CapacityRow | undefined, now: number): CapacityHold[] =>
  (row?.holds ?? []).filter((h) => h.expiresAt > now);

/**
 * Take a unit of the job's capacity for the claimed occurrence, or record it waiting. `holdUntil`: when the hold
 * expires by itself (the end of this invocation plus the skew bound). 'run' without a cap.
 */
export async function admit(
  deps: CapacityDeps,
  settings: CapSettings,
  occurrence: CappedOccurrence,
  leaseId: string,
  holdUntil: number,
  log: Logger,
): Promise<'run' | 'waiting'> {
  const cap = settings.maxConcurrency;
  if (cap === undefined) return 'run';
  const { jobId } = occurrence;
  const id = occurrenceIdOf(occurrence);
  for (let round = 1; round <= MAX_CAPACITY_ROUNDS; round++) {
    const now = deps.clock.now();
    const row = await deps.capacity.read(jobId);
    const live = liveHolds(row, now);
    const others = live.filter((h) => h.occurrence !== id);
    const hold: CapacityHold = { occurrence: id, leaseId, expiresAt: holdUntil };
    // Our own hold (an earlier attempt's, or this take whose answer was lost): renewed, never counted against us.
    const free = cap - others.length;
    let mine: WaitingEntry | undefined;
    if (others.length === live.length) {
      if (free <= 0) return wait(deps, settings, occurrence, leaseId, row, log);
      const ahead = await deps.capacity.firstWaiting(jobId, free);
      mine = ahead.find((e) => occurrenceIdOf(e.key) === id);
      // Fairer occurrences wait for every free unit: join them (and wake them: nobody else may be about to).
      if (mine === undefined && ahead.length >= free) return wait(deps, settings, occurrence, leaseId, row, log);
    }
    const servedSeq = Math.max(row?.servedSeq ?? 0, mine?.seq ?? 0);
    if (await deps.capacity.writeIfVersion(jobId, row?.version, { holds: [...others, hold], servedSeq })) {
      if (mine !== undefined) await deps.capacity.removeWaiting(jobId, id);
      log.debug?.('took a unit of the job concurrency', { running: others.length + 1, maxConcurrency: cap });
      return 'run';
    }
  }
  throw new DependencyError(
    'transient',
    'take a unit of the job concurrency',
    new Error(`the capacity row changed under ${MAX_CAPACITY_ROUNDS} tries in a row`),
  );
}

/** Over the cap: join the waiting list (once: a woken occurrence keeps its place), record the row, ack. */
async function wait(
  deps: CapacityDeps,
  settings: CapSettings,
  occurrence: CappedOccurrence,
  leaseId: string,
  row: CapacityRow | undefined,
  log: Logger,
): Promise<'waiting'> {
  const { jobId } = occurrence;
  const id = occurrenceIdOf(occurrence);
  const fairnessKey = fairnessKeyOf(settings, occurrence);
  const now = deps.clock.now();
  let entry = await deps.capacity.findWaiting(jobId, id);
  if (entry === undefined) {
    const seq = await deps.capacity.nextSeq(jobId, fairnessKey, row?.servedSeq ?? 0);
    entry = { key: keyOf(occurrence), fairnessKey, seq, since: now };
    await deps.capacity.addWaiting(entry);
  }
  await deps.waiting.recordWaiting(keyOf(occurrence), leaseId, fairnessKey, now);
  log.info('occurrence WAITING for a unit of the job concurrency', {
    maxConcurrency: settings.maxConcurrency,
    fairnessKey,
    seq: entry.seq,
  });
  // A unit freed between our read and our entry was released by someone who did not see us: wake for it now.
  await wakeWaiting(deps, settings, log);
  return 'waiting';
}

/**
 * The attempt of `leaseId` ended (any way but a crash): drop its hold, then wake the first waiting occurrences, one
 * per free unit. Never throws: a hold left behind expires by itself, and the reconciler wakes what waits.
 */
export async function release(
  deps: CapacityDeps,
  settings: CapSettings,
  occurrence: OccurrenceKey,
  leaseId: string,
  log: Logger,
): Promise<void> {
  if (settings.maxConcurrency === undefined) return;
  const id = occurrenceIdOf(occurrence);
  try {
    for (let round = 1; round <= MAX_CAPACITY_ROUNDS; round++) {
      const row = await deps.capacity.read(occurrence.jobId);
      if (row === undefined || !row.holds.some((h) => h.occurrence === id && h.leaseId === leaseId)) break;
      // Expired holds go with it: the row stays as small as what runs.
      const holds = liveHolds(row, deps.clock.now()).filter((h) => h.occurrence !== id);
      if (await deps.capacity.writeIfVersion(occurrence.jobId, row.version, { holds, servedSeq: row.servedSeq })) break;
    }
    await wakeWaiting(deps, settings, log);
  } catch (error) {
    log.warn('could not release the unit of job concurrency; it frees when its hold expires', {
      error: messageOf(error),
    });
  }
}

/**
 * Send the first waiting occurrences, one per free unit (each meets the cap again when claimed; a duplicate wake costs
 * a claim). Returns how many were sent.
 */
export async function wakeWaiting(deps: CapacityDeps, settings: CapSettings, log: Logger): Promise<number> {
  const cap = settings.maxConcurrency;
  if (cap === undefined) return 0;
  const row = await deps.capacity.read(settings.id);
  const free = cap - liveHolds(row, deps.clock.now()).length;
  if (free <= 0) return 0;
  const heads = await deps.capacity.firstWaiting(settings.id, free);
  let sent = 0;
  for (const head of heads) if (await send(deps, head, log)) sent++;
  return sent;
}

/**
 * The reconciler's repair of one capped job: waiting occurrences whose row is final (their deadline passed while they
 * waited, an operator cancelled them) leave the list, and the first ones that can start are woken, one per free
 * unit: a wake-up lost with a crashed worker is repaired within one reconciler run of the unit freeing (its hold
 * expiring at the latest). Returns what it woke and dropped.
 */
export async function repairCapacity(
  deps: CapacityDeps,
  settings: CapSettings,
  log: Logger,
): Promise<{ readonly woken: number; readonly dropped: number }> {
  const cap = settings.maxConcurrency;
  if (cap === undefined) return { woken: 0, dropped: 0 };
  let dropped = 0;
  // Bounded: each round drops at least one final head or ends.
  for (let round = 1; round <= MAX_CAPACITY_ROUNDS; round++) {
    const row = await deps.capacity.read(settings.id);
    const free = cap - liveHolds(row, deps.clock.now()).length;
    if (free <= 0) return { woken: 0, dropped };
    const heads = await deps.capacity.firstWaiting(settings.id, free);
    const final: WaitingEntry[] = [];
    for (const head of heads) if (await deps.waiting.isFinal(head.key)) final.push(head);
    for (const head of final) await deps.capacity.removeWaiting(settings.id, occurrenceIdOf(head.key));
    dropped += final.length;
    if (final.length === 0 || heads.length < free) {
      let woken = 0;
      for (const head of heads) if (!final.includes(head) && (await send(deps, head, log))) woken++;
      return { woken, dropped };
    }
  }
  return { woken: await wakeWaiting(deps, settings, log), dropped };
}

/**
 * An occurrence that will never start (its row went final while it waited) leaves the list, and what it held up is
 * woken. Never throws: the reconciler drops it otherwise.
 */
export async function leaveWaiting(
  deps: CapacityDeps,
  settings: CapSettings,
  key: OccurrenceKey,
  log: Logger,
): Promise<void> {
  if (settings.maxConcurrency === undefined) return;
  try {
    await deps.capacity.removeWaiting(key.jobId, occurrenceIdOf(key));
    await wakeWaiting(deps, settings, log);
  } catch (error) {
    log.warn('could not take the occurrence off the waiting list; the reconciler will', { error: messageOf(error) });
  }
}

async function send(deps: CapacityDeps, entry: WaitingEntry, log: Logger): Promise<boolean> {
  try {
    await deps.queue.send(encodeEnvelope(entry.key));
    log.info('woke an occurrence waiting for job concurrency', {
      woken: entry.key.scheduledTime,
      fairnessKey: entry.fairnessKey,
    });
    return true;
  } catch (error) {
    log.warn('could not wake a waiting occurrence; the reconciler will', { error: messageOf(error) });
    return false;
  }
}

const keyOf = (o: OccurrenceKey): OccurrenceKey => ({
  jobId: o.jobId,
  ...(o.scheduleKey === undefined ? {} : { scheduleKey: o.scheduleKey }),
  scheduledTime: o.scheduledTime,
});
