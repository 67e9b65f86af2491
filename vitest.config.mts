import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    environment: 'node',
    // Synthesizing the stack bundles three functions with esbuild; give those tests room on a shared machine.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    restoreMocks: true,
    // The SDK warns once per worker thread that its 2027 releases need Node 22; the README says so once instead.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
