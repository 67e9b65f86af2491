import { describe, expect, it, vi } from 'vitest';
import { DependencyError } from '../../functions/protocol/errors';
import {
  deleteScheduleRecord,
  MAX_WRITE_ATTEMPTS,
  type ManageScheduleDeps,
  rememberingTemplates,
  repairSchedule,
  ScheduleNotFoundError,
  setScheduleState,
  UnknownScheduleJobError,
  upsertScheduleRecord,
} from '../../functions/protocol/manage-schedule';
import { InvalidScheduleError, scheduleNameOf } from '../../functions/protocol/schedule-registry';
import type { ScheduleSpec } from '../../functions/protocol/schedule-registry-ports';
import { FakeProjection, FakeRegistry, fakeClock, JOB, NOW, template } from './schedule-registry-fakes';

const KEY = 'customer-42';
const NAME = scheduleNameOf(KEY);
const WEEKLY: ScheduleSpec = { expression: 'cron(0 8 ? * MON *)', timeZone: 'Europe/Berlin', input: { plan: 'pro' } };

function world() {
  const clock = fakeClock();
  const registry = new FakeRegistry();
  const projection = new FakeProjection(clock);
  // No jitter: a refused write is retried at once (the waits are tested on their own below).
  const random = vi.fn(() => 0);
  const deps: ManageScheduleDeps = { registry, projection, clock, random };
  return { clock, registry, projection, deps, random };
}

