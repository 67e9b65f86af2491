/**
 * The all-jobs timeline's geometry, apart from the canvas: whether a row is drawn as bars (one per run, when runs
 * lie far enough apart to be told from one another) or as buckets (counts by status over a span, at least
 * MIN_BUCKET_PX wide, so that at 31 days a run is never a 1-pixel line), and where each lies. Pure.
 */
import type { Status, TimelineBar, TimelineRow } from '../contract';
import type { TimelineWindow } from './route';
import { barTimes, MIN_BAR_PX, type XScale } from './timeline-layout';

export const HOUR = 3_600_000;
const WINDOW_MS: Record<TimelineWindow, number> = {
  '1h': HOUR,
  '1d': 24 * HOUR,
  '7d': 7 * 24 * HOUR,
  '31d': 31 * 24 * HOUR,
};
export const WINDOW_LABEL: Record<TimelineWindow, string> = {
  '1h': '1 hour',
  '1d': '1 day',
  '7d': '7 days',
  '31d': '31 days',
};
/** The window the page opens with. */
export const DEFAULT_TIMELINE_WINDOW: TimelineWindow = '1d';
/** The part of the window ahead of now: where the next fires show. */
const AHEAD = 0.2;
/** The range of a window around `now`, in whole seconds. */
export function windowAround(window: TimelineWindow, now: number): { from: number; to: number } {
  const ms = WINDOW_MS[window];
  const to = Math.ceil((now + ms * AHEAD) / 1000) * 1000;
  return { from: to - ms, to };
}

/** The narrowest bucket drawn: the page asks the server for as many buckets as fit at this width. */
export const BUCKET_PX = 5;
/** Runs closer than this (the median gap between scheduled times) are drawn as buckets: bars would merge. */
export const MIN_RUN_GAP_PX = 6;
/** The narrowest a run's bar is drawn: a run of seconds on a day's axis still shows. */
export const MIN_RUN_PX = Math.max(MIN_BAR_PX, 3);

/** How many buckets a plot `width` pixels wide takes (the `buckets` the page asks for), within the server's limit. */
export function bucketCount(width: number, max: number): number {
  return Math.max(1, Math.min(max, Math.floor(width / BUCKET_PX)));
}

/** One bar of a row, placed: waiting from x0 (scheduled) to startX, running from startX to x1. */
export interface RowBar {
  readonly index: number;
  readonly x0: number;
  /** Where it started; x0 when it never started. */
  readonly startX: number;
  readonly x1: number;
  readonly status: Status;
}

/** One bucket of a row, placed: its span and counts. */
export interface RowBucket {
  readonly index: number;
  readonly x0: number;
  readonly x1: number;
  readonly counts: Readonly<Partial<Record<Status, number>>>;
  readonly total: number;
}

export type RowMarks =
  | { readonly kind: 'bars'; readonly bars: readonly RowBar[] }
  | { readonly kind: 'buckets'; readonly buckets: readonly RowBucket[] };

/** Bars when the row has them and they lie at least MIN_RUN_GAP_PX apart (the median gap); else buckets. */
export function rowMarks(
  row: Pick<TimelineRow, 'bars' | 'buckets'>,
  window: { readonly from: number; readonly bucketMs: number },
  x: XScale,
  now: number,
): RowMarks {
  if (row.bars !== undefined && barsFit(row.bars, x)) {
    return {
      kind: 'bars',
      bars: row.bars.map((bar, index) => {
        const times = barTimes(bar, now);
        const x0 = x(times.scheduled);
        const x1 = Math.max(x0 + MIN_RUN_PX, x(times.ended));
        // The run itself at least MIN_RUN_PX wide, however long it waited.
        const startX = times.started === undefined ? x0 : Math.max(x0, Math.min(x(times.started), x1 - MIN_RUN_PX));
        return { index, x0, startX, x1, status: bar.status };
      }),
    };
  }
  return {
    kind: 'buckets',
    buckets: row.buckets.map(([index, counts]) => ({
      index,
      x0: x(window.from + index * window.bucketMs),
      x1: x(window.from + (index + 1) * window.bucketMs),
      counts,
      total: Object.values(counts).reduce((sum: number, n) => sum + (n ?? 0), 0),
    })),
  };
}

/** Whether bars are far enough apart to be told apart: the median gap between scheduled times, in pixels. */
export function barsFit(bars: readonly TimelineBar[], x: XScale): boolean {
  if (bars.length < 2) return true;
  const xs = bars.map((bar) => x(Date.parse(bar.scheduledTime))).sort((a, b) => a - b);
  const gaps = xs.slice(1).map((v, i) => v - xs[i]);
  gaps.sort((a, b) => a - b);
  return gaps[Math.floor(gaps.length / 2)] >= MIN_RUN_GAP_PX;
}

/** The item under the pointer: the bar or bucket whose span (widened by `slop`) holds `px`, nearest first. */
export function markAt(marks: RowMarks, px: number, slop = 2): RowBar | RowBucket | undefined {
  const list: readonly (RowBar | RowBucket)[] = marks.kind === 'bars' ? marks.bars : marks.buckets;
  let best: RowBar | RowBucket | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const mark of list) {
    const distance = px < mark.x0 ? mark.x0 - px : px > mark.x1 ? px - mark.x1 : 0;
    if (distance <= slop && distance < bestDistance) {
      best = mark;
      bestDistance = distance;
    }
  }
  return best;
}
