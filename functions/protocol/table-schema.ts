/**
 * The occurrence table's schema: key names, the status index, TTL and stream, written once and used by the
 * functions, by the CDK constructs and by local set-up. Plain TypeScript: no CDK or AWS SDK imports.
 */
import { OccurrenceAttributes } from './occurrence';

export const OCCURRENCE_TABLE = {
  partitionKey: OccurrenceAttributes.jobId,
  sortKey: OccurrenceAttributes.scheduledTime,
  /** Lists occurrences by status and scheduled time across jobs. */
  statusIndex: {
    name: 'byStatus',
    partitionKey: OccurrenceAttributes.status,
    sortKey: OccurrenceAttributes.scheduledTime,
  },
  /** Both keys and the index keys are strings. */
  keyType: 'S',
  ttlAttribute: OccurrenceAttributes.ttl,
  /** The notifier compares the old and new image of each change. */
  streamViewType: 'NEW_AND_OLD_IMAGES',
} as const;
