/**
 * The message that names an occurrence: on the job queue, and as the schedule's input to the trigger.
 * Both carry the same two fields; the queue message adds a version so the format can evolve.
 */
import { InvalidInputError } from './errors';
import { describe, normaliseScheduledTime, type OccurrenceKey } from './occurrence';

export const ENVELOPE_VERSION = 1;

export function encodeEnvelope(key: OccurrenceKey): string {
  return JSON.stringify({ v: ENVELOPE_VERSION, jobId: key.jobId, scheduledTime: key.scheduledTime });
}

/** Parse a queue message body; throws InvalidInputError naming each wrong field. */
export function decodeEnvelope(body: string, knownJobs: ReadonlySet<string>): OccurrenceKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new InvalidInputError('queue message', [`body is not JSON: ${JSON.stringify(body.slice(0, 80))}`]);
  }
  const problems: string[] = [];
  if (isObject(parsed) && parsed.v !== ENVELOPE_VERSION) {
    problems.push(`v must be ${ENVELOPE_VERSION}, got ${describe(parsed.v)}`);
  }
  return checkKey(parsed, knownJobs, 'queue message', problems);
}

/** Validate the schedule's input `{ jobId, scheduledTime }`. */
export function decodeScheduleEvent(event: unknown, knownJobs: ReadonlySet<string>): OccurrenceKey {
  return checkKey(event, knownJobs, 'schedule event', []);
}

function checkKey(value: unknown, knownJobs: ReadonlySet<string>, where: string, problems: string[]): OccurrenceKey {
  if (!isObject(value)) throw new InvalidInputError(where, [`must be a JSON object, got ${describe(value)}`]);
  const { jobId } = value;
  if (typeof jobId !== 'string' || jobId === '') {
    problems.push(`jobId must be a non-empty string, got ${describe(jobId)}`);
  } else if (!knownJobs.has(jobId)) {
    problems.push(`jobId ${JSON.stringify(jobId)} is not one of this function's jobs (it has: ${[...knownJobs].join(', ') || 'none'})`);
  }
  const time = normaliseScheduledTime(value.scheduledTime);
  if (!time.ok) problems.push(time.error);
  if (problems.length > 0 || !time.ok) throw new InvalidInputError(where, problems);
  return { jobId: jobId as string, scheduledTime: time.value };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
