import { describe, expect, it } from 'vitest';
import { CREDENTIAL_CHAIN, JOB_FUNCTION_BUNDLING, withStackBundling } from '../../lib/job-function';

describe("a function's bundling over the stack's", () => {
  it("keeps the stack's options and esbuild conditions where the function gives none", () => {
    expect(withStackBundling()).toEqual(JOB_FUNCTION_BUNDLING);
  });

  it("adds a worker's own esbuild arguments and conditions to the stack's instead of dropping them", () => {
    const bundling = withStackBundling({
      minify: false,
      esbuildArgs: { '--conditions': 'my-app', '--log-limit': '0' },
    });
    expect(bundling).toMatchObject({ minify: false, sourceMap: true, bundleAwsSDK: true });
    expect(bundling.esbuildArgs).toEqual({
      '--conditions': 'scheduled-jobs-source,module,my-app',
      '--log-limit': '0',
      // A worker's bundle drops the SDK's credential chain beyond the environment's too.
      [`--alias:${CREDENTIAL_CHAIN}`]: expect.stringMatching(/functions\/aws\/env-credentials\.ts$/),
    });
  });
});
