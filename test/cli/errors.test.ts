/**
 * The CLI's error family (bin/occurrences/errors.ts): each class names itself and carries its exit code, and the
 * command line ends with that code.
 */
import { describe, expect, it } from 'vitest';
import { BackfillInterruptedError, CliError, EXIT, ScheduleInputError, UsageError } from '../../bin/occurrences/errors';
import { runCli } from '../../bin/occurrences/program';
import type { Target } from '../../bin/occurrences/target';
import { cliDeps, HOURLY, memoryCatalogue, WORKER } from './support';

describe('Class: UsageError', () => {
  it('is a CliError named UsageError that ends the command line with exit code 2', () => {
    const error = new UsageError('--limit: must be a whole number');
    expect(error).toBeInstanceOf(CliError);
    expect(error.name).toBe('UsageError');
    expect(String(error.stack)).toMatch(/^UsageError: --limit/); // the name is set before anything reads the stack
    expect(error.message).toBe('--limit: must be a whole number');
    expect(error.exitCode).toBe(EXIT.usage);
  });
});

describe('Class: ScheduleInputError', () => {
  it('is a CliError named ScheduleInputError that ends the command line with exit code 1', () => {
    const error = new ScheduleInputError('schedule x in group g has no ScheduleExpression');
    expect(error).toBeInstanceOf(CliError);
    expect(error.name).toBe('ScheduleInputError');
    expect(error.exitCode).toBe(EXIT.failed);
  });
});

describe('Class: BackfillInterruptedError', () => {
  it('carries how far the backfill got, and exit code 1', () => {
    const error = new BackfillInterruptedError(3, 8);
    expect(error).toBeInstanceOf(CliError);
    expect(error.name).toBe('BackfillInterruptedError');
    expect(error.message).toBe('backfill interrupted after 3 of 8 occurrence(s)');
    expect({ done: error.done, planned: error.planned, exitCode: error.exitCode }).toEqual({
      done: 3,
      planned: 8,
      exitCode: EXIT.failed,
    });
  });

  it('is what a backfill stopped by Ctrl-C before its first occurrence ends with', async () => {
    const stopped = new AbortController();
    stopped.abort();
    const deps = {
      ...cliDeps({ now: () => Date.parse('2026-11-30T12:00:00Z') }),
      signal: stopped.signal,
      // Nothing is written once the signal has aborted, so neither the store nor the queue is used.
      connect: async () =>
        ({
          where: 'table t',
          store: {},
          jobs: memoryCatalogue(),
          queues: { byWorker: new Map([[WORKER, {}]]), source: '--worker-queue' },
        }) as unknown as Target,
    };
    const code = await runCli(['backfill', '--job', HOURLY, '--from', '3h'], deps);
    expect(code).toBe(EXIT.failed);
    expect(deps.captured.err).toEqual([
      'backfill stopped after 0 of 3 occurrence(s) (interrupted); nothing to do. ' +
        'Running it again is safe: it is idempotent.',
      'error: BackfillInterruptedError: backfill interrupted after 0 of 3 occurrence(s)',
    ]);
  });
});
