/**
 * `npm run local`'s options: a bad one is refused with the option named and no help scrolled after it; the options
 * map onto runLocally's as the sample needs them.
 */
import { describe, expect, it } from 'vitest';
import { LocalUsageError, parseLocalArgs, runOptions } from '../../scripts/local';

const refused = (...argv: string[]) => {
  try {
    parseLocalArgs(argv, () => undefined);
  } catch (error) {
    expect(error).toBeInstanceOf(LocalUsageError);
    return (error as Error).message;
  }
  throw new Error(`expected ${argv.join(' ')} to be refused`);
};

describe('Function: parseLocalArgs', () => {
  it('defaults to 3 occurrences per job, fired at once, 2 pollers, 120 s', () => {
    expect(parseLocalArgs([])).toEqual({ count: 3, inTurn: false, pollers: 2, timeout: 120, keep: false });
  });

  it('names the option and the value it refuses', () => {
    expect(refused('--count', '0')).toBe(
      "option '--count <n>' argument '0' is invalid. --count must be a whole number from 1 to 50, got \"0\"",
    );
    expect(refused('--pollers', '2.5')).toMatch(/--pollers must be a whole number from 1 to 20, got "2.5"/);
    expect(refused('--nope')).toBe("unknown option '--nope'");
    expect(refused('extra')).toMatch(/^too many arguments/);
  });

  it('refuses a date that does not exist instead of rolling it over', () => {
    expect(refused('--from', '2026-02-31T06:00:00Z')).toMatch(
      /^option '--from <time>' argument .* is invalid. --from .*2026-02-31T06:00:00Z/,
    );
    expect(parseLocalArgs(['--from', '2026-02-28T07:00:00+01:00'])?.from).toBe('2026-02-28T06:00:00Z');
  });

  it('prints the usage for --help and returns nothing to run', () => {
    let printed = '';
    expect(parseLocalArgs(['--help'], (text) => (printed += text))).toBeUndefined();
    expect(printed).toMatch(/--in-turn/);
    expect(printed.replace(/\s+/g, ' ')).toMatch(/Exit 0 when every occurrence ended as its job's policies dictate/);
  });
});

describe('Function: runOptions', () => {
  it('fires at once unless --in-turn, redelivers late, and sizes the sample export for a local run', () => {
    const options = runOptions(parseLocalArgs(['--count', '2', '--jobs', 'a, b']) as never, () => undefined);
    expect(options).toMatchObject({
      count: 2,
      jobs: ['a', 'b'],
      fire: 'at-once',
      redeliverLate: true,
      environment: { 'ndjson-export': { SAMPLE_EXPORT_BYTES: '20000000' } },
    });
    expect(runOptions(parseLocalArgs(['--in-turn']) as never, () => undefined).fire).toBe('in-turn');
  });
});
