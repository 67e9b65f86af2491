/**
 * The sample's per-customer job (`runtimeSchedules: true`): one schedule per customer, created at run time, each
 * occurrence carrying the customer's schedule key and the input its schedule was given. The report is a short
 * Markdown note; a real one would render the customer's data (pass ids in the input, not the data).
 */
import { defineJob } from '../../../functions/index';

export const handler = defineJob({
  reportExtension: 'md',
  async run(occurrence) {
    const { customerName } = (occurrence.input ?? {}) as { customerName?: string };
    const body = [
      `# Weekly report for ${customerName ?? occurrence.scheduleKey}`,
      '',
      `- schedule key: ${occurrence.scheduleKey}`,
      `- scheduled time: ${occurrence.scheduledTime}`,
      `- input: ${JSON.stringify(occurrence.input ?? null)}`,
      '',
    ].join('\n');
    return { body, contentType: 'text/markdown; charset=utf-8' };
  },
});
