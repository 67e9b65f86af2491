/**
 * How the page writes times and spans: durations (`4.2 s`, `3 min 20 s`), times relative to now (`in 5 min`,
 * `3 h ago`) and absolute UTC times. Pure: the caller passes `now`, so the tests need no clock.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A span in the largest two units that matter: `350 ms`, `4.2 s`, `3 min 20 s`, `2 h 5 min`, `3 d 4 h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < SECOND) return `${sign}${Math.round(abs)} ms`;
  if (abs < 10 * SECOND) return `${sign}${trimmed(abs / SECOND)} s`;
  if (abs < MINUTE) return `${sign}${Math.round(abs / SECOND)} s`;
  return sign + twoUnits(abs);
}

/** A signed offset from a time: `+3 h 41 min` after it, `-2 d 20 h` before it (a run that started early). */
export function formatOffset(ms: number): string {
  return ms < 0 ? formatDuration(ms) : `+${formatDuration(ms)}`;
}

function twoUnits(abs: number): string {
  const units: ReadonlyArray<readonly [number, string]> = [
    [DAY, 'd'],
    [HOUR, 'h'],
    [MINUTE, 'min'],
    [SECOND, 's'],
  ];
  const rounded = Math.round(abs / SECOND) * SECOND;
  const index = units.findIndex(([size]) => rounded >= size);
  const [bigSize, bigName] = units[index];
  const big = Math.floor(rounded / bigSize);
  const next = units[index + 1];
  if (next === undefined) return `${big} ${bigName}`;
  const small = Math.floor((rounded - big * bigSize) / next[0]);
  return small === 0 ? `${big} ${bigName}` : `${big} ${bigName} ${small} ${next[1]}`;
}

function trimmed(value: number): string {
  return value.toFixed(1).replace(/\.0$/, '');
}

/** `in 5 min`, `3 h ago`, `now` (within a second), from the largest unit only, rounded. */
export function formatRelative(time: number, now: number): string {
  const delta = time - now;
  const abs = Math.abs(delta);
  if (abs < SECOND) return 'now';
  const text = abs < MINUTE ? `${Math.round(abs / SECOND)} s` : relativeUnit(abs);
  return delta > 0 ? `in ${text}` : `${text} ago`;
}

function relativeUnit(abs: number): string {
  if (abs < HOUR) return `${Math.round(abs / MINUTE)} min`;
  if (abs < DAY) return `${trimmed(abs / HOUR)} h`;
  if (abs < 365 * DAY) return `${trimmed(abs / DAY)} d`;
  return `${trimmed(abs / (365 * DAY))} y`;
}

/** `2026-12-02 07:57:36 UTC`: every absolute time on the page is in UTC, as the API's are. */
export function formatUtc(time: string | number): string {
  const ms = typeof time === 'number' ? time : Date.parse(time);
  if (Number.isNaN(ms)) return String(time);
  const iso = new Date(ms).toISOString();
  const fraction = iso.slice(19, 23) === '.000' ? '' : iso.slice(19, 23);
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction} UTC`;
}

/** A count with thousands separators: `10,000`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** A size in bytes: `512 B`, `1.5 KiB`, `20 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${trimmed(value)} ${units[unit]}`;
}

/** The most characters of an error shown before it is unfolded. */
export const ERROR_HEAD_CHARS = 200;

/**
 * An error's first line, at most ERROR_HEAD_CHARS long, and whether there is more to unfold: a 5,000-character stack
 * is read a line at a time, not poured over the page.
 */
export function errorHead(text: string): { readonly head: string; readonly folded: boolean } {
  const trimmed = text.trim();
  const newline = trimmed.indexOf('\n');
  const line = (newline < 0 ? trimmed : trimmed.slice(0, newline)).trimEnd();
  const head = line.length > ERROR_HEAD_CHARS ? `${line.slice(0, ERROR_HEAD_CHARS - 1)}…` : line;
  return { head, folded: head !== trimmed };
}
