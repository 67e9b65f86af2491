/**
 * The fake API's data for the page's browser tests: three jobs of different kinds, a timeline with every status
 * (a skip for overlap, a retried failure, a long run with progress, a buffered and a cancelled one), and a dense job
 * of 10,000 per-minute occurrences. The clock is fixed at NOW; the page takes the server's `now` from /api/config.
 */
import type {
  AttentionKind,
  AttentionView,
  JobSummary,
  OccurrenceDetail,
  ScheduleSummary,
  TimelineBar,
} from '../../console/contract';

export const NOW = Date.parse('2026-12-02T08:00:00.000Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A time as the occurrence rows write it: to the second, `2026-12-02T08:00:00Z` (Scheduler's scheduled-time). */
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The skipped occurrence of weekly-export and the one it yielded to. */
export const SKIPPED_TIME = iso(NOW - 5 * HOUR);
export const YIELDED_TO = iso(NOW - 6 * HOUR);
/** A FAILED occurrence that retried three times. */
export const FAILED_TIME = iso(NOW - 3 * HOUR);
/** The running long job. */
export const RUNNING_TIME = iso(NOW - HOUR);
/** A PENDING occurrence an operator cancelled, with a note. */
export const OPERATOR_CANCELLED_TIME = iso(NOW - 1.5 * HOUR);
export const CANCELLED_BY = 'bob via console (arn:aws:sts::123456789012:assumed-role/Operator/bob)';
export const CANCEL_NOTE = 'the upstream export is <b>broken</b>; rerun after the fix';
/** The FAILED occurrence's last error: a first line, then a 5,000-character stack. */
export const LONG_ERROR = `TimeoutError: the export API did not answer in 30 s\n${'    at exportPage (jobs/export.ts:42:13)\n'.repeat(120)}`;

/** weekly-export's last hours, hourly, newest first. */
export function weeklyExportBars(): TimelineBar[] {
  const bars: TimelineBar[] = [];
  for (let h = 23; h >= 7; h--) {
    const at = NOW - h * HOUR;
    bars.push({
      scheduledTime: iso(at),
      status: 'SUCCEEDED',
      attempt: 1,
      startedAt: iso(at + 2_000),
      endedAt: iso(at + 20 * MINUTE + (h % 5) * MINUTE),
    });
  }
  bars.push(
    // The 6 h run went on past 5 h, so 5 h yielded to it (overlap: skip).
    {
      scheduledTime: YIELDED_TO,
      status: 'SUCCEEDED',
      attempt: 1,
      startedAt: iso(NOW - 6 * HOUR + 1_000),
      endedAt: iso(NOW - 4 * HOUR - 20 * MINUTE),
    },
    {
      scheduledTime: SKIPPED_TIME,
      status: 'SKIPPED',
      attempt: 0,
      endedAt: SKIPPED_TIME,
      skipReason: 'overlap',
      yieldedTo: YIELDED_TO,
    },
    {
      scheduledTime: iso(NOW - 4 * HOUR),
      status: 'CANCELLED',
      attempt: 1,
      startedAt: iso(NOW - 4 * HOUR + 1_000),
      endedAt: iso(NOW - 4 * HOUR + 10 * MINUTE),
      cancelledBy: iso(NOW - 3.5 * HOUR),
      origin: 'run',
    },
    {
      scheduledTime: iso(NOW - 3.5 * HOUR),
      status: 'SUCCEEDED',
      attempt: 1,
      startedAt: iso(NOW - 3.5 * HOUR + 2_000),
      endedAt: iso(NOW - 3.2 * HOUR),
      origin: 'run',
    },
    {
      scheduledTime: FAILED_TIME,
      status: 'FAILED',
      attempt: 3,
      startedAt: iso(NOW - 3 * HOUR + 1_000),
      endedAt: iso(NOW - 2 * HOUR - 15 * MINUTE),
      lastError: 'TimeoutError: the export API did not answer in 30 s',
    },
    {
      scheduledTime: iso(NOW - 2 * HOUR),
      status: 'SUCCEEDED',
      attempt: 2,
      startedAt: iso(NOW - 2 * HOUR + 3_000),
      endedAt: iso(NOW - HOUR - 30 * MINUTE),
    },
    {
      scheduledTime: RUNNING_TIME,
      status: 'RUNNING',
      attempt: 1,
      startedAt: iso(NOW - HOUR + 4_000),
      segments: 3,
      progress: { done: 6_200, total: 10_000, at: iso(NOW - 10_000) },
    },
    { scheduledTime: iso(NOW - 0.5 * HOUR), status: 'BUFFERED', attempt: 0 },
    { scheduledTime: OPERATOR_CANCELLED_TIME, status: 'CANCELLED', attempt: 0, endedAt: iso(NOW - 1.4 * HOUR) },
  );
  return bars.sort((a, b) => b.scheduledTime.localeCompare(a.scheduledTime));
}

