/**
 * Occurrence state-change events: what the events function puts on EventBridge for one change of the occurrences
 * table, as a pure mapping from the stream record's old and new image to zero or one event. The schema is
 * versioned (`detail.version`) and documented in docs/events.md; a change that breaks a consumer's rule or parser
 * is a new version, never an edit of version "1".
 *
 *   MODIFY, status PENDING/RUNNING/RETRY_WAIT/BUFFERED ─▶ SUCCEEDED/FAILED/SKIPPED/CANCELLED   "Occurrence State Change"
 *   INSERT in a terminal status (an occurrence recorded SKIPPED as missed)                    "Occurrence State Change"
 *   the job-state row gaining `pausedAt` with `pauseCause` failures                           "Job Paused"
 *   anything else (heartbeats, notifiedAt, the job's slot, an operator's pause)               no event
 *
 * Each event carries a deterministic `eventId`: the same change always maps to the same id, so a consumer drops the
 * rare second copy (the stream redelivers a batch after a crash or a timeout; EventBridge puts at least once).
 */
import { createHash } from 'node:crypto';
import { JOB_STATE_SORT_KEY } from './job-state';
import { type Occurrence, OccurrenceStatus, TERMINAL_STATUSES } from './occurrence';
import { quoteValue } from './quote-value';
import { seriesKeyOf } from './schedule-key';
import { statusReason } from './status-reason';

/** The `source` of every event this stack puts: what a rule's event pattern matches first. */
export const EVENT_SOURCE = 'scheduled-jobs-stack';
/** The `detail.version` of the schema this module writes (docs/events.md). */
export const EVENT_SCHEMA_VERSION = '1';

export const DetailType = {
  occurrence: 'Occurrence State Change',
  jobPaused: 'Job Paused',
} as const;
export type DetailType = (typeof DetailType)[keyof typeof DetailType];

/** Where the event points its reader: the row in the DynamoDB console, and the page of `occurrences console`. */
export interface EventLinks {
  /** The row in the AWS console's DynamoDB item editor. */
  readonly item: string;
  /**
   * The page's route in `occurrences console` (`#/occurrence/<job>/<time>`, `#/job/<job>`): append it to the URL the
   * console prints, or, when the stack was given `consoleUrl`, the full address in `console`.
   */
  readonly consoleRoute: string;
  /** `consoleUrl` followed by `consoleRoute`, when the stack was given a console URL. */
  readonly console?: string;
}

/** `detail` of an "Occurrence State Change" event, version 1. */
export interface OccurrenceStateChange {
  /** The schema's version, "1"; a consumer's rule can match on it (docs/events.md). */
  readonly version: '1';
  /** Deterministic: the occurrence key, its new status and its attempt count; equal ids are one change. */
  readonly eventId: string;
  /** The job's id, as given to `addJob`. */
  readonly jobId: string;
  /** Present for an occurrence of a schedule created at run time. */
  readonly scheduleKey?: string;
  /** UTC, whole seconds: the occurrence's key with the job id. */
  readonly scheduledTime: string;
  /** SUCCEEDED, FAILED, SKIPPED or CANCELLED. */
  readonly status: OccurrenceStatus;
  /** The status before this change; null when the occurrence was recorded in its final status (missed). */
  readonly previousStatus: OccurrenceStatus | null;
  /** Why, in one line (the same words as `occurrences list`). */
  readonly reason: string;
  /** The attempt that ran last (0: none ran). */
  readonly attempt: number;
  /** When the change was recorded: succeededAt, failedAt, skippedAt or cancelledAt. */
  readonly at?: string;
  /** The worker whose queue carried the occurrence. */
  readonly worker?: string;
  /** SKIPPED: overlap, missed or paused. */
  readonly skipReason?: string;
  /** FAILED: the last attempt's error, cut short. */
  readonly error?: string;
  /** SUCCEEDED: the committed report. */
  readonly report?: { readonly key: string; readonly uri?: string };
  /** Who, when a person caused it: the operator who cancelled it, or who asked for the run or the backfill. */
  readonly by?: string;
  /** The operator's note of a cancel. */
  readonly note?: string;
  /** Where to look: the row, and the occurrence's page in the console. */
  readonly links: EventLinks;
}

