/** The runtime API a worker's entry file uses (functions/index.ts): defineJob and defineWorker. */
import { afterEach, describe, expect, it } from 'vitest';
import { defineJob, defineWorker } from '../../functions/index';
import { ENV } from '../../functions/runtime-env';
import { lambdaContext, sqsEvent } from '../support/harness';

const digest = { reportExtension: 'md', run: async () => ({ body: '# hi', contentType: 'text/markdown' }) };

afterEach(() => {
  delete process.env[ENV.jobSettings];
});

describe('defineJob', () => {
  it('is a handler that carries its definition, so defineWorker can take it', () => {
    const handler = defineJob(digest);
    expect(typeof handler).toBe('function');
    expect(handler.definition).toBe(digest);
  });

  it('touches neither the environment nor AWS when the file is imported, only on the first invocation', async () => {
    const handler = defineJob(digest);
    process.env[ENV.jobSettings] = JSON.stringify([{ id: 'a' }, { id: 'b' }]);
    await expect(handler(sqsEvent([]), lambdaContext(10_000))).rejects.toThrow(
      /defineJob runs exactly one job, but this worker has 2 \(a, b\); export defineWorker/,
    );
  });

  it.each<[string, unknown, RegExp]>([
    ['not an object', 42, /defineJob: a job is an object with run/],
    ['no run', { reportExtension: 'md' }, /defineJob: a job is an object with run/],
    [
      'a bad extension',
      { reportExtension: '.md', run: async () => ({}) },
      /defineJob\.reportExtension: must be 1-16 letters or digits/,
    ],
  ])('rejects %s at import', (_, definition, message) => {
    expect(() => defineJob(definition as never)).toThrow(message);
  });
});

describe('defineWorker', () => {
  it('takes definitions and defineJob handlers, and names the job of a bad one', () => {
    expect(() => defineWorker({ jobs: { a: digest, b: defineJob(digest) } })).not.toThrow();
    expect(() => defineWorker({ jobs: { a: digest, broken: { reportExtension: 'md' } as never } })).toThrow(
      /defineWorker: jobs\.broken: a job is an object with run/,
    );
  });
});
