import { describe, expect, it } from 'vitest';
import type { OccurrenceReader } from '../../examples/sample-app/jobs/occurrence-digest';
import { DIGEST_PERIOD_MS, occurrenceDigestJob, renderDigest } from '../../examples/sample-app/jobs/occurrence-digest';
import { type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { Logger } from '../../functions/protocol/ports';
import { detachedRunContext } from '../../functions/protocol/resumable-run';

const FROM = '2026-11-29T06:00:00Z';
const TO = '2026-11-30T06:00:00Z';
const STATUSES = Object.values(OccurrenceStatus);

const occ = (
  jobId: string,
  scheduledTime: string,
  status: OccurrenceStatus,
  fields: Partial<Occurrence> = {},
): Occurrence => ({
  jobId,
  scheduledTime,
  status,
  attempt: 1,
  deadlineAt: '2026-11-30T12:00:00.000Z',
  createdAt: scheduledTime,
  ttl: 0,
  ...fields,
});

/** The table of a digest as { job: { column: value } }, read from the Markdown. */
function tableOf(markdown: string): Record<string, Record<string, string>> {
  const rows = markdown.split('\n').filter((l) => l.startsWith('|'));
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim());
  const header = cells(rows[0]);
  const table: Record<string, Record<string, string>> = {};
  for (const line of rows.slice(2)) {
    const values = cells(line);
    expect(values).toHaveLength(header.length);
    table[values[0]] = Object.fromEntries(header.map((h, i) => [h, values[i]]));
  }
  return table;
}

/** The bullet lines under a `## title` heading. */
function section(markdown: string, title: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(`## ${title}`);
  if (start < 0) return [];
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('## ')) break;
    if (line.startsWith('- ')) out.push(line);
  }
  return out;
}

describe('renderDigest', () => {
  const rows: Occurrence[] = [
    occ('digest', '2026-11-29T07:00:00Z', OccurrenceStatus.SUCCEEDED, {
      claimedAt: '2026-11-29T07:00:01.000Z',
      succeededAt: '2026-11-29T07:00:11.000Z',
    }),
    occ('digest', '2026-11-29T08:00:00Z', OccurrenceStatus.SUCCEEDED, {
      attempt: 3,
      claimedAt: '2026-11-29T08:10:00.000Z',
      succeededAt: '2026-11-29T08:10:30.000Z',
    }),
    occ('digest', '2026-11-29T09:00:00Z', OccurrenceStatus.FAILED, {
      attempt: 4,
      lastError: 'attempt 4: upstream | timed out\nafter 30 s',
    }),
    occ('export', '2026-11-30T05:00:00Z', OccurrenceStatus.RETRY_WAIT, {
      attempt: 2,
      nextAttemptAt: '2026-11-30T05:10:00.000Z',
    }),
    occ('export', '2026-11-30T04:00:00Z', OccurrenceStatus.FAILED, { attempt: 1 }),
    occ('export', '2026-11-30T05:30:00Z', OccurrenceStatus.PENDING, { attempt: 0 }),
    occ('export', '2026-11-30T05:45:00Z', OccurrenceStatus.RUNNING),
  ];

  it('states the period', () => {
    expect(renderDigest(rows, FROM, TO)).toContain(`Period: ${FROM} to ${TO}`);
  });

  it('counts occurrences per job and status, with retries (attempts beyond the first) and the median run time', () => {
    const table = tableOf(renderDigest(rows, FROM, TO));
    expect(Object.keys(table)).toEqual(['digest', 'export']); // sorted by job id
    const counts = (job: string) => Object.fromEntries(STATUSES.map((s) => [s, Number(table[job][s])]));
    const policies = { SKIPPED: 0, BUFFERED: 0, CANCELLED: 0 };
    expect(counts('digest')).toEqual({ PENDING: 0, RUNNING: 0, RETRY_WAIT: 0, SUCCEEDED: 2, FAILED: 1, ...policies });
    expect(counts('export')).toEqual({ PENDING: 1, RUNNING: 1, RETRY_WAIT: 1, SUCCEEDED: 0, FAILED: 1, ...policies });
    expect(table.digest.retries).toBe('5'); // (1-1) + (3-1) + (4-1)
    expect(table.export.retries).toBe('1');
    expect(table.digest['median run (s)']).toBe('20.0'); // runs of 10 s and 30 s
    expect(table.export['median run (s)']).toBe('-'); // nothing succeeded
  });

  it('lists failed occurrences oldest first with their last error on one line, escaping |', () => {
    const failed = section(renderDigest(rows, FROM, TO), 'Failed');
    expect(failed).toEqual([
      '- digest at 2026-11-29T09:00:00Z, after 4 attempt(s): attempt 4: upstream \\| timed out after 30 s',
      '- export at 2026-11-30T04:00:00Z, after 1 attempt(s): (no error recorded)',
    ]);
  });

  it('lists unfinished occurrences with their status and next attempt', () => {
    const open = section(renderDigest(rows, FROM, TO), 'Not finished');
    expect(open).toEqual([
      '- export at 2026-11-30T05:00:00Z: RETRY_WAIT, attempt 2, next at 2026-11-30T05:10:00.000Z',
      '- export at 2026-11-30T05:30:00Z: PENDING, attempt 0',
      '- export at 2026-11-30T05:45:00Z: RUNNING, attempt 1',
    ]);
  });

  it('leaves out the Failed and Not finished sections when everything succeeded', () => {
    const md = renderDigest([rows[0], rows[1]], FROM, TO);
    expect(section(md, 'Failed')).toEqual([]);
    expect(md).not.toContain('## Failed');
    expect(md).not.toContain('## Not finished');
  });

  it('says so for an empty period, with no table', () => {
    const md = renderDigest([], FROM, TO);
    expect(md).toContain('No occurrences were scheduled in this period.');
    expect(md).toContain(`Period: ${FROM} to ${TO}`);
    expect(md.split('\n').some((l) => l.startsWith('|'))).toBe(false);
  });

  it('keeps the table intact whatever the errors contain', () => {
    const md = renderDigest(
      [occ('a', '2026-11-29T07:00:00Z', OccurrenceStatus.FAILED, { lastError: '| x | y |\n| --- |' })],
      FROM,
      TO,
    );
    expect(tableOf(md).a.FAILED).toBe('1');
    expect(section(md, 'Failed')[0]).not.toMatch(/(^|[^\\])\|/);
  });
});

