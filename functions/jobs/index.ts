/**
 * The sample's job implementations by job id, for `npm run local`, which runs every sample job in one local worker.
 * Deployed, each sample job has a worker entry of its own (digest-worker.ts) that bin/jobs.ts names.
 */
import { documentClient } from '../aws/clients';
import { DynamoOccurrenceReader } from '../aws/occurrence-reader';
import type { JobDefinition } from '../protocol/ports';
import { ENV, requireEnv } from '../runtime-env';
import { ndjsonExportJob } from './ndjson-export';
import { occurrenceDigestJob } from './occurrence-digest';

export const jobs: Readonly<Record<string, JobDefinition>> = {
  'occurrence-digest': occurrenceDigestJob(
    () => new DynamoOccurrenceReader(documentClient(), requireEnv(ENV.tableName)),
  ),
  // 20 MB locally, where one process runs every sample job: the 200 MB run is scripts/long-export.ts.
  'ndjson-export': ndjsonExportJob({ totalBytes: 20_000_000 }),
};
