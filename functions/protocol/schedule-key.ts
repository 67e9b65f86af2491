/**
 * Schedules created at run time: a job that takes them has one schedule per *schedule key* (a customer id, say),
 * each created, changed and deleted by the user's app (docs/runtime-schedules.md). An occurrence of such a schedule
 * is identified by (job, schedule key, scheduled time), and everything that is per job for a job with one fixed
 * schedule (the running slot and the overlap policy, the pause, the run of failures) is per (job, schedule key).
 *
 * The occurrence table has one partition per *series*: the job id for a job's fixed schedule, `jobId#scheduleKey`
 * for one schedule of a job that takes them at run time. One job's 100,000 keys due at 00:00 then write 100,000
 * partitions, not one (bench/partition-model.ts). A job id has no '#' (JOB_ID_PATTERN), so the first '#' of a
 * series splits it back, and a key may itself hold no '#' either, so that no key can be read as another.
 */
import { quoteValue } from './quote-value';

/** A checked value or the problem with it (the shape of field-checks.ts's Checked, which imports occurrence.ts). */
type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A schedule key: 1-128 characters, letters, digits and `.`, `_`, `-`, `:`, `@`, `+`, `=`, starting with a letter or
 * digit. Enough for UUIDs, numeric ids, `tenant:42` and most e-mail addresses; it also appears in S3 report keys and
 * in logs, so no '/', no spaces and no '#'.
 */
export const SCHEDULE_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,127}$/;

/** The separator between a job id and a schedule key in a series (the occurrence table's partition key). */
export const SERIES_SEPARATOR = '#';

/** The JSON a schedule hands to each of its occurrences, serialized, is at most this many bytes (UTF-8). */
export const MAX_SCHEDULE_INPUT_BYTES = 2_048;

/** Any JSON value: what a schedule's `input` may be. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** A job, and one of its schedules when the job takes schedules at run time. */
export interface SeriesKey {
  /** The job's id, as given to `addJob`. */
  readonly jobId: string;
  /** The schedule key, for a job that takes schedules at run time; absent for a job's one fixed schedule. */
  readonly scheduleKey?: string;
}

/** The occurrence table's partition key of a job's occurrences, or of one schedule's of a job. */
export function seriesOf(key: SeriesKey): string {
  return key.scheduleKey === undefined ? key.jobId : `${key.jobId}${SERIES_SEPARATOR}${key.scheduleKey}`;
}

/** The job and schedule key a series names (the inverse of seriesOf). */
export function seriesKeyOf(series: string): SeriesKey {
  const at = series.indexOf(SERIES_SEPARATOR);
  return at < 0 ? { jobId: series } : { jobId: series.slice(0, at), scheduleKey: series.slice(at + 1) };
}

/** A schedule key (SCHEDULE_KEY_PATTERN). */
export function scheduleKey(field: string, value: unknown): Checked<string> {
  if (typeof value === 'string' && SCHEDULE_KEY_PATTERN.test(value)) return { ok: true, value };
  return {
    ok: false,
    error:
      `${field} must be 1-128 letters, digits, '.', '_', '-', ':', '@', '+' or '=' starting with a letter or digit, ` +
      `got ${typeof value === 'string' ? quoteValue(value, 140) : value === null ? 'null' : typeof value}`,
  };
}

/** A schedule's input: any JSON value whose serialization is at most MAX_SCHEDULE_INPUT_BYTES. */
export function scheduleInput(field: string, value: unknown): Checked<JsonValue> {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return { ok: false, error: `${field} must be JSON: ${(error as Error).message}` };
  }
  // JSON.stringify drops what JSON cannot hold (undefined, functions) instead of failing: a round trip must be equal.
  if (text === undefined || !sameJson(value, JSON.parse(text))) {
    return { ok: false, error: `${field} must be a JSON value (no undefined, functions, symbols or bigints)` };
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_SCHEDULE_INPUT_BYTES) {
    return {
      ok: false,
      error: `${field} must be at most ${MAX_SCHEDULE_INPUT_BYTES} bytes as JSON, got ${bytes} bytes`,
    };
  }
  return { ok: true, value: value as JsonValue };
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a).filter((k) => a[k] !== undefined);
    return keys.length === Object.keys(b).length && keys.every((k) => sameJson(a[k], b[k]));
  }
  return false;
}
