/**
 * One report per customer: the job is deployed once with `runtimeSchedules: true`, and the app creates a schedule per
 * customer at run time (upsertSchedule). Each occurrence carries its customer's key and the input of its schedule.
 */
import { defineJob } from 'scheduled-jobs-stack/runtime';

export const handler = defineJob({
  reportExtension: 'txt',
  async run(occurrence) {
    const customer =
      (occurrence.input as { customerName?: string } | undefined)?.customerName ?? occurrence.scheduleKey;
    return {
      body: `Weekly report for ${customer} (${occurrence.scheduleKey}), scheduled for ${occurrence.scheduledTime}.\n`,
      contentType: 'text/plain; charset=utf-8',
    };
  },
});
