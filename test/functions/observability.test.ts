/**
 * What the handlers tell an operator: metrics per job, the attempt history in the row, and log lines that each
 * carry their occurrence's keys even when a batch runs several occurrences at once.
 */
import { describe, expect, it, vi } from 'vitest';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import { withDefaults } from '../../functions/protocol/job-settings';
import { ATTEMPT_ERROR_MAX_CHARS } from '../../functions/protocol/occurrence';
import type { JobDefinition } from '../../functions/protocol/ports';
import { perWorkerMetrics } from '../../functions/reconciler';
import { powertoolsLogger } from '../../functions/runtime/powertools-logger';
import { powertoolsMetrics } from '../../functions/runtime/powertools-metrics';
import { createTriggerHandler } from '../../functions/trigger';
import { createWorkerHandler, workerMetrics } from '../../functions/worker';
import {
  captureLogger,
  type Harness,
  type LogLine,
  lambdaContext,
  makeHarness,
  SCHEDULED,
  sqsEvent,
  T0,
  TEST_WORKER,
  timedJob,
  useHarnessTime,
} from '../support/harness';

const KEY = { jobId: 'report', scheduledTime: SCHEDULED };
const MESSAGE = encodeEnvelope(KEY);

let h: Harness;
useHarnessTime();

const row = () => h.aws.row(KEY.jobId, KEY.scheduledTime)!;
const named = (name: string) => h.metrics.filter((m) => m.name === name);

/** Fails its first `failures` runs after `ms`, then succeeds after `ms`. */
function flakyJob(failures: number, ms: number, error = 'upstream down'): JobDefinition {
  let runs = 0;
  return {
    reportExtension: 'txt',
    async run() {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (runs <= failures) throw new Error(error);
      return { body: 'ok', contentType: 'text/plain' };
    },
  };
}

describe('worker metrics and attempt history', () => {
  it("counts the start, the retry, the success and each attempt's duration, and records both attempts in the row", async () => {
    h = makeHarness({ jobs: { report: flakyJob(1, 5_000) } });
    await h.trigger(KEY);
    const first = h.deliver(MESSAGE);
    await vi.advanceTimersByTimeAsync(5_000);
    await first;
    await vi.advanceTimersByTimeAsync(Date.parse(row().nextAttemptAt as string) - Date.now());
    const second = h.deliver(MESSAGE);
    await vi.advanceTimersByTimeAsync(5_000);
    await second;

    expect(row().status).toBe('SUCCEEDED');
    expect(named('OccurrencesStarted')).toEqual([{ name: 'OccurrencesStarted', value: 1, jobId: 'report' }]);
    expect(named('RetriesScheduled')).toHaveLength(1);
    expect(named('OccurrencesSucceeded')).toHaveLength(1);
    expect(named('OccurrencesFailed')).toHaveLength(0);
    expect(named('JobDuration').map((m) => m.value)).toEqual([5_000, 5_000]);
    const releasedAt = new Date(T0 + 5_000).toISOString();
    expect(row().history).toEqual([
      { attempt: 1, outcome: 'retry', at: releasedAt, leaseId: 'lease-1', error: 'attempt 1: Error: upstream down' },
      { attempt: 2, outcome: 'succeeded', at: row().succeededAt, leaseId: 'lease-2' },
    ]);
  });

  it('counts a FAILED occurrence and keeps the history bounded: errors are cut to a fixed length', async () => {
    h = makeHarness({
      jobs: { report: flakyJob(1, 1_000, 'x'.repeat(2_000)) },
      settings: [{ id: 'report', retry: { maxAttempts: 1 } }],
    });
    await h.trigger(KEY);
    const run = h.deliver(MESSAGE);
    await vi.advanceTimersByTimeAsync(1_000);
    await run;
    expect(row().status).toBe('FAILED');
    expect(named('OccurrencesFailed')).toEqual([{ name: 'OccurrencesFailed', value: 1, jobId: 'report' }]);
    const history = row().history as { outcome: string; error: string }[];
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ outcome: 'failed' });
    expect(history[0].error).toHaveLength(ATTEMPT_ERROR_MAX_CHARS);
  });

  it('counts the failed extend and the lost lease when another worker takes the occurrence', async () => {
    h = makeHarness({ jobs: { report: timedJob(300_000) } });
    await h.trigger(KEY);
    const run = h.deliver(MESSAGE);
    await vi.advanceTimersByTimeAsync(10_000);
    h.aws.table.set(`report|${SCHEDULED}`, { ...row(), leaseId: 'thief', attempt: 2 });
    await vi.advanceTimersByTimeAsync(45_000);
    await run;
    expect(named('ExtendFailures')).toEqual([{ name: 'ExtendFailures', value: 1, jobId: 'report' }]);
    expect(named('LeasesLost')).toEqual([{ name: 'LeasesLost', value: 1, jobId: 'report' }]);
    expect(named('OccurrencesSucceeded')).toHaveLength(0);
    expect(row().history).toBeUndefined(); // the thief's row: the old holder could write nothing
  });

  it('counts a suppressed duplicate trigger', async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger(KEY);
    const run = h.deliver(MESSAGE);
    await vi.advanceTimersByTimeAsync(1_000);
    await run;
    expect(await h.trigger(KEY)).toBe('duplicate-suppressed');
    expect(named('DuplicateTriggersSuppressed')).toEqual([
      { name: 'DuplicateTriggersSuppressed', value: 1, jobId: 'report' },
    ]);
  });
});