/** `detail` of a "Job Paused" event, version 1: a job that paused itself after `pauseAfterFailures` failures. */
export interface JobPaused {
  /** The schema's version, "1". */
  readonly version: '1';
  /** Deterministic: the job and the pause's time. */
  readonly eventId: string;
  /** The job that paused itself. */
  readonly jobId: string;
  /** When it paused (its schedule was disabled then). */
  readonly pausedAt: string;
  /** Who paused it: `pauseAfterFailures`. */
  readonly pausedBy?: string;
  /** Always `failures`: an operator's pause is no event. */
  readonly cause: 'failures';
  /** The pause's note: how many failures, and how to resume. */
  readonly note?: string;
  /** FAILED occurrences in a row that paused it. */
  readonly consecutiveFailures?: number;
  /** Where to look: the job-state row, and the job's page in the console. */
  readonly links: EventLinks;
}

/** One event to put: its detail type, its detail, and its time (the change's, not the put's). */
export type StateChangeEvent =
  | { readonly detailType: typeof DetailType.occurrence; readonly time: string; readonly detail: OccurrenceStateChange }
  | { readonly detailType: typeof DetailType.jobPaused; readonly time: string; readonly detail: JobPaused };

/** A stream record as the mapping needs it: already unmarshalled images (the handler unmarshalls). */
export interface ImageChange {
  readonly eventName: 'INSERT' | 'MODIFY' | 'REMOVE' | string;
  readonly oldImage?: Readonly<Record<string, unknown>>;
  readonly newImage?: Readonly<Record<string, unknown>>;
  /** The table's name and Region, for the item link (from the record's eventSourceARN). */
  readonly table: TableLocation;
  /** The record's approximate creation time, ISO: the event time when the row names none. */
  readonly recordedAt: string;
}

export interface TableLocation {
  readonly tableName: string;
  readonly region: string;
}

/** What the mapping is told by the stack: the report bucket for report URIs, the console's address if any. */
export interface EventMappingOptions {
  readonly bucketName?: string;
  readonly consoleUrl?: string;
}

/** The outcome of mapping one record: no event, one event, or a record that cannot be read (the reason). */
export type MappedChange =
  | { readonly kind: 'none' }
  | { readonly kind: 'event'; readonly event: StateChangeEvent }
  | { readonly kind: 'malformed'; readonly problem: string };

const NONE: MappedChange = { kind: 'none' };
const TERMINAL_TIME: Readonly<Partial<Record<OccurrenceStatus, keyof Occurrence>>> = {
  SUCCEEDED: 'succeededAt',
  FAILED: 'failedAt',
  SKIPPED: 'skippedAt',
  CANCELLED: 'cancelledAt',
};

/** The event of one change, if it is one the stack announces (see the table at the top of this file). */
export function eventOfChange(change: ImageChange, options: EventMappingOptions = {}): MappedChange {
  const image = change.newImage;
  if (change.eventName === 'REMOVE' || image === undefined) return NONE;
  if (image.scheduledTime === JOB_STATE_SORT_KEY) return jobPausedEvent(change, image, options);
  const status = image.status;
  if (!isTerminal(status)) return NONE;
  const previous = change.oldImage?.status;
  if (previous === status) return NONE;
  if (change.eventName === 'MODIFY' && change.oldImage === undefined) {
    return {
      kind: 'malformed',
      problem: 'a MODIFY record without its old image (the stream must be NEW_AND_OLD_IMAGES)',
    };
  }
  const problem = occurrenceImageProblem(image);
  if (problem !== undefined) return { kind: 'malformed', problem };
  if (previous !== undefined && !isStatus(previous)) {
    return { kind: 'malformed', problem: `old image status ${quoteValue(String(previous))} is not a status` };
  }
  return { kind: 'event', event: occurrenceEvent(change, image as unknown as Occurrence, previous ?? null, options) };
}

