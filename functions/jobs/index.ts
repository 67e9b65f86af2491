/**
 * The job implementations this deployment's worker knows, by job id. Add yours here (and its schedule in
 * bin/jobs.ts). A scheduled job without an implementation does not stop the worker: it is logged as an error when the
 * worker starts, and its messages are rejected (they end in the job DLQ) while the other jobs keep running.
 */
import { documentClient } from '../aws/clients';
import { DynamoOccurrenceReader } from '../aws/occurrence-reader';
import type { JobDefinition } from '../protocol/ports';
import { ENV, requireEnv } from '../runtime-env';
import { occurrenceDigestJob } from './occurrence-digest';

export const jobs: Readonly<Record<string, JobDefinition>> = {
  'occurrence-digest': occurrenceDigestJob(
    () => new DynamoOccurrenceReader(documentClient(), requireEnv(ENV.tableName)),
  ),
};
