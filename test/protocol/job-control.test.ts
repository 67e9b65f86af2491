import { beforeEach, describe, expect, it } from 'vitest';
import { decodeEnvelope } from '../../functions/protocol/envelope';
import { DependencyError, InvalidInputError } from '../../functions/protocol/errors';
import {
  CATCH_UP_CLOCK_MARGIN_MS,
  type DeployedJob,
  describeJob,
  MAX_STATE_WRITES,
  pauseJob,
  resumeJob,
  resumeSeries,
  runJobNow,
} from '../../functions/protocol/job-control';
import { JOB_STATE_SORT_KEY } from '../../functions/protocol/job-state';
import { type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import type {
  CreateResult,
  OccurrenceHistory,
  OccurrenceStore,
  ScheduleSwitch,
  WorkQueue,
} from '../../functions/protocol/ports';
import type { TriggerDeps } from '../../functions/protocol/record-occurrence';
import { MemoryJobStates } from '../support/memory-job-states';

const JOB = 'hourly';
const WORKER = 'exports';
const HOURLY: DeployedJob = {
  id: JOB,
  schedule: 'cron(0 * * * ? *)',
  timeZone: 'UTC',
  state: 'ENABLED',
  route: { worker: WORKER, deadlineSeconds: 7200, retentionDays: 1, catchupWindowSeconds: 7200 },
};

/** The clock every port reads: tests move it by hand. */
class ManualClock {
  constructor(public t: number) {}
  now = () => this.t;
  set(iso: string) {
    this.t = Date.parse(iso);
  }
}

/** The occurrence rows: the atomic insert the trigger needs, and the history the operator reads. */
class MemoryOccurrences implements Pick<OccurrenceStore, 'create'>, OccurrenceHistory {
  rows = new Map<string, Occurrence>();
  async create(o: Occurrence): Promise<CreateResult> {
    const existing = this.rows.get(o.scheduledTime);
    if (existing) return { created: false, existing };
    this.rows.set(o.scheduledTime, o);
    return { created: true };
  }
  async newestFirst(jobId: string, limit: number) {
    return [...this.rows.values()]
      .filter((o) => o.jobId === jobId)
      .sort((a, b) => b.scheduledTime.localeCompare(a.scheduledTime))
      .slice(0, limit);
  }
  byStatus(status: string) {
    return [...this.rows.values()].filter((o) => o.status === status).map((o) => o.scheduledTime);
  }
}

class RecordingSwitch implements ScheduleSwitch {
  calls: string[] = [];
  failWith: Error | undefined;
  constructor(private readonly events: string[]) {}
  async setState(jobId: string, state: 'ENABLED' | 'DISABLED') {
    if (this.failWith) throw this.failWith;
    this.calls.push(`${jobId}:${state}`);
    this.events.push(`schedule ${state}`);
  }
}

let clock: ManualClock;
let states: MemoryJobStates;
let occurrences: MemoryOccurrences;
let schedules: RecordingSwitch;
let events: string[];
let sent: string[];
let trigger: TriggerDeps;

beforeEach(() => {
  clock = new ManualClock(Date.parse('2026-11-20T00:30:00.400Z'));
  states = new MemoryJobStates();
  occurrences = new MemoryOccurrences();
  events = [];
  schedules = new RecordingSwitch(events);
  sent = [];
  const queue: WorkQueue = {
    send: async (body) => void sent.push(decodeEnvelope(body, new Set([JOB])).scheduledTime),
    hide: async () => {},
  };
  const quiet = { info: () => {}, warn: () => {}, error: () => {} };
  trigger = {
    store: occurrences as unknown as OccurrenceStore,
    queues: new Map([[WORKER, queue]]),
    clock,
    logger: quiet,
  };
  const write = states.write.bind(states);
  states.write = async (...args) => {
    events.push('state write');
    return write(...args);
  };
});

const deps = () => ({ states, clock, schedules, trigger, history: occurrences });

describe('Function: pauseJob', () => {
  it('disables the schedule first, then records who, when and the note by compare-and-swap', async () => {
    const result = await pauseJob(deps(), JOB, { note: 'upstream API down', by: 'alice' });
    expect(events).toEqual(['schedule DISABLED', 'state write']);
    expect(result.outcome).toBe('paused');
    expect(states.rows.get(JOB)).toMatchObject({
      version: 1,
      pausedAt: '2026-11-20T00:30:00.400Z',
      pausedBy: 'alice',
      pauseNote: 'upstream API down',
      pauseCause: 'operator',
    });
  });

  it('keeps an earlier pause (who, why) and writes nothing when the job is paused already', async () => {
    await pauseJob(deps(), JOB, { note: 'first', by: 'alice' });
    const again = await pauseJob(deps(), JOB, { note: 'second', by: 'bob' });
    expect(again.outcome).toBe('already-paused');
    expect(states.rows.get(JOB)).toMatchObject({ version: 1, pausedBy: 'alice', pauseNote: 'first' });
    expect(schedules.calls).toEqual([`${JOB}:DISABLED`, `${JOB}:DISABLED`]);
  });

  it('decides again from the row another writer left, and keeps its fields', async () => {
    states.rows.set(JOB, { jobId: JOB, scheduledTime: '#job', version: 4, slotTime: '2026-11-20T00:00:00Z' });
    let once = true;
    states.interfere = (jobId) => {
      if (once) states.bump(jobId);
      once = false;
    };
    await pauseJob(deps(), JOB, { note: 'n', by: 'alice' });
    expect(states.writes).toBe(2);
    expect(states.rows.get(JOB)).toMatchObject({ version: 6, slotTime: '2026-11-20T00:00:00Z', pausedBy: 'alice' });
  });

  it(`gives up as transient after ${MAX_STATE_WRITES} refused writes in a row`, async () => {
    states.interfere = (jobId) => states.bump(jobId);
    const error = await pauseJob(deps(), JOB, { note: 'n', by: 'alice' }).catch((e) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error.kind).toBe('transient');
    expect(states.writes).toBe(MAX_STATE_WRITES);
  });

  it.each([
    ['an empty note', { note: '  ', by: 'alice' }, 'pause note'],
    ['a note over 500 characters', { note: 'x'.repeat(501), by: 'alice' }, 'pause note'],
    ['no one', { note: 'n', by: '' }, 'pause by'],
  ])('refuses %s with an error naming it, before touching the schedule', async (_, request, where) => {
    const error = await pauseJob(deps(), JOB, request).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.message).toContain(where);
    expect(schedules.calls).toEqual([]);
  });
});