describe('upsertScheduleRecord', () => {
  it('creates the row, then the schedule, then marks the row synced', async () => {
    const { registry, projection, deps } = world();
    const result = await upsertScheduleRecord(deps, JOB, KEY, WEEKLY, { by: 'app' });

    expect(result.outcome).toBe('created');
    expect(result.schedule).toMatchObject({ version: 1, syncedVersion: 1, state: 'ENABLED', updatedBy: 'app' });
    expect(result.schedule.syncDueAt).toBeUndefined();
    expect(registry.row(JOB, KEY)).toEqual(result.schedule);
    expect(projection.schedule(NAME)).toMatchObject({ version: 1, input: { plan: 'pro' } });
    expect(projection.writes()).toEqual(['put']);
  });

  it('is idempotent: the same spec twice writes no row and calls Scheduler to put nothing', async () => {
    const { registry, projection, deps } = world();
    await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
    const before = registry.row(JOB, KEY);
    const again = await upsertScheduleRecord(deps, JOB, KEY, { ...WEEKLY, input: { plan: 'pro' } });

    expect(again.outcome).toBe('unchanged');
    expect(registry.puts).toBe(1);
    expect(projection.writes()).toEqual(['put']);
    expect(registry.row(JOB, KEY)).toEqual(before);
  });

  it('updates a changed spec: the next version, the same schedule replaced', async () => {
    const { registry, projection, deps } = world();
    await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
    const result = await upsertScheduleRecord(deps, JOB, KEY, { ...WEEKLY, expression: 'cron(0 9 ? * MON *)' });

    expect(result.outcome).toBe('updated');
    expect(registry.row(JOB, KEY)).toMatchObject({ version: 2, syncedVersion: 2, expression: 'cron(0 9 ? * MON *)' });
    expect(projection.schedules.size).toBe(1);
    expect(projection.schedule(NAME)?.version).toBe(2);
  });

  it('rejects a bad spec naming each field, and an unknown job, writing nothing either time', async () => {
    const { registry, projection, deps } = world();
    await expect(
      upsertScheduleRecord(deps, JOB, KEY, { expression: 'cron(0 8 * * MON)', timeZone: 'Nowhere/X' }),
    ).rejects.toMatchObject({
      name: 'InvalidScheduleError',
      problems: [expect.stringMatching(/^expression /), expect.stringMatching(/^timeZone /)],
    });
    const unknown = upsertScheduleRecord(deps, 'fixed-job', KEY, WEEKLY);
    await expect(unknown).rejects.toBeInstanceOf(UnknownScheduleJobError);
    await expect(unknown).rejects.toThrow(/job 'fixed-job' takes no schedules at run time/);
    expect(registry.rows.size).toBe(0);
    expect(projection.writes()).toEqual([]);
  });

  it('a crash between the row and its projection leaves the row due; the same upsert again projects it', async () => {
    const { registry, projection, deps } = world();
    projection.failNext = { call: 'put', error: new DependencyError('transient', 'create schedule', 'Throttling') };
    await expect(upsertScheduleRecord(deps, JOB, KEY, WEEKLY)).rejects.toBeInstanceOf(DependencyError);

    const row = registry.row(JOB, KEY);
    expect(row).toMatchObject({ version: 1, syncDueAt: '2026-12-01T09:01:00.000Z' });
    expect(row?.syncedVersion).toBeUndefined();
    expect(await registry.dueForSync(NOW + 60_000, 10)).toHaveLength(1);
    expect(projection.schedules.size).toBe(0);

    // The re-run writes no row, but it does put the schedule and mark the row synced: it says so.
    const again = await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
    expect(again.outcome).toBe('repaired');
    expect(registry.puts).toBe(1);
    expect(projection.writes()).toEqual(['put', 'put']);
    expect(registry.row(JOB, KEY)).toMatchObject({ version: 1, syncedVersion: 1 });
    expect(registry.row(JOB, KEY)?.syncDueAt).toBeUndefined();
    expect(projection.schedule(NAME)?.version).toBe(1);
  });

  it('re-reads a row written under it and writes on top of it', async () => {
    const { registry, deps } = world();
    await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
    let raced = false;
    registry.beforePut = (row) => {
      if (raced) return;
      raced = true;
      const current = registry.row(JOB, KEY);
      if (current !== undefined) registry.rows.set(`${JOB}\u0000${KEY}`, { ...current, version: current.version + 1 });
      expect(row.version).toBe(2);
    };
    await upsertScheduleRecord(deps, JOB, KEY, { ...WEEKLY, timeZone: 'Etc/UTC' });
    expect(registry.row(JOB, KEY)).toMatchObject({ version: 3, timeZone: 'Etc/UTC', syncedVersion: 3 });
  });

  it(`gives up after ${MAX_WRITE_ATTEMPTS} refused writes, each retry after a jittered wait, with a transient DependencyError`, async () => {
    const { registry, projection, deps, random } = world();
    await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
    registry.beforePut = () => {
      const current = registry.row(JOB, KEY);
      if (current !== undefined) registry.rows.set(`${JOB}\u0000${KEY}`, { ...current, version: current.version + 1 });
    };
    const error = await upsertScheduleRecord(deps, JOB, KEY, { ...WEEKLY, timeZone: 'Etc/UTC' }).catch((e) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error.kind).toBe('transient');
    expect(error.message).toMatch(/nothing of this call was written: try again/);
    expect(random).toHaveBeenCalledTimes(MAX_WRITE_ATTEMPTS - 1);
    expect(projection.writes()).toEqual(['put']);
  });

  it('waits between retries a random share of 25 ms doubling up to 1 s (full jitter from the injected source)', async () => {
    vi.useFakeTimers();
    try {
      const { registry, deps } = world();
      await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
      let refusals = 3;
      registry.beforePut = () => {
        if (refusals-- <= 0) return;
        const current = registry.row(JOB, KEY);
        if (current !== undefined)
          registry.rows.set(`${JOB}\u0000${KEY}`, { ...current, version: current.version + 1 });
      };
      // Just under the ceiling: waits of 24, 49 and 99 ms before the 2nd, 3rd and 4th tries.
      const upsert = upsertScheduleRecord({ ...deps, random: () => 0.999 }, JOB, KEY, {
        ...WEEKLY,
        timeZone: 'Etc/UTC',
      });
      let done = false;
      void upsert.then(() => {
        done = true;
      });
      await vi.advanceTimersByTimeAsync(24 + 49 + 98);
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(done).toBe(true);
      expect((await upsert).outcome).toBe('updated');
    } finally {
      vi.useRealTimers();
    }
  });

  it('20 callers racing with 20 specs: each is written in turn (none throws), the last writer wins, one schedule in sync', async () => {
    const { registry, projection, clock } = world();
    let seed = 34;
    // A seeded source: the same interleaving every run.
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const deps: ManageScheduleDeps = { registry, projection, clock, random };
    const specs = Array.from({ length: 20 }, (_, i) => ({ ...WEEKLY, input: { caller: i } }));
    const results = await Promise.all(specs.map((spec) => upsertScheduleRecord(deps, JOB, KEY, spec)));

    expect(results.map((r) => r.outcome).sort()).toEqual(['created', ...Array(19).fill('updated')]);
    expect(registry.puts).toBe(20);
    const row = registry.row(JOB, KEY);
    expect(row).toMatchObject({ version: 20, syncedVersion: 20 });
    expect(row?.syncDueAt).toBeUndefined();
    expect(projection.schedules.size).toBe(1);
    expect(projection.schedule(NAME)).toMatchObject({ version: 20, input: row?.input });
  });

  it('projects the newest row when another writer changed it during its own projection', async () => {
    const { registry, projection, deps, clock } = world();
    await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
    // While this writer puts v2 to Scheduler, another writes v3 and projects it before v2 lands.
    let once = true;
    projection.afterPut = (row) => {
      if (!once || row.version !== 2) return;
      once = false;
      const current = registry.row(JOB, KEY);
      if (current === undefined) return;
      registry.rows.set(`${JOB}\u0000${KEY}`, { ...current, version: 3, expression: 'rate(1 day)' });
    };
    await upsertScheduleRecord(deps, JOB, KEY, { ...WEEKLY, timeZone: 'Etc/UTC' });
    clock.advance(1);
    expect(projection.schedule(NAME)).toMatchObject({ version: 3, expression: 'rate(1 day)' });
    expect(registry.row(JOB, KEY)).toMatchObject({ version: 3, syncedVersion: 3 });
  });

  it('creates again over a tombstone', async () => {
    const { registry, projection, deps } = world();
    await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
    projection.failNext = { call: 'remove', error: new DependencyError('transient', 'delete', 'x') };
    await expect(deleteScheduleRecord(deps, JOB, KEY)).rejects.toBeInstanceOf(DependencyError);
    expect(registry.row(JOB, KEY)?.deletedAt).toBeDefined();

    const result = await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
    expect(result.outcome).toBe('created');
    expect(registry.row(JOB, KEY)).toMatchObject({ version: 3, syncedVersion: 3 });
    expect(registry.row(JOB, KEY)?.deletedAt).toBeUndefined();
    expect(projection.schedule(NAME)?.version).toBe(3);
  });
});

