import { describe, expect, it } from 'vitest';
import { decodeEnvelope } from '../../functions/protocol/envelope';
import { InvalidInputError } from '../../functions/protocol/errors';
import {
  type JobSettings,
  QUEUE_RETENTION_SECONDS,
  SQS_MAX_VISIBILITY_SECONDS,
  withDefaults,
} from '../../functions/protocol/job-settings';
import { type Occurrence, type OccurrenceKey, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type { CreateResult, Logger, OccurrenceStore, WorkQueue } from '../../functions/protocol/ports';
import { recordOccurrence, type TriggerDeps } from '../../functions/protocol/record-occurrence';

const NOW = Date.parse('2026-11-30T06:00:00.250Z'); // the trigger runs a little after the scheduled time
const JOB_ID = 'occurrence-digest';
const WORKER = 'digests';
const settings: JobSettings = withDefaults({ id: JOB_ID, retentionDays: 30, retry: { deadlineSeconds: 2 * 60 * 60 } });

const keyString = (k: OccurrenceKey) => `${k.jobId}#${k.scheduledTime}`;
const notUsed = (name: string) => () => Promise.reject(new Error(`${name} must not be called by the trigger`));

/** An in-memory store that implements the atomic insert; nothing else is part of the trigger's contract. */
class MemoryStore implements OccurrenceStore {
  readonly rows = new Map<string, Occurrence>();
  createCalls = 0;

  async create(occurrence: Occurrence): Promise<CreateResult> {
    this.createCalls++;
    const existing = this.rows.get(keyString(occurrence));
    if (existing) return { created: false, existing };
    this.rows.set(keyString(occurrence), occurrence);
    return { created: true };
  }
  claim = notUsed('claim');
  extend = notUsed('extend');
  markCommitting = notUsed('markCommitting');
  complete = notUsed('complete');
  release = notUsed('release');
  fail = notUsed('fail');
  failUnheld = notUsed('failUnheld');
  completeUnheld = notUsed('completeUnheld');
  skipClaimed = notUsed('skipClaimed');
  bufferClaimed = notUsed('bufferClaimed');
  revoke = notUsed('revoke');
  markNotified = notUsed('markNotified');
  get = notUsed('get');
}

class MemoryQueue implements WorkQueue {
  readonly sent: string[] = [];
  async send(messageBody: string): Promise<void> {
    this.sent.push(messageBody);
  }
  hide = notUsed('hide');
}

const quietLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };

function trigger() {
  const store = new MemoryStore();
  const queue = new MemoryQueue();
  const deps: TriggerDeps = {
    store,
    queues: new Map([[WORKER, queue]]),
    clock: { now: () => NOW },
    logger: quietLogger,
  };
  return { store, queue, deps };
}

/** What the job's schedule sends, in another zone than UTC. */
const event = {
  jobId: JOB_ID,
  scheduledTime: '2026-11-30T07:00:00+01:00',
  worker: WORKER,
  deadlineSeconds: settings.retry.deadlineSeconds,
  retentionDays: settings.retentionDays,
};
const KEY = { jobId: JOB_ID, scheduledTime: '2026-11-30T06:00:00Z' };
const existing = (status: OccurrenceStatus): Occurrence => ({
  ...KEY,
  status,
  attempt: status === OccurrenceStatus.PENDING ? 0 : 1,
  deadlineAt: '2026-11-30T08:00:00.000Z',
  createdAt: '2026-11-30T06:00:00.100Z',
  ttl: 0,
});

