import { describe, expect, it } from 'vitest';
import {
  backfillSentence,
  CANCELLABLE,
  cancelSentence,
  pauseSentence,
  resumeSentence,
  retrySentence,
  runSentence,
  targetName,
} from '../../console/web/action-text';

const job = { jobId: 'weekly-export' };
const schedule = { jobId: 'reports', scheduleKey: 'customer-42' };

describe('the confirmation sentences', () => {
  it('names a job, or one schedule of it', () => {
    expect(targetName(job)).toBe('weekly-export');
    expect(targetName(schedule)).toBe('reports (schedule customer-42)');
  });

  it('says a pause disables the schedule until resumed, with the note, or that one is required', () => {
    expect(pauseSentence(job, '  freeze ')).toBe(
      'Pause weekly-export: its schedule is disabled and runs stop until resumed. Note: “freeze”.',
    );
    expect(pauseSentence(job, ' ')).toContain('A note is required.');
  });

  it('says a resume enables the schedule again and catches up on the fire times it missed', () => {
    expect(resumeSentence(schedule)).toBe(
      'Resume reports (schedule customer-42): its schedule is enabled again; the fire times missed while paused run ' +
        'now if still inside the catch-up window, older ones are recorded as skipped (missed).',
    );
  });

  it("says which overlap policy a run now uses: the one chosen, else the job's", () => {
    expect(runSentence(job, 'allowAll', 'skip')).toContain('with overlap allowAll: run alongside any run going');
    expect(runSentence(job, undefined, 'skip')).toContain(
      "with overlap skip (the job's): skip it while a run is going",
    );
    expect(runSentence(job, undefined)).toContain("with the job's overlap policy");
  });

  it('tells a plain retry from a forced one', () => {
    expect(retrySentence(job, '2026-12-02T05:00:00.000Z', 'FAILED', false)).toBe(
      'Retry weekly-export at 2026-12-02 05:00:00 UTC: the FAILED occurrence is reopened and enqueued to run again.',
    );
    expect(retrySentence(job, '2026-12-02T05:00:00.000Z', 'RUNNING', false)).toContain(
      'only a FAILED occurrence is reopened; for this RUNNING one the server answers whether a forced retry would',
    );
    expect(retrySentence(job, '2026-12-02T05:00:00.000Z', 'RUNNING', true)).toContain(
      'with force: one more message is enqueued for this RUNNING occurrence',
    );
  });

  it("gives a backfill's range, policy and, after the dry run, its count", () => {
    const from = Date.parse('2026-12-01T00:00:00Z');
    const to = Date.parse('2026-12-02T00:00:00Z');
    expect(backfillSentence(job, from, to, 'bufferAll', 24)).toBe(
      'Backfill weekly-export from 2026-12-01 00:00:00 UTC to 2026-12-02 00:00:00 UTC: records 24 fire times ' +
        'without a row yet and runs them with overlap bufferAll (buffer every run behind the one going).',
    );
    expect(backfillSentence(job, from, to, 'skip', 1)).toContain('records 1 fire time without');
    expect(backfillSentence(job, from, to, 'skip')).toContain('records the fire times without');
  });

  it('says a cancel stops a running occurrence through its lease, closes a waiting one, and is refused for a finished one', () => {
    expect(cancelSentence(job, '2026-12-01T10:00:00Z', 'RUNNING')).toMatch(
      /^Cancel weekly-export at .*: its lease is taken, so its worker stops at its next heartbeat and commits no report/,
    );
    expect(cancelSentence(schedule, '2026-12-01T10:00:00Z', 'BUFFERED')).toMatch(
      /^Cancel reports \(schedule customer-42\) at .*: this BUFFERED occurrence is closed as CANCELLED and never runs\.$/,
    );
    expect(cancelSentence(job, '2026-12-01T10:00:00Z', 'SUCCEEDED')).toMatch(
      /finished; the server refuses to cancel it/,
    );
    expect(CANCELLABLE).toEqual(['PENDING', 'RETRY_WAIT', 'BUFFERED', 'RUNNING']);
  });
});
