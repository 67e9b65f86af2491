/**
 * The runtime API (`<package>/runtime`): what a worker's entry file imports to define its jobs, and the operator
 * actions on a job (pauseJob, resumeJob, runJobNow, describeJob) with their AWS adapters.
 *
 *   // one job, one worker of its own: addJob({ id, schedule, entry: 'src/jobs/daily-digest.ts' })
 *   export const handler = defineJob({ reportExtension: 'md', async run(occurrence, { signal, logger }) { ... } });
 *
 *   // several jobs in one worker: addWorker('exports', { entry: 'src/workers/exports.ts' }), addJob({ ..., worker })
 *   export const handler = defineWorker({ jobs: { 'weekly-export': weeklyExport, 'monthly-export': monthlyExport } });
 *
 * The handler is built on its first invocation, from the settings the stack gives this worker (JOB_SETTINGS), so
 * importing the file (a unit test, the bundler) touches neither the environment nor AWS.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { parseJobSettingsList } from './protocol/job-settings';
import type { JobDefinition } from './protocol/ports';
import { ENV } from './runtime-env';
import { createWorkerHandler, type WorkerHandler } from './worker';

// The operator actions (job-control.ts) and the adapters they run on, for an operator's own tooling: the same
// functions the occurrences CLI calls. A worker's bundle leaves them out (nothing of a worker imports them).
export { DynamoJobStateStore } from './aws/job-state-store';
export { DynamoOccurrenceStore } from './aws/occurrence-store';
export { SchedulerScheduleSwitch } from './aws/schedule-switch';
export { SqsWorkQueue } from './aws/work-queue';
export {
  type CatchUp,
  describeJob,
  type JobDescription,
  type JobStateStore,
  type OccurrenceHistory,
  type PauseResult,
  pauseJob,
  type ResumeResult,
  type RunResult,
  resumeJob,
  runJobNow,
  type ScheduledJob,
} from './protocol/job-control';
export type { JobState } from './protocol/job-state';
export type { Occurrence, OccurrenceKey } from './protocol/occurrence';
export type { JobContext, JobDefinition, Logger, ReportBody } from './protocol/ports';
export { systemClock } from './protocol/ports';
export type { TriggerDeps } from './protocol/record-occurrence';
export { createWorkerHandler, type WorkerHandler, type WorkerOptions } from './worker';

/** A worker's Lambda handler that is also one job's definition, so defineWorker can take it as one of its jobs. */
export interface JobHandler extends WorkerHandler {
  readonly definition: JobDefinition;
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

/** The handler of a worker shared by several jobs: their definitions (or defineJob handlers) by job id. */
export function defineWorker(options: {
  readonly jobs: Readonly<Record<string, JobDefinition | JobHandler>>;
}): WorkerHandler {
  const jobs = Object.fromEntries(
    Object.entries(options.jobs).map(([id, job]) => {
      const definition = 'definition' in job ? job.definition : job;
      checkJobDefinition(definition, `defineWorker: jobs.${id}`);
      return [id, definition];
    }),
  );
  return lazyHandler(() => createWorkerHandler({ jobs }));
}

/**
 * Whether a value is a job definition, with `where` in the message. Fails at import (in the user's tests and at the
 * first cold start) rather than on the first message; testing/ uses the same rule.
 */
export function checkJobDefinition(definition: JobDefinition, where: string): void {
  if (typeof definition !== 'object' || definition === null || typeof definition.run !== 'function')
    throw new TypeError(`${where}: a job is an object with run(occurrence, { signal, logger })`);
  if (typeof definition.reportExtension !== 'string' || !/^[A-Za-z0-9]{1,16}$/.test(definition.reportExtension))
    throw new TypeError(
      `${where}.reportExtension: must be 1-16 letters or digits such as 'md' or 'json', got ${JSON.stringify(definition.reportExtension)}`,
    );
}
