import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeEnvelope } from '../../functions/protocol/envelope';
import { InvalidInputError } from '../../functions/protocol/errors';
import {
  ForgedScheduleError,
  jobOfInvokedArn,
  keyedAliasNameOf,
} from '../../functions/protocol/runtime-schedule-guard';
import { faults } from '../../sim/fakes/fake-aws';
import { type Harness, makeHarness, SCHEDULED, T0, timedJob } from '../support/harness';

let h: Harness;
beforeEach(() => {
  vi.useFakeTimers({ now: T0 + 2_000 });
  h = makeHarness({ jobs: { report: timedJob(1_000) } });
});
afterEach(() => {
  h.aws.restore();
  vi.useRealTimers();
});

describe('trigger', () => {
  it('records a PENDING occurrence keyed by job and scheduled time, then enqueues a message naming it', async () => {
    expect(await h.trigger({ jobId: 'report', scheduledTime: SCHEDULED })).toBe('recorded');
    const row = h.aws.row('report', SCHEDULED)!;
    expect(row).toMatchObject({ status: 'PENDING', attempt: 0, createdAt: new Date(T0 + 2_000).toISOString() });
    expect(row.deadlineAt).toBe(new Date(T0 + 6 * 3_600_000).toISOString());
    expect(row.ttl).toBe(T0 / 1000 + 90 * 86_400);
    expect(h.aws.sent).toHaveLength(1);
    expect(decodeEnvelope(h.aws.sent[0], new Set(['report']))).toEqual({ jobId: 'report', scheduledTime: SCHEDULED });
  });

  it('normalises the scheduled time so every delivery of one occurrence has one key', async () => {
    await h.trigger({ jobId: 'report', scheduledTime: '2026-11-30T07:00:00+01:00' });
    expect(h.aws.row('report', SCHEDULED)).toBeDefined();
  });

  it('suppresses a doubled trigger after the occurrence was claimed: no second message', async () => {
    await h.trigger({ jobId: 'report', scheduledTime: SCHEDULED });
    h.aws.table.set(`report|${SCHEDULED}`, { ...h.aws.row('report', SCHEDULED)!, status: 'RUNNING' });
    expect(await h.trigger({ jobId: 'report', scheduledTime: SCHEDULED })).toBe('duplicate-suppressed');
    expect(h.aws.sent).toHaveLength(1);
    expect(h.aws.row('report', SCHEDULED)?.status).toBe('RUNNING');
  });

  it('gets an occurrence enqueued when the first trigger died between the put and the enqueue', async () => {
    h.aws.failNext('SendMessage', faults.unavailable);
    await expect(h.trigger({ jobId: 'report', scheduledTime: SCHEDULED })).rejects.toThrow(
      /enqueue occurrence failed \(transient\)/,
    );
    expect(h.aws.row('report', SCHEDULED)?.status).toBe('PENDING');
    expect(h.aws.sent).toHaveLength(0);

    // Lambda retries the failed async invocation with the same event.
    expect(await h.trigger({ jobId: 'report', scheduledTime: SCHEDULED })).toBe('pending-re-enqueued');
    expect(h.aws.sent).toHaveLength(1);
    expect(h.aws.count('PutItem')).toBe(2);
  });

  it.each([
    // A key without its route: the trigger cannot tell which worker's queue (a schedule from before workers).
    [{ jobId: 'unknown', scheduledTime: SCHEDULED }, /worker must be a job or worker id, got nothing/],
    [
      { jobId: 'report', scheduledTime: SCHEDULED, worker: 'gone', deadlineSeconds: 3_600, retentionDays: 7 },
      // Neither the event nor a look-up gives the queue of worker "gone": nowhere to send it.
      /worker gone: the event names no queueUrl and no route of job report was found/,
    ],
    [{ jobId: 'report', scheduledTime: 'yesterday' }, /scheduledTime must be ISO-8601/],
    [{ jobId: 'report' }, /scheduledTime must be a string, got nothing/],
    // Its UTC form, +010000-01-01T00:00:59Z, is no key the worker would accept.
    [
      { jobId: 'report', scheduledTime: '9999-12-31T23:59:59-00:01' },
      /scheduledTime must be from 1970-01-01T00:00:00Z/,
    ],
    ['not an object', /must be a JSON object/],
  ])('rejects %j with a clear error and writes nothing', async (event, message) => {
    const attempt = h.trigger(event);
    await expect(attempt).rejects.toBeInstanceOf(InvalidInputError);
    await expect(attempt).rejects.toThrow(message);
    expect(h.aws.count('PutItem')).toBe(0);
    expect(h.aws.sent).toHaveLength(0);
    expect(h.logs.find((l) => l.level === 'ERROR')?.message).toBe('trigger failed');
  });

  it("logs a rejected 1 MB event by its start only: the log line stays far below CloudWatch's 256 KB", async () => {
    const event = { jobId: 'report', scheduledTime: 'T'.repeat(1_000_000) };
    const attempt = h.trigger(event);
    await expect(attempt).rejects.toBeInstanceOf(InvalidInputError);
    await expect(attempt).rejects.toThrow(/"T+…" \(1000000 chars\)/);
    const logged = h.logs.find((l) => l.level === 'ERROR')!;
    expect(logged.message).toBe('trigger failed');
    expect(JSON.stringify(logged).length).toBeLessThan(2_000);
    expect(h.aws.count('PutItem')).toBe(0);
  });
});