describe('Function: resumeJob', () => {
  /** Paused at 2026-11-20T00:30Z, resumed 60 h later: 60 hourly times were not fired. */
  async function pauseThenResume() {
    await pauseJob(deps(), JOB, { note: 'maintenance', by: 'alice' });
    clock.set('2026-11-22T12:30:00Z');
    events.length = 0;
    return resumeJob(deps(), HOURLY, { by: 'bob' });
  }

  it('clears the pause, then enables the schedule, then catches up', async () => {
    const result = await pauseThenResume();
    expect(events).toEqual(['state write', 'schedule ENABLED']);
    expect(result.outcome).toBe('resumed');
    const row = states.rows.get(JOB);
    expect(row).toMatchObject({
      version: 2,
      resumedBy: 'bob',
      resumedAt: '2026-11-22T12:30:00.000Z',
      consecutiveFailures: 0,
    });
    expect(row?.pausedAt).toBeUndefined();
    expect(row?.pauseNote).toBeUndefined();
    if (result.outcome === 'resumed')
      expect(result.paused).toMatchObject({ pausedBy: 'alice', pauseNote: 'maintenance' });
  });

  it('records and enqueues, in time order, the missed times inside the catch-up window of now', async () => {
    const result = await pauseThenResume();
    expect(sent).toEqual(['2026-11-22T11:00:00Z', '2026-11-22T12:00:00Z']);
    expect(occurrences.byStatus(OccurrenceStatus.PENDING).sort()).toEqual(sent);
    if (result.outcome !== 'resumed') throw new Error('not resumed');
    expect(result.catchUp.inWindow).toEqual({ recorded: 2 });
    expect(result.catchUp.runTimes).toEqual(sent);
  });

  it('records the older ones inside the retention as SKIPPED/missed, enqueues none of them', async () => {
    const result = await pauseThenResume();
    const skipped = occurrences.byStatus(OccurrenceStatus.SKIPPED).sort();
    // retention 1 day: after 2026-11-21T12:30Z; window 2 h: before 2026-11-22T10:30Z.
    expect(skipped).toHaveLength(22);
    expect(skipped[0]).toBe('2026-11-21T13:00:00Z');
    expect(skipped.at(-1)).toBe('2026-11-22T10:00:00Z');
    expect(occurrences.rows.get(skipped[0])).toMatchObject({ skipReason: 'missed', worker: WORKER });
    if (result.outcome === 'resumed') expect(result.catchUp.missed).toEqual({ 'recorded-missed': 22 });
  });

  it('only counts the times older than the retention: a row for them would be deleted by TTL at once', async () => {
    const result = await pauseThenResume();
    if (result.outcome !== 'resumed') throw new Error('not resumed');
    expect(result.catchUp.olderThanRetention).toBe(36);
    expect(result.catchUp.countCapped).toBe(false);
    expect(occurrences.rows.has('2026-11-21T12:00:00Z')).toBe(false);
    expect(occurrences.rows.size).toBe(24);
  });

  it('a second resume finds the job not paused: it enables the schedule and records nothing', async () => {
    await pauseThenResume();
    const before = occurrences.rows.size;
    const again = await resumeJob(deps(), HOURLY, { by: 'bob' });
    expect(again.outcome).toBe('not-paused');
    expect(occurrences.rows.size).toBe(before);
    expect(schedules.calls.at(-1)).toBe(`${JOB}:ENABLED`);
  });

  it('lets a time the schedule fired itself stand (the insert is conditional)', async () => {
    await pauseJob(deps(), JOB, { note: 'n', by: 'alice' });
    clock.set('2026-11-20T02:30:00Z');
    await occurrences.create({ jobId: JOB, scheduledTime: '2026-11-20T01:00:00Z', status: 'SUCCEEDED' } as Occurrence);
    const result = await resumeJob(deps(), HOURLY, { by: 'bob' });
    if (result.outcome !== 'resumed') throw new Error('not resumed');
    expect(result.catchUp.inWindow).toEqual({ 'duplicate-suppressed': 1, recorded: 1 });
    expect(sent).toEqual(['2026-11-20T02:00:00Z']);
  });

  it(`catches up from ${CATCH_UP_CLOCK_MARGIN_MS / 1000} s before pausedAt: a pauser's clock ahead of Scheduler's would lose a time held back`, async () => {
    // The pauser's clock read 01:00:10 when Scheduler's was at 00:59:59.5: the 01:00 fire was held back.
    clock.set('2026-11-20T01:00:10Z');
    await pauseJob(deps(), JOB, { note: 'n', by: 'worker' });
    clock.set('2026-11-20T01:30:00Z');
    const result = await resumeJob(deps(), HOURLY, { by: 'bob' });
    if (result.outcome !== 'resumed') throw new Error('not resumed');
    expect(result.catchUp.runTimes).toEqual(['2026-11-20T01:00:00Z']);
    expect(sent).toEqual(['2026-11-20T01:00:00Z']);
  });

  it('says how to finish by hand when enabling the schedule fails after the row was resumed', async () => {
    await pauseJob(deps(), JOB, { note: 'n', by: 'alice' });
    schedules.failWith = new DependencyError('transient', 'UpdateSchedule', new Error('throttled'));
    const error = await resumeJob(deps(), HOURLY, { by: 'bob' }).catch((e) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error.kind).toBe('transient');
    expect(error.message).toContain('run resume again');
    expect(error.message).toContain('backfill --from 2026-11-20T00:30:00.400Z');
    expect(sent).toEqual([]);
  });

  it('says how to finish by hand when recording the missed times fails after the job was resumed', async () => {
    await pauseJob(deps(), JOB, { note: 'n', by: 'alice' });
    clock.set('2026-11-20T03:30:00Z');
    trigger = { ...trigger, store: { create: () => Promise.reject(new Error('DynamoDB is down')) } as never };
    const error = await resumeJob(deps(), HOURLY, { by: 'bob' }).catch((e) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error.message).toContain('the job is resumed and its schedule enabled');
    expect(error.message).toContain('backfill --from 2026-11-20T00:30:00.400Z');
    expect(schedules.calls.at(-1)).toBe(`${JOB}:ENABLED`);
    expect(states.rows.get(JOB)?.pausedAt).toBeUndefined();
  });

  it('catches up a rate(...) schedule at the phase its own occurrences show', async () => {
    const rate: DeployedJob = { ...HOURLY, schedule: 'rate(1 hour)' };
    await occurrences.create({ jobId: JOB, scheduledTime: '2026-11-20T00:17:00Z', status: 'SUCCEEDED' } as Occurrence);
    await pauseJob(deps(), JOB, { note: 'n', by: 'alice' });
    clock.set('2026-11-20T03:00:00Z');
    await resumeJob(deps(), rate, { by: 'bob' });
    expect(sent).toEqual(['2026-11-20T01:17:00Z', '2026-11-20T02:17:00Z']);
  });
});

