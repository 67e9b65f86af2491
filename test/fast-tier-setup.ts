/**
 * Set-up of the fast tier's files (test/tiers.mts): starting moto fails there. A file that starts it through a helper
 * test/tiers.mts does not recognise would otherwise run in the fast tier and make it slow; here it fails and says why.
 * Applies to `npm test` too, where the fast tier runs beside the slow one.
 */
import { vi } from 'vitest';

vi.mock('../testing/local/moto-server', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../testing/local/moto-server')>()),
  startMotoServer: async () => {
    throw new Error(
      'This test file starts moto, but test/tiers.mts put it in the fast tier: name the helper that starts moto in ' +
        'SLOW_NEEDS.moto (test/tiers.mts), so that the file runs in the slow tier.',
    );
  },
}));
