/**
 * The sample's worker entry: the occurrence digest as a job with a worker of its own (bin/app.ts gives it the
 * table read grant it needs).
 */
import { documentClient } from '../../../functions/aws/clients';
import { DynamoOccurrenceReader } from '../../../functions/aws/occurrence-reader';
import { defineJob } from '../../../functions/index';
import { ENV, requireEnv } from '../../../functions/runtime-env';
import { occurrenceDigestJob } from './occurrence-digest';

export const handler = defineJob(
  occurrenceDigestJob(() => new DynamoOccurrenceReader(documentClient(), requireEnv(ENV.tableName))),
);
