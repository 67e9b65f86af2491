/**
 * The sample's long job: the NDJSON export (ndjson-export.ts) as a job with a worker of its own, resumable across
 * invocations (bin/jobs.ts). 200 MB deployed; SAMPLE_EXPORT_BYTES sets another size (`npm run local` exports 20 MB,
 * so that the first command a new user types ends in seconds; scripts/long-export.ts runs the 200 MB on moto).
 */
import { defineJob } from '../../../functions/index';
import { ndjsonExportJob } from './ndjson-export';

const bytes = process.env.SAMPLE_EXPORT_BYTES;
if (bytes !== undefined && !/^[1-9]\d*$/.test(bytes))
  throw new RangeError(`SAMPLE_EXPORT_BYTES must be a whole number of bytes, got ${JSON.stringify(bytes)}`);

export const handler = defineJob(ndjsonExportJob(bytes === undefined ? {} : { totalBytes: Number(bytes) }));
