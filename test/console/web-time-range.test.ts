import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RANGE_MS,
  fromInputValue,
  MAX_RANGE_MS,
  MIN_RANGE_MS,
  panRange,
  presetRange,
  RANGE_PRESETS,
  rangeAround,
  rangeFromUrl,
  rangeToUrl,
  toInputValue,
  zoomRange,
} from '../../console/web/time-range';

const now = Date.parse('2026-12-02T08:00:00Z');
const HOUR = 3_600_000;

describe('presets', () => {
  it('offers 1 h, 1 d, 7 d, 30 d and 1 y', () => {
    expect(RANGE_PRESETS.map((p) => p.label)).toEqual(['1 h', '1 d', '7 d', '30 d', '1 y']);
  });

  it('puts a tenth of the range after now, so the next fire times show', () => {
    const range = presetRange(10 * HOUR, now);
    expect(range).toEqual({ from: now - 9 * HOUR, to: now + HOUR });
  });
});

describe('rangeFromUrl', () => {
  it('reads the URL range', () => {
    expect(rangeFromUrl('2026-12-01T00:00:00.000Z', '2026-12-02T00:00:00.000Z', now)).toEqual({
      from: Date.parse('2026-12-01T00:00:00Z'),
      to: Date.parse('2026-12-02T00:00:00Z'),
    });
  });

  it('falls back to the default range when a bound is missing, wrong, or the end is not after the start', () => {
    const fallback = presetRange(DEFAULT_RANGE_MS, now);
    expect(rangeFromUrl(undefined, '2026-12-02T00:00:00.000Z', now)).toEqual(fallback);
    expect(rangeFromUrl('yesterday', '2026-12-02T00:00:00.000Z', now)).toEqual(fallback);
    expect(rangeFromUrl('2026-12-02T00:00:00.000Z', '2026-12-01T00:00:00.000Z', now)).toEqual(fallback);
  });

  it('round-trips through rangeToUrl', () => {
    const range = { from: now - HOUR, to: now };
    const url = rangeToUrl(range);
    expect(rangeFromUrl(url.from, url.to, 0)).toEqual(range);
  });
});

describe('zoomRange', () => {
  it('narrows and widens around the centre', () => {
    const range = { from: now - 4 * HOUR, to: now };
    expect(zoomRange(range, 0.5)).toEqual({ from: now - 3 * HOUR, to: now - HOUR });
    expect(zoomRange(range, 2)).toEqual({ from: now - 6 * HOUR, to: now + 2 * HOUR });
  });

  it('stops at a minute and at five years', () => {
    const narrow = zoomRange({ from: now, to: now + 90_000 }, 0.5);
    expect(narrow.to - narrow.from).toBe(MIN_RANGE_MS);
    const wide = zoomRange({ from: now - 4 * 365 * 86_400_000, to: now }, 2);
    expect(wide.to - wide.from).toBe(MAX_RANGE_MS);
  });
});

describe('panRange', () => {
  it('moves by half the range, earlier or later', () => {
    const range = { from: now - 4 * HOUR, to: now };
    expect(panRange(range, -1)).toEqual({ from: now - 6 * HOUR, to: now - 2 * HOUR });
    expect(panRange(range, 1)).toEqual({ from: now - 2 * HOUR, to: now + 2 * HOUR });
  });
});

describe('rangeAround', () => {
  it('centres a range of the given width on a time', () => {
    expect(rangeAround(now, 2 * HOUR)).toEqual({ from: now - HOUR, to: now + HOUR });
  });
});

describe('time inputs: ISO UTC, 24 hours, never the browser locale', () => {
  it('writes a time as the page writes every time, and reads it back', () => {
    expect(toInputValue(now)).toBe('2026-12-02 08:00:00');
    expect(toInputValue(Date.parse('2026-12-02T23:59:59Z'))).toBe('2026-12-02 23:59:59');
    expect(fromInputValue(toInputValue(now))).toBe(now);
    expect(fromInputValue('2026-12-02 08:00')).toBe(now);
  });

  it('takes the ISO forms an operator pastes: a T, a Z, a trailing UTC, milliseconds', () => {
    expect(fromInputValue('2026-12-02T08:00:00Z')).toBe(now);
    expect(fromInputValue('2026-12-02 08:00:00 UTC')).toBe(now);
    expect(fromInputValue(' 2026-12-02T08:00:00.500Z ')).toBe(now + 500);
  });

  it('refuses an empty, locale-formatted, 12-hour or impossible value', () => {
    expect(fromInputValue('')).toBeUndefined();
    expect(fromInputValue('02/12/2026 08:00')).toBeUndefined();
    expect(fromInputValue('12/02/2026, 08:00:00 AM')).toBeUndefined();
    expect(fromInputValue('2026-12-02 08:00:00 AM')).toBeUndefined();
    expect(fromInputValue('2026-02-30 08:00:00')).toBeUndefined();
    expect(fromInputValue('2026-12-02 25:00:00')).toBeUndefined();
  });
});
