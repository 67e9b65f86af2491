/**
 * The sample's worker entry: the occurrence digest as a job with a worker of its own (bin/app.ts gives it the
 * table read grant it needs).
 */
import { documentClient } from '../aws/clients';
import { DynamoOccurrenceReader } from '../aws/occurrence-reader';
import { defineJob } from '../index';
import { ENV, requireEnv } from '../runtime-env';
import { occurrenceDigestJob } from './occurrence-digest';

export const handler = defineJob(
  occurrenceDigestJob(() => new DynamoOccurrenceReader(documentClient(), requireEnv(ENV.tableName))),
);
