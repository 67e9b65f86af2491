/**
 * Shared set-up of the integration tests: one moto_server per test file (started in beforeAll, stopped in
 * afterAll, also when a test fails), emptied before each test. Everything talks to 127.0.0.1 only.
 */
import { CreateScheduleCommand, CreateScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { documentClient, s3Client, snsClient, sqsClient } from '../../functions/aws/clients';
import { type JobSettings, withDefaults } from '../../functions/protocol/job-settings';
import type { Occurrence, OccurrenceKey } from '../../functions/protocol/occurrence';
import type { JobDefinition } from '../../functions/protocol/ports';
import { ENV } from '../../functions/runtime-env';
import { LocalPipeline, type PipelineOptions } from '../../scripts/local/pipeline';
import { LOCAL_REGION } from '../../testing/local/local-aws';
import { type MotoServer, startMotoServer } from '../../testing/local/moto-server';

export interface Emulator {
  readonly moto: MotoServer;
  /** The handlers' JSON log lines of the current test, to print when an assertion needs them. */
  readonly logs: string[];
}

export function useMoto(): Emulator {
  const state = { moto: undefined as MotoServer | undefined, logs: [] as string[] };
  beforeAll(async () => {
    state.moto = await startMotoServer();
  });
  afterAll(async () => {
    await state.moto?.stop();
  });
  beforeEach(async () => {
    state.logs.length = 0;
    await state.moto?.reset();
  });
  return {
    get moto(): MotoServer {
      if (state.moto === undefined) throw new Error('moto is not running');
      return state.moto;
    },
    logs: state.logs,
  };
}

export const JOB_ID = 'itest';

/**
 * Short timing so that a lost lease, a redelivery and a retry take seconds: moto counts SQS time in whole seconds
 * and the lease must be at least 10 s.
 */
export function testSettings(
  overrides: Partial<Omit<JobSettings, 'id' | 'retry'>> & { retry?: Partial<JobSettings['retry']> } = {},
): JobSettings {
  return withDefaults({
    id: JOB_ID,
    leaseSeconds: 10,
    heartbeatSeconds: 2,
    leaseSafetyMarginSeconds: 2,
    timeoutSeconds: 20,
    ...overrides,
    retry: {
      maxAttempts: 3,
      baseDelaySeconds: 1,
      maxDelaySeconds: 2,
      deadlineSeconds: 600,
      jitter: 0,
      ...overrides.retry,
    },
  });
}

export interface CountingJob extends JobDefinition {
  /** Scheduled time of every run that started, in order. */
  readonly runs: string[];
  /** Scheduled time of every run that was aborted through its signal. */
  readonly aborted: string[];
  /** The signal's reason of each abort. */
  readonly abortReasons: unknown[];
}

/** A job that takes `ms`, honours its AbortSignal and writes a report naming its occurrence and attempt. */
export function countingJob(ms = 0): CountingJob {
  return jobByTime({}, new Set(), ms);
}

/**
 * A job that works for ms[scheduledTime] (default `defaultMs`), honours its AbortSignal, fails for the times in
 * `failing`, and writes a report naming its occurrence and attempt.
 */
export function jobByTime(
  ms: Readonly<Record<string, number>>,
  failing: ReadonlySet<string> = new Set(),
  defaultMs = 200,
): CountingJob {
  const runs: string[] = [];
  const aborted: string[] = [];
  const abortReasons: unknown[] = [];
  return {
    runs,
    aborted,
    abortReasons,
    reportExtension: 'txt',
    async run(occurrence, { signal }) {
      runs.push(occurrence.scheduledTime);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms[occurrence.scheduledTime] ?? defaultMs);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            aborted.push(occurrence.scheduledTime);
            abortReasons.push(signal.reason);
            reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
          },
          { once: true },
        );
      });
      if (failing.has(occurrence.scheduledTime)) throw new Error(`upstream down for ${occurrence.scheduledTime}`);
      return {
        body: `report of ${occurrence.jobId} at ${occurrence.scheduledTime}, attempt ${occurrence.attempt}`,
        contentType: 'text/plain',
      };
    },
  };
}

