/**
 * The console's actions (console/server/actions.ts): each runs the library function the CLI runs, recorded as the
 * console's operator (`by`), and writes one audit line, on in-memory ports.
 */
import { describe, expect, it } from 'vitest';
import type { ActionResult, BackfillPreview } from '../../console/contract';
import { appOf, errorOf, HOURLY, KEY, KEYED, NOW, OPERATOR, post, world } from './server-support';

describe('POST /api/actions/pause and resume', () => {
  it("pauses a job as the operator: its schedule DISABLED, the job-state row's pause, one audit line", async () => {
    const w = await world();
    const answer = await post(appOf(w.deps), 'pause', { jobId: HOURLY, note: 'database migration' });
    expect(answer.status).toBe(200);
    const result = (await answer.json()) as ActionResult;
    expect(result).toMatchObject({ outcome: 'paused', by: OPERATOR });
    expect(result.message).toMatch(/^paused hourly-report: its schedule is DISABLED/);
    expect(w.switched).toEqual([{ jobId: HOURLY, state: 'DISABLED' }]);
    expect(w.states.rows.get(HOURLY)).toMatchObject({
      pausedBy: OPERATOR,
      pauseNote: 'database migration',
      pauseCause: 'operator',
      pausedAt: new Date(NOW).toISOString(),
    });
    expect(w.audit).toEqual([
      {
        at: new Date(NOW).toISOString(),
        by: OPERATOR,
        action: 'pause',
        request: { jobId: HOURLY, note: 'database migration' },
        outcome: 'paused',
      },
    ]);
  });

  it('resumes a paused job as the operator: the pause cleared, the schedule ENABLED, failures in a row reset', async () => {
    const w = await world();
    const app = appOf(w.deps);
    await post(app, 'pause', { jobId: HOURLY, note: 'x' });
    const answer = await post(app, 'resume', { jobId: HOURLY });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ outcome: 'resumed', by: OPERATOR });
    expect(w.switched.at(-1)).toEqual({ jobId: HOURLY, state: 'ENABLED' });
    const state = w.states.rows.get(HOURLY);
    expect(state?.pausedAt).toBeUndefined();
    expect(state).toMatchObject({ resumedBy: OPERATOR, consecutiveFailures: 0 });
    expect(w.audit.map((a) => [a.action, a.outcome])).toEqual([
      ['pause', 'paused'],
      ['resume', 'resumed'],
    ]);
  });

  it('pauses and resumes one run-time schedule through the registry, as the operator', async () => {
    const w = await world();
    const app = appOf(w.deps);
    const paused = await post(app, 'pause', { jobId: KEYED, scheduleKey: KEY, note: 'customer asked' });
    expect(await paused.json()).toMatchObject({ outcome: 'paused', by: OPERATOR });
    expect(w.registry.row(KEYED, KEY)).toMatchObject({ state: 'PAUSED', updatedBy: OPERATOR });
    const resumed = await post(app, 'resume', { jobId: KEYED, scheduleKey: KEY });
    expect(await resumed.json()).toMatchObject({ outcome: 'resumed', by: OPERATOR });
    expect(w.registry.row(KEYED, KEY)).toMatchObject({ state: 'ENABLED', updatedBy: OPERATOR });
    expect(w.switched).toEqual([]);
  });

  it('answers 400 naming a missing note, and writes the failure to the audit trail', async () => {
    const w = await world();
    const answer = await post(appOf(w.deps), 'pause', { jobId: HOURLY });
    expect(answer.status).toBe(400);
    expect(await errorOf(answer)).toBe('note: must be a non-empty text of at most 500 characters');
    expect(w.switched).toEqual([]);
    expect(w.audit.map((a) => a.outcome)).toEqual(['error: note: must be a non-empty text of at most 500 characters']);
  });
});

