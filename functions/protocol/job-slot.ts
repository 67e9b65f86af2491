/**
 * The overlap policies and the pause after failures, as the worker applies them around an attempt it claimed
 * (docs/schedule-policies.md):
 *
 *   claimed ─▶ allowAll: one look at the job-state row (paused? SKIPPED) ─────────────────────────────▶ run
 *          └─▶ take the slot (fast path) ─refused─▶ decideStart (overlap-policy.ts) ─▶ write it (CAS on version)
 *                 ─▶ take (revoke the holder first if asked) ─▶ run · buffer ─▶ BUFFERED · skip ─▶ SKIPPED
 *   run ended SUCCEEDED or FAILED ─▶ release the slot (+ count failures) ─▶ wake the buffer's head
 *                                  ─▶ N failures in a row: pause the job and disable its schedule
 *
 * A start that ends SKIPPED or BUFFERED ran nothing: its write undoes the claim (fenced by the lease), and its
 * message is acknowledged.
 */
import { encodeEnvelope } from './envelope';
import { DependencyError, messageOf } from './errors';
import type { JobSettings } from './job-settings';
import type { JobState } from './job-state';
import { MetricName } from './metric-names';
import { isCommitting, iso, type Occurrence, type OccurrenceKey, REVOKED_LEASE_PREFIX } from './occurrence';
import { decideStart, effectivePolicyOf, holderToRead, type StartDecision } from './overlap-policy';
import type {
  Clock,
  JobSlotStore,
  Lease,
  Logger,
  Metrics,
  OccurrenceStore,
  ScheduleSwitch,
  SelfPause,
  SlotWriteResult,
  WholeJobPauses,
  WorkQueue,
} from './ports';
import { type SeriesKey, seriesKeyOf, seriesOf } from './schedule-key';
import { withTransientRetries } from './transient-retry';

/** How a write of the slot or the pause that got no answer (or its read-back) is retried: 3 tries, 200 ms then 400. */
const NO_ANSWER_RETRIES = { attempts: 3, firstDelayMs: 200 } as const;

export interface SlotDeps {
  readonly store: OccurrenceStore;
  readonly slots: JobSlotStore;
  /** The worker's own queue: a buffered occurrence is woken on it (every occurrence of a job is on its worker's). */
  readonly queue: WorkQueue;
  readonly clock: Clock;
  readonly metrics: Metrics;
  /** The job's schedule, disabled by the pause after failures; absent where no job of the worker has that setting. */
  readonly schedules?: ScheduleSwitch;
  /** Whether a job that takes schedules at run time is paused as a whole; default: read its state row every time. */
  readonly wholeJobPauses?: WholeJobPauses;
}

/**
 * `run`: the attempt may run (holding the slot, unless allowAll), but not before `notBefore` (epoch ms) when it
 * cancelled a running occurrence: that one's worker learns of it at its next heartbeat, and may work on until its
 * lease expires. Otherwise it was recorded as said.
 */
export interface Start {
  readonly outcome: 'run' | 'skipped' | 'buffered';
  readonly notBefore?: number;
}

/** Compare-and-swap rounds before the start is given up as contended (transient: the message comes back). */
export const MAX_DECISION_ROUNDS = 5;