describe('Function: runJobNow', () => {
  it('records an occurrence at now in whole seconds, marked as requested, and enqueues it', async () => {
    const result = await runJobNow(deps(), HOURLY, { by: 'alice', overlap: 'allowAll' });
    expect(result).toEqual({ outcome: 'recorded', scheduledTime: '2026-11-20T00:30:00Z' });
    expect(occurrences.rows.get('2026-11-20T00:30:00Z')).toMatchObject({
      status: 'PENDING',
      requestedBy: 'alice',
      origin: 'run',
      overlap: 'allowAll',
      worker: WORKER,
      deadlineAt: '2026-11-20T02:30:00.000Z',
    });
    expect(sent).toEqual(['2026-11-20T00:30:00Z']);
  });

  it("leaves the row's overlap out when none is given: the job's own policy applies", async () => {
    await runJobNow(deps(), HOURLY, { by: 'alice' });
    expect(occurrences.rows.get('2026-11-20T00:30:00Z')?.overlap).toBeUndefined();
  });

  it('is the same occurrence twice in one second: the second run is a suppressed duplicate', async () => {
    await runJobNow(deps(), HOURLY, { by: 'alice' });
    occurrences.rows.set('2026-11-20T00:30:00Z', {
      ...occurrences.rows.get('2026-11-20T00:30:00Z'),
      status: 'RUNNING',
    } as Occurrence);
    clock.t += 500;
    expect((await runJobNow(deps(), HOURLY, { by: 'alice' })).outcome).toBe('duplicate-suppressed');
  });

  it('is refused while the job is paused, and writes nothing', async () => {
    await pauseJob(deps(), JOB, { note: 'broken upstream', by: 'alice' });
    const result = await runJobNow(deps(), HOURLY, { by: 'bob' });
    expect(result.outcome).toBe('refused');
    if (result.outcome === 'refused') expect(result.reason).toContain('broken upstream');
    expect(occurrences.rows.size).toBe(0);
    expect(sent).toEqual([]);
  });
});

