/**
 * The timeline's geometry, apart from the canvas: where each bar lies in pixels (waiting from scheduled to started,
 * running from started to finished), which lane it takes when runs overlap, the per-pixel-column bins drawn instead
 * of bars when bars are narrower than a pixel, and what lies under the pointer. Pure: the scale is a function.
 */
import type { Status, TimelineBar } from '../contract';
import { STATUSES } from './status';

/** Maps a time (epoch ms) to an x in CSS pixels. */
export type XScale = (time: number) => number;

/** One bar, placed. */
export interface PlacedBar {
  /** Its index in the bars given. */
  readonly index: number;
  /** Its lane, 0 at the top. */
  readonly lane: number;
  /** x of the scheduled time. */
  readonly scheduledX: number;
  /** x of the start (the scheduled time when it never started). */
  readonly startX: number;
  /** x of the end: when it ended, or now while it runs or waits. */
  readonly endX: number;
}

/** The most lanes overlapping runs spread over; more overlap shares the last lane. */
export const MAX_LANES = 4;
/** The narrowest a bar is drawn, so a skipped or instant one shows. */
export const MIN_BAR_PX = 2;

/** A bar's times in epoch ms: the end is now for one still running or waiting. */
export function barTimes(
  bar: TimelineBar,
  now: number,
): { readonly scheduled: number; readonly started?: number; readonly ended: number } {
  const scheduled = Date.parse(bar.scheduledTime);
  const started = bar.startedAt === undefined ? undefined : Date.parse(bar.startedAt);
  const endedAt = bar.endedAt === undefined ? undefined : Date.parse(bar.endedAt);
  const ended =
    endedAt ?? (bar.status === 'SKIPPED' || bar.status === 'CANCELLED' ? scheduled : Math.max(now, scheduled));
  return { scheduled, ...(started === undefined ? {} : { started }), ended: Math.max(ended, scheduled) };
}

/** Places every bar and gives overlapping ones their own lanes (greedy, by scheduled time, at most MAX_LANES). */
export function placeBars(bars: readonly TimelineBar[], x: XScale, now: number): PlacedBar[] {
  const order = bars.map((_, index) => index);
  const scheduledAt = bars.map((bar) => Date.parse(bar.scheduledTime));
  order.sort((a, b) => scheduledAt[a] - scheduledAt[b]);
  const laneEnds: number[] = [];
  const placed: PlacedBar[] = new Array(bars.length);
  for (const index of order) {
    const times = barTimes(bars[index], now);
    const scheduledX = x(times.scheduled);
    const startX = times.started === undefined ? scheduledX : Math.max(scheduledX, x(times.started));
    const endX = Math.max(startX, x(times.ended), scheduledX + MIN_BAR_PX);
    let lane = laneEnds.findIndex((end) => end < scheduledX);
    if (lane < 0 && laneEnds.length < MAX_LANES) lane = laneEnds.length;
    if (lane < 0) lane = laneEnds.indexOf(Math.min(...laneEnds));
    laneEnds[lane] = endX;
    placed[index] = { index, lane, scheduledX, startX, endX };
  }
  return placed;
}

/**
 * Whether to draw bins instead of bars: when the typical bar (the median, from scheduled to end) is narrower than
 * a pixel, bars would be drawn over one another and only the last one drawn would show.
 */
export function shouldBin(bars: readonly TimelineBar[], x: XScale, now: number): boolean {
  if (bars.length < 2) return false;
  // The median of an even sample of at most SAMPLE bars: as good a judge, at a tenth of the work for 10,000.
  const step = Math.max(1, Math.floor(bars.length / SAMPLE));
  const widths: number[] = [];
  for (let i = 0; i < bars.length; i += step) {
    const times = barTimes(bars[i], now);
    widths.push(x(times.ended) - x(times.scheduled));
  }
  widths.sort((a, b) => a - b);
  return widths[Math.floor(widths.length / 2)] < 1;
}

/** The most bars shouldBin measures. */
const SAMPLE = 1000;

/** One pixel column of the binned timeline: how many occurrences scheduled in it, by status. */
export interface Bin {
  readonly column: number;
  readonly counts: Partial<Record<Status, number>>;
  readonly total: number;
  /** The bars in it (indexes), for the tooltip and a click. */
  readonly bars: readonly number[];
}

/**
 * Bins the bars by the column of their scheduled time, columns `columnPx` pixels wide from 0 (`column` is a column's
 * left edge), within [0, width); returns the columns that have any.
 */
