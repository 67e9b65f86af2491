/**
 * The timeline's time axis: d3-scale's scaleUtc over the range, its ticks spaced about 110 pixels apart, and their
 * labels in UTC.
 */
import { scaleUtc } from 'd3-scale';
import type { TimeRange } from './time-range';

/** The axis: the scale, and its ticks with their labels. */
export interface TimeAxis {
  readonly x: (time: number) => number;
  /** The time at an x (the inverse). */
  readonly timeAt: (px: number) => number;
  readonly ticks: ReadonlyArray<{ readonly time: number; readonly x: number; readonly label: string }>;
}

/** Pixels between ticks, about. */
const TICK_SPACING_PX = 110;

/** The axis of a range drawn over [left, right] pixels. */
export function timeAxis(range: TimeRange, left: number, right: number): TimeAxis {
  const scale = scaleUtc()
    .domain([new Date(range.from), new Date(range.to)])
    .range([left, right]);
  const count = Math.max(2, Math.floor((right - left) / TICK_SPACING_PX));
  const format = scale.tickFormat(count);
  const ticks = scale.ticks(count).map((date) => ({ time: date.getTime(), x: scale(date), label: format(date) }));
  return { x: (time) => scale(new Date(time)), timeAt: (px) => scale.invert(px).getTime(), ticks };
}