describe('POST /api/actions/cancel', () => {
  const RUNNING_TIME = '2026-12-01T10:00:00Z';

  it('cancels a RUNNING occurrence as the operator, with the note, and says when its worker stops; one audit line', async () => {
    const w = await world();
    const answer = await post(appOf(w.deps), 'cancel', {
      jobId: HOURLY,
      scheduledTime: RUNNING_TIME,
      note: 'upstream broken',
    });
    expect(answer.status).toBe(200);
    const result = (await answer.json()) as ActionResult;
    expect(result).toMatchObject({ outcome: 'cancelled', by: OPERATOR });
    expect(result.message).toMatch(/^cancelled hourly-report 2026-12-01T10:00:00Z \(it was RUNNING\)/);
    expect(await w.occurrences.get({ jobId: HOURLY, scheduledTime: RUNNING_TIME })).toMatchObject({
      status: 'CANCELLED',
      cancelledByOperator: OPERATOR,
      cancelNote: 'upstream broken',
      leaseId: expect.stringMatching(/^cancelled-by-operator-/),
    });
    expect(w.audit.map((a) => [a.action, a.outcome])).toEqual([['cancel', 'cancelled']]);
  });

  it('refuses a SUCCEEDED and an unknown occurrence with 409 and the reason, writing nothing', async () => {
    const w = await world();
    const app = appOf(w.deps);
    const before = structuredClone([...w.occurrences.rows.entries()]);
    const done = await post(app, 'cancel', { jobId: HOURLY, scheduledTime: '2026-12-01T09:00:00Z' });
    expect(done.status).toBe(409);
    expect(await errorOf(done)).toMatch(/^refused to cancel hourly-report 2026-12-01T09:00:00Z: it SUCCEEDED/);
    const unknown = await post(app, 'cancel', { jobId: HOURLY, scheduledTime: '2026-12-01T03:00:00Z' });
    expect(unknown.status).toBe(409);
    expect(await errorOf(unknown)).toMatch(/there is no such occurrence$/);
    expect([...w.occurrences.rows.entries()]).toEqual(before);
    expect(w.audit.map((a) => a.outcome)).toEqual(['refused', 'refused']);
  });

  it('answers 400 naming a bad scheduled time or a note too long', async () => {
    const app = appOf((await world()).deps);
    const time = await post(app, 'cancel', { jobId: HOURLY, scheduledTime: 'noon' });
    expect(time.status).toBe(400);
    expect(await errorOf(time)).toMatch(/^scheduledTime: /);
    const note = await post(app, 'cancel', { jobId: HOURLY, scheduledTime: RUNNING_TIME, note: 'x'.repeat(501) });
    expect(await errorOf(note)).toBe('note: must be a non-empty text of at most 500 characters');
  });
});

describe('POST /api/actions/run', () => {
  it("records an occurrence now as the operator's, with the overlap asked for, and enqueues it", async () => {
    const w = await world();
    const answer = await post(appOf(w.deps), 'run', { jobId: HOURLY, overlap: 'allowAll' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ outcome: 'recorded', by: OPERATOR });
    const recorded = await w.occurrences.get({ jobId: HOURLY, scheduledTime: '2026-12-01T12:00:00Z' });
    expect(recorded).toMatchObject({ status: 'PENDING', origin: 'run', requestedBy: OPERATOR, overlap: 'allowAll' });
    expect(w.queue.sent).toHaveLength(1);
    expect(w.audit.map((a) => [a.action, a.outcome])).toEqual([['run', 'recorded']]);
  });

  it('answers 409 with the reason when the job is paused, and records nothing', async () => {
    const w = await world();
    const app = appOf(w.deps);
    await post(app, 'pause', { jobId: HOURLY, note: 'x' });
    const answer = await post(app, 'run', { jobId: HOURLY });
    expect(answer.status).toBe(409);
    const body = (await answer.json()) as { error: string };
    expect(body).toMatchObject({ outcome: 'refused', by: OPERATOR });
    expect(body.error).toMatch(/^refused to run hourly-report: the job is paused/);
    expect(w.queue.sent).toEqual([]);
  });
});

describe('POST /api/actions/retry', () => {
  it('reopens a FAILED occurrence and enqueues it; refuses a SUCCEEDED one with 409', async () => {
    const w = await world();
    const app = appOf(w.deps);
    const answer = await post(app, 'retry', { jobId: HOURLY, scheduledTime: '2026-12-01T08:00:00Z' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ outcome: 'reopened', by: OPERATOR });
    expect(await w.occurrences.get({ jobId: HOURLY, scheduledTime: '2026-12-01T08:00:00Z' })).toMatchObject({
      status: 'PENDING',
      attempt: 0,
      // Who retried it, in the row's history: the console's operator.
      history: [expect.objectContaining({ outcome: 'reopened', by: OPERATOR })],
    });
    expect(w.queue.sent).toHaveLength(1);
    const refused = await post(app, 'retry', { jobId: HOURLY, scheduledTime: '2026-12-01T09:00:00Z', force: true });
    expect(refused.status).toBe(409);
    const pending = await post(app, 'retry', { jobId: HOURLY, scheduledTime: '2026-12-01T08:00:00Z' });
    // Reopened above, now PENDING: refused, but force would enqueue it once more.
    expect(await pending.clone().json()).toMatchObject({ outcome: 'refused', forceWouldEnqueue: true });
    expect(await errorOf(refused)).toMatch(/it SUCCEEDED and its report is at/);
    expect(w.audit.map((a) => [a.action, a.outcome])).toEqual([
      ['retry', 'reopened'],
      ['retry', 'refused'],
      ['retry', 'refused'],
    ]);
  });

  it('answers 400 naming a bad scheduled time or force', async () => {
    const app = appOf((await world()).deps);
    const time = await post(app, 'retry', { jobId: HOURLY, scheduledTime: 'noon' });
    expect(time.status).toBe(400);
    expect(await errorOf(time)).toMatch(/^scheduledTime: /);
    const force = await post(app, 'retry', { jobId: HOURLY, scheduledTime: '2026-12-01T08:00:00Z', force: 'yes' });
    expect(await errorOf(force)).toBe('force: must be true or false, got "yes"');
  });
});

