/**
 * The public schedule operations (operations/schedules.ts) over fakes of the registry and the projection: what
 * they show of a row (RuntimeSchedule), and what they refuse before touching either store.
 */
import { describe, expect, it } from 'vitest';
import { DependencyError } from '../../functions/protocol/errors';
import {
  deleteSchedule,
  getSchedule,
  InvalidScheduleError,
  listSchedules,
  pauseSchedule,
  ScheduleNotFoundError,
  upsertSchedule,
} from '../../operations';
import { manageDepsOf, scheduleOperationsOver } from '../../operations/schedules';
import { FakeProjection, FakeRegistry, fakeClock, JOB } from './schedule-registry-fakes';

function world() {
  const clock = fakeClock();
  const registry = new FakeRegistry();
  const projection = new FakeProjection(clock);
  const ops = scheduleOperationsOver({ registry, projection, clock });
  return { registry, projection, ops };
}

const WEEKLY = { expression: 'cron(0 8 ? * MON *)', input: { plan: 'pro' } };

describe('the schedule operations', () => {
  it('show a row without its index keys, with whether its Scheduler schedule is confirmed', async () => {
    const { ops, projection } = world();
    const { schedule } = await upsertSchedule(ops, JOB, 'customer-42', WEEKLY, { by: 'app' });
    expect(Object.keys(schedule).sort()).toEqual(
      [
        'createdAt',
        'expression',
        'inSync',
        'input',
        'jobId',
        'scheduleKey',
        'scheduleName',
        'state',
        'timeZone',
        'updatedAt',
        'updatedBy',
        'version',
      ].sort(),
    );
    expect(schedule.inSync).toBe(true);

    projection.failNext = { call: 'put', error: new DependencyError('transient', 'create', 'Throttling') };
    await expect(upsertSchedule(ops, JOB, 'customer-42', { ...WEEKLY, input: 2 })).rejects.toBeInstanceOf(
      DependencyError,
    );
    expect(await getSchedule(ops, JOB, 'customer-42')).toMatchObject({ version: 2, input: 2, inSync: false });
  });

  it('hide a schedule being deleted (its tombstone) from get and list', async () => {
    const { ops, projection } = world();
    await upsertSchedule(ops, JOB, 'a', WEEKLY);
    await upsertSchedule(ops, JOB, 'b', WEEKLY);
    projection.failNext = { call: 'remove', error: new DependencyError('transient', 'delete', 'x') };
    await expect(deleteSchedule(ops, JOB, 'a')).rejects.toBeInstanceOf(DependencyError);

    expect(await getSchedule(ops, JOB, 'a')).toBeUndefined();
    expect((await listSchedules(ops, JOB)).schedules.map((s) => s.scheduleKey)).toEqual(['b']);
  });

  it('refuse a malformed job id or key before reading anything, and a pause of a key the job has not', async () => {
    const { ops, registry } = world();
    const get = registry.get.bind(registry);
    let reads = 0;
    registry.get = async (jobId, key, consistent) => {
      reads++;
      return get(jobId, key, consistent);
    };
    await expect(getSchedule(ops, JOB, 'has space')).rejects.toBeInstanceOf(InvalidScheduleError);
    await expect(listSchedules(ops, 'bad job')).rejects.toThrow(/^invalid listing of the schedules of bad job: jobId/);
    expect(reads).toBe(0);
    await expect(pauseSchedule(ops, JOB, 'nobody')).rejects.toBeInstanceOf(ScheduleNotFoundError);
  });

  it('hand the bulk upsert the deps they run on', () => {
    const { ops, registry } = world();
    expect(manageDepsOf(ops).registry).toBe(registry);
  });
});
