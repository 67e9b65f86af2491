/**
 * The errors testing/ throws on purpose, one family under TestingError, each class naming itself with a string
 * literal (the name survives bundling and minification) and carrying its context. Bad arguments are TypeErrors, as
 * in the runtime API (functions/index.ts); these are the failures of a run.
 */

/** The base of every error testing/ throws on purpose other than a TypeError for a bad argument. */
export abstract class TestingError extends Error {
  /** The subclass's name, a string literal in each subclass. */
  abstract override readonly name: string;
}

/** testJob aborted the job's signal and the job's run had not settled this long after. */
export class JobDidNotStopError extends TestingError {
  /** Always `'JobDidNotStopError'`. */
  override readonly name = 'JobDidNotStopError';

  constructor(
    /** How long after the run's start testJob aborted the signal, in milliseconds. */
    readonly abortedAfterMs: number,
    /** How long testJob waited for the run to settle after the abort, in milliseconds. */
    readonly stopWithinMs: number,
  ) {
    super(
      `the job did not stop within ${stopWithinMs} ms of its signal's abort (aborted after ${abortedAfterMs} ms); ` +
        "a job should pass its signal to every call that waits, or check signal.aborted between steps: the worker moves on at once and the job's late work is lost",
    );
  }
}

/** A cloud assembly (cdk.out) or its template that the local runner cannot read or cannot run as it is. */
export class AssemblyError extends TestingError {
  /** Always `'AssemblyError'`. */
  override readonly name = 'AssemblyError';

  constructor(
    /** The cloud assembly folder that was read. */
    readonly assemblyDir: string,
    /** Every problem found, each in a sentence. */
    readonly problems: readonly string[],
  ) {
    super(problems.length === 1 ? `${assemblyDir}: ${problems[0]}` : `${assemblyDir}:\n  - ${problems.join('\n  - ')}`);
  }
}

/** checkWorkerJobs found jobs that their worker's entry does not implement (or an entry it could not load). */
export class WorkerJobsError extends TestingError {
  /** Always `'WorkerJobsError'`. */
  override readonly name = 'WorkerJobsError';

  constructor(
    /** Every problem, each naming the job or the worker and the entry file. */
    readonly problems: readonly string[],
  ) {
    super(`jobs that their worker does not implement:\n  - ${problems.join('\n  - ')}`);
  }
}
