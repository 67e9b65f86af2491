/**
 * The all-jobs timeline's geometry (console/web/all-timeline-layout.ts) and the "now" label's place
 * (timeline-layout.ts placeNowLabel): usable at 1 hour and at 31 days. At 31 days runs are buckets at least
 * BUCKET_PX wide, never 1-pixel lines; the now label never covers a next-fire marker.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TIMELINE_BUCKETS, type TimelineBar, type TimelineRow } from '../../console/contract';
import {
  BUCKET_PX,
  barsFit,
  bucketCount,
  MIN_RUN_PX,
  markAt,
  rowMarks,
  windowAround,
} from '../../console/web/all-timeline-layout';
import { FIRE_MARKER_HALF_PX, placeNowLabel } from '../../console/web/timeline-layout';
import { timeAxis } from '../../console/web/timeline-scale';

const NOW = Date.parse('2026-12-07T12:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const PLOT_PX = 1000;

function bars(from: number, every: number, count: number, runMs: number): TimelineBar[] {
  return Array.from({ length: count }, (_, i) => {
    const at = from + i * every;
    return {
      scheduledTime: new Date(at).toISOString(),
      status: i % 7 === 3 ? 'FAILED' : 'SUCCEEDED',
      attempt: 1,
      startedAt: new Date(at + 1000).toISOString(),
      endedAt: new Date(at + 1000 + runMs).toISOString(),
    };
  });
}

/** A row as the server gives it: counts per bucket of the bars, and the bars when at most 200. */
function rowOf(list: TimelineBar[], window: { from: number; to: number }, buckets: number): TimelineRow {
  const bucketMs = (window.to - window.from) / buckets;
  const counts = new Map<number, Record<string, number>>();
  for (const bar of list) {
    const i = Math.floor((Date.parse(bar.scheduledTime) - window.from) / bucketMs);
    const c = counts.get(i) ?? {};
    c[bar.status] = (c[bar.status] ?? 0) + 1;
    counts.set(i, c);
  }
  return {
    jobId: 'j',
    paused: false,
    buckets: [...counts.entries()].sort(([a], [b]) => a - b),
    ...(list.length <= 200 ? { bars: list } : {}),
    next: [],
  };
}

function setUp(windowMs: number) {
  const window = windowAround(windowMs === HOUR ? '1h' : '31d', NOW);
  const buckets = bucketCount(PLOT_PX, MAX_TIMELINE_BUCKETS);
  const axis = timeAxis(window, 0, PLOT_PX);
  return { window, buckets, axis, bucketMs: (window.to - window.from) / buckets };
}