describe('recordOccurrence', () => {
  it('records a new occurrence as PENDING, attempt 0, with its deadline and TTL, and enqueues one message naming it', async () => {
    const { store, queue, deps } = trigger();

    await expect(recordOccurrence(deps, event)).resolves.toBe('recorded');

    const scheduledAt = Date.parse('2026-11-30T06:00:00Z');
    expect([...store.rows.values()]).toEqual([
      {
        ...KEY,
        status: OccurrenceStatus.PENDING,
        attempt: 0,
        worker: WORKER,
        createdAt: '2026-11-30T06:00:00.250Z',
        deadlineAt: '2026-11-30T08:00:00.000Z', // scheduled + 2 h deadline
        ttl: scheduledAt / 1000 + 30 * 86_400, // scheduled (epoch seconds) + retention
      },
    ]);
    expect(queue.sent).toHaveLength(1);
    expect(decodeEnvelope(queue.sent[0], new Set([JOB_ID]))).toEqual(KEY);
  });

  it('enqueues again for an occurrence that is still PENDING (the first trigger may have died before enqueueing)', async () => {
    const { store, queue, deps } = trigger();
    const before = existing(OccurrenceStatus.PENDING);
    store.rows.set(keyString(KEY), before);

    await expect(recordOccurrence(deps, event)).resolves.toBe('pending-re-enqueued');

    expect(store.rows.get(keyString(KEY))).toBe(before); // not overwritten
    expect(queue.sent.map((b) => decodeEnvelope(b, new Set([JOB_ID])))).toEqual([KEY]);
  });

  it.each([OccurrenceStatus.RUNNING, OccurrenceStatus.RETRY_WAIT, OccurrenceStatus.SUCCEEDED, OccurrenceStatus.FAILED])(
    'suppresses a duplicate trigger for a %s occurrence: nothing enqueued, nothing changed',
    async (status) => {
      const { store, queue, deps } = trigger();
      const before = existing(status);
      store.rows.set(keyString(KEY), before);

      await expect(recordOccurrence(deps, event)).resolves.toBe('duplicate-suppressed');

      expect(queue.sent).toEqual([]);
      expect(store.rows.get(keyString(KEY))).toBe(before);
    },
  );

  it('enqueues again when the store refuses the insert without returning the existing row (claims are conditional)', async () => {
    const { store, queue, deps } = trigger();
    const blind: TriggerDeps = {
      ...deps,
      store: { ...store, create: async () => ({ created: false, existing: undefined }) },
    };

    await expect(recordOccurrence(blind, event)).resolves.toBe('pending-re-enqueued');

    expect(queue.sent.map((b) => decodeEnvelope(b, new Set([JOB_ID])))).toEqual([KEY]);
  });

  it('a doubled trigger records once and enqueues once more only while PENDING', async () => {
    const { store, queue, deps } = trigger();
    expect(await recordOccurrence(deps, event)).toBe('recorded');
    expect(await recordOccurrence(deps, { ...event, scheduledTime: '2026-11-30T06:00:00Z' })).toBe(
      'pending-re-enqueued',
    );
    expect(store.rows.size).toBe(1);
    expect(queue.sent).toHaveLength(2);
  });

  it.each<[string, unknown]>([
    ['an unknown worker', { ...event, worker: 'nope' }],
    ['a time without a zone', { ...event, scheduledTime: '2026-11-30T06:00:00' }],
    [
      'a key without its route (a schedule from before workers)',
      { jobId: JOB_ID, scheduledTime: '2026-11-30T06:00:00Z' },
    ],
    ['a missing event', undefined],
  ])('rejects %s with InvalidInputError and writes nothing', async (_, bad) => {
    const { store, queue, deps } = trigger();

    await expect(recordOccurrence(deps, bad)).rejects.toBeInstanceOf(InvalidInputError);

    expect(store.createCalls).toBe(0);
    expect(store.rows.size).toBe(0);
    expect(queue.sent).toEqual([]);
  });

  it('does not report the occurrence recorded when the enqueue fails (the Scheduler retries; the row stays PENDING)', async () => {
    const { store, deps } = trigger();
    const failing: TriggerDeps = {
      ...deps,
      queues: new Map([[WORKER, { send: () => Promise.reject(new Error('SQS down')), hide: notUsed('hide') }]]),
    };

    await expect(recordOccurrence(failing, event)).rejects.toThrow('SQS down');
    expect(store.rows.get(keyString(KEY))?.status).toBe(OccurrenceStatus.PENDING);

    // The retried trigger finds the PENDING row and enqueues for it.
    await expect(recordOccurrence(deps, event)).resolves.toBe('pending-re-enqueued');
  });
});

describe('recordOccurrence with countFrom (backfills)', () => {
  const LATER = Date.parse('2026-12-05T10:00:00.000Z'); // five days after the scheduled time

  it('counts the deadline and the retention from countFrom when it is later than the scheduled time', async () => {
    const { store, deps } = trigger();

    await expect(recordOccurrence(deps, event, { countFrom: LATER })).resolves.toBe('recorded');

    const row = store.rows.get(keyString(KEY))!;
    expect(row.scheduledTime).toBe('2026-11-30T06:00:00Z'); // the key is still the scheduled time
    expect(row.deadlineAt).toBe('2026-12-05T12:00:00.000Z'); // countFrom + 2 h, not scheduled + 2 h (long past)
    expect(row.ttl).toBe(LATER / 1000 + 30 * 86_400);
  });

  it('keeps the scheduled time as the base when countFrom is earlier (a deadline is never shortened)', async () => {
    const { store, deps } = trigger();

    await recordOccurrence(deps, event, { countFrom: Date.parse('2026-11-29T00:00:00Z') });

    expect(store.rows.get(keyString(KEY))!.deadlineAt).toBe('2026-11-30T08:00:00.000Z');
  });
});

