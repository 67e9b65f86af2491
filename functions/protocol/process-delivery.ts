/**
 * What the worker does with one queue message: claim the occurrence, run its job under the lease, commit the
 * report write-once, and record the outcome. Every write after the claim is fenced by the lease id.
 *
 *   claim ─▶ overlap policy: take the job's running slot, or SKIPPED / BUFFERED (job-slot.ts; not for allowAll)
 *         ─▶ report already committed? ─yes──────────────────────────────────────────┐
 *              └─no─▶ job(signal) ∥ heartbeat ─▶ commit point ─▶ commit (If-None-Match) ─▶ complete (SUCCEEDED)
 *            (asked only when one may exist: not on the first claim of a fresh occurrence, mayHaveCommittedReport)
 *   job or commit fails ─▶ release (RETRY_WAIT, nextAttemptAt) + hide the message until then, or FAILED
 *   SUCCEEDED or FAILED ─▶ release the slot, wake the first BUFFERED one; pause after N failures in a row
 *   maxConcurrency: a unit of the job's capacity taken before the policy, or WAITING; freed when the attempt ends
 *   (capacity-step.ts)
 *   resumable job out of invocation time ─▶ yield, checkpoint ─▶ continue in a fresh invocation (resumable-delivery.ts)
 *
 * The "report ready" notification is not sent here: it follows the row's transition to SUCCEEDED
 * (announce-report.ts), so a worker that dies anywhere after the commit can neither lose it nor send it twice.
 */

import { admitClaimed, leftWaiting, releaseClaimed } from './capacity-step';
import { whyRefused } from './claimability';
import type { Delivery, DeliveryOutcome, DeliveryResult } from './delivery';
import { decodeEnvelope } from './envelope';
import { InvalidInputError, LeaseLostError, messageOf, messageWithCauses } from './errors';
import type { JobSettings } from './job-settings';
import { afterUnheldEnd, endUnderPolicy, type SlotDeps, type Start, startUnderPolicy } from './job-slot';
import { runUnderLease } from './lease-guard';
import type { ManualRetryFields } from './manual-retry';
import { MetricName } from './metric-names';
import { isOperatorCancel, iso, type Occurrence, type OccurrenceKey, occurrenceKeyOf, reportKeyOf } from './occurrence';
import {
  type Clock,
  type JobDefinition,
  type Lease,
  type Logger,
  type Metrics,
  noMetrics,
  type RegisteredJob,
  type ReportBody,
  type WorkerDeps,
} from './ports';
import { continueSegment, isLateYield, type OpenSegment, openSegment, runResumableSegment } from './resumable-delivery';
import { isResumedRun, planSegment, runTimeUsedUp, type SegmentPlan } from './resumable-run';
import { decideRetry } from './retry-policy';
import { delay, withTransientRetries } from './transient-retry';

/**
 * The worker's jobs: those of the settings that have an implementation. The others are logged once, at start; their
 * messages are rejected as unknown jobs (decodeEnvelope) and reach the DLQ, while the other jobs keep running.
 */
export function registerJobs(
  settings: ReadonlyMap<string, JobSettings>,
  implementations: Readonly<Record<string, JobDefinition>>,
  logger: Logger,
): Map<string, RegisteredJob> {
  const registered = new Map<string, RegisteredJob>();
  for (const [id, s] of settings) {
    if (implementations[id] !== undefined) registered.set(id, { settings: s, definition: implementations[id] });
  }
  const missing = [...settings.keys()].filter((id) => !registered.has(id));
  if (missing.length > 0) {
    // The other jobs keep running; these jobs' messages are rejected (and reach the DLQ) until it is deployed.
    logger.error('no implementation for scheduled job(s); their messages will be rejected', {
      missing,
      hint:
        "add each to the jobs of the worker's entry, defineWorker({ jobs: { 'job-id': definition } }) (or export " +
        'defineJob from the entry of a job that has its own), and redeploy; `checkWorkerJobs` of ' +
        'scheduled-jobs-stack/testing finds this in a unit test',
    });
  }
  return registered;
}

