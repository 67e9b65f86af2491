import { describe, expect, it } from 'vitest';
import { formatRate, progressRate, progressShare } from '../../console/web/progress-rate';

const at = (s: number) => new Date(Date.parse('2026-12-02T08:00:00Z') + s * 1000).toISOString();

describe('progressRate', () => {
  it('gives the rate between two readings and the time left at it', () => {
    const rate = progressRate({ done: 6_000, total: 10_000, at: at(0) }, { done: 6_400, total: 10_000, at: at(4) });
    expect(rate).toEqual({ perSecond: 100, timeLeftMs: 36_000 });
  });

  it('gives no time left without a total, or while nothing moves', () => {
    expect(progressRate({ done: 10, at: at(0) }, { done: 30, at: at(2) })).toEqual({ perSecond: 10 });
    expect(progressRate({ done: 10, total: 50, at: at(0) }, { done: 10, total: 50, at: at(2) })).toEqual({
      perSecond: 0,
    });
  });

  it('gives nothing for the same reading twice, readings out of order, or a count that went back', () => {
    expect(progressRate({ done: 10, at: at(0) }, { done: 10, at: at(0) })).toBeUndefined();
    expect(progressRate({ done: 10, at: at(2) }, { done: 20, at: at(0) })).toBeUndefined();
    expect(progressRate({ done: 50, at: at(0) }, { done: 5, at: at(2) })).toBeUndefined();
  });
});

describe('progressShare', () => {
  it('is done over total, within 0…1, and unknown without a positive total', () => {
    expect(progressShare({ done: 25, total: 100, at: at(0) })).toBe(0.25);
    expect(progressShare({ done: 120, total: 100, at: at(0) })).toBe(1);
    expect(progressShare({ done: 25, at: at(0) })).toBeUndefined();
    expect(progressShare({ done: 0, total: 0, at: at(0) })).toBeUndefined();
  });
});

describe('formatRate', () => {
  it('keeps fewer decimals as the rate grows', () => {
    expect(formatRate(0.333)).toBe('0.33/s');
    expect(formatRate(12.55)).toBe('12.6/s');
    expect(formatRate(1_200.4)).toBe('1,200/s');
  });
});
