import { describe, expect, it } from 'vitest';
import { withDefaults, withoutDefaults } from '../../functions/protocol/job-settings';
import { workerLimits } from '../../functions/protocol/worker-limits';
import { cachedRouteLookup, checkRouteFields, recordedRoute } from '../../functions/protocol/worker-routes';

describe('checkRouteFields (the route a schedule event or a row carries)', () => {
  it('reads both fields, and neither as no route (a schedule deployed before routes were carried)', () => {
    expect(checkRouteFields({ queueUrl: 'https://sqs/q1', stuckAfterSeconds: 3_900 })).toEqual({
      ok: true,
      value: { queueUrl: 'https://sqs/q1', stuckAfterSeconds: 3_900 },
    });
    expect(checkRouteFields({})).toEqual({ ok: true, value: undefined });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a URL without its threshold', { queueUrl: 'u' }, 'queueUrl and stuckAfterSeconds go together'],
    ['a threshold without its URL', { stuckAfterSeconds: 60 }, 'queueUrl and stuckAfterSeconds go together'],
    ['an empty URL', { queueUrl: '', stuckAfterSeconds: 60 }, 'queueUrl must be a non-empty string'],
    [
      'a threshold too short',
      { queueUrl: 'u', stuckAfterSeconds: 5 },
      'stuckAfterSeconds must be a whole number from 60 to 1209600, got 5',
    ],
  ])('rejects %s, naming the field', (_, fields, message) => {
    const checked = checkRouteFields(fields);
    expect(checked.ok).toBe(false);
    expect(checked.ok ? [] : checked.problems.join('; ')).toContain(message);
  });

  it('gives a row without a whole route none (recordedRoute), so that the reconciler looks it up', () => {
    expect(recordedRoute({ queueUrl: 'u' })).toBeUndefined();
    expect(recordedRoute({ queueUrl: 'u', stuckAfterSeconds: 600 })).toEqual({ queueUrl: 'u', stuckAfterSeconds: 600 });
  });
});

describe('cachedRouteLookup', () => {
  const route = { queueUrl: 'https://sqs/q1', stuckAfterSeconds: 600 };

  it('asks once per job and worker within the ttl, and again after it', async () => {
    let now = 0;
    const asked: string[] = [];
    const lookup = cachedRouteLookup(
      {
        routeOf: async (jobId, worker) => {
          asked.push(`${jobId}/${worker}`);
          return route;
        },
      },
      () => now,
      60_000,
    );
    await lookup.routeOf('a', 'w');
    await lookup.routeOf('a', 'w');
    await lookup.routeOf('b', 'w');
    expect(asked).toEqual(['a/w', 'b/w']);
    now = 60_000;
    await expect(lookup.routeOf('a', 'w')).resolves.toEqual(route);
    expect(asked).toEqual(['a/w', 'b/w', 'a/w']);
  });

  it('does not keep a failed look-up: the next call asks again', async () => {
    let calls = 0;
    const lookup = cachedRouteLookup(
      {
        routeOf: async () => {
          calls++;
          if (calls === 1) throw new Error('throttled');
          return route;
        },
      },
      () => 0,
    );
    await expect(lookup.routeOf('a', 'w')).rejects.toThrow('throttled');
    await expect(lookup.routeOf('a', 'w')).resolves.toEqual(route);
    expect(calls).toBe(2);
  });
});

describe('withoutDefaults (the settings a worker is handed)', () => {
  it('keeps the id and only what differs from a default, and resolves back to the same settings', () => {
    const settings = withDefaults({ id: 'x', timeoutSeconds: 60, retry: { maxAttempts: 3 } });
    expect(withoutDefaults(settings)).toEqual({ id: 'x', timeoutSeconds: 60, retry: { maxAttempts: 3 } });
    expect(withDefaults(withoutDefaults(settings))).toEqual(settings);
    expect(withoutDefaults(withDefaults({ id: 'y' }))).toEqual({ id: 'y' });
  });
});

describe('workerLimits of one worker', () => {
  it('uses a timeout given by hand, and derives the visibility timeout from it', () => {
    const jobs = [withDefaults({ id: 'a', timeoutSeconds: 60 })];
    expect(workerLimits(jobs, 600)).toMatchObject({
      functionTimeoutSeconds: 600,
      queueVisibilityTimeoutSeconds: 3_600,
    });
    expect(workerLimits(jobs)).toMatchObject({ functionTimeoutSeconds: 90, queueVisibilityTimeoutSeconds: 540 });
  });

  it('gives a worker without jobs yet the limits of one default job', () => {
    expect(workerLimits([])).toEqual(workerLimits([withDefaults({ id: 'd' })]));
  });
});