/** A resumable segment that ended to be continued; `late`: the guard stopped it at its end (isLateYield). */
interface SegmentYielded {
  /** Undefined when the segment's end came before the job's segment was opened. */
  readonly yielded: OpenSegment | undefined;
  readonly late?: boolean;
}

/** When the attempt must have recorded its outcome (epoch ms), and when it may start its job at the earliest. */
interface AttemptTiming {
  readonly mustFinishBy: number;
  readonly notBefore?: number;
}

const ACK_RESULTS: ReadonlySet<DeliveryResult> = new Set([
  'succeeded',
  'adopted-committed-report',
  'already-finished',
  'held-elsewhere',
  'duplicate-of-waiting-retry',
  'failed',
  'lease-lost',
  'skipped',
  'buffered',
  'continued',
  'waiting',
]);
const outcome = (result: DeliveryResult): DeliveryOutcome => ({ ack: ACK_RESULTS.has(result), result });

/**
 * @param mustFinishBy epoch ms by which the outcome must be recorded (the Lambda's deadline less a reserve).
 */
export async function processDelivery(
  deps: WorkerDeps,
  delivery: Delivery,
  mustFinishBy: number,
): Promise<DeliveryOutcome> {
  const { logger } = deps;
  let key: OccurrenceKey;
  try {
    key = decodeEnvelope(delivery.body, new Set(deps.jobs.keys()));
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    logger.error('rejected queue message', { messageId: delivery.messageId, error: error.message });
    await hideQuietly(deps, delivery, deps.poisonRetrySeconds);
    return outcome('invalid-message');
  }
  const job = deps.jobs.get(key.jobId);
  // decodeEnvelope accepts only the ids of deps.jobs.
  if (job === undefined) throw new Error(`message for ${key.jobId}, which is not one of the worker's jobs`);
  const { settings } = job;
  const log = childLogger(logger, {
    jobId: key.jobId,
    ...(key.scheduleKey === undefined ? {} : { scheduleKey: key.scheduleKey }),
    scheduledTime: key.scheduledTime,
    messageId: delivery.messageId,
  });

  const now = deps.clock.now();
  const leaseId = deps.newLeaseId();
  const claim = await deps.store.claim(key, {
    leaseId,
    owner: deps.owner,
    now,
    leaseExpiresAt: now + settings.leaseSeconds * 1000,
    maxAttempts: settings.retry.maxAttempts,
  });

  if (!claim.claimed) {
    const refused = await onRefusedClaim(deps, delivery, key, job, claim.current, now, log);
    countOutcome(deps, key.jobId, refused.result);
    return refused;
  }

  const occurrence = claim.occurrence;
  // The job's concurrency cap before its overlap policy: a WAITING occurrence holds no series slot meanwhile.
  if ((await admitClaimed(deps, settings, occurrence, leaseId, mustFinishBy, log)) === 'waiting') {
    return outcome('waiting');
  }
  const started = await startClaimed(deps, job, occurrence, leaseId, log);
  if (started.outcome === 'lease-lost') await afterOperatorCancel(deps, job, key, log);
  if (started.outcome !== 'run') {
    await releaseClaimed(deps, settings, key, leaseId, log);
    return outcome(started.outcome);
  }
  if (occurrence.attempt === 1) metricsOf(deps).add(MetricName.OccurrencesStarted, 1, key.jobId);
  const attempted = await runClaimedAttempt(
    deps,
    delivery,
    job,
    occurrence,
    { leaseId, mustFinishBy, ...started },
    log,
  );
  countOutcome(deps, key.jobId, attempted.result);
  await releaseClaimed(deps, settings, key, leaseId, log);
  if (attempted.result === 'lease-lost') await afterOperatorCancel(deps, job, key, log);
  metricsOf(deps).add(MetricName.JobDuration, deps.clock.now() - now, key.jobId);
  const ended = RUN_ENDS[attempted.result];
  if (ended !== undefined) {
    await endUnderPolicy(
      slotDeps(deps),
      settings,
      occurrence,
      leaseId,
      { outcome: ended, lastError: attempted.lastError },
      log,
    );
  }
  return attempted;
}

