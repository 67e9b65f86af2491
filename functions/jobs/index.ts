/**
 * The job implementations this deployment's worker knows, by job id. Add yours here (and its schedule in
 * bin/jobs.ts); the worker refuses to start if a scheduled job has no implementation.
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
