/**
 * How the page shows each status: a colour (the timeline, the history strip, the legend) and words (labels for
 * screen readers and tooltips). White text on each colour keeps 4.5:1 (the badges) except SKIPPED's canvas grey
 * (3.2:1 against white, a graphic only; its badge is darker, styles in console.css), and every coloured mark also
 * has a text label.
 */
import type { SkipReasonName, Status } from '../contract';

/** Every status, in the order the legend lists them and binned columns stack them (bottom first). */
export const STATUSES: readonly Status[] = [
  'SUCCEEDED',
  'FAILED',
  'RUNNING',
  'RETRY_WAIT',
  'PENDING',
  'BUFFERED',
  'SKIPPED',
  'CANCELLED',
];

/** The colour of a status. */
export const STATUS_COLOUR: Readonly<Record<Status, string>> = {
  SUCCEEDED: '#2f7d32',
  FAILED: '#c62828',
  RUNNING: '#1565c0',
  RETRY_WAIT: '#c2410c',
  PENDING: '#7b3fb3',
  BUFFERED: '#00796b',
  SKIPPED: '#8a8f98',
  CANCELLED: '#5d4037',
};

/** A status in words. */
export const STATUS_LABEL: Readonly<Record<Status, string>> = {
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  RUNNING: 'Running',
  RETRY_WAIT: 'Waiting to retry',
  PENDING: 'Pending',
  BUFFERED: 'Buffered',
  SKIPPED: 'Skipped',
  CANCELLED: 'Cancelled',
};

/** A status with its skip reason, for a label: `Skipped (overlap)`. */
export function statusText(status: Status, skipReason?: SkipReasonName): string {
  return skipReason !== undefined && status === 'SKIPPED' ? `Skipped (${skipReason})` : STATUS_LABEL[status];
}

/** Whether a status is final: the row no longer changes by itself. */
export function isFinal(status: Status): boolean {
  return status === 'SUCCEEDED' || status === 'FAILED' || status === 'SKIPPED' || status === 'CANCELLED';
}

/**
 * A history strip in words, for screen readers and keyboards (its cells are for the mouse):
 * `last 20 runs: 18 succeeded, 2 failed; the newest failed`. Runs newest first, as the API gives them.
 */
export function historySummary(runs: ReadonlyArray<{ readonly status: Status }>): string {
  if (runs.length === 0) return 'no runs yet';
  const counts = new Map<Status, number>();
  for (const run of runs) counts.set(run.status, (counts.get(run.status) ?? 0) + 1);
  const parts = STATUSES.filter((status) => counts.has(status)).map(
    (status) => `${counts.get(status)} ${STATUS_LABEL[status].toLowerCase()}`,
  );
  return `last ${runs.length} runs: ${parts.join(', ')}; the newest ${STATUS_LABEL[runs[0].status].toLowerCase()}`;
}