/**
 * A lease lost to an operator's cancel (cancel-occurrence.ts): the job-state row may still name the occurrence, in the
 * buffer (its start wrote it there before the cancel took its lease) or in the slot (it was running). Nobody else
 * would wake the buffer's head then: the reconciler wakes only a BUFFERED head, and a finished occurrence at the head
 * keeps the others waiting for good (the simulation's cancel world, seed 7250005). So it leaves the buffer, and the
 * head is woken when the slot is free or names it, as for any occurrence closed without a run. One read, on this rare
 * path only; never throws (afterUnheldEnd logs).
 */
async function afterOperatorCancel(deps: WorkerDeps, job: RegisteredJob, key: OccurrenceKey, log: Logger) {
  try {
    const row = await deps.store.get(key);
    if (row !== undefined && isOperatorCancel(row)) await afterUnheldEnd(slotDeps(deps), job.settings, row, log);
  } catch (error) {
    log.warn('could not read the row after losing the lease; the reconciler wakes what waits', {
      error: messageOf(error),
    });
  }
}

/** The results that end a run (the row is SUCCEEDED or FAILED under this lease): the slot is released then. */
const RUN_ENDS: Partial<Record<DeliveryResult, 'succeeded' | 'failed'>> = {
  succeeded: 'succeeded',
  'adopted-committed-report': 'succeeded',
  failed: 'failed',
};

const slotDeps = (deps: WorkerDeps): SlotDeps => ({ ...deps, metrics: metricsOf(deps) });

/** The overlap policy's answer for the claimed occurrence; a lease lost meanwhile ends the delivery like any other. */
async function startClaimed(
  deps: WorkerDeps,
  job: RegisteredJob,
  occurrence: Occurrence,
  leaseId: string,
  log: Logger,
): Promise<Start | { outcome: 'lease-lost' }> {
  const lease: Lease = { key: occurrenceKeyOf(occurrence), leaseId };
  try {
    return await startUnderPolicy(slotDeps(deps), job.settings, occurrence, lease, childLogger(log, { leaseId }));
  } catch (error) {
    if (!(error instanceof LeaseLostError)) throw error;
    log.warn('lease lost before the start was decided; stopping without writing', { error: error.message });
    metricsOf(deps).add(MetricName.LeasesLost, 1, occurrence.jobId);
    return { outcome: 'lease-lost' };
  }
}

/** Run the claimed attempt, commit, and record its outcome, every write fenced by the lease. */
async function runClaimedAttempt(
  deps: WorkerDeps,
  delivery: Delivery,
  job: RegisteredJob,
  occurrence: Occurrence,
  attempt: AttemptTiming & { readonly leaseId: string },
  log: Logger,
): Promise<DeliveryOutcome> {
  const { leaseId } = attempt;
  const key = occurrenceKeyOf(occurrence);
  const lease: Lease = { key, leaseId, attempt: occurrence.attempt };
  // Every line of this attempt carries jobId, scheduledTime, leaseId and attempt (the batch runs concurrently, so
  // the keys travel with each line rather than on a shared logger).
  const attemptLog = childLogger(log, { leaseId, attempt: occurrence.attempt });
  attemptLog.debug?.('claimed occurrence', { leaseExpiresAt: occurrence.leaseExpiresAt });
  const reportKey = reportKeyOf(key, job.definition.reportExtension);

  let result: DeliveryResult | SegmentYielded;
  const plan = planSegment(occurrence, job.settings, {
    mustFinishBy: attempt.mustFinishBy,
    notBefore: attempt.notBefore,
    resumable: job.definition.resumable === true,
  });
  try {
    result = await runAttempt(
      deps,
      job,
      occurrence,
      lease,
      reportKey,
      { plan, notBefore: attempt.notBefore },
      attemptLog,
    );
  } catch (error) {
    if (error instanceof LeaseLostError) {
      attemptLog.warn('lease lost; stopping without writing', { error: error.message });
      return outcome('lease-lost');
    }
    const finalRun = job.definition.resumable === true && runTimeUsedUp(plan, deps.clock.now());
    return recordFailedAttempt(deps, delivery, job.settings, occurrence, lease, reportKey, error, attemptLog, finalRun);
  }
  if (typeof result === 'object') {
    return outcome(await continueSegment(deps, delivery, lease, plan, result.yielded, attemptLog, result.late));
  }
  try {
    await completeWithRetries(deps, lease, reportKey);
  } catch (error) {
    if (error instanceof LeaseLostError) {
      attemptLog.warn('lease lost before complete; the report stays committed for the next holder to adopt', {
        reportKey,
      });
      return outcome('lease-lost');
    }
    attemptLog.error('could not record SUCCEEDED; the redelivery will adopt the committed report', {
      error: messageOf(error),
    });
    return outcome('outcome-not-recorded');
  }
  // The happy path's one INFO line, trigger and notifier included (docs/operating.md): the other steps are DEBUG.
  attemptLog.info('occurrence SUCCEEDED', { reportKey, result, durationMs: msSince(occurrence.claimedAt, deps.clock) });
  return outcome(result);
}