/** Apply the policy to the occurrence this lease just claimed. */
export async function startUnderPolicy(
  deps: SlotDeps,
  settings: JobSettings,
  occurrence: Occurrence,
  lease: Lease,
  log: Logger,
): Promise<Start> {
  const policy = effectivePolicyOf(occurrence, settings.overlap);
  const { scheduledTime } = occurrence;
  // The slot, the buffer and the pause are the series' (one schedule's, for a job that takes them at run time).
  const series = seriesOf(occurrence);
  // A schedule of a job that takes them at run time is also paused when its whole job is.
  if (occurrence.scheduleKey !== undefined && (await wholeJobPaused(deps, occurrence.jobId))) {
    const skipped = await recordSkip(deps, lease, { action: 'skip', reason: 'paused' }, log);
    // As under a pause of its series (apply's skip): a BUFFERED occurrence woken now leaves the buffer and wakes the
    // next. Left at the head, its SKIPPED row would keep the rest of its key's buffer waiting for good.
    if (policy !== 'allowAll') await leaveBuffer(deps, lease.key, log);
    return { outcome: skipped };
  }
  if (policy === 'allowAll') {
    // No slot: one eventually consistent read, to skip a start of a paused job.
    const state = await deps.slots.read(series, false);
    if (state?.pausedAt === undefined) return { outcome: 'run' };
    return { outcome: await recordSkip(deps, lease, { action: 'skip', reason: 'paused' }, log) };
  }
  const fast = await deps.slots.tryTake(series, scheduledTime, lease.leaseId);
  if (fast.written) return { outcome: 'run' };
  let state = fast.state;
  // Kept across rounds: a cancelled holder may still be working even if a later round takes the slot without it.
  const waits: { notBefore?: number } = {};
  const leaseMs = settings.leaseSeconds * 1000;
  for (let round = 1; round <= MAX_DECISION_ROUNDS; round++) {
    // Our own take, whose response was lost and whose retry found it done.
    if (state?.slotTime === scheduledTime && state.slotLeaseId === lease.leaseId) return { outcome: 'run', ...waits };
    // A paused job's start is SKIPPED whoever holds the slot: no need to read the holder.
    const holderKey = state?.pausedAt === undefined ? holderToRead(state, scheduledTime) : undefined;
    const holder = holderKey === undefined ? undefined : await deps.store.get(holderKey);
    const decision = decideStart({ state, holder, scheduledTime, policy, now: deps.clock.now() });
    const applied = await apply(deps, decision, state, lease, log, { holder, leaseMs, waits });
    if (applied !== 'again') return { outcome: applied, ...(applied === 'run' ? waits : {}) };
    state = await deps.slots.read(series, true);
  }
  throw new DependencyError(
    'transient',
    'take the running slot',
    new Error(`the job state changed under ${MAX_DECISION_ROUNDS} decisions in a row`),
  );
}

interface DecisionContext {
  readonly holder?: Occurrence;
  readonly leaseMs: number;
  /** When the job may start at the earliest: kept across rounds (see Start). */
  readonly waits: { notBefore?: number };
}

/** Write a decision; 'again' when the row changed under it (decide afresh from the row as it is now). */
async function apply(
  deps: SlotDeps,
  decision: StartDecision,
  state: JobState | undefined,
  lease: Lease,
  log: Logger,
  context: DecisionContext,
): Promise<Start['outcome'] | 'again'> {
  switch (decision.action) {
    case 'skip': {
      const skipped = await recordSkip(deps, lease, decision, log);
      // A BUFFERED occurrence woken while the job is paused: it leaves the buffer, and the next one is woken (and
      // skipped in turn while the pause lasts). Left at the head, it would keep those behind it BUFFERED for good.
      if (decision.reason === 'paused' && state?.buffer?.includes(lease.key.scheduledTime))
        await leaveBuffer(deps, lease.key, log);
      return skipped;
    }
    case 'buffer':
      return recordBuffer(deps, decision, state, lease, log);
    case 'take': {
      const { holder } = context;
      if (decision.revoke !== undefined && holder !== undefined) {
        if (!(await revokeHolder(deps, decision.revoke, holder, lease, log, context))) return 'again';
      }
      // A holder cancelled before (by this start's earlier try, or another's) may work until its lease expires.
      if (holder?.status === 'CANCELLED' && holder.leaseExpiresAt !== undefined) {
        waitUntil(context, Date.parse(holder.leaseExpiresAt));
      }
      const slot = { slotTime: lease.key.scheduledTime, slotLeaseId: lease.leaseId };
      const written = await deps.slots.writeIfVersion(seriesOf(lease.key), state?.version, {
        slot,
        buffer: decision.buffer,
      });
      return written.written ? 'run' : 'again';
    }
  }
}

async function wholeJobPaused(deps: SlotDeps, jobId: string): Promise<boolean> {
  if (deps.wholeJobPauses !== undefined) return deps.wholeJobPauses.isPaused(jobId);
  return (await deps.slots.read(jobId, false))?.pausedAt !== undefined;
}

const waitUntil = (context: DecisionContext, until: number): void => {
  if (!Number.isNaN(until)) context.waits.notBefore = Math.max(context.waits.notBefore ?? 0, until);
};