describe('Function: describeJob', () => {
  const BERLIN: DeployedJob = { ...HOURLY, schedule: 'cron(30 2 * * ? *)', timeZone: 'Europe/Berlin' };

  it('gives the next 10 fire times by Scheduler’s rule: the 02:30 that does not exist at spring-forward is skipped', async () => {
    clock.set('2027-03-25T12:00:00Z');
    const d = await describeJob(deps(), BERLIN);
    expect(d.next).toEqual([
      '2027-03-26T01:30:00Z',
      '2027-03-27T01:30:00Z',
      // 2027-03-28: clocks go from 02:00 to 03:00 in Berlin; no 02:30 that day.
      '2027-03-29T00:30:00Z',
      '2027-03-30T00:30:00Z',
      '2027-03-31T00:30:00Z',
      '2027-04-01T00:30:00Z',
      '2027-04-02T00:30:00Z',
      '2027-04-03T00:30:00Z',
      '2027-04-04T00:30:00Z',
      '2027-04-05T00:30:00Z',
    ]);
  });

  it('runs the 02:30 of the fall-back night once, at its first occurrence', async () => {
    clock.set('2027-10-30T12:00:00Z');
    const d = await describeJob(deps(), BERLIN);
    // 2027-10-31: 02:30 CEST (00:30Z) comes first; the repeated 02:30 CET (01:30Z) does not fire.
    expect(d.next.slice(0, 3)).toEqual(['2027-10-31T00:30:00Z', '2027-11-01T01:30:00Z', '2027-11-02T01:30:00Z']);
  });

  it('shows the pause with its note, the newest 10 occurrences and the counts among the rows read', async () => {
    await pauseJob(deps(), JOB, { note: 'quota', by: 'alice' });
    const statuses = [['SKIPPED', 'overlap'], ['SKIPPED', 'missed'], ['SKIPPED', 'missed'], ['FAILED'], ['SUCCEEDED']];
    for (let h = 0; h < 15; h++) {
      const [status, skipReason] = statuses[h % statuses.length];
      const scheduledTime = `2026-11-19T${String(h).padStart(2, '0')}:00:00Z`;
      await occurrences.create({ jobId: JOB, scheduledTime, status, skipReason } as Occurrence);
    }
    const d = await describeJob(deps(), HOURLY);
    expect(d.paused).toBe(true);
    expect(d.state).toMatchObject({ pauseNote: 'quota', pausedBy: 'alice' });
    expect(d.recent.map((o) => o.scheduledTime)).toEqual(
      Array.from({ length: 10 }, (_, i) => `2026-11-19T${String(14 - i).padStart(2, '0')}:00:00Z`),
    );
    expect(d.counts).toEqual({ read: 15, skippedForOverlap: 3, missed: 6, failed: 3 });
  });

  it('counts only the rows it was asked to read', async () => {
    for (let h = 0; h < 15; h++) {
      const scheduledTime = `2026-11-19T${String(h).padStart(2, '0')}:00:00Z`;
      await occurrences.create({ jobId: JOB, scheduledTime, status: 'FAILED' } as Occurrence);
    }
    const d = await describeJob(deps(), HOURLY, { rows: 12 });
    expect(d.counts).toEqual({ read: 12, skippedForOverlap: 0, missed: 0, failed: 12 });
    expect(d.paused).toBe(false);
  });
});