const metricsOf = (deps: WorkerDeps): Metrics => deps.metrics ?? noMetrics;

/** Milliseconds from the attempt's claim to now, for the outcome's log line; undefined without a claim time. */
function msSince(claimedAt: string | undefined, clock: Clock): number | undefined {
  const at = claimedAt === undefined ? Number.NaN : Date.parse(claimedAt);
  return Number.isNaN(at) ? undefined : clock.now() - at;
}

const OUTCOME_METRIC: Partial<Record<DeliveryResult, MetricName>> = {
  succeeded: MetricName.OccurrencesSucceeded,
  'adopted-committed-report': MetricName.OccurrencesSucceeded,
  failed: MetricName.OccurrencesFailed,
  'lease-lost': MetricName.LeasesLost,
  'retry-scheduled': MetricName.RetriesScheduled,
};

function countOutcome(deps: WorkerDeps, jobId: string, result: DeliveryResult): void {
  const name = OUTCOME_METRIC[result];
  if (name !== undefined) metricsOf(deps).add(name, 1, jobId);
}

/** The claim was refused: say why, and do what that reason asks for with this message. */
async function onRefusedClaim(
  deps: WorkerDeps,
  delivery: Delivery,
  key: OccurrenceKey,
  job: RegisteredJob,
  current: Occurrence | undefined,
  now: number,
  log: Logger,
): Promise<DeliveryOutcome> {
  const refused = whyRefused(current, now, job.settings.retry.maxAttempts);
  switch (refused.action) {
    case 'missing':
    case 'unclaimable':
      log.error('no claimable occurrence row for this message; it will go to the DLQ', {
        reason: refused.action === 'missing' ? 'no row' : refused.reason,
      });
      await hideQuietly(deps, delivery, deps.poisonRetrySeconds);
      return outcome('invalid-message');
    case 'finished':
      log.info('occurrence already finished; nothing to run', { status: current?.status });
      // A finished occurrence may still be in the buffer (a start that buffered it lost its lease before recording it
      // BUFFERED): at its head it would keep the others waiting for good, since only the head is woken.
      if (current !== undefined) await afterUnheldEnd(slotDeps(deps), job.settings, current, log);
      // Likewise at the head of its job's waiting list (its deadline passed while it waited).
      await leftWaiting(deps, job.settings, key, log);
      return outcome('already-finished');
    case 'held-elsewhere':
      log.info('occurrence is held by a live lease elsewhere; dropping this duplicate', {
        leaseOwner: current?.leaseOwner,
      });
      return outcome('held-elsewhere');
    case 'revoked': {
      // A worker whose clock is behind the revoker's still sees the revoked lease live. Dropping the message as a
      // duplicate would leave the row with none until the reconciler: hide it past the lease and the skew instead.
      const seconds = hideSecondsUntil(refused.dueAt + job.settings.leaseSafetyMarginSeconds * 1000, deps.clock.now());
      log.info('revoked lease not run out yet on this clock; hiding the message until it has', { seconds });
      await hideQuietly(deps, delivery, seconds);
      return outcome('deferred-until-due');
    }
    case 'not-due': {
      if (current?.retryMessageId !== undefined && current.retryMessageId !== delivery.messageId) {
        // Another message carries this retry, hidden until it is due. Keeping this copy too would cost both messages
        // a receive on every later attempt (a retry that finds the other copy's claim drops it, but the next early
        // arrival hides it again), until both reach the DLQ with attempts left. The reconciler re-enqueues the
        // occurrence should the carrier ever be lost.
        log.info('a copy of the message of a waiting retry; dropping it', { retryMessageId: current.retryMessageId });
        return outcome('duplicate-of-waiting-retry');
      }
      const seconds = hideSecondsUntil(refused.dueAt, deps.clock.now());
      log.info('retry not due yet; hiding the message until it is', { nextAttemptAt: iso(refused.dueAt), seconds });
      await hideQuietly(deps, delivery, seconds);
      return outcome('deferred-until-due');
    }
    case 'exhausted': {
      // The last attempt may have committed its report and died before complete: adopt it rather than fail.
      const reportKey = reportKeyOf(key, job.definition.reportExtension);
      if (await reportCommitted(deps, reportKey)) {
        const adopted = await deps.store.completeUnheld(key, reportKey, deps.clock.now());
        log.info('occurrence SUCCEEDED with the report its last attempt committed', { reportKey, recorded: adopted });
        if (adopted && current !== undefined) await afterUnheldEnd(slotDeps(deps), job.settings, current, log);
        // Not recorded: another delivery finished it first; count the outcome once, where it was recorded.
        return outcome(adopted ? 'adopted-committed-report' : 'already-finished');
      }
      const changed = await deps.store.failUnheld(key, refused.reason, deps.clock.now());
      log.error('occurrence FAILED', { reason: refused.reason, recorded: changed });
      // It may have waited in the buffer past its deadline, or held the slot: the next one may start.
      if (changed && current !== undefined) await afterUnheldEnd(slotDeps(deps), job.settings, current, log);
      await leftWaiting(deps, job.settings, key, log);
      return outcome(changed ? 'failed' : 'already-finished');
    }
  }
}