async function recordBuffer(
  deps: SlotDeps,
  decision: Extract<StartDecision, { action: 'buffer' }>,
  state: JobState | undefined,
  lease: Lease,
  log: Logger,
): Promise<'buffered' | 'again'> {
  const { jobId } = lease.key;
  const series = seriesOf(lease.key);
  if (!sameList(decision.buffer, state?.buffer ?? [])) {
    const written = await deps.slots.writeIfVersion(series, state?.version, { buffer: decision.buffer });
    if (!written.written) return 'again';
  }
  await deps.store.bufferClaimed(lease, deps.clock.now());
  log.info('occurrence BUFFERED until the running slot is free', {
    slotTime: state?.slotTime,
    buffer: decision.buffer,
  });
  deps.metrics.add(MetricName.OccurrencesBuffered, 1, jobId);
  await wake(deps, lease.key, decision.wake, log);
  // The holder may have released the slot between the buffer's write and ours, and its wake found this occurrence
  // still RUNNING under our claim (a live lease elsewhere: dropped). Whoever takes the slot next wakes the head; if
  // nobody holds it now and we are the head, nobody would.
  const after = await deps.slots.read(series, true);
  if (after?.slotTime === undefined && after?.buffer?.[0] === lease.key.scheduledTime) {
    await wake(deps, lease.key, lease.key.scheduledTime, log);
  }
  return 'buffered';
}

/** Take the slot's holder's lease (docs/schedule-policies.md, "Revoking"); false when its row changed meanwhile. */
async function revokeHolder(
  deps: SlotDeps,
  mode: 'expired' | 'cancel',
  holder: Occurrence,
  lease: Lease,
  log: Logger,
  context: DecisionContext,
): Promise<boolean> {
  const { jobId, scheduledTime } = lease.key;
  const now = deps.clock.now();
  if (mode === 'cancel' && isCommitting(holder)) {
    // Past its commit point its report may be committed: it is left to finish (the revoke's condition refuses it
    // too), and this start waits for it as for a cancelled holder, until its lease expires.
    log.info('the running occurrence is committing its report; waiting for it instead of cancelling it', {
      holder: holder.scheduledTime,
      holderLeaseId: holder.leaseId,
    });
    waitUntil(context, Date.parse(holder.leaseExpiresAt ?? ''));
    return true;
  }
  const revocationId = `${REVOKED_LEASE_PREFIX}${scheduledTime}-${lease.leaseId}`;
  const revoked = await deps.store.revoke(
    { ...seriesKeyOf(seriesOf(lease.key)), scheduledTime: holder.scheduledTime },
    { mode, observed: holder, revocationId, by: scheduledTime },
    now,
  );
  if (!revoked.revoked) return false;
  const fields = { holder: holder.scheduledTime, holderLeaseId: holder.leaseId };
  if (mode === 'cancel') {
    log.warn('CANCELLED the running occurrence (overlap cancelOther)', fields);
    deps.metrics.add(MetricName.OccurrencesCancelled, 1, jobId);
    // Its worker stops at its next heartbeat at the latest, and never works past its lease: wait that out.
    if (holder.status === 'RUNNING')
      waitUntil(context, revoked.unknown ? now + context.leaseMs : Date.parse(revoked.leaseExpiresAt ?? ''));
    return true;
  }
  log.warn('revoked the expired lease of the slot holder', fields);
  // It stays RUNNING, and its worker, finding its lease gone, acknowledges its message: send it one, so that it is
  // claimed again (and meets the policy) rather than waiting for the reconciler.
  await wake(deps, lease.key, holder.scheduledTime, log);
  return true;
}

async function recordSkip(
  deps: SlotDeps,
  lease: Lease,
  decision: Extract<StartDecision, { action: 'skip' }>,
  log: Logger,
): Promise<'skipped'> {
  const yieldedTo = decision.reason === 'overlap' ? decision.yieldedTo : undefined;
  await deps.store.skipClaimed(lease, { reason: decision.reason, ...(yieldedTo && { yieldedTo }) }, deps.clock.now());
  log.info(
    decision.reason === 'paused' ? 'occurrence SKIPPED: the job is paused' : 'occurrence SKIPPED by its overlap policy',
    {
      skipReason: decision.reason,
      yieldedTo,
    },
  );
  deps.metrics.add(MetricName.OccurrencesSkipped, 1, lease.key.jobId);
  if (decision.reason === 'overlap') await wake(deps, lease.key, decision.wake, log);
  return 'skipped';
}

/**
 * After the run's terminal write (SUCCEEDED or FAILED): free the slot, counting the run's end where the job pauses
 * after failures, wake the buffer's head, and pause the job when the failures reached its limit. Never throws: the
 * outcome is recorded already, and a slot left held costs latency only (it is not live once the row is terminal).
 */
