/**
 * A long run's rate and time left, from two successive readings of its progress (the occurrence page polls every
 * 2 s while the row is live). Pure.
 */

/** One reading of a resumable run's progress, as the API gives it. */
export interface ProgressReading {
  readonly done: number;
  readonly total?: number;
  /** When the worker recorded it (ISO). */
  readonly at: string;
}

/** Items per second between two readings, and the time left at that rate when the total is known. */
export interface ProgressRate {
  readonly perSecond: number;
  /** Absent without a total, or while the rate is not positive. */
  readonly timeLeftMs?: number;
}

/**
 * The rate between an older and a newer reading; undefined when they are the same reading (same `at`), out of
 * order, or the count went backwards (a new run started over).
 */
export function progressRate(older: ProgressReading, newer: ProgressReading): ProgressRate | undefined {
  const elapsed = Date.parse(newer.at) - Date.parse(older.at);
  if (!(elapsed > 0)) return undefined;
  const gained = newer.done - older.done;
  if (gained < 0) return undefined;
  const perSecond = gained / (elapsed / 1000);
  if (newer.total === undefined || perSecond <= 0) return { perSecond };
  const left = Math.max(0, newer.total - newer.done);
  return { perSecond, timeLeftMs: (left / perSecond) * 1000 };
}

/** The share done, 0…1, when the total is known and positive. */
export function progressShare(reading: ProgressReading): number | undefined {
  if (reading.total === undefined || reading.total <= 0) return undefined;
  return Math.min(1, Math.max(0, reading.done / reading.total));
}

/** `12.5/s`, `0.3/s`, `1,200/s`. */
export function formatRate(perSecond: number): string {
  const digits = perSecond >= 100 ? 0 : perSecond >= 10 ? 1 : 2;
  return `${perSecond.toLocaleString('en-US', { maximumFractionDigits: digits })}/s`;
}
