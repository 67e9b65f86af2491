import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { testTiers } from './test/tiers.mjs';

// The two tiers (test/tiers.mts): `vitest run` runs both, `vitest run --project fast` the inner loop's.
const tiers = testTiers(fileURLToPath(new URL('.', import.meta.url)));

const shared = {
  setupFiles: ['test/setup.ts'],
  environment: 'node',
  // A bound on a hang, not on speed: CI runs on the developer's own shared two-core machine, under whatever load it has
  // (a synth with bundling, moto and Chromium take minutes there at a load of 20). No test times itself against the
  // wall, so no test sets a shorter limit of its own.
  testTimeout: 300_000,
  hookTimeout: 600_000,
  restoreMocks: true,
  // The SDK warns once per worker thread that its 2027 releases need Node 22; the README says so once instead.
  env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: 'fast',
          include: tiers.fast,
          // Vitest's default is one worker fewer than the cores: on two cores, one file at a time. The fast tier's
          // files keep no state outside their worker and time nothing against the wall, so both cores run them.
          maxWorkers: 2,
          // Vitest runs projects with different worker counts as groups, one after the other: the fast one first.
          sequence: { groupOrder: 0 },
          // Synth without bundling (every App reads the context from here): the fast tier checks templates, not
          // bundles; the slow tier's cdk synth and package tests bundle every function.
          env: { ...shared.env, CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [] }) },
          setupFiles: [...shared.setupFiles, 'test/fast-tier-setup.ts'],
        },
      },
      { test: { ...shared, name: 'slow', include: tiers.slow, sequence: { groupOrder: 1 } } },
    ],
  },
});