export async function endUnderPolicy(
  deps: SlotDeps,
  settings: JobSettings,
  occurrence: Occurrence,
  leaseId: string,
  ended: { readonly outcome: 'succeeded' | 'failed'; readonly lastError?: string },
  log: Logger,
): Promise<void> {
  const counted = settings.pauseAfterFailures === undefined ? undefined : ended.outcome;
  try {
    let state: JobState | undefined;
    if (effectivePolicyOf(occurrence, settings.overlap) === 'allowAll') {
      if (counted === undefined) return;
      state = await countWithoutSlot(deps, seriesOf(occurrence), counted, leaseId);
      if (state === undefined) return;
    } else {
      // Retried when unanswered: a count applied whose response was lost is otherwise a count of N never followed by
      // the pause. The retry is refused by our own release, which the store recognises (the row names our lease as
      // the one counted last); one not applied is applied by the retry, so the failure counts once either way.
      const released = await withTransientRetries(
        () => deps.slots.release(seriesOf(occurrence), leaseId, counted),
        NO_ANSWER_RETRIES,
      );
      state = released.state;
      // Refused: the slot was taken over (this run was cancelled, or its lease expired). Wake the head anyway when
      // nobody holds it: our own release whose response was lost looks the same, and a needless wake costs a claim.
      if (released.released || state?.slotTime === undefined) await wake(deps, occurrence, state?.buffer?.[0], log);
      if (!released.released) return;
    }
    if (counted === 'failed' && state !== undefined)
      await pauseOnFailures(deps, settings, occurrence, state, ended.lastError, log);
  } catch (error) {
    log.error('could not release the running slot; the next start takes it over', { error: messageOf(error) });
  }
}

/**
 * allowAll's count of a run end; `undefined` when it cannot be known to be ours. Unanswered, it is read back (retried
 * like the write): a row naming our lease as the one counted last shows it applied, and the pause is decided from it.
 * It is not sent again: another run's count between the two would make the retry count our failure twice. A count
 * that was not applied, or whose mark another count overwrote already (that count's worker decides the pause from a
 * row that includes ours), is left as it is.
 */
async function countWithoutSlot(
  deps: SlotDeps,
  series: string,
  outcome: 'failed' | 'succeeded',
  leaseId: string,
): Promise<JobState | undefined> {
  try {
    return await deps.slots.countFailures(series, outcome, leaseId);
  } catch (error) {
    if (!(error instanceof DependencyError && error.kind === 'transient')) throw error;
    const state = await readAfterNoAnswer(deps, series);
    if (state?.countedLeaseId === leaseId) return state;
    throw error;
  }
}

async function pauseOnFailures(
  deps: SlotDeps,
  settings: JobSettings,
  key: SeriesKey,
  counted: JobState,
  lastError: string | undefined,
  log: Logger,
): Promise<void> {
  const limit = settings.pauseAfterFailures;
  const pauseNote = `paused after ${limit} FAILED occurrences in a row; last: ${lastError ?? 'unknown'}`.slice(0, 1000);
  let state: JobState | undefined = counted;
  for (let round = 1; ; round++) {
    // Paused already (by another failure, or an operator), or the count was reset (a success, a resume): not ours.
    if (limit === undefined || state === undefined || (state.consecutiveFailures ?? 0) < limit) return;
    if (state.pausedAt !== undefined) return;
    if (round > MAX_DECISION_ROUNDS) {
      log.error('could not pause the job after failures: its state changed under every try', { pauseNote });
      return;
    }
    const pausedAt = deps.clock.now();
    const pause = { pausedAt, pausedBy: 'pauseAfterFailures', pauseCause: 'failures', pauseNote } as const;
    const written = await pauseQuietly(deps, seriesOf(key), state.version, pause);
    if (written.written) break;
    // Refused: the row changed (a start took the slot, a failure or an operator paused it), or our write was applied,
    // its response lost, and the SDK's retry refused by it: the refusal returns the row, which then shows our pause.
    // No answer: the same, unknown until the row is read. Either way, decide again from the row as it is.
    state = 'state' in written ? written.state : await readAfterNoAnswer(deps, seriesOf(key));
    if (state?.pausedAt === iso(pausedAt) && state.pausedBy === pause.pausedBy) break;
  }
  deps.metrics.add(MetricName.JobsPausedOnFailures, 1, settings.id);
  if (key.scheduleKey !== undefined) {
    // Its Scheduler schedule is the registry's projection, which the worker does not write: it keeps firing, and each
    // occurrence is SKIPPED as paused (one trigger invocation and one row per firing) until the schedule is resumed.
    log.error(
      'schedule PAUSED after failures in a row; resume it with resumeSchedule or `occurrences schedules resume`',
      {
        pauseNote,
      },
    );
    return;
  }
  log.error('job PAUSED after failures in a row; resume it with `occurrences resume`', { pauseNote });
  if (deps.schedules === undefined) {
    log.error('no schedule switch (SCHEDULE_GROUP unset): the schedule keeps firing and its occurrences are SKIPPED');
    return;
  }
  try {
    const schedules = deps.schedules;
    await withTransientRetries(() => schedules.setState(settings.id, 'DISABLED'), NO_ANSWER_RETRIES);
  } catch (error) {
    log.error('job paused, but its schedule could not be disabled: it keeps firing, and each occurrence is SKIPPED', {
      error: messageOf(error),
    });
  }
}

