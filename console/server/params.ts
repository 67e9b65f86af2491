/**
 * The query parameters and action bodies the API takes, checked: each problem is a 400 naming its parameter.
 */
import { normaliseScheduledTime, SCHEDULED_TIME_RANGE } from '../../functions/protocol/occurrence';
import { SCHEDULE_KEY_PATTERN } from '../../functions/protocol/schedule-key';
import { JOB_ID_PATTERN } from '../../functions/protocol/setting-basics';
import { ATTENTION_KINDS, type AttentionKind, MAX_TIMELINE_BUCKETS, type OverlapName } from '../contract';
import { badParameter } from './http-errors';

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const OVERLAPS: readonly OverlapName[] = ['skip', 'bufferOne', 'bufferAll', 'cancelOther', 'allowAll'];

export function jobIdParam(name: string, value: unknown): string {
  if (value === undefined || value === '') throw badParameter(name, 'is required: a job id');
  if (typeof value !== 'string' || !JOB_ID_PATTERN.test(value))
    throw badParameter(name, `must be a job id (letters, digits, _ and -, at most 64), got ${JSON.stringify(value)}`);
  return value;
}

export function keyParam(name: string, value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !SCHEDULE_KEY_PATTERN.test(value))
    throw badParameter(
      name,
      `must be a schedule key (1-128 letters, digits and . _ - : @ + =), got ${JSON.stringify(value)}`,
    );
  return value;
}

/** An ISO-8601 time with a zone, as epoch milliseconds, inside the scheduled times' range. */
export function timeParam(name: string, value: unknown): number {
  if (value === undefined || value === '') throw badParameter(name, 'is required: an ISO-8601 time with a zone');
  const ms = typeof value === 'string' && ISO_WITH_ZONE.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms))
    throw badParameter(
      name,
      `must be an ISO-8601 time with a zone, like 2026-11-30T06:00:00Z, got ${JSON.stringify(value)}`,
    );
  const earliest = Date.parse(SCHEDULED_TIME_RANGE.earliest);
  const latest = Date.parse(SCHEDULED_TIME_RANGE.latest) + 1000;
  if (ms < earliest || ms > latest)
    throw badParameter(name, `must be from ${SCHEDULED_TIME_RANGE.earliest} to 2200-01-01T00:00:00Z`);
  return ms;
}

export function optionalTimeParam(name: string, value: unknown): number | undefined {
  return value === undefined || value === '' ? undefined : timeParam(name, value);
}

/** An occurrence's scheduled time, in the key format (whole seconds, UTC). */
export function scheduledTimeParam(name: string, value: unknown): string {
  if (value === undefined || value === '') throw badParameter(name, 'is required: the scheduled time');
  const normalised = normaliseScheduledTime(value);
  if (!normalised.ok) throw badParameter(name, normalised.error);
  return normalised.value;
}

export function textParam(name: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max)
    throw badParameter(name, `must be a non-empty text of at most ${max} characters`);
  return value;
}

export function overlapParam(name: string, value: unknown): OverlapName | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !OVERLAPS.includes(value as OverlapName))
    throw badParameter(name, `must be one of ${OVERLAPS.join(', ')}, got ${JSON.stringify(value)}`);
  return value as OverlapName;
}

/** A comma-separated list of attention kinds (`failed,late`); absent or empty: every kind. */
export function kindsParam(name: string, value: unknown): AttentionKind[] | undefined {
  if (value === undefined || value === '') return undefined;
  const kinds = typeof value === 'string' ? value.split(',') : [];
  const unknown = kinds.filter((k) => !ATTENTION_KINDS.includes(k as AttentionKind));
  if (kinds.length === 0 || unknown.length > 0)
    throw badParameter(
      name,
      `must be a comma-separated list of ${ATTENTION_KINDS.join(', ')}, got ${JSON.stringify(value)}`,
    );
  return [...new Set(kinds as AttentionKind[])];
}

export function booleanParam(name: string, value: unknown, fallback?: boolean): boolean {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'boolean') throw badParameter(name, `must be true or false, got ${JSON.stringify(value)}`);
  return value;
}

/** An action's JSON body: an object, else a 400. */
export function bodyObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw badParameter('body', 'must be a JSON object');
  return value as Record<string, unknown>;
}

/** How many buckets the all-jobs timeline cuts its range into: a whole number from 1 to MAX_TIMELINE_BUCKETS. */
export function bucketsParam(name: string, value: unknown): number {
  const n = typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= MAX_TIMELINE_BUCKETS))
    throw badParameter(name, `must be a whole number from 1 to ${MAX_TIMELINE_BUCKETS}, got ${JSON.stringify(value)}`);
  return n;
}

/** A page's cursor, as the previous page gave it: opaque, at most 2,048 characters. */
export function cursorParam(name: string, value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || value.length > 2048)
    throw badParameter(name, 'must be the cursor the previous page gave (at most 2,048 characters)');
  return value;
}
