/**
 * Runs one job's `run` the way the worker does, without AWS: a RUNNING occurrence, a real AbortSignal (aborted on
 * request, to test that the job stops), a logger that records. What the worker does around it (the claim, the lease
 * heartbeats, the write-once commit of the report, the retries) is the package's part and tested there.
 */
import { setMaxListeners } from 'node:events';
import { checkJobDefinition } from '../functions/check-job-definition';
import type { JobHandler } from '../functions/index';
import { JobTimeoutError } from '../functions/protocol/errors';
import { JOB_SIGNAL_MAX_LISTENERS } from '../functions/protocol/lease-guard';
import { iso, isoSeconds, type Occurrence } from '../functions/protocol/occurrence';
import type { Clock, JobDefinition, Logger, ReportBody } from '../functions/protocol/ports';
import { quoteValue } from '../functions/protocol/quote-value';
import { detachedRunContext } from '../functions/protocol/resumable-run';
import { JobDidNotStopError } from './errors';
import { type FakeOccurrenceFields, fakeOccurrence } from './fake-occurrence';
import { type LogEntry, recordingLogger } from './recording-logger';

/** How testJob runs the job: the occurrence it gets, when its signal aborts, the logger it logs to. */
export interface TestJobOptions {
  /** The occurrence to run, or fields laid over fakeOccurrence()'s. Default: fakeOccurrence() (at the clock's time). */
  readonly occurrence?: FakeOccurrenceFields;
  /** Abort the job's signal this long after `run` starts, with a JobTimeoutError as the worker's time limit does. */
  readonly abortAfterMs?: number;
  /** Abort the job's signal when this one aborts (with its reason): to abort at a moment the test chooses. */
  readonly signal?: AbortSignal;
  /** After an abort, how long the job may take to settle before testJob fails with JobDidNotStopError. */
  readonly stopWithinMs?: number;
  /**
   * The time of the default occurrence (its scheduled time is the clock's, to the second) and of the log entries.
   * Default: the real clock for the log entries and the fixed FAKE_SCHEDULED_TIME for the occurrence.
   */
  readonly clock?: Clock;
  /** Also given every entry (a recordingLogger() of the test's own keeps them when the job throws). */
  readonly logger?: Logger;
}

// CompletedRun and AbortedRun each list the fields they share (occurrence, logs, durationMs) rather than extend an
// interface of them: the published declarations then name nothing the entry point does not export.

/** A run that was not aborted: its report (a run that threw makes testJob reject with the job's error). */
export interface CompletedRun {
  /** The occurrence the job ran. */
  readonly occurrence: Occurrence;
  /** What the job logged, oldest first. */
  readonly logs: readonly LogEntry[];
  /** Real time from the start of `run` until it settled. */
  readonly durationMs: number;
  /** Always false: the signal was not aborted. */
  readonly aborted: false;
  /** The report the job returned. */
  readonly report: ReportBody;
}

/** A run whose signal was aborted, and that then stopped. */
export interface AbortedRun {
  /** The occurrence the job ran. */
  readonly occurrence: Occurrence;
  /** What the job logged, oldest first. */
  readonly logs: readonly LogEntry[];
  /** Real time from the start of `run` until it settled. */
  readonly durationMs: number;
  /** Always true: the signal was aborted (`abortAfterMs` or the caller's `signal`). */
  readonly aborted: true;
  /** Set when the job returned a report after the abort anyway: the worker would not commit it. */
  readonly report?: ReportBody;
  /** What the job rejected with after the abort (usually the signal's reason). */
  readonly error?: unknown;
}

/** What testJob gives back: a completed run, or one whose signal was aborted (`aborted: true`). */
export type TestJobResult = CompletedRun | AbortedRun;

export const DEFAULT_STOP_WITHIN_MS = 1_000;

/**
 * Run a job once, as the worker would, and return its report and what it logged.
 *
 * @param job - a JobDefinition, or the handler `defineJob` returns.
 * @param options - the occurrence the job gets (a fakeOccurrence with these fields), a logger, when to abort.
 * @returns the report and the log entries; rejects with the job's own error when `run` throws.
 * @throws JobDidNotStopError when the job's signal was aborted and `run` had not settled `stopWithinMs` later.
 *
 * @example
 * ```ts
 * import { testJob } from 'scheduled-jobs-stack/testing';
 * import { handler } from '../src/jobs/daily-digest';
 *
 * const { report, logs } = await testJob(handler, { occurrence: { scheduledTime: '2026-11-30T06:00:00Z' } });
 * expect(report.contentType).toBe('text/markdown; charset=utf-8');
 *
 * const { aborted, error } = await testJob(handler, { abortAfterMs: 50 });
 * expect(aborted).toBe(true); // and the job stopped within stopWithinMs (1 s by default)
 * ```
 */
