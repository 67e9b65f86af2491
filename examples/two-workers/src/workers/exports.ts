/** The exports worker: its jobs by id. It may read the data bucket (granted in lib/reports-stack.ts). */
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { defineJob, defineWorker } from 'scheduled-jobs-stack/runtime';

const s3 = new S3Client({});

export const weeklyExport = defineJob({
  reportExtension: 'csv',
  async run(occurrence, { signal, logger }) {
    const bucket = process.env.DATA_BUCKET;
    if (bucket === undefined) throw new Error('DATA_BUCKET is not set');
    const rows = ['key,size'];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }), {
        abortSignal: signal,
      });
      for (const o of page.Contents ?? []) rows.push(`${o.Key},${o.Size}`);
      token = page.NextContinuationToken;
    } while (token !== undefined);
    logger.info('export listed', { scheduledTime: occurrence.scheduledTime, objects: rows.length - 1 });
    return { body: `${rows.join('\n')}\n`, contentType: 'text/csv' };
  },
});

export const handler = defineWorker({ jobs: { 'weekly-export': weeklyExport } });
