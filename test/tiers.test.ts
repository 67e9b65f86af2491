import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { slowNeeds, testTiers } from './tiers.mjs';

const ROOT = path.resolve(__dirname, '..');
const needsOf = (file: string) => slowNeeds(readFileSync(path.join(ROOT, file), 'utf8'));

describe('the test tiers (test/tiers.mts)', () => {
  const { fast, slow } = testTiers(ROOT);

  it('recognises what a file needs by the helper it calls, whichever of them it is', () => {
    expect(needsOf('test/integration/exactly-once.test.ts')).toEqual(['moto']); // through useMoto
    expect(needsOf('test/integration/status-index.test.ts')).toEqual(['moto']); // starts it itself
    expect(needsOf('test/cli/read-commands.test.ts')).toEqual(['moto']); // through useCliEmulator
    expect(needsOf('test/bench/requests-on-moto.test.ts')).toEqual(['moto']); // through the BenchSession
    expect(needsOf('test/package/pack.test.ts')).toEqual(['a packed tarball']);
    expect(needsOf('test/lib/app-synth.test.ts')).toEqual(['the cdk CLI']);
    expect(needsOf('test/cli/local-run.test.ts')).toEqual(['moto']); // runLocally starts one when given none
    // Importing the moto module (for a type, or for ensureMotoServer) is not starting moto.
    expect(needsOf('test/scripts/local-driver.test.ts')).toEqual([]);
  });

  it('puts every file of test/integration and test/package in the slow tier', () => {
    expect(slow.some((file) => file.startsWith('test/integration/'))).toBe(true);
    expect(fast.filter((file) => /^test\/(integration|package)\//.test(file))).toEqual([]);
  });

  it('keeps the protocol, the simulation, the synths in-process and the CLI without moto in the fast tier', () => {
    expect(fast).toEqual(
      expect.arrayContaining([
        'test/protocol/process-delivery.test.ts',
        'test/sim/invariants.property.test.ts',
        'test/lib/scheduled-jobs.test.ts',
        'test/cli/arguments.test.ts',
        'test/tiers.test.ts',
      ]),
    );
  });
});
