import { describe, expect, it } from 'vitest';
import { JobSettingsError, withDefaults, withoutDefaults } from '../../functions/protocol/job-settings';
import { workerLimits } from '../../functions/protocol/worker-limits';
import { parseWorkerRoutes } from '../../functions/protocol/worker-routes';

describe('parseWorkerRoutes (WORKERS, for the trigger and the reconciler)', () => {
  it('reads one route per worker', () => {
    const routes = parseWorkerRoutes(
      JSON.stringify({ exports: { queueUrl: 'https://sqs/q1', stuckAfterSeconds: 3_900 } }),
      'WORKERS',
    );
    expect([...routes]).toEqual([['exports', { queueUrl: 'https://sqs/q1', stuckAfterSeconds: 3_900 }]]);
  });

  it.each<[string, string | undefined, RegExp]>([
    ['unset', undefined, /WORKERS is not set/],
    ['not JSON', '{', /WORKERS is not valid JSON/],
    ['empty', '{}', /one entry per worker/],
    ['a list', '[]', /one entry per worker/],
    [
      'a bad id',
      JSON.stringify({ 'bad id': { queueUrl: 'u', stuckAfterSeconds: 60 } }),
      /WORKERS\.bad id: not a worker id/,
    ],
    ['a missing URL', JSON.stringify({ w: { stuckAfterSeconds: 60 } }), /WORKERS\.w\.queueUrl/],
    [
      'a threshold too short',
      JSON.stringify({ w: { queueUrl: 'u', stuckAfterSeconds: 5 } }),
      /WORKERS\.w\.stuckAfterSeconds must be a whole number from 60 to 1209600, got 5/,
    ],
    [
      'an unknown field',
      JSON.stringify({ w: { queueUrl: 'u', stuckAfterSeconds: 60, x: 1 } }),
      /WORKERS\.w\.x is not a field/,
    ],
    ['a route that is not an object', JSON.stringify({ w: 'https://sqs/q1' }), /WORKERS\.w must be a JSON object/],
  ])('rejects %s, naming where', (_, json, message) => {
    expect(() => parseWorkerRoutes(json, 'WORKERS')).toThrow(JobSettingsError);
    expect(() => parseWorkerRoutes(json, 'WORKERS')).toThrow(message);
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
