/**
 * The README's two commands for a clone ("Working on this repository") are what CI runs: the first command
 * (`npm run local`) and the test command (`npm test`) must both be in .ci/run, as written, so that a change that
 * breaks either fails CI. And the README stays a user's manual: at most README_MAX_LINES lines, figures and long
 * references in docs/; docs/development.md counts no tests by hand (it gives the command that counts them).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..', '..');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const ci = readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8');

/** The README's length a user reads through; what does not fit goes to a page of docs/. */
const README_MAX_LINES = 300;
const CLONE_SECTION = '## Working on this repository';

/** The commands of the first sh block after the clone's section heading, comments and `&&` chains split. */
function twoCommands(): string[] {
  const start = readme.indexOf(CLONE_SECTION);
  if (start === -1) return [];
  const section = readme.slice(start);
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter(Boolean)
    .flatMap((line) => line.split('&&').map((c) => c.trim()));
}

const ciCommands = ci
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

describe('the README and .ci/run', () => {
  it('names the first command and the test command', () => {
    expect(twoCommands()).toEqual(['npm ci', 'npm run local', 'npm test']);
  });

  it('.ci/run runs each of them as written', () => {
    for (const command of twoCommands()) {
      expect(ciCommands.some((line) => line === command || line.startsWith(`${command} `))).toBe(true);
    }
  });
});

describe('the README as a manual for a user of the package', () => {
  it(`has at most ${README_MAX_LINES} lines`, () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("keeps the clone's commands in their own last section, pointing to CONTRIBUTING.md", () => {
    const headings = [...readme.matchAll(/^## (.+)$/gm)].map((match) => `## ${match[1]}`);
    expect(headings.at(-1)).toBe(CLONE_SECTION);
    // The name rather than the link: a pack running meanwhile (prepack) unlinks it in the checkout until postpack.
    expect(readme.slice(readme.indexOf(CLONE_SECTION))).toContain('CONTRIBUTING.md');
    // Before that section, a user's commands only: no npm script of this repository.
    const manual = readme.slice(0, readme.indexOf(CLONE_SECTION));
    expect(manual.match(/npm (run|ci|test)\b[^\n]*/g) ?? []).toEqual([]);
  });
});

describe('docs/development.md', () => {
  it('types no test counts, which go stale at the next test added (it prints them with vitest list)', () => {
    const development = readFileSync(path.join(ROOT, 'docs', 'development.md'), 'utf8');
    expect(development.match(/\b\d[\d,]* (fast |slow )?tests in \d[\d,]* files\b/g) ?? []).toEqual([]);
    expect(development.match(/^\| (fast|slow) \| \d/gm) ?? []).toEqual([]);
    expect(development).toContain('npx vitest list');
  });
});
