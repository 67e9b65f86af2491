/**
 * A Logger (functions/protocol/ports.ts) that keeps what it is given: what a job logs under testJob, to assert on.
 */
import type { LogFields, Logger } from '../functions/protocol/ports';

/** The Logger method an entry was logged with. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One call of the logger, as recorded. */
export interface LogEntry {
  /** The method it was logged with. */
  readonly level: LogLevel;
  /** The message as given. */
  readonly message: string;
  /** The fields as given (an empty object when none were). */
  readonly fields: LogFields;
  /** Epoch ms, from the recording logger's clock. */
  readonly at: number;
}

/** A Logger that keeps every entry it is given, to assert on. */
export interface RecordingLogger extends Logger {
  /** Every entry so far, oldest first. The array grows as the job logs. */
  readonly entries: readonly LogEntry[];
}

/**
 * A logger that records each entry, for a job's tests.
 *
 * @param clock - where each entry's time comes from. Default: the system clock.
 *
 * @example
 * ```ts
 * const logger = recordingLogger();
 * await expect(testJob(job, { logger })).rejects.toThrow('upstream down');
 * expect(logger.entries.map((e) => e.message)).toContain('fetching orders');
 * ```
 */
export function recordingLogger(clock: { now(): number } = Date): RecordingLogger {
  const entries: LogEntry[] = [];
  const record = (level: LogLevel) => (message: string, fields?: LogFields) => {
    entries.push({ level, message, fields: { ...fields }, at: clock.now() });
  };
  return { entries, debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
}
