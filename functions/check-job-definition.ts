/**
 * The shape check of a job definition, shared by defineJob and defineWorker (functions/index.ts) and the test kit's
 * testJob (testing/test-job.ts). Its own module, so that it is no part of the runtime entry point's API.
 */
import type { JobDefinition } from './protocol/ports';

/**
 * Whether a value is a job definition, with `where` in the message. Fails at import (in the user's tests and at the
 * first cold start) rather than on the first message; testing/ uses the same rule.
 */
export function checkJobDefinition(definition: JobDefinition, where: string): void {
  if (typeof definition !== 'object' || definition === null || typeof definition.run !== 'function')
    throw new TypeError(`${where}: a job is an object with run(occurrence, { signal, logger })`);
  if (typeof definition.reportExtension !== 'string' || !/^[A-Za-z0-9]{1,16}$/.test(definition.reportExtension))
    throw new TypeError(
      `${where}.reportExtension: must be 1-16 letters or digits such as 'md' or 'json', got ${JSON.stringify(definition.reportExtension)}`,
    );
}
