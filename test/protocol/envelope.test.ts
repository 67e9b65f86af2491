import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEnvelope, ENVELOPE_VERSION, encodeEnvelope } from '../../functions/protocol/envelope';
import { InvalidInputError } from '../../functions/protocol/errors';
import { decodeScheduleEvent as decodeWithWorkers } from '../../functions/protocol/schedule-event';

const KNOWN = new Set(['occurrence-digest', 'nightly-export']);
const WORKERS = new Set(['reports', 'exports']);
/** A schedule event with a valid route, as a job's schedule sends it, with the given fields over it. */
const scheduleEvent = (fields: Record<string, unknown>) => ({
  worker: 'exports',
  deadlineSeconds: 3_600,
  retentionDays: 7,
  ...fields,
});
const decodeScheduleEvent = (event: unknown, workers: ReadonlySet<string> = WORKERS) =>
  decodeWithWorkers(
    typeof event === 'object' && event !== null && !Array.isArray(event)
      ? scheduleEvent(event as Record<string, unknown>)
      : event,
    workers,
  );

/** The InvalidInputError a call throws; fails the test if it does not throw one. */
function rejection(call: () => unknown): InvalidInputError {
  try {
    call();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidInputError);
    return e as InvalidInputError;
  }
  throw new Error('expected an InvalidInputError');
}

const body = (fields: Record<string, unknown>) => JSON.stringify(fields);

describe('decodeEnvelope (queue message)', () => {
  it('decodes a valid message into a key with the normalised time', () => {
    expect(
      decodeEnvelope(body({ v: 1, jobId: 'occurrence-digest', scheduledTime: '2026-11-30T07:00:00+01:00' }), KNOWN),
    ).toEqual({ jobId: 'occurrence-digest', scheduledTime: '2026-11-30T06:00:00Z' });
  });

  it('accepts a .000 fraction and drops it from the key', () => {
    expect(
      decodeEnvelope(body({ v: 1, jobId: 'nightly-export', scheduledTime: '2026-11-30T06:00:00.000Z' }), KNOWN)
        .scheduledTime,
    ).toBe('2026-11-30T06:00:00Z');
  });

  it('round-trips what encodeEnvelope writes', () => {
    const key = { jobId: 'occurrence-digest', scheduledTime: '2026-11-30T06:00:00Z' };
    expect(JSON.parse(encodeEnvelope(key))).toEqual({ v: ENVELOPE_VERSION, ...key });
    expect(decodeEnvelope(encodeEnvelope(key), KNOWN)).toEqual(key);
  });

  it.each([
    ['a non-zero fraction', '2026-11-30T06:00:00.250Z', /whole seconds/],
    ['30 February', '2026-02-30T00:00:00Z', /not a real date/],
    ['a missing zone', '2026-11-30T06:00:00', /with a zone/],
  ])('rejects %s in scheduledTime', (_, scheduledTime, pattern) => {
    const e = rejection(() => decodeEnvelope(body({ v: 1, jobId: 'occurrence-digest', scheduledTime }), KNOWN));
    expect(e.where).toBe('queue message');
    expect(e.problems).toEqual([expect.stringMatching(pattern)]);
  });

  it('rejects a body that is not JSON, quoting its start', () => {
    const e = rejection(() => decodeEnvelope('{"v":1,', KNOWN));
    expect(e.problems).toEqual([expect.stringMatching(/^body is not JSON: /)]);
    expect(e.message).toContain('{\\"v\\":1,');
  });

  it.each([
    ['an array', '[1, 2]', /got an array/],
    ['null', 'null', /got null/],
    ['a string', '"occurrence-digest"', /got "occurrence-digest"/],
    ['a number', '42', /got number/],
  ])('rejects %s as not an object', (_, text, pattern) => {
    const e = rejection(() => decodeEnvelope(text, KNOWN));
    expect(e.problems).toEqual([expect.stringMatching(/^must be a JSON object/)]);
    expect(e.problems[0]).toMatch(pattern);
  });

  it.each([[2], [0], ['1'], [undefined]])('rejects version %j', (v) => {
    const e = rejection(() =>
      decodeEnvelope(body({ v, jobId: 'occurrence-digest', scheduledTime: '2026-11-30T06:00:00Z' }), KNOWN),
    );
    expect(e.problems).toEqual([expect.stringMatching(/^v must be 1, got /)]);
  });

  it('rejects an unknown job and lists the known ones', () => {
    const e = rejection(() =>
      decodeEnvelope(body({ v: 1, jobId: 'weekly', scheduledTime: '2026-11-30T06:00:00Z' }), KNOWN),
    );
    expect(e.problems).toEqual([
      'jobId "weekly" is not one of the jobs this worker\'s entry implements (defineWorker({ jobs }) or defineJob) (it has: occurrence-digest, nightly-export)',
    ]);
  });

  it('lists every wrong field in one error: missing jobId and a bad time together', () => {
    const e = rejection(() => decodeEnvelope(body({ v: 1, scheduledTime: 'yesterday' }), KNOWN));
    expect(e.problems).toHaveLength(2);
    expect(e.problems[0]).toBe('jobId must be a non-empty string, got nothing');
    expect(e.problems[1]).toMatch(/^scheduledTime must be ISO-8601 with a zone/);
    expect(e.message).toContain('jobId');
    expect(e.message).toContain('scheduledTime');
  });

  it('lists a wrong version together with the wrong key fields', () => {
    const e = rejection(() => decodeEnvelope(body({ v: 7, jobId: '', scheduledTime: 5 }), KNOWN));
    expect(e.problems.map((p) => p.split(' ')[0])).toEqual(['v', 'jobId', 'scheduledTime']);
  });
});