describe('occurrenceDigestJob', () => {
  const quietLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };

  /** A reader whose index has every status but announced successes: those are in their job's partition only. */
  function fakeReader(byStatus: Partial<Record<OccurrenceStatus, Occurrence[]>>) {
    const calls: { status: OccurrenceStatus; from: string; to: string; signal?: AbortSignal }[] = [];
    const jobCalls: { jobId: string; from: string; to: string; statuses?: readonly OccurrenceStatus[] }[] = [];
    const reader: OccurrenceReader = {
      listByStatus: async (status, from, to, signal) => {
        calls.push({ status, from, to, signal });
        return status === OccurrenceStatus.SUCCEEDED ? [] : (byStatus[status] ?? []);
      },
      listJobNewestFirst: async (jobId, range, statuses) => {
        jobCalls.push({ jobId, from: range.from, to: range.to, statuses });
        return (byStatus.SUCCEEDED ?? []).filter((o) => o.jobId === jobId);
      },
    };
    return { reader, calls, jobCalls };
  }

  it('queries [scheduledTime - 24 h, scheduledTime): the index for every status but SUCCEEDED, each job for its successes', async () => {
    const failed = occ('export', '2026-11-30T04:00:00Z', OccurrenceStatus.FAILED, { lastError: 'boom' });
    const ok = occ('digest', '2026-11-29T06:00:00Z', OccurrenceStatus.SUCCEEDED);
    const { reader, calls, jobCalls } = fakeReader({ FAILED: [failed], SUCCEEDED: [ok] });
    const job = occurrenceDigestJob(() => reader, ['digest', 'export']);
    const signal = new AbortController().signal;

    const report = await job.run(occ('occurrence-digest', TO, OccurrenceStatus.RUNNING), {
      ...detachedRunContext(),
      signal,
      logger: quietLogger,
    });

    expect(job.reportExtension).toBe('md');
    expect(DIGEST_PERIOD_MS).toBe(24 * 60 * 60 * 1000);
    expect(calls.map((c) => c.status).sort()).toEqual(STATUSES.filter((s) => s !== 'SUCCEEDED').sort());
    for (const c of calls) {
      expect(c).toMatchObject({ from: FROM, to: TO });
      expect(c.signal).toBe(signal); // the job can be cancelled mid-query
    }
    expect(jobCalls).toEqual(
      ['digest', 'export'].map((jobId) => ({ jobId, from: FROM, to: TO, statuses: [OccurrenceStatus.SUCCEEDED] })),
    );
    expect(report.contentType).toMatch(/^text\/markdown/);
    expect(report.body).toBe(renderDigest([failed, ok], FROM, TO));
  });
});
