import { describe, expect, it } from 'vitest';
import { DeliveryNotAcknowledgedError } from '../../functions/protocol/delivery';
import {
  CheckpointRejectedError,
  DependencyError,
  InvalidInputError,
  JobTimeoutError,
  LeaseExpiringError,
  LeaseLostError,
  messageOf,
  messageWithCauses,
  ScheduledJobsError,
  YieldRequestedError,
} from '../../functions/protocol/errors';
import { JobSettingsError } from '../../functions/protocol/job-settings';
import { ReopenedNotEnqueuedError } from '../../functions/protocol/manual-retry';
import { ScheduleError } from '../../functions/protocol/schedule-times';
import { ReconcileIncompleteError } from '../../functions/reconciler';

const KEY = { jobId: 'daily-report', scheduledTime: '2026-11-30T12:00:00Z' };
const cause = new Error('boom');

describe('Class: ScheduledJobsError', () => {
  it.each([
    ['DependencyError', new DependencyError('transient', 'claim occurrence', cause)],
    ['LeaseLostError', new LeaseLostError('extend', 'leaseId changed')],
    ['LeaseExpiringError', new LeaseExpiringError('2026-11-30T12:01:00.000Z', cause)],
    ['JobTimeoutError', new JobTimeoutError('2026-11-30T12:05:00.000Z')],
    ['InvalidInputError', new InvalidInputError('queue message', ['not JSON'])],
    ['ReopenedNotEnqueuedError', new ReopenedNotEnqueuedError(KEY, cause)],
    ['DeliveryNotAcknowledgedError', new DeliveryNotAcknowledgedError('msg-1', 'retry-scheduled')],
    ['YieldRequestedError', new YieldRequestedError('2026-11-30T12:05:00.000Z')],
    ['CheckpointRejectedError', new CheckpointRejectedError('checkpoint', 'not JSON')],
    ['ScheduleError', new ScheduleError('cron(0 3 * * ? *) has no fire time')],
    ['JobSettingsError', new JobSettingsError(['jobs[0].id: must be a job id'])],
    [
      'ReconcileIncompleteError',
      new ReconcileIncompleteError({
        examined: 0,
        fixed: [],
        changedMeanwhile: 0,
        skipped: 0,
        errors: 1,
        truncated: false,
        late: 0,
      }),
    ],
  ])('%s is one of the family and names itself', (name, error) => {
    expect(name).toMatch(/Error$/); // one family, named one way
    expect(error).toBeInstanceOf(ScheduledJobsError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(messageOf(error)).toBe(`${name}: ${error.message}`);
    expect(String(error.stack)).toMatch(new RegExp(`^${name}: `));
  });

  it('each carries its context', () => {
    const dependency = new DependencyError('fatal', 'commit report', cause);
    expect(dependency).toMatchObject({ kind: 'fatal', operation: 'commit report', cause });
    expect(dependency.message).toBe('commit report failed (fatal): Error: boom');
    expect(new LeaseLostError('complete', 'gone')).toMatchObject({ operation: 'complete' });
    expect(new InvalidInputError('schedule event', ['a', 'b']).message).toBe('invalid schedule event: a; b');
    expect(new ReopenedNotEnqueuedError(KEY, cause)).toMatchObject({ key: KEY, cause });
    const unacknowledged = new DeliveryNotAcknowledgedError('msg-1', 'retry-scheduled');
    expect(unacknowledged).toMatchObject({
      result: 'retry-scheduled',
      message: 'message msg-1 not acknowledged: retry-scheduled',
    });
  });
});

describe('messageWithCauses: what a failed attempt records as lastError', () => {
  it('keeps the cause that fetch hides behind "fetch failed"', () => {
    const error = new TypeError('fetch failed', {
      cause: Object.assign(new Error('getaddrinfo ENOTFOUND api.example.com'), { code: 'ENOTFOUND' }),
    });

    expect(messageOf(error)).toBe('TypeError: fetch failed');
    expect(messageWithCauses(error)).toBe('TypeError: fetch failed <- Error: getaddrinfo ENOTFOUND api.example.com');
  });

  it('follows a chain of causes in order and names the inner errors of an AggregateError', () => {
    const refused = new AggregateError(
      [new Error('connect ECONNREFUSED ::1:443'), new Error('connect ECONNREFUSED 127.0.0.1:443')],
      '',
    );
    const error = new Error('sync failed', { cause: new TypeError('fetch failed', { cause: refused }) });

    expect(messageWithCauses(error)).toBe(
      'Error: sync failed <- TypeError: fetch failed <- AggregateError:  ' +
        '(Error: connect ECONNREFUSED ::1:443; Error: connect ECONNREFUSED 127.0.0.1:443)',
    );
  });

  it('does not repeat a cause the message already quotes (a DependencyError names its cause)', () => {
    const dependency = new DependencyError('transient', 'put report', new Error('slow down'));

    expect(messageWithCauses(dependency)).toBe('DependencyError: put report failed (transient): Error: slow down');
  });

  it('stops at a cycle and after five causes, and cuts the text to the length asked for', () => {
    const looped = new Error('a');
    looped.cause = new Error('b', { cause: looped });
    expect(messageWithCauses(looped)).toBe('Error: a <- Error: b');

    let deep: Error = new Error('level 7');
    for (let level = 6; level >= 0; level--) deep = new Error(`level ${level}`, { cause: deep });
    expect(messageWithCauses(deep).split(' <- ')).toHaveLength(6);

    const long = messageWithCauses(new Error('x'.repeat(50), { cause: new Error('y'.repeat(50)) }), 40);
    expect(long).toHaveLength(40);
    expect(long.endsWith('…')).toBe(true);
  });

  it('writes a value that is not an Error as text', () => {
    expect(messageWithCauses('plain string')).toBe('plain string');
    expect(messageWithCauses(new Error('outer', { cause: 42 }))).toBe('Error: outer <- 42');
  });
});
