import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ScheduleSpec } from '../../../testing/local/app-model';
import { withLocalKeyedGroup } from '../../../testing/local/local-resources';
import { type KeyedSchedule, watchKeyedSchedules } from '../../../testing/local/runtime-schedules';

describe('Function: withLocalKeyedGroup', () => {
  const groups = new Map([['Jobs-Keyed-1', 'Jobs-Keyed-1-a1b2c3']]);

  it("rewrites a template's keyedScheduleGroup to the group's local name, keeping every other field", () => {
    const input = JSON.stringify({
      jobId: 'weekly',
      scheduledTime: '<aws.scheduler.scheduled-time>',
      keyedScheduleGroup: 'Jobs-Keyed-1',
    });
    expect(JSON.parse(withLocalKeyedGroup(input, groups) as string)).toEqual({
      jobId: 'weekly',
      scheduledTime: '<aws.scheduler.scheduled-time>',
      keyedScheduleGroup: 'Jobs-Keyed-1-a1b2c3',
    });
  });

  it("leaves a fixed schedule's input, a group it does not know, and text that is not JSON as they are", () => {
    const fixed = '{"jobId":"nightly"}';
    expect(withLocalKeyedGroup(fixed, groups)).toBe(fixed);
    const other = '{"jobId":"x","keyedScheduleGroup":"Elsewhere"}';
    expect(withLocalKeyedGroup(other, groups)).toBe(other);
    expect(withLocalKeyedGroup('not json', groups)).toBe('not json');
    expect(withLocalKeyedGroup(undefined, groups)).toBeUndefined();
  });
});

describe('Function: watchKeyedSchedules', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const keyed = (key: string, modifiedAt = '2026-12-07T10:00:00.000Z'): KeyedSchedule => ({
    spec: { logicalId: `group/${key}`, jobId: 'weekly', scheduleKey: key } as ScheduleSpec,
    modifiedAt,
  });

  it('fires each schedule that appears after the start once, and a changed one again; not those seen at the start', async () => {
    let listed = [keyed('a')];
    const fired: string[] = [];
    const watch = watchKeyedSchedules({
      read: async () => listed,
      seen: [keyed('a')],
      fire: async (specs) => {
        fired.push(...specs.map((s) => s.scheduleKey as string));
      },
      onError: () => expect.fail('no error expected'),
      intervalMs: 1000,
    });
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired).toEqual([]);
    listed = [keyed('a'), keyed('b')];
    await vi.advanceTimersByTimeAsync(1000);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired).toEqual(['b']);
    listed = [keyed('a', '2026-12-07T11:00:00.000Z'), keyed('b')];
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired).toEqual(['b', 'a']);
    await watch.stop();
    listed = [keyed('c')];
    await vi.advanceTimersByTimeAsync(5000);
    expect(fired).toEqual(['b', 'a']);
  });

  it('reports a failed look and looks again at the next tick', async () => {
    let fail = true;
    const errors: unknown[] = [];
    const fired: string[] = [];
    const watch = watchKeyedSchedules({
      read: async () => {
        if (fail) throw new Error('emulator down');
        return [keyed('b')];
      },
      seen: [],
      fire: async (specs) => {
        fired.push(...specs.map((s) => s.scheduleKey as string));
      },
      onError: (error) => errors.push(error),
      intervalMs: 1000,
    });
    await vi.advanceTimersByTimeAsync(1000);
    expect(errors).toEqual([new Error('emulator down')]);
    fail = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired).toEqual(['b']);
    await watch.stop();
  });
});