describe('resumeSeries (one schedule of a job that takes schedules at run time)', () => {
  const SERIES = `${JOB}#cust-42`;

  it("lifts that schedule's pause after failures, resets its count, and leaves the job's own row alone", async () => {
    states.rows.set(SERIES, {
      jobId: SERIES,
      scheduledTime: JOB_STATE_SORT_KEY,
      version: 3,
      consecutiveFailures: 2,
      pausedAt: '2026-11-20T00:00:00.000Z',
      pausedBy: 'pauseAfterFailures',
      pauseCause: 'failures',
      pauseNote: 'paused after 2 FAILED occurrences in a row',
    });

    expect(await resumeSeries({ states, clock }, SERIES, 'alice')).toBe(true);

    const row = states.rows.get(SERIES);
    expect(row).toMatchObject({ version: 4, consecutiveFailures: 0, resumedBy: 'alice' });
    expect(row?.pausedAt).toBeUndefined();
    expect(states.rows.has(JOB)).toBe(false);
    expect(schedules.calls).toEqual([]); // no Scheduler switch: the schedule's state is the registry's
  });

  it('is a no-op for a schedule that is not paused, and refuses an empty `by`', async () => {
    expect(await resumeSeries({ states, clock }, SERIES, 'alice')).toBe(false);
    expect(states.writes).toBe(0);
    await expect(resumeSeries({ states, clock }, SERIES, '')).rejects.toBeInstanceOf(InvalidInputError);
  });
});