async function runAttempt(
  deps: WorkerDeps,
  job: RegisteredJob,
  occurrence: Occurrence,
  lease: Lease,
  reportKey: string,
  { plan, notBefore }: { readonly plan: SegmentPlan; readonly notBefore?: number },
  log: Logger,
): Promise<DeliveryResult | SegmentYielded> {
  // Commit-then-die: an earlier attempt stored the report but never recorded it. Observe it, do not run again.
  // Skipped when no earlier attempt can exist (the first claim of a fresh occurrence): one request fewer. A
  // resumed run's first attempt may follow a segment that committed and died.
  const lookFirst = mayHaveCommittedReport(occurrence) || isResumedRun(occurrence);
  // The occurrence it cancelled may work until its lease runs out (cancelOther): nothing of this one happens before
  // then, not even adopting a committed report, whose complete frees the slot for the next start to run beside it.
  const waitMs = Math.max(0, (notBefore ?? 0) - deps.clock.now());
  if (waitMs === 0 && lookFirst && (await adoptable(deps, reportKey, log))) return 'adopted-committed-report';
  const { settings } = job;
  const { claimedAt, leaseExpiresAt } = occurrence;
  // The heartbeat sends the job's progress with its extend once the segment is open.
  let open: OpenSegment | undefined;
  // Both are written by every claim; without them there would be no lease to run under.
  if (claimedAt === undefined || leaseExpiresAt === undefined) {
    throw new Error(`claimed occurrence without claimedAt or leaseExpiresAt (attempt ${occurrence.attempt})`);
  }
  // After the wait, the job starts with its time limit counted from then.
  const guarded = runUnderLease({
    timing: {
      leaseMs: settings.leaseSeconds * 1000,
      heartbeatMs: settings.heartbeatSeconds * 1000,
      safetyMarginMs: settings.leaseSafetyMarginSeconds * 1000,
    },
    clock: deps.clock,
    logger: log,
    leaseExpiresAt: Date.parse(leaseExpiresAt),
    deadlineAt: plan.deadlineAt,
    extend: async (expiresAt, now, signal) => {
      try {
        await (open?.extend(expiresAt, now, signal) ?? deps.store.extend(lease, expiresAt, now, signal));
      } catch (error) {
        metricsOf(deps).add(MetricName.ExtendFailures, 1, lease.key.jobId);
        throw error;
      }
    },
    work: async (signal) => {
      if (waitMs > 0) {
        log.info('waiting for the cancelled occurrence to stop before running', { waitMs });
        await delay(waitMs, signal);
        if (lookFirst && (await adoptable(deps, reportKey, log))) return 'adopted-committed-report';
      }
      const segment = openSegment(deps, occurrence, lease, plan, reportKey, job.definition, signal, log);
      open = segment;
      const end = await runResumableSegment(segment, job.definition, occurrence, signal, log);
      if (end.kind === 'yielded') return { yielded: segment };
      await reachCommitPoint(deps, lease, signal);
      if (end.kind === 'streamed') return commitStreamed(end.writer, reportKey, signal, log);
      return commitReport(deps, lease, reportKey, end.report, signal, log);
    },
  });
  // A job asked to yield that is still running when its segment ends is continued, not failed (resumable-delivery.ts).
  return guarded.catch((error: unknown) => {
    if (!isLateYield(plan, error)) throw error;
    return { yielded: open, late: true };
  });
}

