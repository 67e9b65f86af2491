import { afterEach, describe, expect, it, vi } from 'vitest';
import { main, RUN_LOCAL_HELP } from '../../testing/run-local';

afterEach(() => vi.restoreAllMocks());

describe('Function: main (run-local.js)', () => {
  it('--help prints every option and exits 0 without running anything', async () => {
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => printed.push(line));
    expect(await main(['--help'])).toBe(0);
    expect(printed).toEqual([RUN_LOCAL_HELP]);
    for (const option of ['assembly', 'stack', 'from', 'count', 'jobs', 'fire', 'timeout', 'endpoint', 'logs', 'keep'])
      expect(RUN_LOCAL_HELP).toContain(`--${option}`);
  });

  it('an unknown option is still a usage error (exit 2)', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => errors.push(line));
    expect(await main(['--nope'])).toBe(2);
    expect(errors.join('\n')).toMatch(/Unknown option '--nope'/);
  });
});
