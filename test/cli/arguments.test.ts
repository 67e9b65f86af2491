/**
 * Bad arguments: each gets a message naming the argument and what was wrong, the command's usage line, and exit
 * code 2, before anything connects to AWS. (A job the stack does not have is found only by asking it: that is in
 * write-commands.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { timeArgument } from '../../bin/occurrences/arguments';
import { runCli } from '../../bin/occurrences/program';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import { cliDeps } from './support';

const clock = { now: () => Date.parse('2026-11-30T12:00:00Z') };

async function run(...argv: string[]) {
  const deps = {
    ...cliDeps(clock),
    connect: () => Promise.reject(new Error('a bad argument must be caught before connecting')),
  };
  const code = await runCli(argv, deps);
  return { code, out: deps.captured.out.join('\n'), err: deps.captured.err.join('\n') };
}

describe('bad arguments', () => {
  it.each<[string, string[], RegExp]>([
    [
      'an unknown status',
      ['list', '--status', 'DONE'],
      /^error: --status: must be one or more of PENDING, RUNNING, RETRY_WAIT, SUCCEEDED, FAILED, SKIPPED, BUFFERED, CANCELLED separated by commas; got "DONE"\nUsage: occurrences list \[options\]/,
    ],
    [
      'a time that is not a time',
      ['list', '--from', 'yesterday'],
      /^error: --from: must be an ISO date or date-time with a zone .* got "yesterday"\nUsage: occurrences list/,
    ],
    [
      'a limit out of range',
      ['list', '--limit', '0'],
      /^error: --limit: must be a whole number from 1 to 1000, got "0"/,
    ],
    [
      'a reversed range',
      ['list', '--from', '2026-11-30', '--to', '2026-11-29'],
      /^error: --from must be before --to\nUsage: occurrences list/,
    ],
    [
      'a scheduled time without a zone',
      ['show', 'hourly-report', '2026-11-30T06:00:00'],
      /^error: <scheduledTime>: must be ISO-8601 with a zone, like 2026-11-30T06:00:00Z, got "2026-11-30T06:00:00"\nUsage: occurrences show \[options\] <jobId> <scheduledTime>/,
    ],
    [
      'a job id with spaces',
      ['retry', 'my job', '2026-11-30T06:00:00Z'],
      /^error: <jobId>: must be a job id \(letters, digits, - and _\), got "my job"\nUsage: occurrences retry/,
    ],
    [
      'a --worker-queue without a worker id',
      ['retry', 'hourly-report', '2026-11-30T06:00:00Z', '--worker-queue', 'https://sqs.example/123/jobs'],
      /^error: --worker-queue: must be <workerId>=<queue URL>, such as digest=https:\/\/sqs\.eu-west-1\.amazonaws\.com\/123456789012\/jobs, got "https:\/\/sqs\.example\/123\/jobs"\nUsage: occurrences retry/,
    ],
    [
      'a --worker-queue whose URL is not one',
      ['backfill', '--job', 'hourly-report', '--from', '1d', '--worker-queue', 'reports=jobs'],
      /^error: --worker-queue: must be <workerId>=<queue URL>, .* got "reports=jobs"\nUsage: occurrences backfill/,
    ],
    [
      'a --worker-queue whose worker id is not one',
      ['retry', 'hourly-report', '2026-11-30T06:00:00Z', '--worker-queue', 'my worker=http://127.0.0.1:5000/1/q'],
      /^error: --worker-queue: must be <workerId>=<queue URL>, .* got "my worker=http:\/\/127\.0\.0\.1:5000\/1\/q"/,
    ],
    [
      'a worker given twice',
      [
        'retry',
        'hourly-report',
        '2026-11-30T06:00:00Z',
        '--worker-queue',
        'reports=http://127.0.0.1:5000/1/a',
        '--worker-queue',
        'reports=http://127.0.0.1:5000/1/b',
      ],
      /^error: --worker-queue: worker "reports" is given twice\nUsage: occurrences retry/,
    ],
    [
      'the one job queue of before',
      ['retry', 'hourly-report', '2026-11-30T06:00:00Z', '--queue-url', 'http://127.0.0.1:5000/1/jobs'],
      /^error: --queue-url: there is no single job queue any more: pass --worker-queue <workerId>=<url> per worker\nUsage: occurrences retry/,
    ],
    [
      'an endpoint that is not a URL',
      ['list', '--endpoint', 'localhost'],
      /^error: --endpoint: must be an http\(s\) URL such as http:\/\/127.0.0.1:5000, got "localhost"\nUsage: occurrences list/,
    ],
  ])('%s', async (_, argv, message) => {
    const result = await run(...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
    expect(result.out).toBe('');
  });

  it('names every wrong argument at once', async () => {
    const result = await run('watch', '--interval', '0', '--status', 'X');
    expect(result.code).toBe(2);
    expect(result.err).toContain('--status: must be one or more of');
    expect(result.err).toContain('--interval: must be a whole number from 1 to 300, got "0"');
  });

  it.each<[string, string[], RegExp]>([
    [
      'a missing argument',
      ['show', 'hourly-report'],
      /^error: missing required argument 'scheduledTime'\nUsage: occurrences show \[options\] <jobId> <scheduledTime>\nRun "occurrences show --help" for the options\.$/,
    ],
    [
      'a misspelt option',
      ['retry', 'hourly-report', '2026-11-30T06:00:00Z', '--forse'],
      /^error: unknown option '--forse'\n\(Did you mean --force\?\)\nUsage: occurrences retry/,
    ],
    [
      'a missing required option',
      ['backfill', '--job', 'hourly-report'],
      /^error: required option '--from <time>' not specified\nUsage: occurrences backfill/,
    ],
    [
      'an unknown command',
      ['lst'],
      /^error: unknown command 'lst'\n\(Did you mean list\?\)\nUsage: occurrences \[options\] \[command\]/,
    ],
  ])("commander's own checks: %s", async (_, argv, message) => {
    const result = await run(...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
  });

  it('prints the commands and exits 2 when there is none', async () => {
    const result = await run();
    expect(result.code).toBe(2);
    expect(result.err).toMatch(
      /Usage: occurrences \[options\] \[command\][\s\S]*list \[options\][\s\S]*backfill \[options\]/,
    );
  });

  it('--help is not an error', async () => {
    const result = await run('backfill', '--help');
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^Usage: occurrences backfill \[options\][\s\S]*--dry-run/);
  });
});

describe('dates that do not exist are refused, naming the option', () => {
  it.each<[string, string[], string]>([
    [
      '31 February',
      ['list', '--from', '2026-02-31'],
      '--from: "2026-02-31" is not a real date or time: February 2026 has 28 days',
    ],
    [
      '29 February of a common year',
      ['watch', '--to', '2026-02-29T10:00:00Z'],
      '--to: "2026-02-29T10:00:00Z" is not a real date or time: February 2026 has 28 days',
    ],
    ['month 13', ['list', '--to', '2026-13-01'], '--to: "2026-13-01" is not a real date or time: there is no month 13'],
    [
      'month 0',
      ['list', '--from', '2026-00-10'],
      '--from: "2026-00-10" is not a real date or time: there is no month 0',
    ],
    [
      'day 0',
      ['list', '--from', '2026-11-00'],
      '--from: "2026-11-00" is not a real date or time: November 2026 has 30 days',
    ],
    [
      '31 November',
      ['backfill', '--job', 'hourly-report', '--from', '2026-11-31'],
      '--from: "2026-11-31" is not a real date or time: November 2026 has 30 days',
    ],
    [
      '24:00',
      ['list', '--from', '2026-11-30T24:00Z'],
      '--from: "2026-11-30T24:00Z" is not a real date or time: the hours go from 00 to 23 (midnight is 00:00 of the next day)',
    ],
    [
      'minute 60',
      ['backfill', '--job', 'hourly-report', '--from', '1d', '--to', '2026-11-30T10:60:00Z'],
      '--to: "2026-11-30T10:60:00Z" is not a real date or time: the minutes go from 00 to 59',
    ],
    [
      'second 60',
      ['list', '--from', '2026-11-30T10:00:60+01:00'],
      '--from: "2026-11-30T10:00:60+01:00" is not a real date or time: the seconds go from 00 to 59',
    ],
    [
      'an offset of 24 hours',
      ['list', '--from', '2026-11-30T10:00:00+24:00'],
      '--from: "2026-11-30T10:00:00+24:00" is not a real date or time: a zone offset goes from -23:59 to +23:59',
    ],
  ])('%s', async (_, argv, message) => {
    const result = await run(...argv);
    expect(result.code).toBe(2);
    expect(result.err.split('\n')[0]).toBe(`error: ${message}`);
  });

  it('keeps the dates that exist: 29 February of a leap year, the last second of a day, an offset', () => {
    const bound = (value: string) => new Date(timeArgument(clock.now()).parse(value)).toISOString();
    expect(bound('2028-02-29')).toBe('2028-02-29T00:00:00.000Z');
    expect(bound('2000-02-29T12:00Z')).toBe('2000-02-29T12:00:00.000Z');
    expect(bound('2026-12-31T23:59:59Z')).toBe('2026-12-31T23:59:59.000Z');
    expect(bound('2026-11-30T00:30:00-01:00')).toBe('2026-11-30T01:30:00.000Z');
  });

  it('refuses 29 February 1900, which was not a leap year', async () => {
    const result = await run('list', '--from', '1900-02-29');
    expect(result.err).toContain('February 1900 has 28 days');
  });
});

describe('the help names every status, from the protocol', () => {
  it.each(['list', 'watch'])('%s --help', async (command) => {
    const result = await run(command, '--help');
    expect(result.code).toBe(0);
    const help = result.out.replace(/\s+/g, ' ');
    const listed = /--status <statuses> only these statuses, comma-separated: (\S+)/.exec(help)?.[1];
    expect(listed?.split(',')).toEqual(Object.values(OccurrenceStatus));
  });
});

describe('an error is not buried under help', () => {
  it.each<[string, string[]]>([
    ['a bad status', ['list', '--status', 'DONE']],
    ['an impossible date', ['list', '--from', '2026-02-31']],
    ['an unknown option', ['watch', '--bogus']],
    ['a missing argument', ['show', 'hourly-report']],
    ['help of an unknown command', ['help', 'lst']],
    ['an unknown command', ['nosuch']],
  ])('%s: the error first, then the usage line and a pointer to --help, not the options', async (_, argv) => {
    const result = await run(...argv);
    expect(result.code).toBe(2);
    const lines = result.err.split('\n');
    expect(lines[0]).toMatch(/^error: /);
    expect(lines.at(-1)).toMatch(/^Run "occurrences( \w+)? --help" for the options\.$/);
    expect(lines.length).toBeLessThanOrEqual(4);
    expect(result.err).not.toContain('Options:');
  });

  it('help of an unknown command names it and suggests the one meant', async () => {
    const result = await run('help', 'lst');
    expect(result.err).toMatch(/^error: unknown command 'lst'\n\(Did you mean list\?\)\nUsage: occurrences/);
  });
});

describe('a huge bad argument is quoted by its start and length only', () => {
  it.each<[string, string[]]>([
    ['<scheduledTime>', ['show', 'hourly-report', `2026${'9'.repeat(1_000_000)}`]],
    ['<jobId>', ['show', 'j '.repeat(500_000), '2026-11-30T06:00:00Z']],
    ['--from', ['list', '--from', 'f'.repeat(1_000_000)]],
    ['--status', ['list', '--status', 's'.repeat(1_000_000)]],
    ['--limit', ['list', '--limit', '1'.repeat(1_000_000)]],
    ['--endpoint', ['list', '--endpoint', 'e'.repeat(1_000_000)]],
    ['--job', ['backfill', '--job', 'j'.repeat(1_000_000), '--from', '1d']],
    ['--worker-queue', ['list', '--worker-queue', `w=${'u'.repeat(1_000_000)}`]],
  ])('%s', async (name, argv) => {
    const result = await run(...argv);
    expect(result.code).toBe(2);
    expect(result.err).toContain(`error: ${name}: `);
    expect(result.err).toMatch(/…" \(\d+ chars\)/);
    expect(result.err.length).toBeLessThan(600);
  });
});

describe('range bounds outside the years of a scheduled time', () => {
  const bound = (value: string) => new Date(timeArgument(clock.now()).parse(value)).toISOString();

  it('moves a bound past 2199 or before 1970 to that end of the key range, so it still sorts with the keys', () => {
    expect(bound('9999-12-31T23:00:00-05:00')).toBe('2199-12-31T23:59:59.000Z');
    expect(bound('2300-01-01')).toBe('2199-12-31T23:59:59.000Z');
    expect(bound('0001-01-01T00:00:00Z')).toBe('1970-01-01T00:00:00.000Z');
  });

  it('keeps a bound inside the range as given', () => {
    expect(bound('2026-11-30T06:00:00.5Z')).toBe('2026-11-30T06:00:00.500Z');
    expect(bound('7d')).toBe('2026-11-23T12:00:00.000Z');
  });
});