/** Commit-then-die: an earlier attempt stored the report but never recorded it. Observe it, do not run again. */
async function adoptable(deps: WorkerDeps, reportKey: string, log: Logger): Promise<boolean> {
  if (!(await reportCommitted(deps, reportKey))) return false;
  log.info('report already committed by an earlier attempt; adopting it', { reportKey });
  return true;
}

/**
 * The commit point (cancel-occurrence.ts): one fenced write just before the report is put. Refused once an operator's
 * cancel (or a cancelOther revoke) is recorded: LeaseLostError, and nothing is put. Once written, a cancel is refused.
 */
function reachCommitPoint(deps: WorkerDeps, lease: Lease, signal: AbortSignal): Promise<void> {
  return withTransientRetries(() => deps.store.markCommitting(lease, deps.clock.now()), {
    attempts: 3,
    firstDelayMs: 200,
    signal,
  });
}

/** Complete the streamed report's upload once (If-None-Match); a 412 is this occurrence's report, adopted. */
async function commitStreamed(
  writer: { commit(signal: AbortSignal): Promise<'created' | 'existed'> },
  reportKey: string,
  signal: AbortSignal,
  log: Logger,
): Promise<DeliveryResult> {
  const written = await withTransientRetries(() => writer.commit(signal), { attempts: 4, firstDelayMs: 200, signal });
  if (written === 'created') log.debug?.('streamed report committed', { reportKey });
  else log.info('report was already committed; adopting it', { reportKey });
  return written === 'created' ? 'succeeded' : 'adopted-committed-report';
}

/** Write the report once (If-None-Match); a report already at the key is this occurrence's, and is adopted. */
async function commitReport(
  deps: WorkerDeps,
  lease: Lease,
  reportKey: string,
  report: ReportBody,
  signal: AbortSignal,
  log: Logger,
): Promise<DeliveryResult> {
  const metadata = {
    'job-id': lease.key.jobId,
    ...(lease.key.scheduleKey === undefined ? {} : { 'schedule-key': lease.key.scheduleKey }),
    'scheduled-time': lease.key.scheduledTime,
    attempt: String(lease.attempt),
    'lease-id': lease.leaseId,
  };
  const written = await withTransientRetries(() => deps.reports.putIfAbsent(reportKey, report, metadata, signal), {
    attempts: 4,
    firstDelayMs: 200,
    signal,
  });
  // 'existed': our own earlier write whose response was lost, or a previous attempt's. Either way it is the
  // one report of this occurrence; adopt it.
  if (written === 'created') log.debug?.('report committed', { reportKey });
  else log.info('report was already committed; adopting it', { reportKey });
  return written === 'created' ? 'succeeded' : 'adopted-committed-report';
}

