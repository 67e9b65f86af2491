/**
 * `<package>/testing`: test a job without AWS, and run a synthesized app's jobs on this machine against moto.
 *
 *   // a job's unit test
 *   const { report, logs } = await testJob(handler, { occurrence: { scheduledTime: '2026-11-30T06:00:00Z' } });
 *
 *   // the app's jobs from `cdk synth`, end to end on moto
 *   const run = await runLocally({ assemblyDir: 'cdk.out' });
 *
 * Nothing under functions/ or lib/ imports this folder: it is for tests and local runs only.
 */

export { AssemblyError, JobDidNotStopError, TestingError } from './errors';
export {
  FAKE_JOB_ID,
  FAKE_LEASE_ID,
  FAKE_SCHEDULED_TIME,
  type FakeOccurrenceFields,
  fakeOccurrence,
} from './fake-occurrence';
export type {
  BucketSpec,
  FunctionSpec,
  LocalApp,
  QueueSourceSpec,
  ScheduleSpec,
  StreamSourceSpec,
  TableSpec,
} from './local/app-model';
export { describeApp, readLocalApp } from './local/app-model';
export { listStacks, readStack, type StackArtifact } from './local/cloud-assembly';
export { formatLocalRun } from './local/format';
export { type MotoServer, MotoUnavailableError, startMotoServer } from './local/moto-server';
export {
  type KeptLocalRun,
  LOCAL_RUN_LIMITS,
  type LocalFireMode,
  type LocalFunctionStats,
  type LocalLogLine,
  type LocalResourceNames,
  type LocalRun,
  type LocalRunRow,
  type RunLocallyOptions,
  runLocally,
} from './local/run-locally';
export { type LogEntry, type LogLevel, type RecordingLogger, recordingLogger } from './recording-logger';
export {
  type AbortedRun,
  type CompletedRun,
  DEFAULT_STOP_WITHIN_MS,
  type TestJobOptions,
  type TestJobResult,
  testJob,
} from './test-job';
