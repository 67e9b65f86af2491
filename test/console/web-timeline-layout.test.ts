import { describe, expect, it } from 'vitest';
import type { TimelineBar } from '../../console/contract';
import {
  barAt,
  barTimes,
  binAt,
  binBars,
  binSegments,
  MAX_LANES,
  MIN_BAR_PX,
  placeBars,
  shouldBin,
} from '../../console/web/timeline-layout';

const T0 = Date.parse('2026-12-02T00:00:00Z');
const SECOND = 1000;
const iso = (s: number) => new Date(T0 + s * SECOND).toISOString();
/** One pixel a second from T0. */
const x = (time: number) => (time - T0) / SECOND;

function bar(scheduled: number, started?: number, ended?: number, extra: Partial<TimelineBar> = {}): TimelineBar {
  return {
    scheduledTime: iso(scheduled),
    status: ended === undefined ? 'RUNNING' : 'SUCCEEDED',
    attempt: 1,
    ...(started === undefined ? {} : { startedAt: iso(started) }),
    ...(ended === undefined ? {} : { endedAt: iso(ended) }),
    ...extra,
  };
}

describe('barTimes', () => {
  it('ends a running or waiting bar at now, and a skipped one at its scheduled time', () => {
    const now = T0 + 100 * SECOND;
    expect(barTimes(bar(10, 12), now)).toEqual({ scheduled: T0 + 10_000, started: T0 + 12_000, ended: now });
    expect(barTimes({ ...bar(10), status: 'BUFFERED' }, now).ended).toBe(now);
    expect(barTimes({ scheduledTime: iso(10), status: 'SKIPPED', attempt: 0 }, now).ended).toBe(T0 + 10_000);
  });
});

describe('placeBars', () => {
  it('places each bar from scheduled to started to ended', () => {
    const [placed] = placeBars([bar(10, 15, 40)], x, T0);
    expect(placed).toEqual({ index: 0, lane: 0, scheduledX: 10, startX: 15, endX: 40 });
  });

  it('draws an instant bar MIN_BAR_PX wide so that it shows', () => {
    const [placed] = placeBars([bar(10, 10, 10)], x, T0);
    expect(placed.endX - placed.scheduledX).toBe(MIN_BAR_PX);
  });

  it('gives overlapping runs their own lanes and reuses a lane once it is free', () => {
    // Newest first, as the API sends them.
    const bars = [bar(60, 60, 70), bar(20, 20, 50), bar(10, 10, 30), bar(0, 0, 15)];
    const lanes = placeBars(bars, x, T0).map((p) => p.lane);
    // 0–15 lane 0; 10–30 overlaps it: lane 1; 20–50 overlaps 10–30 only: lane 0 again; 60–70 too.
    expect(lanes).toEqual([0, 0, 1, 0]);
    const crowded = placeBars([bar(12, 12, 40), bar(10, 10, 30), bar(0, 0, 15)], x, T0).map((p) => p.lane);
    // 12–40 overlaps both 0–15 and 10–30: a third lane.
    expect(crowded).toEqual([2, 1, 0]);
  });

  it('shares the last free-soonest lane when more than MAX_LANES overlap', () => {
    const bars = Array.from({ length: MAX_LANES + 2 }, (_, i) => bar(i, i, 100 + i));
    const lanes = placeBars(bars, x, T0).map((p) => p.lane);
    expect(Math.max(...lanes)).toBe(MAX_LANES - 1);
  });
});

describe('shouldBin', () => {
  it('bins when the median bar is narrower than a pixel', () => {
    const wide = [bar(0, 0, 5), bar(10, 10, 15), bar(20, 20, 25)];
    expect(shouldBin(wide, x, T0)).toBe(false);
    const narrow = [bar(0, 0, 0.2), bar(10, 10, 10.5), bar(20, 20, 25)];
    expect(shouldBin(narrow, x, T0)).toBe(true);
  });

  it('never bins a single bar', () => {
    expect(shouldBin([bar(0, 0, 0.1)], x, T0)).toBe(false);
  });
});

describe('binBars', () => {
  it('counts the bars of each pixel column by status, leaving out those outside the width', () => {
    const bars: TimelineBar[] = [
      bar(3.2, 3.2, 3.3),
      { ...bar(3.7, 3.7, 3.8), status: 'FAILED' },
      bar(3.9, 3.9, 4),
      bar(5.1, 5.1, 5.2),
      bar(-1, -1, -0.5),
      bar(100, 100, 100.1),
    ];
    expect(binBars(bars, x, 50)).toEqual([
      { column: 3, counts: { SUCCEEDED: 2, FAILED: 1 }, total: 3, bars: [0, 1, 2] },
      { column: 5, counts: { SUCCEEDED: 1 }, total: 1, bars: [3] },
    ]);
  });

  it('bins into wider columns when asked (a 31-day timeline: 3-pixel columns, never 1-pixel lines)', () => {
    const bars: TimelineBar[] = [bar(3.2, 3.2, 3.3), { ...bar(5.9, 5.9, 6), status: 'FAILED' }, bar(6.1, 6.1, 6.2)];
    expect(binBars(bars, x, 50, 3)).toEqual([
      { column: 3, counts: { SUCCEEDED: 1, FAILED: 1 }, total: 2, bars: [0, 1] },
      { column: 6, counts: { SUCCEEDED: 1 }, total: 1, bars: [2] },
    ]);
  });

  it('keeps 10,000 bars in at most one bin per pixel column', () => {
    const bars = Array.from({ length: 10_000 }, (_, i) => bar(i * 0.1, i * 0.1, i * 0.1 + 0.05));
    const bins = binBars(bars, x, 1000);
    expect(bins).toHaveLength(1000);
    expect(bins.reduce((sum, b) => sum + b.total, 0)).toBe(10_000);
  });
});

describe('binSegments', () => {
  it("stacks each status's share of the height, bottom first", () => {
    const segments = binSegments({ column: 0, counts: { SUCCEEDED: 3, FAILED: 1 }, total: 4, bars: [] }, 40);
    expect(segments).toEqual([
      { status: 'SUCCEEDED', y: 10, h: 30 },
      { status: 'FAILED', y: 0, h: 10 },
    ]);
  });

  it('gives a rare status at least a pixel', () => {
    const segments = binSegments({ column: 0, counts: { SUCCEEDED: 999, FAILED: 1 }, total: 1000, bars: [] }, 40);
    expect(segments.find((s) => s.status === 'FAILED')?.h).toBe(1);
  });
});

describe('what lies under the pointer', () => {
  const placed = placeBars([bar(10, 10, 20), bar(40, 40, 60)], x, T0);

  it('finds the bar in the lane whose span holds the pointer, or within a few pixels of it', () => {
    expect(barAt(placed, 15, 0)?.index).toBe(0);
    expect(barAt(placed, 62, 0)?.index).toBe(1);
    expect(barAt(placed, 30, 0)).toBeUndefined();
    expect(barAt(placed, 15, 1)).toBeUndefined();
  });

  it('finds the nearest bin within two columns', () => {
    const bins = [
      { column: 10, counts: {}, total: 1, bars: [0] },
      { column: 14, counts: {}, total: 1, bars: [1] },
    ];
    expect(binAt(bins, 11.5)?.column).toBe(10);
    expect(binAt(bins, 13.2)?.column).toBe(14);
    expect(binAt(bins, 20)).toBeUndefined();
  });
});
