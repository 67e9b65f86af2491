/**
 * The console server's tests share an in-memory world: deployed jobs, the occurrence rows and job-state rows, the
 * worker queues, the schedule switch, a registry of run-time schedules, a report bucket and the audit trail, behind
 * the ports the server takes (console/server/deps.ts); and requests made the way a signed-in page makes them.
 */
import { Readable } from 'node:stream';
import type { Hono } from 'hono';
import { createConsoleApp } from '../../console/server/app';
import type { AuditLine, ConsoleDeps, ReportReader, SeriesRange } from '../../console/server/deps';
import { ConsoleSession } from '../../console/server/session';
import type { DeployedJob } from '../../functions/protocol/job-control';
import { JOB_STATE_SORT_KEY } from '../../functions/protocol/job-state';
import { iso, type Occurrence, type OccurrenceKey, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type {
  CancelRequest,
  CancelWriteResult,
  Clock,
  CreateResult,
  ReopenRequest,
  ReopenResult,
  WorkQueue,
} from '../../functions/protocol/ports';
import { seriesOf } from '../../functions/protocol/schedule-key';
import { scheduleOperationsOver, upsertSchedule } from '../../operations/schedules';
import { FakeProjection, FakeRegistry, template } from '../protocol/drift-fakes';
import { MemoryJobStates } from '../support/memory-job-states';

export const NOW = Date.parse('2026-12-01T12:00:00Z');
export const PORT = 8765;
export const TOKEN = 'test-token-0123456789abcdefghijklmnopqrstuv';
/** The session id the token becomes, and the cookie that carries it (random per start in a real console). */
export const SESSION = 'test-session-9876543210zyxwvutsrqponmlkjihgf';
export const COOKIE = 'occurrences_console_0123456789abcdef';
export const ORIGIN = `http://127.0.0.1:${PORT}`;
export const OPERATOR = 'alice via console (arn:aws:iam::123456789012:user/alice)';

export const HOURLY = 'hourly-report';
export const KEYED = 'weekly-report';
export const KEY = 'customer-42';

export const hourlyJob: DeployedJob = {
  id: HOURLY,
  schedule: 'cron(0 * * * ? *)',
  timeZone: 'UTC',
  state: 'ENABLED',
  route: { worker: 'reports', deadlineSeconds: 3600, retentionDays: 7 },
  overlap: 'bufferAll',
};

export const keyedJob: DeployedJob = {
  id: KEYED,
  schedule: 'cron(0 0 1 1 ? 2199)',
  timeZone: 'Etc/UTC',
  state: 'DISABLED',
  route: { worker: 'w', deadlineSeconds: 3600, retentionDays: 7 },
  runtimeScheduleGroup: `${KEYED}-schedules`,
};

export function row(
  jobId: string,
  scheduledTime: string,
  status: OccurrenceStatus,
  extra: Partial<Occurrence> & Record<string, unknown> = {},
): Occurrence {
  return {
    jobId,
    scheduledTime,
    status,
    attempt: status === OccurrenceStatus.PENDING ? 0 : 1,
    worker: 'reports',
    createdAt: iso(Date.parse(scheduledTime) + 100),
    deadlineAt: iso(Date.parse(scheduledTime) + 3600_000),
    ttl: Math.floor(NOW / 1000) + 86_400,
    ...extra,
  };
}

/** The hourly job's morning: one FAILED, one SUCCEEDED, one long RUNNING, and one SKIPPED because it ran. */
export const hourlyRows: readonly Occurrence[] = [
  row(HOURLY, '2026-12-01T08:00:00Z', OccurrenceStatus.FAILED, {
    attempt: 3,
    claimedAt: '2026-12-01T08:20:00.000Z',
    failedAt: '2026-12-01T08:21:00.000Z',
    lastError: 'Error: the database said no',
  }),
  row(HOURLY, '2026-12-01T09:00:00Z', OccurrenceStatus.SUCCEEDED, {
    claimedAt: '2026-12-01T09:00:01.000Z',
    succeededAt: '2026-12-01T09:05:01.000Z',
    reportKey: `reports/${HOURLY}/2026-12-01T09:00:00Z.json`,
    notifiedAt: '2026-12-01T09:05:02.000Z',
    notificationId: 'msg-1',
  }),
  row(HOURLY, '2026-12-01T10:00:00Z', OccurrenceStatus.RUNNING, {
    claimedAt: '2026-12-01T10:00:02.000Z',
    runStartedAt: '2026-12-01T10:00:02.000Z',
    leaseId: 'lease-1',
    leaseExpiresAt: '2026-12-01T12:01:00.000Z',
    segment: 2,
    progress: { done: 60, total: 100, at: '2026-12-01T11:59:00.000Z' },
    checkpoint: {
      state: '{}',
      at: '2026-12-01T11:58:00.000Z',
      upload: { uploadId: 'u', parts: [{ partNumber: 1, etag: 'e' }], bytes: 5_242_880 },
    },
  }),
  row(HOURLY, '2026-12-01T11:00:00Z', OccurrenceStatus.SKIPPED, {
    attempt: 0,
    skipReason: 'overlap',
    yieldedTo: '2026-12-01T10:00:00Z',
    skippedAt: '2026-12-01T11:00:01.000Z',
  }),
];

const idOf = (key: OccurrenceKey) => `${seriesOf(key)}|${key.scheduledTime}`;

/** The occurrence rows: the pages' reads, the trigger's insert and a retry's reopen. */
export class MemoryOccurrences {
  readonly rows = new Map<string, Occurrence>();
  /** The ranges the pages asked for, to check what they read. */
  readonly queries: { series: string; range: SeriesRange }[] = [];

  add(...rows: Occurrence[]): void {
    for (const r of rows) this.rows.set(idOf(r), r);
  }

  async newestFirst(series: string, range: SeriesRange): Promise<Occurrence[]> {
    this.queries.push({ series, range });
    return [...this.rows.values()]
      .filter((r) => seriesOf(r) === series && r.scheduledTime >= range.from && r.scheduledTime < range.to)
      .sort((a, b) => b.scheduledTime.localeCompare(a.scheduledTime))
      .slice(0, range.limit);
  }

  async get(key: OccurrenceKey): Promise<Occurrence | undefined> {
    return this.rows.get(idOf(key));
  }

  async create(o: Occurrence): Promise<CreateResult> {
    const existing = this.rows.get(idOf(o));
    if (existing !== undefined) return { created: false, existing };
    this.rows.set(idOf(o), o);
    return { created: true };
  }

  /** An operator's cancel: CANCELLED while the row is as observed and no lease reached its commit point. */
  async cancel(key: OccurrenceKey, r: CancelRequest): Promise<CancelWriteResult> {
    const current = this.rows.get(idOf(key));
    const asObserved =
      current !== undefined &&
      current.status === r.observed.status &&
      current.leaseId === r.observed.leaseId &&
      current.attempt === r.observed.attempt &&
      current.committingLease === undefined;
    if (!asObserved) return { cancelled: false, current };
    this.rows.set(idOf(key), {
      ...current,
      status: OccurrenceStatus.CANCELLED,
      cancelledAt: iso(r.now),
      cancelledByOperator: r.by,
      ...(r.note === undefined ? {} : { cancelNote: r.note }),
      ...(r.revocationId === undefined ? {} : { leaseId: r.revocationId }),
    });
    return { cancelled: true };
  }

  async reopenFailed(key: OccurrenceKey, r: ReopenRequest): Promise<ReopenResult> {
    const current = this.rows.get(idOf(key));
    if (current?.status !== OccurrenceStatus.FAILED) return { reopened: false, current };
    this.rows.set(idOf(key), {
      ...current,
      status: OccurrenceStatus.PENDING,
      attempt: 0,
      deadlineAt: iso(r.deadlineAt),
      ttl: r.ttl,
      worker: r.worker,
      history: [...(current.history ?? []), { outcome: 'reopened', at: iso(r.now), ...(r.by ? { by: r.by } : {}) }],
    });
    return { reopened: true };
  }
}

export class MemoryQueue implements WorkQueue {
  readonly sent: string[] = [];
  async send(body: string): Promise<void> {
    this.sent.push(body);
  }
  async hide(): Promise<void> {}
}

export interface World {
  readonly deps: ConsoleDeps;
  readonly states: MemoryJobStates;
  readonly occurrences: MemoryOccurrences;
  readonly queue: MemoryQueue;
  readonly switched: { jobId: string; state: string }[];
  readonly audit: AuditLine[];
  readonly registry: FakeRegistry;
  readonly reports: Map<string, string>;
}

/** The world with the hourly job's morning, a keyed job with one schedule (customer-42) and one report. */
export async function world(options: { clock?: Clock } = {}): Promise<World> {
  const clock = options.clock ?? { now: () => NOW };
  const states = new MemoryJobStates();
  states.rows.set(HOURLY, { jobId: HOURLY, scheduledTime: JOB_STATE_SORT_KEY, version: 3, consecutiveFailures: 2 });
  const occurrences = new MemoryOccurrences();
  occurrences.add(...hourlyRows);
  occurrences.add(
    row(KEYED, '2026-11-30T08:00:00Z', OccurrenceStatus.SUCCEEDED, {
      scheduleKey: KEY,
      worker: 'w',
      claimedAt: '2026-11-30T08:00:01.000Z',
      succeededAt: '2026-11-30T08:00:31.000Z',
    }),
  );
  const queue = new MemoryQueue();
  const switched: { jobId: string; state: string }[] = [];
  const audit: AuditLine[] = [];
  const registry = new FakeRegistry();
  const projection = new FakeProjection(clock.now);
  projection.templates.set(KEYED, template(KEYED));
  const ops = scheduleOperationsOver({ registry, projection, clock });
  await upsertSchedule(ops, KEYED, KEY, { expression: 'cron(0 8 ? * 2 *)', timeZone: 'Europe/Paris' }, { by: 'bob' });
  const reports = new Map([[`reports/${HOURLY}/2026-12-01T09:00:00Z.json`, '{"rows":42}']]);
  const reportReader: ReportReader = {
    open: async (key) => {
      const text = reports.get(key);
      return text === undefined
        ? undefined
        : { body: Readable.from([Buffer.from(text)]), contentType: 'application/json', contentLength: text.length };
    },
  };
  const jobs = [hourlyJob, keyedJob];
  const deps: ConsoleDeps = {
    where: 'table Occurrences (in memory)',
    operator: OPERATOR,
    clock,
    jobs: {
      jobIds: async () => jobs.map((j) => j.id).sort(),
      job: async (id) => jobs.find((j) => j.id === id),
    },
    states,
    occurrences: {
      newestFirst: (series, range) => occurrences.newestFirst(series, range),
      get: async (key) => (await occurrences.get(key)) as unknown as Record<string, unknown> | undefined,
    },
    store: occurrences,
    queues: new Map<string, WorkQueue>([
      ['reports', queue],
      ['w', queue],
    ]),
    schedules: { setState: async (jobId, state) => void switched.push({ jobId, state }) },
    registry: ops,
    reports: reportReader,
    audit: (line) => audit.push(line),
  };
  return { deps, states, occurrences, queue, switched, audit, registry, reports };
}

/**
 * The app over the world's ports, its token already exchanged for SESSION (as the page's first request does),
 * unless `signedIn: false`.
 */
export function appOf(deps: ConsoleDeps, options: { readOnly?: boolean; signedIn?: boolean } = {}): Hono {
  const session = new ConsoleSession(TOKEN, COOKIE, () => SESSION);
  if (options.signedIn ?? true) session.exchange(TOKEN);
  return createConsoleApp(deps, {
    port: PORT,
    session,
    readOnly: options.readOnly ?? false,
    page: { script: 'console.log("page")', style: 'body{}' },
  });
}

/** A request as the signed-in page makes it: to 127.0.0.1:<port>, with the session cookie. */
export function signedIn(app: Hono, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has('cookie')) headers.set('cookie', `${COOKIE}=${SESSION}`);
  return Promise.resolve(app.request(`http://127.0.0.1:${PORT}${path}`, { ...init, headers }));
}

/** An action as the page posts it: JSON, with its Origin and cookie. */
export function post(app: Hono, action: string, body: unknown): Promise<Response> {
  return signedIn(app, `/api/actions/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: ORIGIN },
    body: JSON.stringify(body),
  });
}

/** The `{ error }` of an answer. */
export async function errorOf(answer: Response): Promise<string> {
  return ((await answer.json()) as { error: string }).error;
}
