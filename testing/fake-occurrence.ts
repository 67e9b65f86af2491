/**
 * An occurrence as the worker hands it to a job's `run`: the row just after the worker's claim (status RUNNING,
 * attempt 1, the lease fields set), with the timestamps the trigger and the claim would have written.
 */
import { DEFAULT_JOB_SETTINGS, DEFAULT_RETRY_POLICY, JOB_ID_PATTERN } from '../functions/protocol/job-settings';
import { iso, normaliseScheduledTime, type Occurrence, OccurrenceStatus } from '../functions/protocol/occurrence';
import { quoteValue } from '../functions/protocol/quote-value';
import { scheduleInput, scheduleKey } from '../functions/protocol/schedule-key';
import { expectedStatusShard } from '../functions/protocol/table-schema';

/** A fixed scheduled time, so that a test's occurrence (and a report that names it) is the same on every run. */
export const FAKE_SCHEDULED_TIME = '2026-01-01T06:00:00Z';
export const FAKE_JOB_ID = 'test-job';
/** The lease id of every fake occurrence unless one is given. */
export const FAKE_LEASE_ID = '00000000-0000-4000-8000-000000000001';

/** What a test may set: the key, and any field of the row over the claimed defaults. */
export type FakeOccurrenceFields = Partial<Occurrence>;

/** The trigger records on time and the worker claims a second later. */
const CLAIM_DELAY_MS = 1_000;

/**
 * A valid Occurrence as a worker passes it to `run`: RUNNING, attempt 1, leased for the default 120 s by
 * `testJob`, recorded at its scheduled time with the default retry deadline (6 h) and retention (90 days). Every field
 * can be overridden, e.g. `{ attempt: 3 }` for a retry.
 *
 * @example
 * ```ts
 * const occurrence = fakeOccurrence({ jobId: 'daily-digest', scheduledTime: '2026-11-30T06:00:00Z' });
 * ```
 */
export function fakeOccurrence(fields: FakeOccurrenceFields = {}): Occurrence {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    throw new TypeError(`fakeOccurrence: expected an object of occurrence fields, got ${quoteValue(fields)}`);
  const jobId = fields.jobId ?? FAKE_JOB_ID;
  if (typeof jobId !== 'string' || !JOB_ID_PATTERN.test(jobId))
    throw new TypeError(
      `fakeOccurrence: jobId must be 1-64 letters, digits, '-' or '_' starting with a letter or digit, got ${quoteValue(jobId)}`,
    );
  const time = normaliseScheduledTime(fields.scheduledTime ?? FAKE_SCHEDULED_TIME);
  if (!time.ok) throw new TypeError(`fakeOccurrence: ${time.error}`);
  const scheduledTime = time.value;
  const scheduledAt = Date.parse(scheduledTime);
  const claimedAt = scheduledAt + CLAIM_DELAY_MS;
  // A schedule created at run time: its key and input are checked as the trigger checks them.
  for (const checked of [
    fields.scheduleKey === undefined ? undefined : scheduleKey('scheduleKey', fields.scheduleKey),
    fields.input === undefined ? undefined : scheduleInput('input', fields.input),
  ]) {
    if (checked !== undefined && !checked.ok) throw new TypeError(`fakeOccurrence: ${checked.error}`);
  }
  const key = {
    jobId,
    ...(fields.scheduleKey === undefined ? {} : { scheduleKey: fields.scheduleKey }),
    scheduledTime,
  };
  const occurrence: Occurrence = {
    ...key,
    status: OccurrenceStatus.RUNNING,
    attempt: 1,
    worker: jobId,
    createdAt: iso(scheduledAt),
    deadlineAt: iso(scheduledAt + DEFAULT_RETRY_POLICY.deadlineSeconds * 1000),
    leaseId: FAKE_LEASE_ID,
    leaseOwner: 'testJob',
    claimedAt: iso(claimedAt),
    heartbeatAt: iso(claimedAt),
    leaseExpiresAt: iso(claimedAt + DEFAULT_JOB_SETTINGS.leaseSeconds * 1000),
    ttl: Math.floor(scheduledAt / 1000) + DEFAULT_JOB_SETTINGS.retentionDays * 86_400,
    ...fields,
    // Normalised, whatever form it was given in: the key a worker passes is always UTC, whole seconds.
    jobId,
    scheduledTime,
  };
  if (!Object.values(OccurrenceStatus).includes(occurrence.status))
    throw new TypeError(
      `fakeOccurrence: status must be one of ${Object.values(OccurrenceStatus).join(', ')}, got ${quoteValue(occurrence.status)}`,
    );
  if (!Number.isInteger(occurrence.attempt) || occurrence.attempt < 0)
    throw new TypeError(`fakeOccurrence: attempt must be a whole number, got ${quoteValue(occurrence.attempt)}`);
  // The status index key the store would have written for this state (none for an announced success), unless given.
  if ('statusShard' in fields) return occurrence;
  const statusShard = expectedStatusShard(occurrence);
  return statusShard === undefined ? occurrence : { ...occurrence, statusShard };
}
