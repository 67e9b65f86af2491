/**
 * The errors of the CDK side: one family, each class setting `name`, so that `instanceof LibError` tells a problem
 * found at synth from a bug, and the name survives in logs and stack traces.
 */

/** The base of every error lib/ throws on purpose. */
export abstract class LibError extends Error {
  constructor(message: string) {
    super(message);
    // The subclass's name by default; each subclass also declares its own, which survives minification.
    this.name = new.target.name;
  }
}

/** A job configuration that would not deploy or would not run: every problem at once, each naming `jobs[i].field`. */
export class JobConfigError extends LibError {
  override readonly name = 'JobConfigError';

  constructor(readonly problems: readonly string[]) {
    super(`invalid job configuration:\n  - ${problems.join('\n  - ')}`);
  }
}
