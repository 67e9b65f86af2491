/**
 * The sample's long job: the NDJSON export (ndjson-export.ts) as a job with a worker of its own, resumable across
 * invocations (bin/jobs.ts).
 */
import { defineJob } from '../index';
import { ndjsonExportJob } from './ndjson-export';

export const handler = defineJob(ndjsonExportJob());
