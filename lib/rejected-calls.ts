/**
 * The `addJob` and `addWorker` calls a ScheduledJobs rejected, kept until synthesis so that one synth reports every
 * mistake of the app together (a shared-settings object spread into ten jobs gives ten problems, not the first), each
 * with the line of the app that made the call. Nothing is bundled before then (deferred-bundling.ts), so the report
 * comes in the time the app takes to construct, not after a minute of esbuild.
 */
import * as path from 'node:path';
import { ValidationError } from './errors';

interface RejectedCall {
  readonly problems: readonly string[];
  /** The stack trace from the app's call on (captured at the call, without this package's frames). */
  readonly stack: string;
}

/** The first frame of a stack trace: the app's `file:line:column` that made the call. */
function callSite(stack: string): string | undefined {
  const frame = stack.split('\n').find((line) => line.trim().startsWith('at '));
  const location = frame?.trim().match(/\(?([^()\s]+:\d+:\d+)\)?$/)?.[1];
  if (location === undefined) return undefined;
  const file = location.replace(/^file:\/\//, '');
  const relative = path.relative(process.cwd(), file);
  return relative.startsWith('..') ? file : relative;
}

/** What a ScheduledJobs rejected so far; `error()` is the one ValidationError its validation throws at synth. */
export class RejectedCalls {
  private readonly calls: RejectedCall[] = [];

  /**
   * Keeps `error`'s problems with the app's line: `method` is the public method the app called (addJob, addWorker),
   * whose frames and below are left out of the captured stack.
   */
  record(error: ValidationError, method: (...args: never[]) => unknown): void {
    // A call rejected only for naming a rejected worker adds nothing: that worker's call has its problems.
    if (error.problems.length === 0) return;
    const holder: { stack?: string } = {};
    Error.captureStackTrace(holder, method);
    const stack = holder.stack ?? '';
    const site = callSite(stack);
    const problems = error.problems.map((problem) => (site === undefined ? problem : `${problem} (at ${site})`));
    this.calls.push({ problems, stack });
  }

  get size(): number {
    return this.calls.length;
  }

  /** Every problem of every rejected call, in the order of the calls; its stack trace starts at the first one. */
  error(): ValidationError {
    const error = new ValidationError(this.calls.flatMap((call) => call.problems));
    const frames = this.calls[0]?.stack.split('\n').slice(1) ?? [];
    error.stack = [`${error.name}: ${error.message}`, ...frames].join('\n');
    return error;
  }
}