describe('the all-jobs timeline layout', () => {
  it('opens 80 % back from now and 20 % ahead, in whole seconds', () => {
    expect(windowAround('1h', NOW)).toEqual({ from: NOW - 48 * MINUTE, to: NOW + 12 * MINUTE });
    const month = windowAround('31d', NOW);
    expect(month.to - month.from).toBe(31 * DAY);
  });

  it('at 1 hour, a job every 5 minutes is drawn as bars, each at least MIN_RUN_PX wide though it ran 2 s', () => {
    const { window, buckets, axis, bucketMs } = setUp(HOUR);
    const list = bars(window.from, 5 * MINUTE, 10, 2000);
    const marks = rowMarks(rowOf(list, window, buckets), { from: window.from, bucketMs }, axis.x, NOW);
    expect(marks.kind).toBe('bars');
    if (marks.kind !== 'bars') return;
    expect(marks.bars).toHaveLength(10);
    for (const bar of marks.bars) expect(bar.x1 - bar.startX).toBeGreaterThanOrEqual(MIN_RUN_PX);
    // The pointer over the 4th bar finds it, and it is the FAILED one.
    const fourth = marks.bars[3];
    expect(markAt(marks, (fourth.x0 + fourth.x1) / 2)).toMatchObject({ index: 3, status: 'FAILED' });
  });

  it('a run that waited is drawn waiting from its scheduled time to its start, then running', () => {
    const { window, buckets, axis, bucketMs } = setUp(HOUR);
    const waited: TimelineBar = {
      scheduledTime: new Date(window.from).toISOString(),
      status: 'FAILED',
      attempt: 1,
      startedAt: new Date(window.from + 30 * MINUTE).toISOString(),
      endedAt: new Date(window.from + 30 * MINUTE + 2000).toISOString(),
    };
    const marks = rowMarks(rowOf([waited], window, buckets), { from: window.from, bucketMs }, axis.x, NOW);
    if (marks.kind !== 'bars') throw new Error('one run is a bar');
    const [bar] = marks.bars;
    expect(bar.x0).toBeCloseTo(axis.x(window.from));
    // Waited 30 minutes (500 px); ran 2 s, under a pixel: its run is drawn MIN_RUN_PX wide, ending where it ended.
    expect(bar.x1).toBeCloseTo(axis.x(window.from + 30 * MINUTE + 2000));
    expect(bar.startX).toBeGreaterThan(bar.x0 + 450);
    expect(bar.x1 - bar.startX).toBeCloseTo(MIN_RUN_PX);
  });

  it('at 31 days, an hourly job (744 runs, 1.3 px apart) is drawn as buckets at least BUCKET_PX wide, with every run counted', () => {
    const { window, buckets, axis, bucketMs } = setUp(31 * DAY);
    const list = bars(window.from, HOUR, 744, 30_000);
    expect(barsFit(list, axis.x)).toBe(false);
    // Even with its bars sent, the row is drawn as buckets: bars would be lines a pixel apart.
    const row = { ...rowOf(list, window, buckets), bars: list };
    const marks = rowMarks(row, { from: window.from, bucketMs }, axis.x, NOW);
    expect(marks.kind).toBe('buckets');
    if (marks.kind !== 'buckets') return;
    for (const bucket of marks.buckets) expect(bucket.x1 - bucket.x0).toBeGreaterThanOrEqual(BUCKET_PX - 1e-9);
    expect(marks.buckets.reduce((sum, b) => sum + b.total, 0)).toBe(744);
    expect(marks.buckets.reduce((sum, b) => sum + (b.counts.FAILED ?? 0), 0)).toBe(
      list.filter((b) => b.status === 'FAILED').length,
    );
  });

  it('asks for as many buckets as fit BUCKET_PX each, within the server limit', () => {
    expect(bucketCount(1000, MAX_TIMELINE_BUCKETS)).toBe(200);
    expect(bucketCount(10_000, MAX_TIMELINE_BUCKETS)).toBe(MAX_TIMELINE_BUCKETS);
    expect(bucketCount(0, MAX_TIMELINE_BUCKETS)).toBe(1);
  });
});

describe('placeNowLabel', () => {
  const LABEL = 22;
  const overlaps = (x0: number, markers: readonly number[]) =>
    markers.some((m) => x0 < m + FIRE_MARKER_HALF_PX && x0 + LABEL > m - FIRE_MARKER_HALF_PX);

  it('puts the label right of the now line when nothing is there', () => {
    expect(placeNowLabel({ nowX: 500, labelWidth: LABEL, markerXs: [700], left: 0, right: 1000 })).toBe(504);
  });

  it('at 31 days, with the next fire a pixel right of now, the label goes left of the line and covers no marker', () => {
    const { window, axis } = setUp(31 * DAY);
    const nowX = axis.x(NOW);
    // An hourly job's next fires: 1.3 px apart, the first a pixel from now.
    const markerXs = Array.from({ length: 100 }, (_, i) => axis.x(NOW + (i + 1) * HOUR));
    expect(markerXs[0] - nowX).toBeLessThan(2);
    expect(window.to).toBeGreaterThan(NOW);
    const x0 = placeNowLabel({ nowX, labelWidth: LABEL, markerXs, left: 0, right: PLOT_PX });
    expect(x0).toBeDefined();
    expect(overlaps(x0 as number, markerXs)).toBe(false);
    expect(x0 as number).toBeLessThan(nowX);
  });

  it('with markers on both sides of now, moves to the nearest free place past them', () => {
    const markerXs = [490, 505, 515];
    const x0 = placeNowLabel({ nowX: 500, labelWidth: LABEL, markerXs, left: 0, right: 1000 });
    expect(overlaps(x0 as number, markerXs)).toBe(false);
    expect(x0).toBe(521);
  });

  it('gives no place when every place is covered: the line is drawn without its label', () => {
    const markerXs = Array.from({ length: 20 }, (_, i) => i * 6);
    expect(placeNowLabel({ nowX: 60, labelWidth: LABEL, markerXs, left: 0, right: 120 })).toBeUndefined();
  });
});