export function binBars(bars: readonly TimelineBar[], x: XScale, width: number, columnPx = 1): Bin[] {
  const columns = new Map<number, { counts: Partial<Record<Status, number>>; total: number; bars: number[] }>();
  bars.forEach((bar, index) => {
    const column = Math.floor(x(Date.parse(bar.scheduledTime)) / columnPx) * columnPx;
    if (column < 0 || column >= width) return;
    let bin = columns.get(column);
    if (bin === undefined) {
      bin = { counts: {}, total: 0, bars: [] };
      columns.set(column, bin);
    }
    bin.counts[bar.status] = (bin.counts[bar.status] ?? 0) + 1;
    bin.total += 1;
    bin.bars.push(index);
  });
  return [...columns.entries()].sort(([a], [b]) => a - b).map(([column, bin]) => ({ column, ...bin }));
}

/** A bin's stacked segments, bottom first in STATUSES order: each status's share of `height` in whole pixels. */
export function binSegments(bin: Bin, height: number): Array<{ status: Status; y: number; h: number }> {
  const segments: Array<{ status: Status; y: number; h: number }> = [];
  let acc = 0;
  let previousEdge = 0;
  for (const status of STATUSES) {
    const count = bin.counts[status] ?? 0;
    if (count === 0) continue;
    acc += count;
    const edge = Math.round((acc / bin.total) * height);
    // At least a pixel for every status present, so a single failure among a thousand successes shows.
    const h = Math.max(1, edge - previousEdge);
    segments.push({ status, y: height - previousEdge - h, h });
    previousEdge = Math.min(height, previousEdge + h);
  }
  return segments;
}

/** The bar under the pointer: in `lane`, the one whose span (widened by `slop` pixels) holds `px`, nearest first. */
export function barAt(placed: readonly PlacedBar[], px: number, lane: number, slop = 3): PlacedBar | undefined {
  let best: PlacedBar | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const bar of placed) {
    if (bar === undefined || bar.lane !== lane) continue;
    if (px < bar.scheduledX - slop || px > bar.endX + slop) continue;
    const distance = px < bar.scheduledX ? bar.scheduledX - px : px > bar.endX ? px - bar.endX : 0;
    if (distance < bestDistance) {
      best = bar;
      bestDistance = distance;
    }
  }
  return best;
}

/** The bin under the pointer, or within `slop` columns of it (nearest). */
export function binAt(bins: readonly Bin[], px: number, slop = 2): Bin | undefined {
  const column = Math.floor(px);
  let best: Bin | undefined;
  for (const bin of bins) {
    const distance = Math.abs(bin.column - column);
    if (distance <= slop && (best === undefined || distance < Math.abs(best.column - column))) best = bin;
  }
  return best;
}

/** Half the width of a next-fire marker (a triangle), in pixels, and the gap kept between it and a label. */
export const FIRE_MARKER_HALF_PX = 5;

/**
 * Where the "now" label goes, in the band it shares with the next-fire markers: right of the now line if that is
 * free, else left of it, else the nearest free place on either side, so that the label never covers a marker (at
 * 31 days the next fire can be a pixel from now). Returns the label's left edge; undefined when no place within
 * [left, right] is free (the line is then drawn without its label).
 */
export function placeNowLabel(options: {
  readonly nowX: number;
  readonly labelWidth: number;
  readonly markerXs: readonly number[];
  readonly left: number;
  readonly right: number;
  /** Gap between the line and the label. */
  readonly gap?: number;
}): number | undefined {
  const { nowX, labelWidth, markerXs, left, right } = options;
  const gap = options.gap ?? 4;
  const blocked = markerXs
    .map((x) => [x - FIRE_MARKER_HALF_PX - 1, x + FIRE_MARKER_HALF_PX + 1] as const)
    .sort((a, b) => a[0] - b[0]);
  const free = (x0: number) =>
    x0 >= left && x0 + labelWidth <= right && blocked.every(([b0, b1]) => x0 + labelWidth <= b0 || x0 >= b1);
  const rightOf = nowX + gap;
  const leftOf = nowX - gap - labelWidth;
  if (free(rightOf)) return rightOf;
  if (free(leftOf)) return leftOf;
  // Past the markers that block: just after each blocked span to the right, just before each to the left; nearest first.
  const candidates = [
    ...blocked.map(([, b1]) => b1).filter((x0) => x0 > rightOf),
    ...blocked.map(([b0]) => b0 - labelWidth).filter((x0) => x0 < leftOf),
  ].sort((a, b) => Math.abs(a - nowX) - Math.abs(b - nowX));
  return candidates.find(free);
}
