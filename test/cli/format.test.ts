/**
 * The detail column (bin/occurrences/format.ts) of the rows that did not run or wait to, in the cases the moto tests
 * of read-commands.test.ts do not reach: a BUFFERED row without its job-state row (`watch`), with the slot free, or
 * missing from the buffer; a skipped or cancelled row whose reason fields are absent.
 */
import { describe, expect, it } from 'vitest';
import { detail, lastChange, lateBy } from '../../bin/occurrences/format';
import type { JobState } from '../../functions/protocol/job-state';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import { row } from './support';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const buffered = row('j', '2026-11-30T11:00:00Z', OccurrenceStatus.BUFFERED, NOW, {
  bufferedAt: '2026-11-30T11:00:01.000Z',
});
const state = (extra: Partial<JobState>): JobState => ({ jobId: 'j', scheduledTime: '#job', version: 3, ...extra });

describe('Function: detail', () => {
  it('BUFFERED without the job-state row (watch) says since when it waits for the running slot', () => {
    expect(detail(buffered, NOW)).toBe("waiting for the job's running slot since 2026-11-30T11:00:01.000Z");
  });

  it('BUFFERED behind a holder says which occurrence holds the slot and its place in the buffer', () => {
    const states = new Map([['j', state({ slotTime: '2026-11-30T10:00:00Z', buffer: ['2026-11-30T11:00:00Z'] })]]);
    expect(detail(buffered, NOW, states)).toBe('waiting for 2026-11-30T10:00:00Z (1 of 1 in the buffer)');
  });

  it('BUFFERED with the slot free says it waits to be woken', () => {
    const states = new Map([['j', state({ buffer: ['2026-11-30T09:00:00Z', '2026-11-30T11:00:00Z'] })]]);
    expect(detail(buffered, NOW, states)).toBe('waiting to be woken, the slot is free (2 of 2 in the buffer)');
  });

  it('BUFFERED but missing from the buffer says the reconciler wakes it', () => {
    const states = new Map([['j', state({ slotTime: '2026-11-30T10:00:00Z' })]]);
    expect(detail(buffered, NOW, states)).toBe(
      'waiting for 2026-11-30T10:00:00Z (not in the buffer: the reconciler wakes it)',
    );
  });

  it("a skipped or cancelled row says why in statusReason's words, also without its reason fields", () => {
    const skipped = row('j', '2026-11-30T08:00:00Z', OccurrenceStatus.SKIPPED, NOW);
    const cancelled = row('j', '2026-11-30T08:00:00Z', OccurrenceStatus.CANCELLED, NOW);
    expect(detail(skipped, NOW)).toBe('skipped');
    expect(detail({ ...skipped, skipReason: 'overlap' }, NOW)).toBe('overlap');
    expect(detail({ ...skipped, skipReason: 'paused' }, NOW)).toBe('paused: delivered while the job was paused');
    expect(detail(cancelled, NOW)).toBe('cancelled');
    expect(detail({ ...cancelled, cancelledBy: '2026-11-30T09:00:00Z' }, NOW)).toBe(
      'cancelled by 2026-11-30T09:00:00Z (overlap cancelOther)',
    );
  });
});

describe('Function: lateBy', () => {
  it('is how long after its scheduled time a missed row was recorded, and nothing for a row recorded before it', () => {
    const missed = row('j', '2026-11-30T08:00:00Z', OccurrenceStatus.SKIPPED, NOW, { skipReason: 'missed' });
    expect(lateBy({ ...missed, skippedAt: '2026-11-30T09:30:00.000Z' })).toBe(90 * 60_000);
    expect(lateBy({ ...missed, skippedAt: '2026-11-30T07:00:00.000Z' })).toBeUndefined();
  });
});

describe('Function: lastChange', () => {
  it('counts the skip, the buffering and the cancellation, not only the creation', () => {
    const at = '2026-11-30T11:30:00.000Z';
    const skipped = row('j', '2026-11-30T08:00:00Z', OccurrenceStatus.SKIPPED, NOW, { skippedAt: at });
    const cancelled = row('j', '2026-11-30T08:00:00Z', OccurrenceStatus.CANCELLED, NOW, { cancelledAt: at });
    expect(lastChange(skipped)).toBe(at);
    expect(lastChange({ ...buffered, bufferedAt: at })).toBe(at);
    expect(lastChange(cancelled)).toBe(at);
  });
});
