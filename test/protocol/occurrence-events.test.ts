import { describe, expect, it } from 'vitest';
import { occurrenceHash } from '../../console/web/route';
import { OccurrenceStatus, TERMINAL_STATUSES } from '../../functions/protocol/occurrence';
import {
  DetailType,
  EVENT_SCHEMA_VERSION,
  EVENT_SOURCE,
  eventOfChange,
  type ImageChange,
  type MappedChange,
  type OccurrenceStateChange,
  tableOfStreamArn,
} from '../../functions/protocol/occurrence-events';

const TABLE = { tableName: 'Stack-Occurrences-ABC', region: 'eu-central-1' };
const SCHEDULED = '2026-11-30T06:00:00Z';
const base = {
  jobId: 'digest',
  scheduledTime: SCHEDULED,
  attempt: 2,
  worker: 'default',
  deadlineAt: '2026-11-30T12:00:00.000Z',
  createdAt: '2026-11-30T06:00:00.120Z',
  ttl: 1_800_000_000,
};
const terminalFields: Record<string, Record<string, unknown>> = {
  SUCCEEDED: { reportKey: `reports/digest/${SCHEDULED}.txt`, succeededAt: '2026-11-30T06:01:00.000Z' },
  FAILED: { lastError: 'Error: upstream down', failedAt: '2026-11-30T06:02:00.000Z' },
  SKIPPED: { skipReason: 'overlap', yieldedTo: '2026-11-30T05:00:00Z', skippedAt: '2026-11-30T06:00:01.000Z' },
  // The change's time last: the test of the event's time reads it from there.
  CANCELLED: { cancelledBy: '2026-11-30T07:00:00Z', cancelledAt: '2026-11-30T06:03:00.000Z' },
};
const NON_TERMINAL = Object.values(OccurrenceStatus).filter((s) => !TERMINAL_STATUSES.includes(s));

function change(
  old: Record<string, unknown> | undefined,
  now: Record<string, unknown>,
  eventName = 'MODIFY',
): ImageChange {
  return { eventName, oldImage: old, newImage: now, table: TABLE, recordedAt: '2026-11-30T06:05:00.000Z' };
}
const row = (status: string, extra: Record<string, unknown> = {}) => ({
  ...base,
  status,
  ...terminalFields[status],
  ...extra,
});
function detailOf(mapped: MappedChange): OccurrenceStateChange {
  if (mapped.kind !== 'event' || mapped.event.detailType !== DetailType.occurrence)
    throw new Error(`expected an occurrence event, got ${JSON.stringify(mapped)}`);
  return mapped.event.detail;
}

