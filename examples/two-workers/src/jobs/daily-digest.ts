/** A one-job worker: `defineJob` is both the job and its worker's handler. */
import { defineJob } from 'scheduled-jobs-stack/runtime';

export const dailyDigest = defineJob({
  reportExtension: 'md',
  async run(occurrence, { logger }) {
    logger.info('writing the digest', { scheduledTime: occurrence.scheduledTime });
    return {
      body: `# Daily digest\n\nScheduled for ${occurrence.scheduledTime}, attempt ${occurrence.attempt}.\n`,
      contentType: 'text/markdown; charset=utf-8',
    };
  },
});

export const handler = dailyDigest;