async function recordFailedAttempt(
  deps: WorkerDeps,
  delivery: Delivery,
  settings: JobSettings,
  occurrence: Occurrence,
  lease: Lease,
  reportKey: string,
  error: unknown,
  log: Logger,
  /** The run's maxRunSeconds are spent: a retry would stop at once, so the failure is final. */
  finalRun = false,
): Promise<DeliveryOutcome> {
  const now = deps.clock.now();
  const lastError = `attempt ${occurrence.attempt}: ${messageWithCauses(error, 980)}`;
  const decision = finalRun
    ? ({ retry: false, reason: `the run used up maxRunSeconds (${settings.maxRunSeconds} s)` } as const)
    : decideRetry({
        policy: settings.retry,
        failedAttempt: occurrence.attempt,
        now,
        deadlineAt: Date.parse(occurrence.deadlineAt),
        random: deps.random,
        hiddenPastDueMs: settings.leaseSafetyMarginSeconds * 1000,
      });
  try {
    if (!decision.retry) {
      // Never FAILED beside a committed report: an earlier attempt may have committed it and died, and this attempt
      // failed before it could see it (its look-up failed, say). Asked even on a first attempt: this attempt's own
      // put may have landed although the worker never heard (a lost response, or aborted in flight). If the look-up fails again, nothing is recorded:
      // the message comes back, and the used-up attempts lead to the same check (onRefusedClaim, 'exhausted').
      if (await reportCommitted(deps, reportKey)) {
        await completeWithRetries(deps, lease, reportKey);
        log.info('occurrence SUCCEEDED with the report an earlier attempt committed', { reportKey, error: lastError });
        return outcome('adopted-committed-report');
      }
      await deps.store.fail(lease, `${lastError} (${decision.reason})`, now);
      log.error('occurrence FAILED', { error: lastError, reason: decision.reason });
      return { ...outcome('failed'), lastError };
    }
    await deps.store.release(lease, decision.nextAttemptAt, lastError, now, delivery.messageId);
  } catch (recordError) {
    if (recordError instanceof LeaseLostError) {
      log.warn('lease lost while recording a failed attempt', { error: lastError });
      return outcome('lease-lost');
    }
    // The lease will expire and the message comes back after the queue's visibility timeout.
    log.error('could not record the failed attempt', { error: lastError, recordError: messageOf(recordError) });
    return outcome('outcome-not-recorded');
  }
  // Hidden past nextAttemptAt by the clock skew the protocol tolerates: nextAttemptAt is this worker's clock, and a
  // worker whose clock is behind would otherwise receive the retry "early", hide it again and spend one more of the
  // message's receives (its redrive limit is maxAttempts + 5) for every attempt.
  const seconds = hideSecondsUntil(decision.nextAttemptAt + settings.leaseSafetyMarginSeconds * 1000, deps.clock.now());
  log.warn('attempt failed; retry scheduled', {
    error: lastError,
    nextAttemptAt: iso(decision.nextAttemptAt),
    seconds,
  });
  await hideQuietly(deps, delivery, seconds);
  return outcome('retry-scheduled');
}

/** Record SUCCEEDED under the lease; a transient failure is retried (a lost response counts as done, see the store). */
function completeWithRetries(deps: WorkerDeps, lease: Lease, reportKey: string): Promise<void> {
  return withTransientRetries(() => deps.store.complete(lease, reportKey, deps.clock.now()), {
    attempts: 3,
    firstDelayMs: 200,
  });
}

