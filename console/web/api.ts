/**
 * The page's only way to the server: same-origin fetch of the API in console/contract.ts. The session cookie goes
 * along by itself (same origin); a POST sends JSON with its Content-Type, which the server requires.
 */
import type {
  ActionResult,
  AllTimelines,
  AttentionView,
  BackfillPreview,
  BackfillRequest,
  CancelOccurrenceRequest,
  ConsoleConfig,
  JobSummary,
  JobsPage,
  OccurrenceDetail,
  PauseRequest,
  ResumeRequest,
  RetryRequest,
  RunRequest,
  SchedulesPage,
  TimelinePage,
} from '../contract';
import { query } from './route';

/** An answer the server refused or failed: its status and its `{ error }` message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The rest of the error body (a refused retry says `forceWouldEnqueue`). */
    readonly body: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

async function answer<T>(response: Response): Promise<T> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? {} : JSON.parse(text);
  } catch {
    body = { error: text.slice(0, 300) };
  }
  if (!response.ok) {
    const record = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const message = typeof record.error === 'string' ? record.error : `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, message, record);
  }
  return body as T;
}

/** GET a JSON answer. */
export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const response = await fetch(path, { headers: { Accept: 'application/json' }, credentials: 'same-origin', signal });
  return answer<T>(response);
}

/** POST JSON, read a JSON answer. */
export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    credentials: 'same-origin',
    body: JSON.stringify(body),
  });
  return answer<T>(response);
}

/** The API's calls, typed. */
export const api = {
  config: () => getJson<ConsoleConfig>('/api/config'),
  jobs: (signal?: AbortSignal) => getJson<JobsPage>('/api/jobs', signal),
  job: (jobId: string, key?: string, signal?: AbortSignal) =>
    getJson<JobSummary>(`/api/jobs/${encodeURIComponent(jobId)}${query({ key })}`, signal),
  schedules: (jobId: string, cursor?: string, signal?: AbortSignal) =>
    getJson<SchedulesPage>(`/api/jobs/${encodeURIComponent(jobId)}/schedules${query({ cursor })}`, signal),
  timeline: (p: { job: string; key?: string; from: string; to: string; before?: string }, signal?: AbortSignal) =>
    getJson<TimelinePage>(`/api/timeline${query(p)}`, signal),
  timelines: (p: { from: string; to: string; buckets: number; job?: string; cursor?: string }, signal?: AbortSignal) =>
    getJson<AllTimelines>(`/api/timelines${query(p)}`, signal),
  attention: (p: { from: string; to: string; job?: string; kind?: string }, signal?: AbortSignal) =>
    getJson<AttentionView>(`/api/attention${query(p)}`, signal),
  occurrence: (p: { job: string; key?: string; time: string }, signal?: AbortSignal) =>
    getJson<OccurrenceDetail>(`/api/occurrence${query(p)}`, signal),
  retry: (r: RetryRequest) => postJson<ActionResult>('/api/actions/retry', r),
  cancel: (r: CancelOccurrenceRequest) => postJson<ActionResult>('/api/actions/cancel', r),
  run: (r: RunRequest) => postJson<ActionResult>('/api/actions/run', r),
  pause: (r: PauseRequest) => postJson<ActionResult>('/api/actions/pause', r),
  resume: (r: ResumeRequest) => postJson<ActionResult>('/api/actions/resume', r),
  backfill: (r: BackfillRequest) => postJson<ActionResult | BackfillPreview>('/api/actions/backfill', r),
};

/** An error's message for the page. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