describe('setScheduleState', () => {
  it('pauses (the schedule DISABLED through its row) and resumes, each a new version; a repeat writes nothing', async () => {
    const { registry, projection, deps } = world();
    const onResume = vi.fn(async () => undefined);
    await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);

    const paused = await setScheduleState({ ...deps, onResume }, JOB, KEY, 'PAUSED', { by: 'alice' });
    expect(paused).toMatchObject({ state: 'PAUSED', version: 2, syncedVersion: 2, updatedBy: 'alice' });
    expect(projection.schedule(NAME)?.state).toBe('PAUSED');
    await setScheduleState(deps, JOB, KEY, 'PAUSED');
    expect(registry.puts).toBe(2);
    expect(onResume).not.toHaveBeenCalled();

    const resumed = await setScheduleState({ ...deps, onResume }, JOB, KEY, 'ENABLED', { by: 'bob' });
    expect(resumed).toMatchObject({ state: 'ENABLED', version: 3 });
    expect(projection.schedule(NAME)?.state).toBe('ENABLED');
    expect(onResume).toHaveBeenCalledWith({ jobId: JOB, scheduleKey: KEY }, { by: 'bob' });
  });

  it('refuses a key the job has not, a deleted key, an unknown job and a malformed key, writing nothing', async () => {
    const { registry, projection, deps } = world();
    await expect(setScheduleState(deps, JOB, 'nobody', 'PAUSED')).rejects.toBeInstanceOf(ScheduleNotFoundError);
    await expect(setScheduleState(deps, 'other', KEY, 'PAUSED')).rejects.toBeInstanceOf(UnknownScheduleJobError);
    await expect(setScheduleState(deps, JOB, 'no/slash', 'PAUSED')).rejects.toBeInstanceOf(InvalidScheduleError);
    await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
    await deleteScheduleRecord(deps, JOB, KEY);
    await expect(setScheduleState(deps, JOB, KEY, 'ENABLED')).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect(registry.rows.size).toBe(0);
    expect(projection.schedules.size).toBe(0);
  });
});

