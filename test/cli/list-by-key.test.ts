/** `occurrences list --job J --key K`: one schedule of a job that takes schedules at run time. */
import { describe, expect, it } from 'vitest';
import { listOccurrences, rangeArguments, toListQuery } from '../../bin/occurrences/commands/list';
import { jobCell } from '../../bin/occurrences/format';
import type { OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';

const NOW = Date.parse('2026-12-01T00:00:00Z');

describe('list --key', () => {
  it("queries that schedule's own partition", async () => {
    const asked: unknown[][] = [];
    const reader = {
      listJobNewestFirst: async (...args: unknown[]) => {
        asked.push(args);
        return [];
      },
    } as unknown as OperatorOccurrenceReader;
    const o = rangeArguments(NOW).parse({ job: 'report', key: 'cust-42', from: '7d' });
    await listOccurrences(reader, toListQuery(o, 10));
    expect(asked).toHaveLength(1);
    expect(asked[0][0]).toBe('report');
    expect(asked[0][3]).toBe('cust-42');
  });

  it('is refused without --job, and a malformed key is named', () => {
    expect(() => toListQuery(rangeArguments(NOW).parse({ key: 'cust-42', from: '7d' }), 10)).toThrow(
      '--key: needs --job',
    );
    const bad = rangeArguments(NOW).safeParse({ job: 'report', key: 'a/b', from: '7d' });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toMatch(/must be 1-128 letters/);
  });

  it('shows the key beside the job in the table', () => {
    expect(jobCell({ jobId: 'report', scheduleKey: 'cust-42' })).toBe('report/cust-42');
    expect(jobCell({ jobId: 'report' })).toBe('report');
  });
});
