/**
 * The page's routes, in the URL's hash so that the server serves one page: `#/?window=&from=&to=&job=&kind=` what
 * needs an operator across jobs (the front page; `#/attention` too), `#/jobs` every job, `#/timeline?window=` every job
 * on one time axis,
 * `#/job/<jobId>?key=&from=&to=` a job's (or one schedule's) timeline, `#/occurrence/<jobId>/<scheduledTime>?key=` one
 * occurrence. Each part is URL-encoded.
 */

/** The attention view's windows, back from now; `custom` takes `from` and `to`. */
export const ATTENTION_WINDOWS = ['1h', '1d', '7d', 'custom'] as const;
export type AttentionWindow = (typeof ATTENTION_WINDOWS)[number];

/** The attention view's choices, all in the address so that a view can be bookmarked or sent. */
export interface AttentionRoute {
  readonly page: 'attention';
  /** Default 1d. */
  readonly window?: AttentionWindow;
  /** A custom window's bounds, ISO UTC. */
  readonly from?: string;
  readonly to?: string;
  /** One job only. */
  readonly job?: string;
  /** Some kinds only, comma-separated (`failed,late`). */
  readonly kind?: string;
}

/** The all-jobs timeline's windows: 80 % back from now, 20 % ahead (the next fires). */
export const TIMELINE_WINDOWS = ['1h', '1d', '7d', '31d'] as const;
export type TimelineWindow = (typeof TIMELINE_WINDOWS)[number];

/** Where the page is. */
export type Route =
  | { readonly page: 'jobs' }
  | { readonly page: 'all-timeline'; readonly window?: TimelineWindow }
  | AttentionRoute
  | {
      readonly page: 'timeline';
      readonly jobId: string;
      readonly key?: string;
      readonly from?: string;
      readonly to?: string;
    }
  | { readonly page: 'occurrence'; readonly jobId: string; readonly time: string; readonly key?: string }
  | { readonly page: 'not-found'; readonly hash: string };

/** The route a hash (`location.hash`, with or without `#`) names; an unknown one is `not-found`. */
export function parseHash(hash: string): Route {
  const text = hash.replace(/^#/, '');
  const [pathPart, queryPart = ''] = splitOnce(text, '?');
  const query = new URLSearchParams(queryPart);
  const parts = pathPart.split('/').filter((part) => part !== '');
  let decoded: string[];
  try {
    decoded = parts.map((part) => decodeURIComponent(part));
  } catch {
    return { page: 'not-found', hash };
  }
  const key = optional(query.get('key'));
  if (decoded.length === 0 || (decoded[0] === 'attention' && decoded.length === 1)) {
    const window = query.get('window');
    return {
      page: 'attention',
      ...(ATTENTION_WINDOWS.includes(window as AttentionWindow) ? { window: window as AttentionWindow } : {}),
      ...withOptional('from', query.get('from')),
      ...withOptional('to', query.get('to')),
      ...withOptional('job', query.get('job')),
      ...withOptional('kind', query.get('kind')),
    };
  }
  if (decoded[0] === 'jobs' && decoded.length === 1) return { page: 'jobs' };
  if (decoded[0] === 'timeline' && decoded.length === 1) {
    const window = query.get('window');
    return {
      page: 'all-timeline',
      ...(TIMELINE_WINDOWS.includes(window as TimelineWindow) ? { window: window as TimelineWindow } : {}),
    };
  }
  if (decoded[0] === 'job' && decoded.length === 2) {
    return {
      page: 'timeline',
      jobId: decoded[1],
      ...(key ? { key } : {}),
      ...withOptional('from', query.get('from')),
      ...withOptional('to', query.get('to')),
    };
  }
  if (decoded[0] === 'occurrence' && decoded.length === 3) {
    return { page: 'occurrence', jobId: decoded[1], time: decoded[2], ...(key ? { key } : {}) };
  }
  return { page: 'not-found', hash };
}

/** The hash for a route, `#/...`: the inverse of parseHash. */
export function formatHash(route: Route): string {
  switch (route.page) {
    case 'jobs':
      return '#/jobs';
    case 'all-timeline':
      return `#/timeline${query({ window: route.window })}`;
    case 'attention':
      return `#/${query({ window: route.window, from: route.from, to: route.to, job: route.job, kind: route.kind })}`;
    case 'timeline':
      return `#/job/${encodeURIComponent(route.jobId)}${query({ key: route.key, from: route.from, to: route.to })}`;
    case 'occurrence':
      return `#/occurrence/${encodeURIComponent(route.jobId)}/${encodeURIComponent(route.time)}${query({ key: route.key })}`;
    case 'not-found':
      return route.hash.startsWith('#') ? route.hash : `#${route.hash}`;
  }
}

/** A timeline's hash. */
export function timelineHash(jobId: string, key?: string, range?: { from: string; to: string }): string {
  return formatHash({ page: 'timeline', jobId, ...(key ? { key } : {}), ...(range ?? {}) });
}

/** An occurrence's hash. */
export function occurrenceHash(jobId: string, time: string, key?: string): string {
  return formatHash({ page: 'occurrence', jobId, time, ...(key ? { key } : {}) });
}

/** A query string (`?a=1&b=2`, or empty) from the parameters that are set, in the order given. */
export function query(params: Readonly<Record<string, string | number | boolean | undefined>>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

function splitOnce(text: string, separator: string): [string, string?] {
  const at = text.indexOf(separator);
  return at < 0 ? [text] : [text.slice(0, at), text.slice(at + 1)];
}

function optional(value: string | null): string | undefined {
  return value === null || value === '' ? undefined : value;
}

function withOptional<K extends string>(name: K, value: string | null): Partial<Record<K, string>> {
  const set = optional(value);
  return set === undefined ? {} : ({ [name]: set } as Record<K, string>);
}