describe('recordOccurrence at the ends of the scheduled-time range', () => {
  /** The job settings allow no longer deadline (job-settings.ts). */
  const LONGEST_DEADLINE_SECONDS = QUEUE_RETENTION_SECONDS - SQS_MAX_VISIBILITY_SECONDS;
  const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

  it('rejects a time whose deadline would leave the four-digit years, writing nothing', async () => {
    const { store, queue, deps } = trigger();

    await expect(recordOccurrence(deps, { jobId: JOB_ID, scheduledTime: '9999-12-31T23:59:59Z' })).rejects.toThrow(
      InvalidInputError,
    );
    await expect(recordOccurrence(deps, { jobId: JOB_ID, scheduledTime: '9999-12-31T23:59:59-00:01' })).rejects.toThrow(
      /from 1970-01-01T00:00:00Z to 2199-12-31T23:59:59Z in UTC/,
    );
    expect(store.createCalls).toBe(0);
    expect(queue.sent).toHaveLength(0);
  });

  it.each(['1970-01-01T00:00:00Z', '2199-12-31T23:59:59Z'])(
    'gives %s, with the longest deadline allowed, a deadline that sorts after it and after now',
    async (scheduledTime) => {
      const { store, deps } = trigger();
      await recordOccurrence(deps, {
        ...event,
        scheduledTime,
        deadlineSeconds: LONGEST_DEADLINE_SECONDS,
        retentionDays: 3650,
      });

      const row = store.rows.get(keyString({ jobId: JOB_ID, scheduledTime }))!;
      expect(row.deadlineAt).toMatch(ISO_MS);
      expect(row.deadlineAt > row.scheduledTime).toBe(true);
      expect(Date.parse(row.deadlineAt)).toBe(Date.parse(scheduledTime) + LONGEST_DEADLINE_SECONDS * 1000);
      expect(Number.isSafeInteger(row.ttl)).toBe(true);
      expect(row.ttl).toBe(Date.parse(scheduledTime) / 1000 + 3650 * 86_400);
    },
  );
});

describe('recordOccurrence: the catch-up window', () => {
  /** The trigger runs `lateMs` after the scheduled time, for a job with a 10-minute catch-up window. */
  function lateTrigger(lateMs: number) {
    const t = trigger();
    const deps: TriggerDeps = { ...t.deps, clock: { now: () => Date.parse(KEY.scheduledTime) + lateMs } };
    return { ...t, deps, event: { ...event, catchupWindowSeconds: 600 } };
  }

  it('an occurrence first recorded later than the window is recorded SKIPPED as missed, and no message is sent', async () => {
    const { store, queue, deps, event: late } = lateTrigger(600_001);

    await expect(recordOccurrence(deps, late)).resolves.toBe('recorded-missed');

    expect(store.rows.get(keyString(KEY))).toMatchObject({
      status: OccurrenceStatus.SKIPPED,
      skipReason: 'missed',
      skippedAt: new Date(Date.parse(KEY.scheduledTime) + 600_001).toISOString(),
      attempt: 0,
    });
    expect(queue.sent).toEqual([]);
  });

  it('one recorded within the window (at its edge) is PENDING and enqueued', async () => {
    const { store, queue, deps, event: late } = lateTrigger(600_000);

    await expect(recordOccurrence(deps, late)).resolves.toBe('recorded');

    expect(store.rows.get(keyString(KEY))?.status).toBe(OccurrenceStatus.PENDING);
    expect(store.rows.get(keyString(KEY))?.skipReason).toBeUndefined();
    expect(queue.sent.map((b) => decodeEnvelope(b, new Set([JOB_ID])))).toEqual([KEY]);
  });

  it('without a window in the event, the retry deadline is the window', async () => {
    const { store, deps } = lateTrigger(0);
    const lateDeps = { ...deps, clock: { now: () => Date.parse(KEY.scheduledTime) + 2 * 3600_000 + 1 } };

    await expect(recordOccurrence(lateDeps, event)).resolves.toBe('recorded-missed');

    expect(store.rows.get(keyString(KEY))?.status).toBe(OccurrenceStatus.SKIPPED);
  });

  it("an operator's request is never missed, however late: PENDING, enqueued, with who asked and how", async () => {
    const { store, queue, deps, event: late } = lateTrigger(86_400_000);

    await expect(
      recordOccurrence(deps, late, { requested: { by: 'ops@example.com', origin: 'backfill', overlap: 'bufferAll' } }),
    ).resolves.toBe('recorded');

    expect(store.rows.get(keyString(KEY))).toMatchObject({
      status: OccurrenceStatus.PENDING,
      requestedBy: 'ops@example.com',
      origin: 'backfill',
      overlap: 'bufferAll',
    });
    expect(queue.sent).toHaveLength(1);
  });
});