describe('decodeScheduleEvent (the schedule input to the trigger)', () => {
  it('decodes the key, normalised, and the route', () => {
    expect(decodeScheduleEvent({ jobId: 'nightly-export', scheduledTime: '2026-11-30T07:00:00+01:00' })).toEqual({
      jobId: 'nightly-export',
      scheduledTime: '2026-11-30T06:00:00Z',
      worker: 'exports',
      deadlineSeconds: 3_600,
      retentionDays: 7,
    });
  });

  it('names the schedule event as the invalid input and lists every problem', () => {
    const e = rejection(() =>
      decodeScheduleEvent({ jobId: 42, scheduledTime: '2026-11-30', deadlineSeconds: 1.5, retentionDays: 'x' }),
    );
    expect(e.where).toBe('schedule event');
    expect(e.problems).toEqual([
      'jobId must be a job or worker id, got 42',
      expect.stringMatching(/^scheduledTime must be ISO-8601 with a zone/),
      expect.stringMatching(/^deadlineSeconds must be a whole number from 60 to \d+, got 1\.5$/),
      expect.stringMatching(/^retentionDays must be a whole number from 1 to 3650, got "x"/),
    ]);
  });

  it('rejects a worker the trigger does not know, listing the ones it does', () => {
    const e = rejection(() =>
      decodeScheduleEvent({ jobId: 'nightly-export', scheduledTime: '2026-11-30T06:00:00Z', worker: 'nope' }),
    );
    expect(e.problems).toEqual(['worker "nope" is not one of the trigger\'s workers (it has: reports, exports)']);
  });

  it('rejects a retention that does not outlive the deadline: the row could be deleted while it still runs', () => {
    const e = rejection(() =>
      decodeScheduleEvent({
        jobId: 'nightly-export',
        scheduledTime: '2026-11-30T06:00:00Z',
        deadlineSeconds: 86_400,
        retentionDays: 1,
      }),
    );
    expect(e.problems).toEqual(['retentionDays (1) must outlive deadlineSeconds (86400)']);
  });

  it('rejects a key alone (a schedule from before workers): the trigger cannot tell which queue', () => {
    const e = rejection(() =>
      decodeWithWorkers({ jobId: 'nightly-export', scheduledTime: '2026-11-30T06:00:00Z' }, WORKERS),
    );
    expect(e.problems.map((p) => p.split(' ')[0])).toEqual(['worker', 'deadlineSeconds', 'retentionDays']);
  });

  it.each([[undefined], [null], [[]], ['text']])('rejects %j as not an object', (event) => {
    expect(rejection(() => decodeScheduleEvent(event)).problems[0]).toMatch(/^must be a JSON object/);
  });
});

