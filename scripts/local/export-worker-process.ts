/**
 * A worker of its own process running the sample export (examples/sample-app/jobs/ndjson-export.ts) against the emulator,
 * for the tests and scripts that kill a worker mid-segment (test/integration/long-jobs.test.ts). It takes what the
 * local pipeline set in the environment (the emulator's endpoint, the table, queue and bucket, JOB_SETTINGS) plus
 * EXPORT_OPTIONS (JSON: ExportOptions without pace) and EXPORT_PACE_MS, polls the job queue with one poller and
 * writes the worker's log lines to stdout as JSON, one a line.
 *
 *   tsx scripts/local/export-worker-process.ts
 */

import { ndjsonExportJob } from '../../examples/sample-app/jobs/ndjson-export';
import { documentClient, s3Client, sqsClient } from '../../functions/aws/clients';
import { parseJobSettingsList } from '../../functions/protocol/job-settings';
import type { Logger } from '../../functions/protocol/ports';
import { delay } from '../../functions/protocol/transient-retry';
import { workerLimits } from '../../functions/protocol/worker-limits';
import { ENV, requireEnv } from '../../functions/runtime-env';
import { createWorkerHandler } from '../../functions/worker';
import { serializeEmulatorRequests } from '../../testing/local/local-aws';
import { SqsEventSource } from '../../testing/local/sqs-event-source';

const emit =
  (level: string) =>
  (message: string, fields?: Record<string, unknown>): void =>
    void process.stdout.write(`${JSON.stringify({ level, message, pid: process.pid, ...fields })}\n`);
const logger: Logger = { info: emit('INFO'), warn: emit('WARN'), error: emit('ERROR') };

const settings = parseJobSettingsList(process.env[ENV.jobSettings], ENV.jobSettings);
const paceMs = Number(process.env.EXPORT_PACE_MS ?? 0);
const exportJob = ndjsonExportJob({
  ...JSON.parse(process.env.EXPORT_OPTIONS ?? '{}'),
  pace: paceMs > 0 ? (signal: AbortSignal) => delay(paceMs, signal) : undefined,
});
serializeEmulatorRequests(documentClient());
serializeEmulatorRequests(s3Client());
const handler = createWorkerHandler({
  jobs: Object.fromEntries([...settings.keys()].map((id) => [id, exportJob])),
  settings,
  logger,
});
const source = new SqsEventSource({
  sqs: sqsClient(),
  queueUrl: requireEnv(ENV.queueUrl),
  queueArn: 'arn:aws:sqs:local:000000000000:jobs',
  handler,
  functionTimeoutSeconds: workerLimits([...settings.values()]).functionTimeoutSeconds,
  batchSize: 1,
  pollers: 1,
});
source.start();
logger.info('export worker process polling', { jobs: [...settings.keys()] });