/** 10,000 per-minute occurrences ending a minute before NOW, newest first, a failure every 97th. */
export function denseBars(count = 10_000): TimelineBar[] {
  const bars: TimelineBar[] = [];
  for (let i = 1; i <= count; i++) {
    const at = NOW - i * MINUTE;
    const failed = i % 97 === 0;
    bars.push({
      scheduledTime: iso(at),
      status: failed ? 'FAILED' : i % 211 === 0 ? 'SKIPPED' : 'SUCCEEDED',
      attempt: failed ? 2 : 1,
      startedAt: iso(at + 500),
      endedAt: iso(at + 8_000),
      ...(i % 211 === 0 ? { skipReason: 'overlap' as const, yieldedTo: iso(at - MINUTE) } : {}),
    });
  }
  return bars;
}

const recentOf = (bars: readonly TimelineBar[]) =>
  bars.slice(0, 20).map((bar) => ({
    scheduledTime: bar.scheduledTime,
    status: bar.status,
    ...(bar.skipReason ? { skipReason: bar.skipReason } : {}),
  }));

/** The jobs page's jobs. */
export function fixtureJobs(): JobSummary[] {
  const weekly = weeklyExportBars();
  const dense = denseBars(40);
  return [
    {
      jobId: 'weekly-export',
      schedule: 'cron(0 * * * ? *)',
      scheduleInWords: 'Every hour',
      timeZone: 'Europe/Paris',
      schedulerState: 'ENABLED',
      runtimeSchedules: false,
      worker: 'ExportWorker',
      overlap: 'skip',
      paused: false,
      failuresInARow: 0,
      lastRun: {
        scheduledTime: iso(NOW - 2 * HOUR),
        status: 'SUCCEEDED',
        startedAt: iso(NOW - 2 * HOUR + 3_000),
        endedAt: iso(NOW - HOUR - 30 * MINUTE),
        durationMs: 30 * MINUTE - 3_000,
      },
      next: [iso(NOW + HOUR), iso(NOW + 2 * HOUR)],
      recent: recentOf(weekly),
    },
    {
      jobId: 'dense',
      schedule: 'rate(1 minute)',
      scheduleInWords: 'Every minute',
      timeZone: 'UTC',
      schedulerState: 'DISABLED',
      runtimeSchedules: false,
      worker: 'IngestWorker',
      overlap: 'bufferOne',
      paused: true,
      pause: {
        at: iso(NOW - 20 * MINUTE),
        by: 'alice via console',
        note: 'upstream maintenance until 10:00',
        cause: 'operator',
      },
      failuresInARow: 3,
      lastRun: { scheduledTime: dense[0].scheduledTime, status: 'FAILED', durationMs: 7_500 },
      next: [],
      recent: recentOf(dense),
    },
    {
      jobId: 'reports',
      schedule: 'cron(0 0 1 1 ? 2099)',
      scheduleInWords: 'a template',
      timeZone: 'UTC',
      schedulerState: 'DISABLED',
      runtimeSchedules: true,
      worker: 'ReportWorker',
      overlap: 'bufferAll',
      paused: false,
      failuresInARow: 0,
      next: [],
      recent: [],
    },
  ];
}

/** reports' run-time schedules. */
export function fixtureSchedules(): ScheduleSummary[] {
  return Array.from({ length: 30 }, (_, i) => ({
    jobId: 'reports',
    scheduleKey: `customer-${String(i + 1).padStart(3, '0')}`,
    expression: `cron(${i} 6 * * ? *)`,
    timeZone: 'Europe/Berlin',
    state: i % 7 === 3 ? ('DISABLED' as const) : ('ENABLED' as const),
    updatedAt: iso(NOW - i * HOUR),
  }));
}

