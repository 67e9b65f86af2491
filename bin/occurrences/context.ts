/**
 * What every command gets: where to write, the clock, and the job configuration (bin/jobs.ts, the file the stack is
 * deployed from). Injected, so that tests run the commands with their own clock and capture the output.
 */

import type { JobSettings } from '../../functions/protocol/job-settings';
import type { Clock } from '../../functions/protocol/ports';
import type { ResolvedJobConfig } from '../../lib/job-config';

export interface Output {
  /** One piece of the result, on stdout. */
  out(text: string): void;
  /** Progress and explanations, on stderr, so that stdout stays parseable. */
  err(text: string): void;
}

export interface CommandContext {
  readonly io: Output;
  readonly clock: Clock;
  readonly jobs: readonly ResolvedJobConfig[];
  /** Report file extension by job id (functions/jobs), to say where a report will be committed. */
  readonly reportExtensions: Readonly<Record<string, string>>;
}

export function settingsById(jobs: readonly ResolvedJobConfig[]): ReadonlyMap<string, JobSettings> {
  return new Map(jobs.map((j) => [j.settings.id, j.settings]));
}