describe('the trigger and the worker accept the same scheduled times', () => {
  /** The worker's verdict on the message the trigger would enqueue for `event`, or its own problems. */
  const workerVerdict = (scheduledTime: string) => {
    try {
      return decodeEnvelope(body({ v: 1, jobId: 'nightly-export', scheduledTime }), KNOWN).scheduledTime;
    } catch (e) {
      return (e as InvalidInputError).problems;
    }
  };
  const triggerVerdict = (scheduledTime: string) => {
    try {
      return decodeScheduleEvent({ jobId: 'nightly-export', scheduledTime }).scheduledTime;
    } catch (e) {
      return (e as InvalidInputError).problems;
    }
  };

  it.each(['9999-12-31T23:59:59-00:01', '0000-01-01T00:30:00+01:00', '9999-12-31T23:59:59Z'])(
    'rejects %s in both, so no row is recorded that its message cannot name',
    (scheduledTime) => {
      expect(triggerVerdict(scheduledTime)).toEqual([expect.stringMatching(/^scheduledTime must be from 1970/)]);
      expect(workerVerdict(scheduledTime)).toEqual(triggerVerdict(scheduledTime));
    },
  );

  it('gives the same verdict on any time, and the worker accepts the key the trigger enqueues', () => {
    const pad = (n: number, width = 2) => String(n).padStart(width, '0');
    const time = fc
      .record({
        y: fc.oneof(
          fc.integer({ min: 0, max: 9999 }),
          fc.integer({ min: 1968, max: 1971 }),
          fc.integer({ min: 2198, max: 2201 }),
        ),
        mo: fc.integer({ min: 0, max: 13 }),
        d: fc.integer({ min: 0, max: 32 }),
        h: fc.integer({ min: 0, max: 24 }),
        mi: fc.integer({ min: 0, max: 60 }),
        s: fc.integer({ min: 0, max: 60 }),
        fraction: fc.constantFrom('', '.000', '.5'),
        zone: fc.oneof(
          fc.constant('Z'),
          fc
            .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
            .map(([sign, h, m]) => `${sign}${pad(h)}:${pad(m)}`),
        ),
      })
      .map((t) => `${pad(t.y, 4)}-${pad(t.mo)}-${pad(t.d)}T${pad(t.h)}:${pad(t.mi)}:${pad(t.s)}${t.fraction}${t.zone}`);
    fc.assert(
      fc.property(time, (scheduledTime) => {
        const fromTrigger = triggerVerdict(scheduledTime);
        expect(workerVerdict(scheduledTime)).toEqual(fromTrigger);
        if (typeof fromTrigger === 'string') {
          expect(fromTrigger).toMatch(/^(19[7-9]\d|2[01]\d\d)-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
          expect(
            decodeEnvelope(encodeEnvelope({ jobId: 'nightly-export', scheduledTime: fromTrigger }), KNOWN),
          ).toEqual({
            jobId: 'nightly-export',
            scheduledTime: fromTrigger,
          });
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('a huge bad value is quoted by its start and length only', () => {
  const MB = 1_000_000;

  it.each<[string, Record<string, unknown>]>([
    ['scheduledTime', { v: 1, jobId: 'nightly-export', scheduledTime: '2'.repeat(MB) }],
    ['jobId', { v: 1, jobId: 'j'.repeat(MB), scheduledTime: '2026-11-30T06:00:00Z' }],
    ['v', { v: 'v'.repeat(MB), jobId: 'nightly-export', scheduledTime: '2026-11-30T06:00:00Z' }],
  ])('a 1 MB %s in a queue message', (field, fields) => {
    const e = rejection(() => decodeEnvelope(body(fields), KNOWN));
    expect(e.problems).toEqual([expect.stringMatching(new RegExp(`^${field} .*…" \\(1000000 chars\\)`))]);
    expect(e.message.length).toBeLessThan(400);
  });

  it('a 1 MB scheduledTime in a schedule event', () => {
    const e = rejection(() => decodeScheduleEvent({ jobId: 'nightly-export', scheduledTime: `2026${'9'.repeat(MB)}` }));
    expect(e.message.length).toBeLessThan(300);
    expect(e.message).toContain('(1000004 chars)');
  });

  it('a 1 MB body that is not JSON', () => {
    const e = rejection(() => decodeEnvelope(`{${'x'.repeat(MB)}`, KNOWN));
    expect(e.message.length).toBeLessThan(200);
    expect(e.message).toContain('(1000001 chars)');
  });
});
