import { describe, expect, it } from 'vitest';
import {
  ERROR_HEAD_CHARS,
  errorHead,
  formatBytes,
  formatCount,
  formatDuration,
  formatOffset,
  formatRelative,
  formatUtc,
} from '../../console/web/format';

describe('formatOffset', () => {
  it('signs an offset once: + after the scheduled time, - before it (a run that started early)', () => {
    expect(formatOffset(3 * 3_600_000 + 41 * 60_000)).toBe('+3 h 41 min');
    expect(formatOffset(-(2 * 86_400_000 + 20 * 3_600_000))).toBe('-2 d 20 h');
    expect(formatOffset(0)).toBe('+0 ms');
  });
});

describe('formatDuration', () => {
  it.each([
    [350, '350 ms'],
    [4_200, '4.2 s'],
    [4_000, '4 s'],
    [42_400, '42 s'],
    [200_000, '3 min 20 s'],
    [180_000, '3 min'],
    [7_500_000, '2 h 5 min'],
    [273_600_000, '3 d 4 h'],
    [-4_200, '-4.2 s'],
  ])('writes %d ms as %s, in its two largest units', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('writes a dash for a span it cannot know', () => {
    expect(formatDuration(Number.NaN)).toBe('–');
  });
});

describe('formatRelative', () => {
  const now = Date.parse('2026-12-02T08:00:00Z');
  it.each([
    [now + 300, 'now'],
    [now + 5 * 60_000, 'in 5 min'],
    [now - 45_000, '45 s ago'],
    [now - 3 * 3_600_000, '3 h ago'],
    [now - 90 * 60_000, '1.5 h ago'],
    [now + 2 * 86_400_000, 'in 2 d'],
    [now - 400 * 86_400_000, '1.1 y ago'],
  ])('writes %d relative to now as %s', (time, text) => {
    expect(formatRelative(time, now)).toBe(text);
  });
});

describe('formatUtc', () => {
  it('writes a time in UTC, with milliseconds only when there are some', () => {
    expect(formatUtc('2026-12-02T07:57:36.000Z')).toBe('2026-12-02 07:57:36 UTC');
    expect(formatUtc(Date.parse('2026-12-02T07:57:36.250Z'))).toBe('2026-12-02 07:57:36.250 UTC');
    expect(formatUtc('2026-12-02T08:57:36+01:00')).toBe('2026-12-02 07:57:36 UTC');
  });

  it('gives back what is not a time as it is', () => {
    expect(formatUtc('soon')).toBe('soon');
  });
});

describe('formatCount and formatBytes', () => {
  it('separates thousands and picks a binary unit', () => {
    expect(formatCount(10_000)).toBe('10,000');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1_536)).toBe('1.5 KiB');
    expect(formatBytes(3_400_000)).toBe('3.2 MiB');
  });
});

describe('errorHead', () => {
  it('shows a one-line error whole, unfolded', () => {
    expect(errorHead('Error: the database said no')).toEqual({ head: 'Error: the database said no', folded: false });
  });

  it('folds a stack to its first line', () => {
    expect(errorHead('TypeError: x is undefined\n    at f (a.ts:1:1)\n    at g (b.ts:2:2)')).toEqual({
      head: 'TypeError: x is undefined',
      folded: true,
    });
  });

  it('cuts a 5,000-character line to ERROR_HEAD_CHARS, with an ellipsis', () => {
    const { head, folded } = errorHead(`Error: ${'x'.repeat(5_000)}`);
    expect(folded).toBe(true);
    expect(head).toHaveLength(ERROR_HEAD_CHARS);
    expect(head.endsWith('…')).toBe(true);
  });
});