describe('recordOccurrence: the route the schedule carries (no worker known to the trigger)', () => {
  const ROUTE = { queueUrl: 'https://sqs.eu-central-1.amazonaws.com/1/digests', stuckAfterSeconds: 900 };
  const event = (fields: Record<string, unknown> = {}) => ({
    jobId: JOB_ID,
    scheduledTime: '2026-11-30T06:00:00Z',
    worker: WORKER,
    deadlineSeconds: settings.retry.deadlineSeconds,
    retentionDays: settings.retentionDays,
    ...fields,
  });
  /** A trigger as deployed: queues by the URL the event names, a lookup for an event without one. */
  function routedTrigger(lookup?: (jobId: string, worker: string) => Promise<typeof ROUTE | undefined>) {
    const store = new MemoryStore();
    const byUrl = new Map<string, MemoryQueue>();
    const looked: string[] = [];
    const deps: TriggerDeps = {
      store,
      queueAt: (url) => {
        if (!byUrl.has(url)) byUrl.set(url, new MemoryQueue());
        return byUrl.get(url)!;
      },
      ...(lookup === undefined
        ? {}
        : {
            routes: {
              routeOf: (jobId: string, worker: string) => {
                looked.push(`${jobId}/${worker}`);
                return lookup(jobId, worker);
              },
            },
          }),
      clock: { now: () => NOW },
      logger: quietLogger,
    };
    return { store, byUrl, looked, deps };
  }

  it("sends to the event's queueUrl and records the route on the row, for the reconciler", async () => {
    const { store, byUrl, deps } = routedTrigger();
    await expect(recordOccurrence(deps, event(ROUTE))).resolves.toBe('recorded');
    expect(byUrl.get(ROUTE.queueUrl)?.sent).toHaveLength(1);
    expect([...store.rows.values()][0]).toMatchObject({ worker: WORKER, ...ROUTE });
  });

  it("finds the route of an event without one (a run-time schedule projected before routes were) in its job's schedule", async () => {
    const { store, byUrl, looked, deps } = routedTrigger(async () => ROUTE);
    await expect(recordOccurrence(deps, event())).resolves.toBe('recorded');
    expect(looked).toEqual([`${JOB_ID}/${WORKER}`]);
    expect(byUrl.get(ROUTE.queueUrl)?.sent).toHaveLength(1);
    expect([...store.rows.values()][0]).toMatchObject(ROUTE);
  });

  it('writes nothing for an event whose route is nowhere, and says which job and worker', async () => {
    const { store, deps } = routedTrigger(async () => undefined);
    const error = await recordOccurrence(deps, event()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(String(error)).toContain(`worker ${WORKER}: the event names no queueUrl and no route of job ${JOB_ID}`);
    expect(store.createCalls).toBe(0);
  });

  it('rejects half a route, naming both fields, with nothing written', async () => {
    const { store, deps } = routedTrigger(async () => ROUTE);
    await expect(recordOccurrence(deps, event({ queueUrl: ROUTE.queueUrl }))).rejects.toThrow(
      'queueUrl and stuckAfterSeconds go together',
    );
    expect(store.createCalls).toBe(0);
  });

  it("lets an operator's known queue win over the event's URL, still recording the event's route", async () => {
    const { store, deps: routed } = routedTrigger();
    const operatorQueue = new MemoryQueue();
    const deps = { ...routed, queues: new Map([[WORKER, operatorQueue]]) };
    await recordOccurrence(deps, event(ROUTE));
    expect(operatorQueue.sent).toHaveLength(1);
    expect([...store.rows.values()][0]).toMatchObject(ROUTE);
  });
});