function occurrenceEvent(
  change: ImageChange,
  item: Occurrence,
  previousStatus: OccurrenceStatus | null,
  options: EventMappingOptions,
): StateChangeEvent {
  const series = item.jobId;
  const { jobId, scheduleKey } = seriesKeyOf(series);
  const row: Occurrence = { ...item, jobId, ...(scheduleKey === undefined ? {} : { scheduleKey }) };
  const timeField = TERMINAL_TIME[row.status];
  const at = timeField === undefined ? undefined : stringOrUndefined(row[timeField]);
  const extra = row as Occurrence & Readonly<Record<string, unknown>>;
  const by = row.status === OccurrenceStatus.CANCELLED ? stringOrUndefined(extra.cancelledByOperator) : undefined;
  const detail: OccurrenceStateChange = {
    version: EVENT_SCHEMA_VERSION,
    eventId: occurrenceEventId(series, row.scheduledTime, row.status, attemptsCounted(extra)),
    jobId,
    ...(scheduleKey === undefined ? {} : { scheduleKey }),
    scheduledTime: row.scheduledTime,
    status: row.status,
    previousStatus,
    reason: reasonOf(row),
    attempt: row.attempt,
    ...(at === undefined ? {} : { at }),
    ...(row.worker === undefined ? {} : { worker: row.worker }),
    ...(row.status === OccurrenceStatus.SKIPPED && row.skipReason !== undefined ? { skipReason: row.skipReason } : {}),
    ...(row.status === OccurrenceStatus.FAILED && row.lastError !== undefined ? { error: row.lastError } : {}),
    ...(row.status === OccurrenceStatus.SUCCEEDED && row.reportKey !== undefined
      ? { report: reportOf(row.reportKey, options.bucketName) }
      : {}),
    ...(by !== undefined ? { by } : row.requestedBy !== undefined ? { by: row.requestedBy } : {}),
    ...(by !== undefined && typeof extra.cancelNote === 'string' ? { note: extra.cancelNote } : {}),
    links: links(
      change.table,
      series,
      row.scheduledTime,
      `#/occurrence/${encodeURIComponent(jobId)}/${encodeURIComponent(row.scheduledTime)}${
        scheduleKey === undefined ? '' : `?key=${encodeURIComponent(scheduleKey)}`
      }`,
      options.consoleUrl,
    ),
  };
  return { detailType: DetailType.occurrence, time: at ?? change.recordedAt, detail };
}

/**
 * statusReason's words, but for SUCCEEDED: its words tell whether the report was announced, which a transition's
 * image never shows (the notifier records it after this change), so they would always read "not announced yet".
 */
function reasonOf(row: Occurrence): string {
  return row.status === OccurrenceStatus.SUCCEEDED ? 'report committed' : statusReason(row);
}

/**
 * The attempts an occurrence has used over its whole life: an operator's reopen of a FAILED occurrence restarts
 * `attempt` at 0 and adds the used ones to `previousAttempts`, and `manualRetries` counts the reopens, so a second
 * FAILED after a reopen is a new id even when no attempt ran in between.
 */
function attemptsCounted(row: Occurrence & Readonly<Record<string, unknown>>): string {
  const previous = typeof row.previousAttempts === 'number' ? row.previousAttempts : 0;
  const reopens = typeof row.manualRetries === 'number' ? row.manualRetries : 0;
  return `${previous + row.attempt}.${reopens}`;
}

