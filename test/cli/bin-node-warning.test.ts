/**
 * The package bin (bin/occurrences/bin.cjs) silences the AWS SDK's NodeVersionSupportWarning, which on Node 20 would
 * follow every `npx occurrences` call with eight lines on stderr. Installed, the bin runs dist/bin/occurrences.js; here
 * a stand-in for it calls the SDK's own check (@aws-sdk/core's emitWarningIfUnsupportedVersion, which every client's
 * constructor calls) as if on Node 20, so that the test fails if the SDK's switch or the bin's setting of it changes.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'occurrences', 'bin.cjs');
const SDK_CORE = require.resolve('@aws-sdk/core/client', { paths: [require.resolve('@aws-sdk/client-dynamodb')] });

let pkg: string;

/** An installed package's layout: the bin and a compiled CLI, no bin/occurrences.ts beside it. */
beforeAll(() => {
  pkg = mkdtempSync(path.join(tmpdir(), 'occurrences-bin-'));
  mkdirSync(path.join(pkg, 'bin', 'occurrences'), { recursive: true });
  mkdirSync(path.join(pkg, 'dist', 'bin'), { recursive: true });
  copyFileSync(BIN, path.join(pkg, 'bin', 'occurrences', 'bin.cjs'));
  writeFileSync(
    path.join(pkg, 'dist', 'bin', 'occurrences.js'),
    `require(${JSON.stringify(SDK_CORE)}).emitWarningIfUnsupportedVersion('v20.20.2');\nconsole.log('cli ran');\n`,
  );
});

afterAll(() => rmSync(pkg, { recursive: true, force: true }));

function runNode(file: string) {
  const env = { ...process.env };
  delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
  delete env.NODE_OPTIONS;
  return spawnSync(process.execPath, [file], { env, encoding: 'utf8' });
}

describe('bin/occurrences/bin.cjs and the SDK notice about Node 20', () => {
  it('runs the compiled CLI without the NodeVersionSupportWarning on stderr', () => {
    const result = runNode(path.join(pkg, 'bin', 'occurrences', 'bin.cjs'));

    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe('cli ran\n');
    expect(result.stderr).not.toContain('NodeVersionSupportWarning');
  });

  it('the SDK prints it when the CLI is loaded without the bin (what the bin prevents)', () => {
    const result = runNode(path.join(pkg, 'dist', 'bin', 'occurrences.js'));

    expect(result.status).toBe(0);
    expect(result.stderr).toContain('NodeVersionSupportWarning');
  });
});
