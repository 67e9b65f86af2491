import { describe, expect, it } from 'vitest';
import { tickLabel, timeAxis } from '../../console/web/timeline-scale';

describe('timeAxis', () => {
  const from = Date.parse('2026-12-01T00:00:00Z');
  const to = Date.parse('2026-12-02T00:00:00Z');

  it('maps the range onto the pixels and back', () => {
    const axis = timeAxis({ from, to }, 10, 1010);
    expect(axis.x(from)).toBe(10);
    expect(axis.x(to)).toBe(1010);
    expect(axis.timeAt(510)).toBe(from + 12 * 3_600_000);
  });

  it("takes d3's UTC ticks about 110 pixels apart, labelled in 24-hour UTC", () => {
    const axis = timeAxis({ from, to }, 0, 1000);
    expect(axis.ticks.map((t) => t.label)).toEqual([
      'Dec',
      '03:00',
      '06:00',
      '09:00',
      '12:00',
      '15:00',
      '18:00',
      '21:00',
      'Dec 2',
    ]);
  });
});

describe('tickLabel', () => {
  it('names the finest unit the tick is not on the boundary of', () => {
    expect(tickLabel(new Date('2026-12-02T07:05:30.250Z'))).toBe('.250');
    expect(tickLabel(new Date('2026-12-02T07:05:30Z'))).toBe(':30');
    expect(tickLabel(new Date('2026-12-02T07:05:00Z'))).toBe('07:05');
    expect(tickLabel(new Date('2026-12-02T00:00:00Z'))).toBe('Dec 2');
    expect(tickLabel(new Date('2026-12-01T00:00:00Z'))).toBe('Dec');
    expect(tickLabel(new Date('2027-01-01T00:00:00Z'))).toBe('2027');
  });
});