function jobPausedEvent(
  change: ImageChange,
  image: Readonly<Record<string, unknown>>,
  options: EventMappingOptions,
): MappedChange {
  // Only the write that pauses it: an operator's pause, a resume and every slot write are no event.
  if (image.pauseCause !== 'failures' || image.pausedAt === undefined) return NONE;
  if (change.oldImage?.pausedAt !== undefined) return NONE;
  const { jobId, pausedAt } = image;
  if (typeof jobId !== 'string' || jobId === '') return { kind: 'malformed', problem: 'job-state row without a jobId' };
  if (typeof pausedAt !== 'string' || Number.isNaN(Date.parse(pausedAt)))
    return { kind: 'malformed', problem: `pausedAt ${quoteValue(String(pausedAt))} is not a time` };
  const detail: JobPaused = {
    version: EVENT_SCHEMA_VERSION,
    eventId: hashId(['job-paused', jobId, pausedAt]),
    jobId,
    pausedAt,
    ...(typeof image.pausedBy === 'string' ? { pausedBy: image.pausedBy } : {}),
    cause: 'failures',
    ...(typeof image.pauseNote === 'string' ? { note: image.pauseNote } : {}),
    ...(typeof image.consecutiveFailures === 'number' ? { consecutiveFailures: image.consecutiveFailures } : {}),
    links: links(change.table, jobId, JOB_STATE_SORT_KEY, `#/job/${encodeURIComponent(jobId)}`, options.consoleUrl),
  };
  return { kind: 'event', event: { detailType: DetailType.jobPaused, time: pausedAt, detail } };
}

/**
 * The event id of an occurrence's change: its series, scheduled time, new status and attempt count, hashed (a
 * schedule key alone may be 128 characters). Exported for the tests and for consumers who rebuild it.
 */
export function occurrenceEventId(series: string, scheduledTime: string, status: string, attempts: string): string {
  return hashId(['occurrence', series, scheduledTime, status, attempts]);
}

/** 128 bits of a SHA-256 over the parts, NUL-separated so that no two lists of parts share a text. */
function hashId(parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);
}

/** Why this new image cannot be an occurrence's event, or undefined when it can. */
function occurrenceImageProblem(image: Readonly<Record<string, unknown>>): string | undefined {
  if (typeof image.jobId !== 'string' || image.jobId === '') return 'no jobId';
  if (typeof image.scheduledTime !== 'string' || image.scheduledTime === '') return 'no scheduledTime';
  const { attempt } = image;
  if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 0) return 'no attempt';
  if (image.status === OccurrenceStatus.SUCCEEDED && (typeof image.reportKey !== 'string' || image.reportKey === ''))
    return 'SUCCEEDED without a reportKey';
  return undefined;
}

function reportOf(key: string, bucketName: string | undefined): { key: string; uri?: string } {
  return bucketName === undefined ? { key } : { key, uri: `s3://${bucketName}/${key}` };
}

/** The AWS console's DynamoDB item editor for one row, and the console page. */
function links(
  table: TableLocation,
  partition: string,
  sort: string,
  consoleRoute: string,
  consoleUrl: string | undefined,
): EventLinks {
  const region = encodeURIComponent(table.region);
  const query = new URLSearchParams({
    itemMode: '2',
    pk: partition,
    route: 'ROUTE_ITEM_EXPLORER',
    sk: sort,
    table: table.tableName,
  });
  return {
    item: `https://${region}.console.aws.amazon.com/dynamodbv2/home?region=${region}#edit-item?${query.toString()}`,
    consoleRoute,
    ...(consoleUrl === undefined ? {} : { console: `${consoleUrl.replace(/\/+$/, '')}/${consoleRoute}` }),
  };
}

/**
 * The table's name and Region from a stream's ARN (`arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>`),
 * or undefined for anything else.
 */
export function tableOfStreamArn(arn: string | undefined): TableLocation | undefined {
  const match = /^arn:[^:]+:dynamodb:([^:]+):[^:]*:table\/([^/]+)\/stream\//.exec(arn ?? '');
  return match === null ? undefined : { region: match[1], tableName: match[2] };
}

const isStatus = (value: unknown): value is OccurrenceStatus =>
  typeof value === 'string' && (Object.values(OccurrenceStatus) as string[]).includes(value);
const isTerminal = (value: unknown): value is OccurrenceStatus => isStatus(value) && TERMINAL_STATUSES.includes(value);
const stringOrUndefined = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