describe('the happy path', () => {
  it("writes one INFO line in all (the worker's outcome, with job, key, attempt, duration and report), the rest at DEBUG", async () => {
    h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger(KEY);
    const pending = { ...row() };
    const run = h.deliver(MESSAGE);
    await vi.advanceTimersByTimeAsync(1_000);
    await run;
    expect(await h.streamChange(pending)).toEqual([]);
    expect(h.aws.published).toHaveLength(1);

    const info = h.logs.filter((l) => l.level !== 'DEBUG');
    expect(info).toEqual([
      {
        level: 'INFO',
        message: 'occurrence SUCCEEDED',
        fields: expect.objectContaining({
          ...KEY,
          attempt: 1,
          durationMs: 1_000,
          reportKey: row().reportKey,
          leaseId: 'lease-1',
        }),
      },
    ]);
    // The steps are still there for whoever turns DEBUG on: the trigger's, the claim, the commit, the announcement.
    expect(h.logs.filter((l) => l.level === 'DEBUG').map((l) => l.message)).toEqual(
      expect.arrayContaining([
        'occurrence recorded and enqueued',
        'claimed occurrence',
        'report committed',
        'report announced',
      ]),
    );
  });

  it('writes no EMF line for a happy-path occurrence by default: Started, Succeeded and JobDuration are opt-in', async () => {
    const plain = await happyPathEmf({ jobMetrics: false, detailed: false });
    expect(plain.worker).toEqual([]);
    expect(plain.trigger).toEqual([]); // the trigger counts nothing on the happy path
  });

  it("writes the three detailed metrics on the worker's dimensions with DETAILED_METRICS, and per job for an opted-in job", async () => {
    const detailed = await happyPathEmf({ jobMetrics: false, detailed: true });
    expect(detailed.worker).toHaveLength(1);
    expect(detailed.worker[0]._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'worker']]);
    expect(detailed.worker[0]._aws.CloudWatchMetrics[0].Metrics.map((m: { Name: string }) => m.Name).sort()).toEqual([
      'JobDuration',
      'OccurrencesStarted',
      'OccurrencesSucceeded',
    ]);

    const perJob = await happyPathEmf({ jobMetrics: true, detailed: false });
    expect(perJob.worker.map((e) => e._aws.CloudWatchMetrics[0].Dimensions)).toEqual([[['service', 'jobId']]]);
    expect(perJob.worker[0]).toMatchObject({ jobId: 'report', OccurrencesStarted: 1, OccurrencesSucceeded: 1 });
  });

  it("writes a FAILED occurrence on the worker's dimensions and on the stack-wide { service, component: workers }", async () => {
    const settings = [withDefaults({ id: 'report', retry: { maxAttempts: 1 } })];
    vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'ScheduledJobs/Test'); // Powertools reads it from process.env
    const emf = workerMetrics(new Map(settings.map((s) => [s.id, s])), { WORKER_ID: TEST_WORKER });
    h = makeHarness({ jobs: { report: flakyJob(1, 1_000) }, settings, alsoMetrics: emf });
    await h.trigger(KEY);
    const lines = await captureStdoutAsync(async () => {
      const run = h.deliver(MESSAGE);
      await vi.advanceTimersByTimeAsync(1_000);
      await run;
      emf.flush();
    });
    vi.unstubAllEnvs();
    expect(row().status).toBe('FAILED');
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed.map((e) => [e._aws.CloudWatchMetrics[0].Dimensions, e.OccurrencesFailed, e.component])).toEqual([
      [[['service', 'worker']], 1, undefined],
      [[['service', 'component']], 1, 'workers'],
    ]);
  });
});

