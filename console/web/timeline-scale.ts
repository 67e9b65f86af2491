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

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/**
 * A tick's label in UTC, from the finest unit the tick is not on the boundary of (as d3's multi-scale format does,
 * but in 24-hour time): `.250`, `:30`, `14:05`, `Dec 2`, `Dec`, `2027`.
 */
export function tickLabel(date: Date): string {
  if (date.getUTCMilliseconds() !== 0) return `.${String(date.getUTCMilliseconds()).padStart(3, '0')}`;
  if (date.getUTCSeconds() !== 0) return `:${two(date.getUTCSeconds())}`;
  if (date.getUTCMinutes() !== 0 || date.getUTCHours() !== 0)
    return `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}`;
  if (date.getUTCDate() !== 1) return `${MONTHS[date.getUTCMonth()]} ${date.getUTCDate()}`;
  if (date.getUTCMonth() !== 0) return MONTHS[date.getUTCMonth()];
  return String(date.getUTCFullYear());
}

/** Pixels between ticks, about. */
const TICK_SPACING_PX = 110;

/** The axis of a range drawn over [left, right] pixels. */
export function timeAxis(range: TimeRange, left: number, right: number): TimeAxis {
  const scale = scaleUtc()
    .domain([new Date(range.from), new Date(range.to)])
    .range([left, right]);
  const count = Math.max(2, Math.floor((right - left) / TICK_SPACING_PX));
  const ticks = scale.ticks(count).map((date) => ({ time: date.getTime(), x: scale(date), label: tickLabel(date) }));
  // The UTC scale is linear in time: the same mapping as arithmetic, without a Date per call (10,000 bars a draw).
  const perMs = (right - left) / Math.max(1, range.to - range.from);
  return { x: (time) => left + (time - range.from) * perMs, timeAt: (px) => range.from + (px - left) / perMs, ticks };
}
