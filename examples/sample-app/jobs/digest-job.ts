/**
 * The sample's digest job, with a worker of its own (the sample stack grants that worker read access to the
 * occurrences table). It imports only the package's public entry points: the runtime for defineJob, the operations
 * for the occurrence reader.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { defineJob } from '../../../functions/index';
import { OperatorOccurrenceReader } from '../../../operations/index';
import { occurrenceDigestJob } from './occurrence-digest';

// Every worker's environment names the occurrences table: the worker records its jobs' occurrences there.
const TABLE_NAME_VARIABLE = 'OCCURRENCE_TABLE_NAME';
/** The sample's jobs (sample-jobs.ts, which this bundle does not import: it brings in the CDK). */
export const SAMPLE_JOB_IDS = ['occurrence-digest', 'ndjson-export'] as const;

export const handler = defineJob(
  occurrenceDigestJob(() => {
    const tableName = process.env[TABLE_NAME_VARIABLE];
    if (tableName === undefined || tableName === '') throw new Error(`${TABLE_NAME_VARIABLE} is not set`);
    return new OperatorOccurrenceReader(DynamoDBDocumentClient.from(new DynamoDBClient({})), tableName);
  }, SAMPLE_JOB_IDS),
);