describe('reconciler metrics of late occurrences', () => {
  it("writes OccurrencesLate on each worker's own dimensions and stack-wide, two EMF lines per worker at flush", async () => {
    vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'ScheduledJobs/Test');
    try {
      const byWorker = perWorkerMetrics();
      const lines = await captureStdoutAsync(async () => {
        byWorker('exports').add('OccurrencesLate', 2, 'weekly-export');
        byWorker('digest').add('OccurrencesLate', 1, 'occurrence-digest');
        byWorker.flushAll();
      });
      const emf = lines.map((l) => JSON.parse(l));
      // Each worker's gauge twice: on its own dimensions and stack-wide (the stack's late alarm reads the Maximum).
      expect(
        emf.map((e) => [e.worker ?? e.component, e.OccurrencesLate, e._aws.CloudWatchMetrics[0].Dimensions]),
      ).toEqual([
        ['exports', 2, [['service', 'worker']]],
        ['workers', 2, [['service', 'component']]],
        ['digest', 1, [['service', 'worker']]],
        ['workers', 1, [['service', 'component']]],
      ]);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

/**
 * The EMF lines the trigger and then the worker wrote for one happy-path occurrence, through the worker's own
 * metrics as its environment configures them, with or without jobMetrics and DETAILED_METRICS.
 */
async function happyPathEmf(options: { jobMetrics: boolean; detailed: boolean }) {
  const settings = withDefaults({ id: 'report', jobMetrics: options.jobMetrics });
  vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'ScheduledJobs/Test'); // Powertools reads it from process.env
  const emf = workerMetrics(new Map([['report', settings]]), {
    WORKER_ID: TEST_WORKER,
    ...(options.detailed ? { DETAILED_METRICS: 'true' } : {}),
  });
  h = makeHarness({ jobs: { report: timedJob(1_000) }, alsoMetrics: emf });
  const trigger = await captureStdoutAsync(() => h.trigger(KEY));
  const worker = await captureStdoutAsync(async () => {
    const run = h.deliver(MESSAGE);
    await vi.advanceTimersByTimeAsync(1_000);
    await run;
  });
  vi.unstubAllEnvs();
  // biome-ignore lint/suspicious/noExplicitAny: parsed EMF
  const parse = (lines: string[]): any[] => lines.map((l) => JSON.parse(l));
  return { trigger: parse(trigger), worker: parse(worker) };
}

/** What `write` printed to stdout while it ran, one entry per write. */
async function captureStdoutAsync(write: () => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await write();
  } finally {
    vi.mocked(process.stdout.write).mockRestore();
  }
  return lines;
}

describe('worker log lines', () => {
  it('carry jobId, scheduledTime, leaseId and attempt on every line of an attempt, even with two occurrences in one batch', async () => {
    h = makeHarness({ jobs: { report: flakyJob(1, 2_000), other: timedJob(3_000) } });
    const otherKey = { jobId: 'other', scheduledTime: '2026-11-30T07:00:00Z' };
    await h.trigger(KEY);
    await h.trigger(otherKey);
    const batch = h.worker(
      sqsEvent([
        { messageId: 'a', body: MESSAGE },
        { messageId: 'b', body: encodeEnvelope(otherKey) },
      ]),
      lambdaContext(150_000),
    );
    await vi.advanceTimersByTimeAsync(3_000);
    expect((await batch).batchItemFailures).toEqual([{ itemIdentifier: 'a' }]); // hidden until its retry

    const attemptLines = h.logs.filter((l: LogLine) => l.fields.leaseId !== undefined);
    expect(attemptLines.map((l) => l.message)).toEqual(
      expect.arrayContaining([
        'claimed occurrence',
        'attempt failed; retry scheduled',
        'report committed',
        'occurrence SUCCEEDED',
      ]),
    );
    for (const line of attemptLines) {
      const expected =
        line.fields.jobId === 'report'
          ? { ...KEY, leaseId: h.aws.row('report', SCHEDULED)!.leaseId, attempt: 1 }
          : { ...otherKey, leaseId: h.aws.row('other', otherKey.scheduledTime)!.leaseId, attempt: 1 };
      expect(line.fields, line.message).toMatchObject(expected);
    }
  });
});

/** What `write` printed to stdout, one entry per write. */
function captureStdout(write: (lines: readonly string[]) => void): string[] {
  const lines: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    write(lines);
  } finally {
    vi.mocked(process.stdout.write).mockRestore();
  }
  return lines;
}

describe('the Powertools adapters', () => {
  it("buffer the values of an invocation and write one EMF line of the function's own dimensions at flush", () => {
    const lines = captureStdout((written) => {
      const metrics = powertoolsMetrics({ namespace: 'ScheduledJobs/Test', dimensions: { worker: 'exports' } });
      metrics.add('OccurrencesStarted', 1, 'report');
      metrics.add('JobDuration', 1_234, 'report');
      metrics.add('JobDuration', 2_000, 'other');
      metrics.add('OccurrencesSucceeded', 1, 'report');
      metrics.add('OccurrencesSucceeded', 1, 'other');
      expect(written).toEqual([]); // nothing before the flush
      metrics.flush();
      metrics.flush(); // a second flush with nothing buffered writes nothing
    });
    const emf = lines.map((l) => JSON.parse(l));
    expect(emf).toHaveLength(1);
    expect(emf[0]).toMatchObject({
      service: 'scheduled-jobs',
      worker: 'exports',
      OccurrencesStarted: 1,
      JobDuration: [1_234, 2_000],
      OccurrencesSucceeded: [1, 1],
    });
    expect(emf[0].jobId).toBeUndefined();
    expect(emf[0]._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'ScheduledJobs/Test',
        Dimensions: [['service', 'worker']],
        Metrics: expect.arrayContaining([{ Name: 'JobDuration', Unit: 'Milliseconds' }]),
      },
    ]);
  });

  it('write { service, jobId } only for the jobs that opted in, one more line each', () => {
    const lines = captureStdout(() => {
      const metrics = powertoolsMetrics({
        namespace: 'ScheduledJobs/Test',
        dimensions: { component: 'trigger' },
        perJob: (jobId) => jobId === 'detailed',
      });
      metrics.add('OccurrencesMissed', 1, 'detailed');
      metrics.add('OccurrencesMissed', 1, 'plain');
      metrics.flush();
    });
    const emf = lines.map((l) => JSON.parse(l));
    expect(emf.map((e) => e._aws.CloudWatchMetrics[0].Dimensions)).toEqual([
      [['service', 'component']],
      [['service', 'jobId']],
    ]);
    expect(emf[0]).toMatchObject({ component: 'trigger', OccurrencesMissed: [1, 1] });
    expect(emf[1]).toMatchObject({ jobId: 'detailed', OccurrencesMissed: 1 });
  });

  it('log JSON lines with the fields of each call, and no key carried over from another call', () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const logger = powertoolsLogger('worker');
    logger.info('claimed occurrence', { jobId: 'a', leaseId: 'l1', attempt: 1 });
    logger.warn('other line', { jobId: 'b' });
    vi.mocked(process.stdout.write).mockRestore();
    vi.mocked(process.stderr.write).mockRestore();
    const [first, second] = lines.map((l) => JSON.parse(l));
    expect(first).toMatchObject({
      level: 'INFO',
      message: 'claimed occurrence',
      service: 'scheduled-jobs',
      fn: 'worker',
      jobId: 'a',
      leaseId: 'l1',
      attempt: 1,
    });
    expect(second).toMatchObject({ level: 'WARN', jobId: 'b' });
    expect(second.leaseId).toBeUndefined();
  });

  it.each([
    ['INFO', ['INFO']],
    ['DEBUG', ['DEBUG', 'INFO']],
  ])("log at the level Lambda's applicationLogLevelV2 sets (AWS_LAMBDA_LOG_LEVEL %s)", (level, written) => {
    vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', level);
    const lines = captureStdout(() => {
      const logger = powertoolsLogger('worker');
      logger.debug?.('claimed occurrence', { jobId: 'a' });
      logger.info('occurrence SUCCEEDED', { jobId: 'a' });
    });
    vi.unstubAllEnvs();
    expect(lines.map((l) => JSON.parse(l).level)).toEqual(written);
  });

  it("stay silent on stdout when a logger is injected and no metrics are: a local run's output is its own", async () => {
    const writes: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    const logs: LogLine[] = [];
    const settings = new Map([['report', withDefaults({ id: 'report' })]]);
    try {
      const worker = createWorkerHandler({
        jobs: { report: timedJob(1) },
        settings,
        logger: captureLogger(logs),
        store: {} as never,
        slots: {} as never,
        reports: {} as never,
        queue: { send: async () => {}, hide: async () => {} },
      });
      const trigger = createTriggerHandler({
        queues: new Map([['w', {} as never]]),
        logger: captureLogger(logs),
        store: { create: async () => ({ created: false, existing: { status: 'SUCCEEDED' } }) } as never,
      });
      expect(await trigger({ ...KEY, worker: 'w', deadlineSeconds: 3_600, retentionDays: 7 })).toBe(
        'duplicate-suppressed',
      );
      expect(await worker(sqsEvent([{ messageId: 'bad', body: 'not json' }]), lambdaContext(10_000))).toEqual({
        batchItemFailures: [{ itemIdentifier: 'bad' }],
      });
    } finally {
      vi.mocked(process.stdout.write).mockRestore();
    }
    expect(writes).toEqual([]);
    expect(logs.some((l) => l.message === 'duplicate trigger suppressed')).toBe(true);
  });
});
