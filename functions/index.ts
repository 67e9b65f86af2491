/**
 * The runtime API (`scheduled-jobs-stack/runtime`): what a job's or a worker's entry file imports, and nothing
 * operator-side (pause, resume, run and retry are `scheduled-jobs-stack/operations`).
 *
 * ```ts
 * // one job, one worker of its own: jobs.addJob('daily-digest', { schedule, entry: 'src/jobs/daily-digest.ts' })
 * export const handler = defineJob({ reportExtension: 'md', async run(occurrence, { signal, logger }) { ... } });
 *
 * // several jobs in one worker: jobs.addWorker('exports', { entry: 'src/workers/exports.ts' }), addJob(..., { worker })
 * export const handler = defineWorker({ jobs: { 'weekly-export': weeklyExport, 'monthly-export': monthlyExport } });
 * ```
 *
 * The handler is built on its first invocation, from the settings the stack gives this worker (JOB_SETTINGS), so
 * importing the file (a unit test, the bundler) touches neither the environment nor AWS.
 *
 * @packageDocumentation
 */
export type { Fence } from './protocol/checkpoint';
// The errors a job meets: its signal's reason (yield, lost lease, time limit) and a refused checkpoint; the base
// class tells this package's errors from a job's own.
export {
  CheckpointRejectedError,
  JobTimeoutError,
  LeaseLostError,
  ScheduledJobsError,
  YieldRequestedError,
} from './protocol/errors';
export {
  type AttemptRecord,
  type Occurrence,
  type OccurrenceKey,
  OccurrenceStatus,
  SkipReason,
} from './protocol/occurrence';
// The detail of the EventBridge events the stack puts (ScheduledJobsProps.stateChangeEvents; docs/events.md).
export type {
  EventLinks,
  JobPaused,
  OccurrenceStateChange,
} from './protocol/occurrence-events';
export type {
  JobContext,
  JobDefinition,
  LogFields,
  Logger,
  ReportBody,
  ReportWriter,
  RunContext,
  StreamedReport,
} from './protocol/ports';
export type { JsonValue } from './protocol/schedule-key';
/**
 * An overlap policy as the occurrence rows, the settings and the CLI write it: `'skip'`, `'bufferOne'`, ... The CDK
 * side's `OverlapPolicy` enum (`scheduled-jobs-stack/cdk`) has these as its values; named apart so that one name is
 * one type across the package's entry points.
 */
export type { OverlapPolicy as OverlapPolicyValue } from './protocol/setting-basics';
export type { WorkerHandler } from './worker';

import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { checkJobDefinition } from './check-job-definition';
import { parseJobSettingsList } from './protocol/job-settings';
import type { JobDefinition } from './protocol/ports';
import { ENV } from './runtime-env';
import { createWorkerHandler, type WorkerHandler } from './worker';

/** A worker's Lambda handler that is also one job's definition, so defineWorker can take it as one of its jobs. */
export interface JobHandler extends WorkerHandler {
  /** The job definition defineJob was given. */
  readonly definition: JobDefinition;
}

/** A worker's Lambda handler from defineWorker, which names the jobs it implements (checkWorkerJobs reads them). */
export interface SharedWorkerHandler extends WorkerHandler {
  /** The ids of the jobs given to defineWorker, in their order. */
  readonly jobIds: readonly string[];
}

type LambdaContext = Pick<Context, 'getRemainingTimeInMillis' | 'logStreamName' | 'awsRequestId'>;

/** A handler built on its first call, so that importing the entry file has no effects. */
function lazyHandler(build: () => WorkerHandler): WorkerHandler {
  let built: WorkerHandler | undefined;
  return async (event: SQSEvent, context: LambdaContext): Promise<SQSBatchResponse> => {
    built ??= build();
    return built(event, context);
  };
}

/**
 * One job, and the handler of a worker that runs just it: the worker's one job id comes from the stack (the job
 * whose `entry` this file is). Put it in `defineWorker({ jobs })` to run it in a worker with others.
 *
 * @param definition - the job: its report's extension and its `run(occurrence, context)`.
 * @returns the Lambda handler to export as `handler`; it carries the definition for defineWorker and testJob.
 * @throws TypeError at import when the definition is not a job (no `run`, a bad `reportExtension`).
 *
 * @example
 * ```ts
 * // src/jobs/daily-digest.ts, the entry of jobs.addJob('daily-digest', { schedule, entry: 'src/jobs/daily-digest.ts' })
 * import { defineJob } from 'scheduled-jobs-stack/runtime';
 *
 * export const handler = defineJob({
 *   reportExtension: 'md',
 *   async run(occurrence, { signal, logger }) {
 *     logger.info('writing the digest', { scheduledTime: occurrence.scheduledTime });
 *     const body = await buildDigest(occurrence.scheduledTime, signal);
 *     return { body, contentType: 'text/markdown; charset=utf-8' };
 *   },
 * });
 * ```
 */
export function defineJob(definition: JobDefinition): JobHandler {
  checkJobDefinition(definition, 'defineJob');
  const handler = lazyHandler(() => {
    const settings = parseJobSettingsList(process.env[ENV.jobSettings], ENV.jobSettings);
    if (settings.size !== 1) {
      throw new Error(
        `defineJob runs exactly one job, but this worker has ${settings.size} (${[...settings.keys()].join(', ')}); ` +
          'export defineWorker({ jobs: { ... } }) from a worker shared by several jobs',
      );
    }
    const [jobId] = settings.keys();
    return createWorkerHandler({ jobs: { [jobId]: definition }, settings });
  });
  return Object.assign(handler, { definition });
}

/**
 * The handler of a worker shared by several jobs: their definitions (or defineJob handlers) by job id, each id the
 * one the stack gives `addJob`.
 *
 * @param options - `jobs`: each job's definition or defineJob handler, by job id.
 * @returns the Lambda handler to export as `handler` from the worker's entry file.
 * @throws TypeError at import when one of the jobs is not a job definition.
 *
 * @example
 * ```ts
 * // src/workers/exports.ts, the entry of jobs.addWorker('exports', { entry: 'src/workers/exports.ts' })
 * import { defineWorker } from 'scheduled-jobs-stack/runtime';
 * import { monthlyExport, weeklyExport } from '../jobs/exports';
 *
 * export const handler = defineWorker({ jobs: { 'weekly-export': weeklyExport, 'monthly-export': monthlyExport } });
 * ```
 */
export function defineWorker(options: {
  readonly jobs: Readonly<Record<string, JobDefinition | JobHandler>>;
}): SharedWorkerHandler {
  const jobs = Object.fromEntries(
    Object.entries(options.jobs).map(([id, job]) => {
      const definition = 'definition' in job ? job.definition : job;
      checkJobDefinition(definition, `defineWorker: jobs.${id}`);
      return [id, definition];
    }),
  );
  return Object.assign(
    lazyHandler(() => createWorkerHandler({ jobs })),
    { jobIds: Object.keys(jobs) },
  );
}