/**
 * Whether a report may already be committed when this claim starts its attempt, from the row as claimed (never from
 * the message, which any copy or re-enqueue carries alike).
 *
 * A report is written only by a worker's commit, and a worker commits only after a claim of its own; every claim
 * increments `attempt`. So when the claim that returned this row was the first claim the occurrence ever had, no
 * worker has run its job and no PutObject for it was ever sent: nothing can be committed. That is `attempt === 1`
 * on a row that was never reopened. Every other way a report can exist shows in the row:
 * - an earlier attempt committed and died before complete (commit-then-die), or lost its lease with its put in
 *   flight and the put landed later: its claim made this one attempt 2 or more;
 * - the reconciler re-enqueued an expired RUNNING row (a claim happened: this one is attempt 2 or more) or a stuck
 *   PENDING row (no claim happened: attempt 1, and truly nothing committed);
 * - an operator reopened a FAILED occurrence (manual-retry.ts): the attempt counter restarts at 0, but a report may
 *   have landed after FAILED (a put of a worker that lost its lease), so a reopened row is always looked at:
 *   `previousAttempts`, `manualRetries` or a `reopened` history entry says so;
 * - the row expired (TTL) and was recorded again (a backfill of an old range): the report outlives the row, and the
 *   new row says attempt 1. A row's TTL is at least its scheduled time plus one day (the shortest `retentionDays`),
 *   so a row recorded a day or more after its scheduled time is looked at; the trigger records within the
 *   Scheduler's 24 h retry window, so its rows are not;
 * - our own claim retried by the SDK after a lost response comes back as the same claim (same lease id, attempt 1):
 *   this worker has not run the job yet.
 * Unknown or odd rows (attempt not a number, unreadable times) are looked at. Skipping the look-up can never publish a second report:
 * the commit is write-once (If-None-Match: *), and a 412 is adopted. Its only use is not to run the job again.
 */
export function mayHaveCommittedReport(claimed: Occurrence & ManualRetryFields): boolean {
  if (claimed.attempt !== 1) return true;
  if ((claimed.previousAttempts ?? 0) > 0 || (claimed.manualRetries ?? 0) > 0) return true;
  if (claimed.history?.some((entry) => entry.outcome === 'reopened')) return true;
  return !(recordedWithin(claimed, SHORTEST_RETENTION_MS) ?? false);
}

/** retentionDays is at least 1 (job-settings.ts): no row expires sooner than this after its scheduled time. */
const SHORTEST_RETENTION_MS = 86_400_000;

/** Whether the row was recorded less than `ms` after its scheduled time; undefined when a time is unreadable. */
function recordedWithin(row: Occurrence, ms: number): boolean | undefined {
  const recordedAfter = Date.parse(row.createdAt) - Date.parse(row.scheduledTime);
  return Number.isNaN(recordedAfter) ? undefined : recordedAfter < ms;
}

/** Whether the occurrence's report is in S3; a transient failure of the look-up is retried like any other call. */
function reportCommitted(deps: WorkerDeps, reportKey: string): Promise<boolean> {
  return withTransientRetries(() => deps.reports.exists(reportKey), { attempts: 3, firstDelayMs: 200 });
}

/** Whole seconds (SQS's unit), rounded up plus one so the message never arrives before it is due. */
export function hideSecondsUntil(dueAt: number, now: number): number {
  return Math.max(1, Math.ceil((dueAt - now) / 1000) + 1);
}

/** A failed hide only means the message returns at the queue's visibility timeout instead: log it and go on. */
async function hideQuietly(deps: WorkerDeps, delivery: Delivery, seconds: number): Promise<void> {
  try {
    await deps.queue.hide(delivery.receiptHandle, seconds);
  } catch (error) {
    deps.logger.warn('could not change the message visibility; it returns at the queue default', {
      messageId: delivery.messageId,
      error: messageOf(error),
    });
  }
}

function childLogger(logger: Logger, fields: Record<string, unknown>): Logger {
  return {
    debug: (m, f) => logger.debug?.(m, { ...fields, ...f }),
    info: (m, f) => logger.info(m, { ...fields, ...f }),
    warn: (m, f) => logger.warn(m, { ...fields, ...f }),
    error: (m, f) => logger.error(m, { ...fields, ...f }),
  };
}
