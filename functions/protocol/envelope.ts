/**
 * The message that names an occurrence on a worker's job queue: its key and a version so the format can evolve.
 * Checked with a zod schema (below), every wrong field reported at once. The schedule's input to the trigger is
 * schedule-event.ts.
 */
// zod/mini: the same schemas, tree-shakable, so the functions do not carry all of zod (440 KB minified) for three fields.
import * as z from 'zod/mini';
import { InvalidInputError } from './errors';
import { describe, normaliseScheduledTime, type OccurrenceKey } from './occurrence';
import { quoteValue } from './quote-value';

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
    throw new InvalidInputError('queue message', [`body is not JSON: ${quoteValue(body)}`]);
  }
  return parseWith(envelopeSchema(knownJobs), parsed, 'queue message');
}

/**
 * The schemas. Each message starts with the field it is about, and says what was found instead, so a rejected
 * message in the logs (or in a DLQ) explains itself. Unknown extra fields are allowed: the format may grow.
 */
const notAnObject = (iss: { input: unknown }) => `must be a JSON object, got ${describe(iss.input)}`;

const jobIdSchema = (knownJobs: ReadonlySet<string>) =>
  z.string({ error: (iss) => `jobId must be a non-empty string, got ${describe(iss.input)}` }).check(
    z.minLength(1, { error: 'jobId must be a non-empty string, got ""', abort: true }),
    z.refine((jobId: string) => knownJobs.has(jobId), {
      error: (iss) =>
        `jobId ${quoteValue(iss.input)} is not one of this function's jobs (it has: ${[...knownJobs].join(', ') || 'none'})`,
    }),
  );

/**
 * A scheduled time, normalised to the key format (UTC, whole seconds); see normaliseScheduledTime. The queue message's
 * and the schedule event's (schedule-event.ts), so the trigger and the worker accept the same times.
 */
export const scheduledTimeSchema = z.pipe(
  z.unknown(),
  z.transform((value, ctx) => {
    const time = normaliseScheduledTime(value);
    if (time.ok) return time.value;
    ctx.issues.push({ code: 'custom', message: time.error, input: value });
    return z.NEVER;
  }),
);

export const envelopeSchema = (knownJobs: ReadonlySet<string>) =>
  z.object(
    {
      v: z.literal(ENVELOPE_VERSION, { error: (iss) => `v must be ${ENVELOPE_VERSION}, got ${describe(iss.input)}` }),
      jobId: jobIdSchema(knownJobs),
      scheduledTime: scheduledTimeSchema,
    },
    { error: notAnObject },
  );

function parseWith(
  schema: z.ZodMiniType<{ jobId: string; scheduledTime: string }>,
  value: unknown,
  where: string,
): OccurrenceKey {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new InvalidInputError(
      where,
      result.error.issues.map((issue) => issue.message),
    );
  return { jobId: result.data.jobId, scheduledTime: result.data.scheduledTime };
}
