/**
 * The message that names an occurrence on a worker's job queue: its key and a version so the format can evolve.
 * Checked field by field (field-checks.ts: no schema library, the trigger loads this module), every wrong field
 * reported at once. The schedule's input to the trigger is schedule-event.ts.
 */
import { InvalidInputError } from './errors';
import { checkAll, exactly, jsonObject, knownOne, nonEmptyString, optional } from './field-checks';
import { normaliseScheduledTime, type OccurrenceKey } from './occurrence';
import { quoteValue } from './quote-value';
import { scheduleKey } from './schedule-key';

export const ENVELOPE_VERSION = 1;

export function encodeEnvelope(key: OccurrenceKey): string {
  return JSON.stringify({
    v: ENVELOPE_VERSION,
    jobId: key.jobId,
    ...(key.scheduleKey === undefined ? {} : { scheduleKey: key.scheduleKey }),
    scheduledTime: key.scheduledTime,
  });
}

/** Parse a queue message body; throws InvalidInputError naming each wrong field. */
export function decodeEnvelope(body: string, knownJobs: ReadonlySet<string>): OccurrenceKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new InvalidInputError('queue message', [`body is not JSON: ${quoteValue(body)}`]);
  }
  return checkEnvelope(parsed, knownJobs);
}

/**
 * Each problem starts with the field it is about and says what was found instead, so a rejected message in the logs
 * (or in a DLQ) explains itself. Unknown extra fields are allowed: the format may grow.
 */
function checkEnvelope(value: unknown, knownJobs: ReadonlySet<string>): OccurrenceKey {
  const envelope = jsonObject(value);
  if (!envelope.ok) throw new InvalidInputError('queue message', [envelope.error]);
  const { v, jobId, scheduledTime } = envelope.value;
  const checked = checkAll({
    v: exactly('v', v, ENVELOPE_VERSION),
    jobId: knownOne(
      'jobId',
      nonEmptyString('jobId', jobId),
      knownJobs,
      "the jobs this worker's entry implements (defineWorker({ jobs }) or defineJob)",
    ),
    // Added after version 1 without a new version: a message without it names a job's fixed schedule, as before.
    scheduleKey: optional(envelope.value.scheduleKey, (key) => scheduleKey('scheduleKey', key)),
    scheduledTime: normaliseScheduledTime(scheduledTime),
  });
  if (!checked.ok) throw new InvalidInputError('queue message', checked.problems);
  const { scheduleKey: key } = checked.value;
  return {
    jobId: checked.value.jobId,
    ...(key === undefined ? {} : { scheduleKey: key }),
    scheduledTime: checked.value.scheduledTime,
  };
}