describe('deleteScheduleRecord', () => {
  it('writes a tombstone, deletes the schedule, removes the row; a second delete finds nothing', async () => {
    const { registry, projection, deps } = world();
    await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
    const order: string[] = [];
    const put = registry.put.bind(registry);
    registry.put = async (row, expected) => {
      order.push(row.deletedAt === undefined ? 'put' : 'tombstone');
      return put(row, expected);
    };
    const remove = projection.remove.bind(projection);
    projection.remove = async (t, name) => {
      order.push('scheduler remove');
      return remove(t, name);
    };

    expect(await deleteScheduleRecord(deps, JOB, KEY)).toEqual({ deleted: true });
    expect(order).toEqual(['tombstone', 'scheduler remove']);
    expect(registry.rows.size).toBe(0);
    expect(projection.schedules.size).toBe(0);
    expect(await deleteScheduleRecord(deps, JOB, KEY)).toEqual({ deleted: false });
  });

  it('a delete that crashed after its tombstone is finished by the next one', async () => {
    const { registry, projection, deps } = world();
    await upsertScheduleRecord(deps, JOB, KEY, WEEKLY);
    projection.failNext = { call: 'remove', error: new DependencyError('fatal', 'delete', 'AccessDenied') };
    await expect(deleteScheduleRecord(deps, JOB, KEY)).rejects.toThrow(/AccessDenied/);
    expect(registry.row(JOB, KEY)).toMatchObject({ version: 2, syncDueAt: expect.any(String) });

    expect(await deleteScheduleRecord(deps, JOB, KEY)).toEqual({ deleted: true });
    expect(registry.rows.size).toBe(0);
    expect(projection.schedules.size).toBe(0);
  });
});

describe('repairSchedule', () => {
  it('puts the schedule of a due row and marks it synced; removes a finished at() instead of putting it', async () => {
    const { registry, projection, deps, clock } = world();
    projection.failNext = { call: 'put', error: new DependencyError('transient', 'create', 'x') };
    await upsertScheduleRecord(deps, JOB, KEY, WEEKLY).catch(() => undefined);
    const [due] = await registry.dueForSync(NOW + 60_000, 10);
    expect(await repairSchedule(deps, due, template())).toMatchObject({ syncedVersion: 1 });
    expect(projection.schedule(NAME)?.version).toBe(1);

    await upsertScheduleRecord(deps, JOB, 'once', { expression: 'at(2026-12-01T10:00:00)' });
    expect(projection.schedule(scheduleNameOf('once'))).toBeDefined();
    clock.advance(2 * 3_600_000);
    const row = registry.row(JOB, 'once');
    if (row === undefined) throw new Error('no row');
    await repairSchedule(deps, { ...row, syncDueAt: 'x' }, template());
    expect(projection.schedule(scheduleNameOf('once'))).toBeUndefined();
  });
});

describe('rememberingTemplates', () => {
  it('reads a job template once a minute, and a job not found every time', async () => {
    const clock = fakeClock();
    const projection = new FakeProjection(clock);
    const remembering = rememberingTemplates(projection, clock, 60_000);
    await remembering.template(JOB);
    await remembering.template(JOB);
    await remembering.template('nope');
    await remembering.template('nope');
    expect(projection.calls).toEqual(['template', 'template', 'template']);
    clock.advance(60_000);
    await remembering.template(JOB);
    expect(projection.calls).toHaveLength(4);
  });
});