export function testJob(
  job: JobDefinition | JobHandler,
  options?: TestJobOptions & { readonly abortAfterMs?: undefined; readonly signal?: undefined },
): Promise<CompletedRun>;
/** Run a job once with options that may abort it (`abortAfterMs`, `signal`): the result says whether it was aborted. */
export function testJob(job: JobDefinition | JobHandler, options: TestJobOptions): Promise<TestJobResult>;
export async function testJob(job: JobDefinition | JobHandler, options: TestJobOptions = {}): Promise<TestJobResult> {
  const definition = definitionOf(job);
  const { abortAfterMs, stopWithinMs = DEFAULT_STOP_WITHIN_MS } = options;
  if (abortAfterMs !== undefined && !(Number.isFinite(abortAfterMs) && abortAfterMs >= 0))
    throw new TypeError(`testJob: abortAfterMs must be a number of milliseconds, got ${quoteValue(abortAfterMs)}`);
  if (!(Number.isFinite(stopWithinMs) && stopWithinMs >= 0))
    throw new TypeError(`testJob: stopWithinMs must be a number of milliseconds, got ${quoteValue(stopWithinMs)}`);
  const clock = options.clock;
  const occurrence = fakeOccurrence({
    ...(clock === undefined ? {} : { scheduledTime: isoSeconds(clock.now()) }),
    ...options.occurrence,
  });
  const recorder = recordingLogger(clock ?? Date);
  const logger = options.logger === undefined ? recorder : tee(recorder, options.logger);

  const controller = new AbortController();
  setMaxListeners(JOB_SIGNAL_MAX_LISTENERS, controller.signal);
  const timers: ReturnType<typeof setTimeout>[] = [];
  const started = performance.now();
  let abortedAfterMs = 0;
  const stopDeadline = new Promise<'did-not-stop'>((resolve) => {
    controller.signal.addEventListener(
      'abort',
      () => {
        abortedAfterMs = Math.round(performance.now() - started);
        timers.push(setTimeout(() => resolve('did-not-stop'), stopWithinMs));
      },
      { once: true },
    );
  });
  const onOuterAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) onOuterAbort();
  else options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  if (abortAfterMs !== undefined) {
    timers.push(setTimeout(() => controller.abort(new JobTimeoutError(iso((clock ?? Date).now()))), abortAfterMs));
  }

  // A run that throws before its first await is a rejection too, as it is for the worker.
  const settled = Promise.resolve()
    .then(() => definition.run(occurrence, { ...detachedRunContext(), signal: controller.signal, logger }))
    .then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
  const outcome = await Promise.race([settled, stopDeadline]).finally(() => {
    for (const timer of timers) clearTimeout(timer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  });
  if (outcome === 'did-not-stop') throw new JobDidNotStopError(abortedAfterMs, stopWithinMs);
  const common = { occurrence, logs: recorder.entries, durationMs: performance.now() - started };
  if (controller.signal.aborted) {
    return outcome.ok
      ? { ...common, aborted: true, report: checkReport(outcome.value) }
      : { ...common, aborted: true, error: outcome.error };
  }
  if (!outcome.ok) throw outcome.error;
  return { ...common, aborted: false, report: checkReport(outcome.value) };
}

/** The definition of a job or of defineJob's handler, checked by the runtime's own rule (defineJob's). */
function definitionOf(job: unknown): JobDefinition {
  let definition = job;
  if (typeof job === 'function') {
    definition = (job as Partial<JobHandler>).definition;
    if (definition === undefined)
      throw new TypeError(
        'testJob: got a function without a job definition; a worker handler from defineWorker runs several jobs: ' +
          'pass one of its jobs (the definition, or the handler defineJob returns)',
      );
  }
  checkJobDefinition(definition as JobDefinition, 'testJob');
  return definition as JobDefinition;
}

/** What the worker commits: a body of text or bytes, and its content type. */
function checkReport(report: unknown): ReportBody {
  const r = report as Partial<ReportBody> | undefined;
  const bodyOk = typeof r?.body === 'string' || r?.body instanceof Uint8Array;
  if (typeof r !== 'object' || r === null || !bodyOk || typeof r.contentType !== 'string' || r.contentType === '')
    throw new TypeError(
      `testJob: run resolved to ${quoteValue(report)}; a job returns its report as { body: string | Uint8Array, contentType: string }`,
    );
  return r as ReportBody;
}

function tee(first: Logger, second: Logger): Logger {
  const both =
    (level: keyof Logger): NonNullable<Logger[keyof Logger]> =>
    (message, fields) => {
      first[level]?.(message, fields);
      second[level]?.(message, fields);
    };
  return { debug: both('debug'), info: both('info'), warn: both('warn'), error: both('error') };
}
