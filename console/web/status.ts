/**
 * How the page shows each status: a colour (the timeline, the history strip, the legend) and words (labels for
 * screen readers and tooltips). The colours keep at least 3:1 against the white page and differ in lightness as
 * well as hue, and every coloured mark also has a text label.
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
  RETRY_WAIT: '#d9480f',
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

/** Why an occurrence was skipped, in words. */
export const SKIP_REASON_LABEL: Readonly<Record<SkipReasonName, string>> = {
  overlap: 'overlap: the previous run was still going',
  missed: 'missed: too late to start',
  paused: 'paused: the job was paused',
};

/** A status with its skip reason, for a label: `Skipped (overlap)`. */
export function statusText(status: Status, skipReason?: SkipReasonName): string {
  return skipReason !== undefined && status === 'SKIPPED' ? `Skipped (${skipReason})` : STATUS_LABEL[status];
}

/** Whether a status is final: the row no longer changes by itself. */
export function isFinal(status: Status): boolean {
  return status === 'SUCCEEDED' || status === 'FAILED' || status === 'SKIPPED' || status === 'CANCELLED';
}