describe('eventOfChange: terminal transitions', () => {
  for (const status of TERMINAL_STATUSES) {
    for (const previous of NON_TERMINAL) {
      it(`${previous} -> ${status} is one "Occurrence State Change" event, version 1, at the change's time`, () => {
        const mapped = eventOfChange(change(row(previous), row(status)), { bucketName: 'reports-bucket' });
        expect(mapped.kind).toBe('event');
        if (mapped.kind !== 'event') return;
        expect(mapped.event.detailType).toBe('Occurrence State Change');
        expect(mapped.event.time).toBe(Object.values(terminalFields[status]).at(-1));
        expect(mapped.event.detail).toMatchObject({
          version: '1',
          jobId: 'digest',
          scheduledTime: SCHEDULED,
          status,
          previousStatus: previous,
          attempt: 2,
          worker: 'default',
        });
      });
    }
  }

  it('carries the report key and URI of a SUCCEEDED occurrence', () => {
    const detail = detailOf(eventOfChange(change(row('RUNNING'), row('SUCCEEDED')), { bucketName: 'reports-bucket' }));
    expect(detail.report).toEqual({
      key: `reports/digest/${SCHEDULED}.txt`,
      uri: `s3://reports-bucket/reports/digest/${SCHEDULED}.txt`,
    });
    // Not statusReason's "not announced yet": the announcement is the notifier's, after this change.
    expect(detail.reason).toBe('report committed');
  });

  it('carries the error and the reason of a FAILED one, and the skip reason of a SKIPPED one', () => {
    const failed = detailOf(eventOfChange(change(row('RETRY_WAIT'), row('FAILED'))));
    expect(failed).toMatchObject({ error: 'Error: upstream down', reason: 'failed: Error: upstream down' });
    expect(failed.report).toBeUndefined();
    const skipped = detailOf(eventOfChange(change(row('BUFFERED'), row('SKIPPED'))));
    expect(skipped).toMatchObject({ skipReason: 'overlap', reason: `overlap, yielded to 2026-11-30T05:00:00Z` });
  });

  it("names the operator and the note of an operator's cancel, and who asked for a run", () => {
    const cancelled = row('CANCELLED', {
      cancelledBy: undefined,
      cancelledByOperator: 'ana@laptop (arn:aws:sts::1:assumed-role/ops/ana)',
      cancelNote: 'upstream broken',
    });
    expect(detailOf(eventOfChange(change(row('PENDING'), cancelled)))).toMatchObject({
      by: 'ana@laptop (arn:aws:sts::1:assumed-role/ops/ana)',
      note: 'upstream broken',
    });
    const run = row('SUCCEEDED', { requestedBy: 'bo@host', origin: 'run' });
    expect(detailOf(eventOfChange(change(row('RUNNING', { requestedBy: 'bo@host' }), run))).by).toBe('bo@host');
  });

  it('maps an occurrence of a run-time schedule to its job and schedule key, and links to both consoles', () => {
    const keyed = row('FAILED', { jobId: 'invoice#customer-42', scheduleKey: 'customer-42' });
    const detail = detailOf(
      eventOfChange(change(row('RUNNING', { jobId: 'invoice#customer-42' }), keyed), {
        consoleUrl: 'http://127.0.0.1:8765/',
      }),
    );
    expect(detail).toMatchObject({ jobId: 'invoice', scheduleKey: 'customer-42' });
    expect(detail.links.consoleRoute).toBe(occurrenceHash('invoice', SCHEDULED, 'customer-42'));
    expect(detail.links.console).toBe(`http://127.0.0.1:8765/${occurrenceHash('invoice', SCHEDULED, 'customer-42')}`);
    const item = new URL(detail.links.item);
    expect(item.host).toBe('eu-central-1.console.aws.amazon.com');
    const query = new URLSearchParams(item.hash.slice('#edit-item?'.length));
    expect(Object.fromEntries(query)).toMatchObject({
      table: TABLE.tableName,
      pk: 'invoice#customer-42',
      sk: SCHEDULED,
    });
  });

  it('maps an occurrence recorded SKIPPED as missed (an INSERT) with no previous status', () => {
    const missed = row('SKIPPED', { skipReason: 'missed', createdAt: '2026-11-30T09:00:00.000Z', attempt: 0 });
    const detail = detailOf(eventOfChange(change(undefined, missed, 'INSERT')));
    expect(detail).toMatchObject({ previousStatus: null, status: 'SKIPPED', skipReason: 'missed', attempt: 0 });
    expect(detail.reason).toMatch(/^missed: recorded 3 h after its time/);
  });

  it('names the source and version every consumer matches on', () => {
    expect(EVENT_SOURCE).toBe('scheduled-jobs-stack');
    expect(EVENT_SCHEMA_VERSION).toBe('1');
  });
});

describe('eventOfChange: no event', () => {
  const none = { kind: 'none' };
  it('for a change between two statuses that are not final (claim, release, buffer, reopen)', () => {
    for (const from of NON_TERMINAL)
      for (const to of NON_TERMINAL) expect(eventOfChange(change(row(from), row(to)))).toEqual(none);
    expect(eventOfChange(change(row('FAILED'), row('PENDING')))).toEqual(none);
  });

  it('for a write that keeps a final status (the notifier recording notifiedAt)', () => {
    for (const status of TERMINAL_STATUSES)
      expect(eventOfChange(change(row(status), row(status, { notifiedAt: 'x' })))).toEqual(none);
  });

  it('for an insert that is not final, and for a removal (the TTL)', () => {
    expect(eventOfChange(change(undefined, row('PENDING'), 'INSERT'))).toEqual(none);
    expect(eventOfChange({ eventName: 'REMOVE', oldImage: row('SUCCEEDED'), table: TABLE, recordedAt: 'x' })).toEqual(
      none,
    );
  });
});

