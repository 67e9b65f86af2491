/**
 * Checks for the few fields of the stack's own messages: the schedule event (schedule-event.ts), the queue message
 * (envelope.ts) and the workers' routes (worker-routes.ts). Plain functions rather than zod schemas because the
 * trigger loads all three at every cold start, and zod costs it 17 M instructions there, 5 % of its load: the whole
 * margin the trigger has over a bare PutItem + SendMessage handler (docs/benchmarks.md, figure 4). What users write
 * (job settings, CLI arguments) keeps zod.
 *
 * A check returns the value, or a problem that starts with the field's name and says what it got (as
 * normaliseScheduledTime does for scheduled times); `checkAll` takes them all, so every wrong field is reported at once,
 * in the order they are listed.
 */
import { describe } from './occurrence';
import { JOB_ID_PATTERN } from './setting-basics';

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const problem = (error: string): Checked<never> => ({ ok: false, error });

export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** How a problem shows the value it got: numbers as they are (`1.5`), everything else as `describe` does. */
const shown = (value: unknown): string => (typeof value === 'number' ? String(value) : describe(value));

/** The whole input: a JSON object (the problem names no field). */
export function jsonObject(value: unknown): Checked<Record<string, unknown>> {
  return isJsonObject(value) ? ok(value) : problem(`must be a JSON object, got ${describe(value)}`);
}

export function wholeNumber(
  field: string,
  value: unknown,
  range: { readonly min: number; readonly max: number },
): Checked<number> {
  return typeof value === 'number' && Number.isInteger(value) && value >= range.min && value <= range.max
    ? ok(value)
    : problem(`${field} must be a whole number from ${range.min} to ${range.max}, got ${shown(value)}`);
}

export function nonEmptyString(field: string, value: unknown): Checked<string> {
  return typeof value === 'string' && value !== ''
    ? ok(value)
    : problem(`${field} must be a non-empty string, got ${shown(value)}`);
}

/** Exactly `expected` (a version number, say). */
export function exactly<T extends string | number>(field: string, value: unknown, expected: T): Checked<T> {
  return value === expected ? ok(expected) : problem(`${field} must be ${expected}, got ${shown(value)}`);
}

/** A job or worker id (JOB_ID_PATTERN). */
export function id(field: string, value: unknown): Checked<string> {
  if (typeof value !== 'string') return problem(`${field} must be a job or worker id, got ${shown(value)}`);
  return JOB_ID_PATTERN.test(value)
    ? ok(value)
    : problem(`${field} must be 1-64 letters, digits, '-' or '_' starting with a letter or digit, got ${shown(value)}`);
}

/** A value that passed `check` and is one of `known`, which the problem lists as what `owner` has. */
export function knownOne(
  field: string,
  checked: Checked<string>,
  known: ReadonlySet<string>,
  owner: string,
): Checked<string> {
  if (!checked.ok || known.has(checked.value)) return checked;
  return problem(
    `${field} ${shown(checked.value)} is not one of ${owner} (it has: ${[...known].join(', ') || 'none'})`,
  );
}

/** A check that lets an absent field (undefined) through. */
export function optional<T>(value: unknown, check: (present: unknown) => Checked<T>): Checked<T | undefined> {
  return value === undefined ? ok(undefined) : check(value);
}

type Values<T extends Record<string, Checked<unknown>>> = { [K in keyof T]: T[K] extends Checked<infer V> ? V : never };

/** Every field's value when every check passed; otherwise every problem, in the order the fields are listed. */
export function checkAll<T extends Record<string, Checked<unknown>>>(
  fields: T,
): { readonly ok: true; readonly value: Values<T> } | { readonly ok: false; readonly problems: string[] } {
  const problems: string[] = [];
  const value: Record<string, unknown> = {};
  for (const [field, checked] of Object.entries(fields)) {
    if (checked.ok) value[field] = checked.value;
    else problems.push(checked.error);
  }
  // Every field passed its check, so each value has the type its check gave it.
  return problems.length === 0 ? { ok: true, value: value as Values<T> } : { ok: false, problems };
}