/** Poll until the row is in one of these statuses (bounded: 20 s). */
export async function waitForStatus(
  p: LocalPipeline,
  key: OccurrenceKey,
  statuses: readonly string[],
): Promise<Occurrence> {
  for (let i = 0; i < 200; i++) {
    const [row] = await p.rows([key]);
    if (row !== undefined && statuses.includes(row.status)) return row;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${key.scheduledTime} never reached ${statuses.join(' or ')}`);
}

export function pipeline(
  emulator: Emulator,
  options: Partial<PipelineOptions> & Pick<PipelineOptions, 'jobs'>,
): Promise<LocalPipeline> {
  return LocalPipeline.create({
    endpoint: emulator.moto.endpoint,
    settings: [testSettings()],
    workers: 2,
    log: (line) => emulator.logs.push(line),
    ...options,
  });
}

/** Distinct whole-second scheduled times, a second apart back from now, so no retry deadline has passed. */
export function occurrences(count: number, jobId = JOB_ID): OccurrenceKey[] {
  const base = Math.floor(Date.now() / 1000) * 1000;
  return Array.from({ length: count }, (_, i) => ({
    jobId,
    scheduledTime: new Date(base - i * 1000).toISOString().replace('.000Z', 'Z'),
  }));
}

/**
 * One request a handler's SDK client sent, by operation (`UpdateItem`, `HeadObject`, ...); a lease extension is
 * `UpdateItem:heartbeat`, told apart by its update expression, because how many a run makes depends on how fast the
 * machine runs the job, not on the protocol.
 */
export type RequestLog = string[];

export const HEARTBEAT = 'UpdateItem:heartbeat';

/** The heartbeat's update expression starts by moving the lease's expiry (DynamoOccurrenceStore.extend). */
const HEARTBEAT_EXPRESSION = /^SET #leaseExpiresAt = :expires, #heartbeatAt = /;

function requestName(commandName: string | undefined, input: unknown): string {
  const name = String(commandName).replace(/Command$/, '');
  const expression = (input as { UpdateExpression?: unknown } | undefined)?.UpdateExpression;
  return name === 'UpdateItem' && typeof expression === 'string' && HEARTBEAT_EXPRESSION.test(expression)
    ? HEARTBEAT
    : name;
}

/**
 * Record every request the handlers' own clients send from now on (the event sources' receives and deletes use the
 * driver's clients and are not counted, as Lambda's are not billed to the function). Call after pipeline(): the
 * handlers' clients exist then. Each call replaces the previous recorder.
 */
export function recordHandlerRequests(): RequestLog {
  const log: RequestLog = [];
  for (const client of [documentClient(), s3Client(), sqsClient(), snsClient()]) {
    const stack = client.middlewareStack as unknown as {
      add(
        middleware: (
          next: (args: { input?: unknown }) => Promise<unknown>,
          context: { commandName?: string },
        ) => (args: { input?: unknown }) => Promise<unknown>,
        options: object,
      ): void;
    };
    stack.add(
      (next, context) => async (args) => {
        log.push(requestName(context.commandName, args.input));
        return next(args);
      },
      { step: 'initialize', name: 'recordHandlerRequests', override: true },
    );
  }
  return log;
}

/**
 * moto's Scheduler with the job's schedule ENABLED in a new group, named in SCHEDULE_GROUP as the stack names it to
 * the functions: what pauseAfterFailures disables.
 */
export async function enabledSchedule(endpoint: string, group: string): Promise<SchedulerClient> {
  const scheduler = new SchedulerClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await scheduler.send(new CreateScheduleGroupCommand({ Name: group }));
  await scheduler.send(
    new CreateScheduleCommand({
      Name: JOB_ID,
      GroupName: group,
      ScheduleExpression: 'rate(1 hour)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: `arn:aws:lambda:${LOCAL_REGION}:123456789012:function:trigger`,
        RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
      },
    }),
  );
  process.env[ENV.scheduleGroup] = group;
  return scheduler;
}