/**
 * The pause write: written, refused (with the row as it was), or `{ written: false }` without a row when it failed
 * transiently (it may have been applied: the caller reads).
 */
async function pauseQuietly(
  deps: SlotDeps,
  series: string,
  version: number,
  pause: SelfPause,
): Promise<SlotWriteResult | { written: false }> {
  try {
    return await deps.slots.pauseIfVersion(series, version, pause);
  } catch (error) {
    if (error instanceof DependencyError && error.kind === 'transient') return { written: false };
    throw error;
  }
}

/**
 * The row after a pause write (or allowAll's count) that got no answer, retried like the write: a pause applied but
 * unconfirmed must still be recognised as ours, or its schedule is never disabled and keeps firing; a count, or the
 * pause it calls for never follows.
 */
function readAfterNoAnswer(deps: SlotDeps, series: string): Promise<JobState | undefined> {
  return withTransientRetries(() => deps.slots.read(series, true), NO_ANSWER_RETRIES);
}

/**
 * Enqueue an occurrence of the job again (the buffer's head, or a revoked holder): its delivery meets the policy.
 * A lost send is the reconciler's.
 */
async function wake(deps: SlotDeps, series: SeriesKey, head: string | undefined, log: Logger): Promise<void> {
  if (head === undefined) return;
  const key: OccurrenceKey = { ...seriesKeyOf(seriesOf(series)), scheduledTime: head };
  try {
    await deps.queue.send(encodeEnvelope(key));
    log.info('enqueued an occurrence of the job again (woken)', { woken: head });
  } catch (error) {
    log.warn('could not enqueue an occurrence of the job again; the reconciler will', {
      woken: head,
      error: messageOf(error),
    });
  }
}

/**
 * An occurrence closed without a run (FAILED or SUCCEEDED by the unheld writes: its attempts or deadline were used up
 * between runs, maybe while BUFFERED) leaves the buffer, and the buffer's head is woken when the slot is free or names
 * this occurrence (its row is terminal now, so the slot is not live). Never throws: the reconciler wakes what this
 * leaves waiting.
 */
export async function afterUnheldEnd(
  deps: SlotDeps,
  settings: JobSettings,
  occurrence: Occurrence,
  log: Logger,
): Promise<void> {
  if (effectivePolicyOf(occurrence, settings.overlap) === 'allowAll') return;
  await leaveBuffer(deps, occurrence, log);
}

/**
 * The occurrence, closed without running (its row is terminal), leaves the buffer, and the buffer's head is woken
 * when the slot is free or names this occurrence. Never throws: the reconciler wakes what this leaves waiting.
 */
async function leaveBuffer(deps: SlotDeps, key: OccurrenceKey, log: Logger): Promise<void> {
  const { scheduledTime } = key;
  const series = seriesOf(key);
  try {
    for (let round = 1; round <= MAX_DECISION_ROUNDS; round++) {
      const state = await deps.slots.read(series, true);
      if (state === undefined) return;
      const buffer = (state.buffer ?? []).filter((t) => t !== scheduledTime);
      if (buffer.length !== (state.buffer ?? []).length) {
        const written = await deps.slots.writeIfVersion(series, state.version, { buffer });
        if (!written.written) continue;
      }
      if (state.slotTime === undefined || state.slotTime === scheduledTime) await wake(deps, key, buffer[0], log);
      return;
    }
  } catch (error) {
    log.warn('could not update the buffer after closing the occurrence', { error: messageOf(error) });
  }
}

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((t, i) => t === b[i]);