describe('POST /api/actions/backfill', () => {
  const range = { jobId: HOURLY, from: '2026-12-01T07:00:00Z', to: '2026-12-01T12:00:00Z' };

  it('previews a dry run: the fire times in [from, to), those recorded already by status; writes nothing', async () => {
    const w = await world();
    const answer = await post(appOf(w.deps), 'backfill', { ...range, dryRun: true });
    expect(answer.status).toBe(200);
    const preview = (await answer.json()) as BackfillPreview;
    expect(preview).toMatchObject({
      outcome: 'dry-run',
      by: OPERATOR,
      planned: 5,
      existing: { FAILED: 1, SUCCEEDED: 1, RUNNING: 1, SKIPPED: 1 },
      times: [
        '2026-12-01T07:00:00Z',
        '2026-12-01T08:00:00Z',
        '2026-12-01T09:00:00Z',
        '2026-12-01T10:00:00Z',
        '2026-12-01T11:00:00Z',
      ],
    });
    expect(preview.message).toMatch(/fires 5 time\(s\) in the range; 4 already recorded, 1 would be recorded/);
    expect(w.queue.sent).toEqual([]);
    expect(w.audit.map((a) => a.outcome)).toEqual(['dry-run']);
  });

  it('records the missing times as backfilled by the operator, and leaves the others alone', async () => {
    const w = await world();
    const answer = await post(appOf(w.deps), 'backfill', { ...range, dryRun: false });
    expect(answer.status).toBe(200);
    const result = (await answer.json()) as ActionResult;
    expect(result).toMatchObject({ outcome: 'recorded', by: OPERATOR });
    expect(result.message).toMatch(/1 recorded and enqueued; .*4 already recorded, left alone/);
    expect(await w.occurrences.get({ jobId: HOURLY, scheduledTime: '2026-12-01T07:00:00Z' })).toMatchObject({
      status: 'PENDING',
      origin: 'backfill',
      requestedBy: OPERATOR,
      overlap: 'bufferAll',
    });
    expect(w.queue.sent).toHaveLength(1);
  });

  it('answers 400 for a range into the future, a reversed one, and a job with run-time schedules', async () => {
    const app = appOf((await world()).deps);
    const future = await post(app, 'backfill', { ...range, to: '2026-12-01T13:00:00Z', dryRun: true });
    expect(future.status).toBe(400);
    expect(await errorOf(future)).toMatch(/^to: \(2026-12-01T13:00:00Z\) is in the future/);
    const reversed = await post(app, 'backfill', {
      ...range,
      from: '2026-12-01T12:00:00Z',
      to: '2026-12-01T07:00:00Z',
      dryRun: true,
    });
    expect(await errorOf(reversed)).toMatch(/^from: /);
    const keyed = await post(app, 'backfill', { ...range, jobId: KEYED, dryRun: true });
    expect(await errorOf(keyed)).toBe(
      'scheduleKey: job weekly-report takes schedules at run time: backfill one of its schedules',
    );
    const unknownKey = await post(app, 'backfill', { ...range, jobId: KEYED, scheduleKey: 'nobody', dryRun: true });
    expect(unknownKey.status).toBe(404);
    const dry = await post(app, 'backfill', { ...range });
    expect(await errorOf(dry)).toBe('dryRun: must be true or false, got undefined');
  });
});

describe('POST /api/actions/backfill of one run-time schedule', () => {
  it('records the times of that schedule with its key, as the schedule would have sent them', async () => {
    const w = await world();
    const body = { jobId: KEYED, scheduleKey: KEY, from: '2026-11-23T00:00:00Z', to: '2026-11-24T00:00:00Z' };
    const answer = await post(appOf(w.deps), 'backfill', { ...body, dryRun: false });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as ActionResult).message).toMatch(/^backfilled weekly-report#customer-42: 1 /);
    // Mondays 08:00 in Paris: 07:00 UTC.
    const key = { jobId: KEYED, scheduleKey: KEY, scheduledTime: '2026-11-23T07:00:00Z' };
    expect(await w.occurrences.get(key)).toMatchObject({ status: 'PENDING', origin: 'backfill', scheduleKey: KEY });
    expect(w.queue.sent).toHaveLength(1);
  });
});

describe('an unknown action', () => {
  it('answers 404 naming the actions there are', async () => {
    const answer = await post(appOf((await world()).deps), 'delete', { jobId: HOURLY });
    expect(answer.status).toBe(404);
    expect(await errorOf(answer)).toBe(
      'no such action: delete (the actions: retry, cancel, run, pause, resume, backfill)',
    );
  });
});
