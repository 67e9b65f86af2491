/**
 * The test kit (`scheduled-jobs-stack/testing`): test a job without AWS, and run a synthesized app's jobs on this
 * machine against moto.
 *
 * ```ts
 * // a job's unit test
 * const { report, logs } = await testJob(handler, { occurrence: { scheduledTime: '2026-11-30T06:00:00Z' } });
 *
 * // the app's jobs from `cdk synth`, end to end on moto
 * const run = await runLocally({ assemblyDir: 'cdk.out' });
 * ```
 *
 * Nothing under functions/ or lib/ imports this folder: it is for tests and local runs only. The emulator's
 * pieces (the moto server, the cloud assembly readers, the event sources) are internal modules of testing/local/.
 *
 * @packageDocumentation
 */

// The runtime's types that the signatures above name (a job, its occurrence, its report, a logger, a clock): the same
// declarations as scheduled-jobs-stack/runtime's, re-exported as types so that a test can name them from here too.
export type {
  AttemptRecord,
  Fence,
  JobContext,
  JobDefinition,
  JobHandler,
  JsonValue,
  LogFields,
  Logger,
  Occurrence,
  OccurrenceKey,
  OccurrenceStatus,
  OverlapPolicyValue,
  ReportBody,
  ReportWriter,
  RunContext,
  SkipReason,
  StreamedReport,
  WorkerHandler,
} from '../functions/index';
export type { Clock } from '../functions/protocol/ports';
// What a LocalRuntimeSchedule extends: the spec upsertSchedule takes (`scheduled-jobs-stack/operations` names it too).
export type { ScheduleSpec } from '../functions/protocol/schedule-registry-ports';
export { checkWorkerJobs, type WorkerJobsSource } from './check-worker-jobs';
export { AssemblyError, JobDidNotStopError, TestingError, WorkerJobsError } from './errors';
export { type FakeOccurrenceFields, fakeOccurrence } from './fake-occurrence';
export { formatLocalRun } from './local/format';
export { MotoUnavailableError } from './local/moto-server';
export {
  type KeptLocalRun,
  type LocalFire,
  type LocalFireMode,
  type LocalFunctionStats,
  type LocalLogLine,
  type LocalResourceNames,
  type LocalRun,
  type LocalRunRow,
  type LocalRuntimeSchedule,
  type RunLocallyOptions,
  runLocally,
} from './local/run-locally';
export { type LogEntry, type LogLevel, type RecordingLogger, recordingLogger } from './recording-logger';
export { type AbortedRun, type CompletedRun, type TestJobOptions, type TestJobResult, testJob } from './test-job';
