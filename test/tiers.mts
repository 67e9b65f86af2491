/**
 * The suite's two tiers. `npm test` runs both; `npm run test:fast` runs the fast one, for the inner loop.
 *
 * A test file is slow when it needs something slow, recognised by what its source calls: moto (the AWS emulator:
 * each such file starts its own moto_server), a packed and installed tarball, or the cdk CLI (which bundles the
 * functions with esbuild). Everything else is fast: the protocol, the handlers and stores on fakes or mocked
 * clients, the simulation's tests, the CDK constructs synthesized in-process, the CLI without moto.
 * The fast tier's setup (fast-tier-setup.ts) makes starting moto fail, so a fast file that starts it through a
 * helper not named here fails loudly instead of slowing the tier.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** What puts a file in the slow tier, and the calls that say it needs it. */
export const SLOW_NEEDS: Readonly<Record<string, RegExp>> = {
  moto: /\b(startMotoServer|useMoto|useCliEmulator|runLocally|useBenchSession)\(|\bBenchSession\.start\(/,
  'a packed tarball': /\b(packTarball|packAndInstall)\(/,
  'the cdk CLI': /['"]cdk['"],\s*\[?['"]synth['"]/,
  'a browser': /\blaunchBrowser\(/,
};

/** The slow things a test file's source needs; none: it is fast. */
export function slowNeeds(source: string): string[] {
  return Object.entries(SLOW_NEEDS)
    .filter(([, calls]) => calls.test(source))
    .map(([need]) => need);
}

export interface TestTiers {
  /** Paths relative to the repository root, `test/...`, sorted. */
  readonly fast: string[];
  readonly slow: string[];
}

/** Every `*.test.ts` under `<root>/test`, in exactly one tier. */
export function testTiers(root: string): TestTiers {
  const fast: string[] = [];
  const slow: string[] = [];
  for (const file of testFiles(root)) {
    const source = readFileSync(path.join(root, file), 'utf8');
    (slowNeeds(source).length > 0 ? slow : fast).push(file);
  }
  return { fast, slow };
}

function testFiles(root: string): string[] {
  return readdirSync(path.join(root, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => path.posix.join('test', ...file.split(path.sep)))
    .sort();
}