/** The occurrence page's answer for one of weekly-export's bars. */
export function fixtureOccurrence(bar: TimelineBar, polls: number): OccurrenceDetail {
  const live = bar.status === 'RUNNING';
  const progress = bar.progress && {
    ...bar.progress,
    done: bar.progress.done + polls * 200,
    at: iso(Date.parse(bar.progress.at) + polls * 2_000),
  };
  const summary: TimelineBar = { ...bar, ...(progress ? { progress } : {}) };
  return {
    row: {
      jobId: 'weekly-export',
      scheduledTime: bar.scheduledTime,
      status: bar.status,
      attempt: bar.attempt,
      createdAt: bar.scheduledTime,
      deadlineAt: iso(Date.parse(bar.scheduledTime) + 6 * HOUR),
      ...(bar.startedAt ? { claimedAt: bar.startedAt } : {}),
      ...(live
        ? {
            leaseId: 'lease-1',
            leaseOwner: 'worker-7',
            leaseExpiresAt: iso(NOW + 4 * MINUTE),
            heartbeatAt: iso(NOW - 20_000),
          }
        : {}),
      ...(bar.lastError ? { lastError: LONG_ERROR, failedAt: bar.endedAt } : {}),
      ...(bar.scheduledTime === OPERATOR_CANCELLED_TIME
        ? { cancelledAt: bar.endedAt, cancelledByOperator: CANCELLED_BY, cancelNote: CANCEL_NOTE }
        : {}),
      ...(bar.cancelledBy ? { cancelledAt: bar.endedAt, cancelledBy: bar.cancelledBy } : {}),
      ...(bar.status === 'SUCCEEDED'
        ? { succeededAt: bar.endedAt, reportKey: `reports/weekly-export/${bar.scheduledTime}.json` }
        : {}),
      ...(bar.skipReason ? { skipReason: bar.skipReason, yieldedTo: bar.yieldedTo, skippedAt: bar.scheduledTime } : {}),
      history:
        bar.attempt > 1
          ? Array.from({ length: bar.attempt }, (_, i) => ({
              attempt: i + 1,
              outcome: i + 1 < bar.attempt ? 'retry' : bar.status === 'FAILED' ? 'failed' : 'succeeded',
              at: iso(Date.parse(bar.scheduledTime) + (i + 1) * 10 * MINUTE),
              ...(i + 1 < bar.attempt || bar.status === 'FAILED'
                ? { error: 'TimeoutError: the export API did not answer in 30 s' }
                : {}),
            }))
          : [],
      ttl: Math.floor(NOW / 1000) + 90 * 86_400,
    },
    summary,
    ...(bar.status === 'SUCCEEDED'
      ? {
          report: {
            key: `reports/weekly-export/${bar.scheduledTime}.json`,
            href: `/api/report?job=weekly-export&time=${encodeURIComponent(bar.scheduledTime)}`,
          },
        }
      : {}),
    notification: bar.status === 'SUCCEEDED' ? { publishedAt: bar.endedAt, messageId: 'msg-0001' } : {},
    ...(live ? { checkpoint: { at: iso(NOW - 45_000), ageMs: 45_000, bytes: 3_400_000, parts: 2 } } : {}),
    live,
    // The fake serves what the server derives from decideManualRetry: a plain retry reopens a FAILED row only.
    retry: bar.status === 'FAILED' ? { offered: true } : { offered: false, reason: `it is ${bar.status}` },
    readUnits: 0.5,
  };
}

/**
 * The attention view the fake serves, in the server's order: weekly-export's FAILED occurrence, a late one of the
 * dense job, the running long job, the buffered one; the dense job paused. Filtered by job and kind as the server does.
 */
export function fixtureAttention(
  from: string,
  to: string,
  filter: { job?: string; kinds?: readonly AttentionKind[] } = {},
): AttentionView {
  const all = allAttention(from, to);
  const kept = (kind: AttentionKind, jobId: string) =>
    (filter.kinds === undefined || filter.kinds.includes(kind)) && (filter.job === undefined || filter.job === jobId);
  return {
    ...all,
    items: all.items.filter((i) => kept(i.kind, i.jobId)),
    paused: all.paused.filter((p) => kept('paused', p.jobId)),
    jobs: all.jobs.filter((j) => filter.job === undefined || j.jobId === filter.job),
    ...filter,
  };
}

function allAttention(from: string, to: string): AttentionView {
  return {
    from,
    to,
    total: { FAILED: 1, PENDING: 1, RUNNING: 1, BUFFERED: 1 },
    jobs: [
      { jobId: 'dense', counts: { PENDING: 1 } },
      { jobId: 'weekly-export', counts: { FAILED: 1, RUNNING: 1, BUFFERED: 1 } },
    ],
    items: [
      {
        kind: 'failed',
        jobId: 'weekly-export',
        scheduledTime: FAILED_TIME,
        status: 'FAILED',
        error: 'TimeoutError: the export API did not answer in 30 s',
      },
      {
        kind: 'late',
        jobId: 'dense',
        scheduledTime: iso(NOW - 40 * MINUTE),
        status: 'PENDING',
        lateByMs: 30 * MINUTE,
        lateAgainst: 'lateAfter',
      },
      {
        kind: 'running',
        jobId: 'weekly-export',
        scheduledTime: RUNNING_TIME,
        status: 'RUNNING',
        progress: { done: 6_200, total: 10_000, at: iso(NOW - 10_000) },
        leaseAgeMs: HOUR,
        heartbeatAgeMs: 20_000,
      },
      { kind: 'buffered', jobId: 'weekly-export', scheduledTime: iso(NOW - 0.5 * HOUR), status: 'BUFFERED' },
    ],
    truncated: false,
    paused: [
      {
        jobId: 'dense',
        at: iso(NOW - 20 * MINUTE),
        by: 'alice via console',
        note: 'upstream maintenance until 10:00',
        cause: 'operator',
      },
    ],
    readUnits: 12.5,
  };
}
