/**
 * The GitHub workflows do what CONTRIBUTING.md says: CI runs .ci/run (the whole of CI, as a contributor runs it) on
 * every push and pull request, and a release runs it again before publishing with provenance. Read as text: the
 * repository has no YAML parser, and each check is a line the workflow must keep.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..', '..');
const workflow = (name: string) => readFileSync(path.join(ROOT, '.github', 'workflows', name), 'utf8');

/** The value of `key:` on its own line, wherever it is nested. */
function values(yaml: string, key: string): string[] {
  return [...yaml.matchAll(new RegExp(`^\\s*-?\\s*${key}:\\s*(.*?)\\s*(#.*)?$`, 'gm'))].map((m) => m[1]);
}

describe('.github/workflows/ci.yml', () => {
  const ci = workflow('ci.yml');

  it('runs on every push and pull request, on Node 20', () => {
    expect(ci).toMatch(/^on:\n(?:\s+.*\n)*?\s+push:/m);
    expect(ci).toMatch(/^on:\n(?:\s+.*\n)*?\s+pull_request:/m);
    expect(values(ci, 'node-version')).toEqual(['20']);
  });

  it('installs what .ci/run expects on the PATH, then runs .ci/run with CI=true', () => {
    expect(values(ci, 'run')).toEqual(['pip install cfn-lint "moto[server]"', 'bash .ci/run']);
    expect(values(ci, 'CI')).toEqual(['"true"']);
  });
});

describe('.github/workflows/release.yml', () => {
  const release = workflow('release.yml');

  it('runs on a published release with the OIDC token provenance needs and nothing more', () => {
    expect(release).toMatch(/^on:\n\s+release:\n\s+types: \[published\]/m);
    expect(values(release, 'id-token')).toEqual(['write']);
    expect(values(release, 'contents')).toEqual(['read']);
  });

  it('runs the whole of CI before it publishes, with provenance, to the npm registry', () => {
    const runs = values(release, 'run');
    const ci = runs.indexOf('bash .ci/run');
    const publish = runs.indexOf('npm publish --provenance --access public');
    expect(runs.indexOf('npm ci')).toBeGreaterThanOrEqual(0);
    expect(ci).toBeGreaterThan(runs.indexOf('npm ci'));
    expect(publish).toBeGreaterThan(ci);
    expect(values(release, 'registry-url')).toEqual(['https://registry.npmjs.org']);
    // The GitHub expression, written as '$' + '{{': a dollar and a brace in a plain string read as a template slip.
    expect(values(release, 'NODE_AUTH_TOKEN')).toEqual([`$${'{{'} secrets.NPM_TOKEN }}`]);
  });
});
