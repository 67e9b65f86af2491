/**
 * The timeline's range: presets, zoom around the centre, pan by half the range, and the range read from and written
 * to the URL. Times are epoch milliseconds; the URL holds ISO strings. Pure: `now` is passed in.
 */

/** A span of time on the timeline, [from, to) in epoch milliseconds. */
export interface TimeRange {
  readonly from: number;
  readonly to: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The range buttons: 1 h, 1 d, 7 d, 30 d, 1 y. */
export const RANGE_PRESETS: ReadonlyArray<{ readonly label: string; readonly ms: number }> = [
  { label: '1 h', ms: HOUR },
  { label: '1 d', ms: DAY },
  { label: '7 d', ms: 7 * DAY },
  { label: '30 d', ms: 30 * DAY },
  { label: '1 y', ms: 365 * DAY },
];

/** The narrowest range the zoom goes to: a minute. */
export const MIN_RANGE_MS = MINUTE;
/** The widest: five years. */
export const MAX_RANGE_MS = 5 * 365 * DAY;
/** The range a timeline opens with when the URL names none. */
export const DEFAULT_RANGE_MS = DAY;
/** The share of a preset's range that lies ahead of now, so the next fire times show. */
const AHEAD = 0.1;

/** A preset's range: `ms` long, mostly before now, a tenth after it. */
export function presetRange(ms: number, now: number): TimeRange {
  const to = now + Math.round(ms * AHEAD);
  return { from: to - ms, to };
}

/** The range from the URL's `from`/`to`, or the default one when they are missing or wrong. */
export function rangeFromUrl(from: string | undefined, to: string | undefined, now: number): TimeRange {
  const start = from === undefined ? Number.NaN : Date.parse(from);
  const end = to === undefined ? Number.NaN : Date.parse(to);
  if (Number.isNaN(start) || Number.isNaN(end) || end <= start) return presetRange(DEFAULT_RANGE_MS, now);
  return clampWidth({ from: start, to: end });
}

/** The URL's `from`/`to` for a range. */
export function rangeToUrl(range: TimeRange): { from: string; to: string } {
  return { from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString() };
}

/** Zooms around the centre: `factor` < 1 narrows (zoom in), > 1 widens (zoom out); bounded to a minute … 5 years. */
export function zoomRange(range: TimeRange, factor: number): TimeRange {
  const centre = (range.from + range.to) / 2;
  const half = ((range.to - range.from) * factor) / 2;
  return clampWidth({ from: Math.round(centre - half), to: Math.round(centre + half) });
}

/** Pans by half the range: `direction` -1 earlier, +1 later. */
export function panRange(range: TimeRange, direction: -1 | 1): TimeRange {
  const shift = Math.round(((range.to - range.from) / 2) * direction);
  return { from: range.from + shift, to: range.to + shift };
}

/** The range centred on `time` with a width of `ms`. */
export function rangeAround(time: number, ms: number): TimeRange {
  return clampWidth({ from: Math.round(time - ms / 2), to: Math.round(time + ms / 2) });
}

function clampWidth(range: TimeRange): TimeRange {
  const width = range.to - range.from;
  if (width >= MIN_RANGE_MS && width <= MAX_RANGE_MS) return range;
  const target = Math.min(MAX_RANGE_MS, Math.max(MIN_RANGE_MS, width));
  const centre = (range.from + range.to) / 2;
  return { from: Math.round(centre - target / 2), to: Math.round(centre + target / 2) };
}

/**
 * A time input's value, in UTC and 24 hours as every time on the page: `2026-12-02 07:57:36`. The inputs are text,
 * not `datetime-local`, which the browser shows in its own locale (`12/02/2026, 07:57:36 AM`) whatever the label says.
 */
export function toInputValue(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * The time a time input holds, read as UTC: `2026-12-02 07:57[:36[.5]]`, a `T` for the space, and a trailing `Z` or
 * ` UTC` are taken; undefined when empty, malformed or not a calendar time (2026-02-30).
 */
export function fromInputValue(value: string): number | undefined {
  const match = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?)(?:Z| UTC)?$/.exec(value.trim());
  if (match === null) return undefined;
  const text = `${match[1]}T${match[2]}Z`;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over to March: the date must read back as written.
  return new Date(ms).toISOString().slice(0, 10) === match[1] ? ms : undefined;
}