describe('eventOfChange: the deterministic eventId', () => {
  const id = (old: Record<string, unknown>, now: Record<string, unknown>) =>
    detailOf(eventOfChange(change(old, now))).eventId;

  it('is the same for every delivery of one change, whatever else the record says', () => {
    const first = id(row('RUNNING'), row('SUCCEEDED'));
    expect(id(row('RUNNING', { heartbeatAt: 'later' }), row('SUCCEEDED'))).toBe(first);
    expect(first).toMatch(/^[0-9a-f]{32}$/);
  });

  it('differs by key, status and attempt', () => {
    const ids = new Set([
      id(row('RUNNING'), row('FAILED')),
      id(row('RUNNING'), row('SUCCEEDED')),
      id(row('RUNNING'), row('FAILED', { attempt: 3 })),
      id(row('RUNNING'), row('FAILED', { scheduledTime: '2026-11-30T07:00:00Z' })),
      id(row('RUNNING'), row('FAILED', { jobId: 'other' })),
    ]);
    expect(ids.size).toBe(5);
  });

  it('differs for a FAILED after an operator reopened the occurrence (attempt restarts at 0)', () => {
    const firstFailure = id(row('RETRY_WAIT', { attempt: 3 }), row('FAILED', { attempt: 3 }));
    const afterReopen = id(
      row('RUNNING', { attempt: 3, previousAttempts: 3 }),
      row('FAILED', { attempt: 3, previousAttempts: 3, manualRetries: 1 }),
    );
    const unheldAfterReopen = id(
      row('PENDING', { attempt: 0, previousAttempts: 3, manualRetries: 1 }),
      row('FAILED', { attempt: 0, previousAttempts: 3, manualRetries: 1 }),
    );
    expect(new Set([firstFailure, afterReopen, unheldAfterReopen]).size).toBe(3);
  });
});

describe('eventOfChange: Job Paused', () => {
  const state = (extra: Record<string, unknown> = {}) => ({
    jobId: 'digest',
    scheduledTime: '#job',
    version: 7,
    consecutiveFailures: 3,
    ...extra,
  });
  const paused = {
    pausedAt: '2026-11-30T06:10:00.000Z',
    pausedBy: 'pauseAfterFailures',
    pauseCause: 'failures',
    pauseNote: 'paused after 3 failures in a row',
  };

  it('is one event when the job pauses itself after its failures', () => {
    const mapped = eventOfChange(change(state(), state({ ...paused, version: 8 })));
    expect(mapped.kind).toBe('event');
    if (mapped.kind !== 'event') return;
    expect(mapped.event).toMatchObject({
      detailType: 'Job Paused',
      time: paused.pausedAt,
      detail: {
        version: '1',
        jobId: 'digest',
        pausedAt: paused.pausedAt,
        pausedBy: 'pauseAfterFailures',
        cause: 'failures',
        note: paused.pauseNote,
        consecutiveFailures: 3,
        links: { consoleRoute: '#/job/digest' },
      },
    });
    expect(mapped.event.detail.eventId).toMatch(/^[0-9a-f]{32}$/);
  });

  it("is no event for an operator's pause, a later write of the paused row, a resume, or a slot write", () => {
    const none = { kind: 'none' };
    const byOperator = { ...paused, pauseCause: 'operator', pausedBy: 'ana' };
    expect(eventOfChange(change(state(), state(byOperator)))).toEqual(none);
    expect(eventOfChange(change(state(paused), state({ ...paused, slotTime: 'x' })))).toEqual(none);
    expect(eventOfChange(change(state(paused), state({ resumedAt: 'y' })))).toEqual(none);
    expect(eventOfChange(change(state(), state({ slotTime: SCHEDULED })))).toEqual(none);
  });

  it('reports a pause whose time is not a time as malformed', () => {
    expect(eventOfChange(change(state(), state({ ...paused, pausedAt: 'soon' })))).toEqual({
      kind: 'malformed',
      problem: 'pausedAt "soon" is not a time',
    });
  });
});

describe('eventOfChange: malformed images', () => {
  it('names what is wrong, and makes no event', () => {
    expect(eventOfChange(change(row('RUNNING'), row('SUCCEEDED', { reportKey: undefined })))).toEqual({
      kind: 'malformed',
      problem: 'SUCCEEDED without a reportKey',
    });
    expect(eventOfChange(change(row('RUNNING'), row('FAILED', { attempt: 'two' })))).toEqual({
      kind: 'malformed',
      problem: 'no attempt',
    });
    expect(eventOfChange(change(row('RUNNING'), row('FAILED', { jobId: '' })))).toEqual({
      kind: 'malformed',
      problem: 'no jobId',
    });
    expect(eventOfChange(change(undefined, row('FAILED')))).toMatchObject({ kind: 'malformed' });
    expect(eventOfChange(change(row('LOST'), row('FAILED')))).toEqual({
      kind: 'malformed',
      problem: 'old image status "LOST" is not a status',
    });
  });
});

describe('tableOfStreamArn', () => {
  it("reads the table's name and Region from its stream's ARN", () => {
    expect(
      tableOfStreamArn('arn:aws:dynamodb:eu-central-1:123456789012:table/Stack-Occ-1/stream/2026-11-30T00:00:00.000'),
    ).toEqual({ region: 'eu-central-1', tableName: 'Stack-Occ-1' });
    expect(tableOfStreamArn('arn:aws:sqs:eu-central-1:1:queue')).toBeUndefined();
    expect(tableOfStreamArn(undefined)).toBeUndefined();
  });
});