describe('trigger: the trust boundary of run-time schedules', () => {
  const KEYED = 'arn:aws:lambda:eu-central-1:123456789012:function:stack-Trigger';
  const viaAlias = (jobId: string) => ({ invokedFunctionArn: `${KEYED}:${keyedAliasNameOf(jobId)}` });
  const keyed = (jobId: string, scheduleKey: string, input?: unknown) => ({
    jobId,
    scheduleKey,
    scheduledTime: SCHEDULED,
    ...(input === undefined ? {} : { input }),
  });

  beforeEach(() => {
    h.aws.restore();
    h = makeHarness({ jobs: { report: timedJob(1_000), other: timedJob(1_000) } });
  });

  const nothingWritten = () => {
    expect(h.aws.count('PutItem')).toBe(0);
    expect(h.aws.sent).toHaveLength(0);
  };

  it("records a held key through its job's alias, with the registry's input instead of the event's", async () => {
    h.registry.held('report', 'acme', { plan: 'gold' });
    expect(await h.trigger(keyed('report', 'acme', { plan: 'forged' }), viaAlias('report'))).toBe('recorded');
    expect(h.aws.row('report#acme', SCHEDULED)?.input).toEqual({ plan: 'gold' });
    expect(h.registry.reads).toEqual(['report/acme']);
  });

  it('drops an input the registry row does not have', async () => {
    h.registry.held('report', 'acme');
    await h.trigger(keyed('report', 'acme', { injected: true }), viaAlias('report'));
    expect(h.aws.row('report#acme', SCHEDULED)?.input).toBeUndefined();
  });

  it('refuses an event naming another job than the alias it came through, before reading the registry', async () => {
    h.registry.held('other', 'acme');
    await expect(h.trigger(keyed('other', 'acme'), viaAlias('report'))).rejects.toThrow(
      /jobId other arrived through the trigger's alias of job report/,
    );
    await expect(h.trigger(keyed('other', 'acme'), viaAlias('report'))).rejects.toBeInstanceOf(ForgedScheduleError);
    expect(h.registry.reads).toEqual([]);
    nothingWritten();
  });

  it('refuses a key the registry does not hold, or holds only as a tombstone', async () => {
    await expect(h.trigger(keyed('report', 'unknown'), viaAlias('report'))).rejects.toThrow(
      /schedule report\/unknown is not in the schedule registry: only a schedule upserted/,
    );
    h.registry.deleted('report', 'gone');
    await expect(h.trigger(keyed('report', 'gone'), viaAlias('report'))).rejects.toThrow(/\(deleted\)/);
    nothingWritten();
  });

  it("refuses an event without a key through a job's alias: a keyed job's group holds only the registry's schedules", async () => {
    await expect(h.trigger({ jobId: 'report', scheduledTime: SCHEDULED }, viaAlias('report'))).rejects.toThrow(
      /fired without a scheduleKey/,
    );
    nothingWritten();
  });

  it('checks a keyed event invoked without an alias against the registry too; a fixed schedule passes as before', async () => {
    await expect(h.trigger(keyed('report', 'unknown'), { invokedFunctionArn: KEYED })).rejects.toThrow(
      /not in the schedule registry/,
    );
    expect(await h.trigger({ jobId: 'report', scheduledTime: SCHEDULED }, { invokedFunctionArn: KEYED })).toBe(
      'recorded',
    );
    expect(h.registry.reads).toEqual(['report/unknown']);
  });

  it('reads the job of an alias from the invoked ARN, and no job from an unqualified ARN, $LATEST or a version', () => {
    expect(jobOfInvokedArn(`${KEYED}:job-weekly_report-2`)).toBe('weekly_report-2');
    expect(jobOfInvokedArn(`${KEYED}:job-123`)).toBe('123');
    for (const arn of [KEYED, `${KEYED}:$LATEST`, `${KEYED}:7`, `${KEYED}:live`, `${KEYED}:job-`, undefined])
      expect(jobOfInvokedArn(arn)).toBeUndefined();
  });
});
