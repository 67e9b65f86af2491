/**
 * The README's two commands are what CI runs: a new user's first command (`npm run local`) and the test command
 * (`npm test`) must both be in .ci/run, as written, so that a change that breaks either fails CI.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..', '..');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const ci = readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8');

/** The commands of the first sh block after "## The two commands", comments and `&&` chains split. */
function twoCommands(): string[] {
  const section = readme.slice(readme.indexOf('## The two commands'));
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
