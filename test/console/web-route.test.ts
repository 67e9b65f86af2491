import { describe, expect, it } from 'vitest';
import { formatHash, occurrenceHash, parseHash, query, timelineHash } from '../../console/web/route';

describe('parseHash', () => {
  it('reads the jobs page from an empty hash or #/', () => {
    expect(parseHash('')).toEqual({ page: 'jobs' });
    expect(parseHash('#/')).toEqual({ page: 'jobs' });
  });

  it('reads the attention view from #/attention, and writes it back', () => {
    expect(parseHash('#/attention')).toEqual({ page: 'attention' });
    expect(formatHash({ page: 'attention' })).toBe('#/attention');
    expect(parseHash('#/attention/x')).toEqual({ page: 'not-found', hash: '#/attention/x' });
  });

  it('reads a timeline with its key and range, each part decoded', () => {
    expect(
      parseHash(
        '#/job/nightly%2Fexport?key=customer%2042&from=2026-12-01T00%3A00%3A00.000Z&to=2026-12-02T00:00:00.000Z',
      ),
    ).toEqual({
      page: 'timeline',
      jobId: 'nightly/export',
      key: 'customer 42',
      from: '2026-12-01T00:00:00.000Z',
      to: '2026-12-02T00:00:00.000Z',
    });
  });

  it('reads an occurrence, leaving out an empty key', () => {
    expect(parseHash('#/occurrence/weekly-export/2026-12-02T07%3A00%3A00.000Z?key=')).toEqual({
      page: 'occurrence',
      jobId: 'weekly-export',
      time: '2026-12-02T07:00:00.000Z',
    });
  });

  it('says not-found for an unknown path or a broken encoding', () => {
    expect(parseHash('#/jobs/x/y')).toEqual({ page: 'not-found', hash: '#/jobs/x/y' });
    expect(parseHash('#/job/%E0%A4%A')).toEqual({ page: 'not-found', hash: '#/job/%E0%A4%A' });
  });
});

describe('formatHash', () => {
  it('is the inverse of parseHash for names that need encoding', () => {
    const routes = [
      { page: 'jobs' as const },
      {
        page: 'timeline' as const,
        jobId: 'a/b c',
        key: 'k?&=',
        from: '2026-12-01T00:00:00.000Z',
        to: '2026-12-02T00:00:00.000Z',
      },
      { page: 'occurrence' as const, jobId: 'a#b', time: '2026-12-02T07:00:00.000Z', key: 'x/y' },
    ];
    for (const route of routes) expect(parseHash(formatHash(route))).toEqual(route);
  });

  it('builds the links the pages use', () => {
    expect(timelineHash('reports', 'customer-001')).toBe('#/job/reports?key=customer-001');
    expect(occurrenceHash('weekly-export', '2026-12-02T07:00:00.000Z')).toBe(
      '#/occurrence/weekly-export/2026-12-02T07%3A00%3A00.000Z',
    );
  });
});

describe('query', () => {
  it('leaves out unset and empty parameters', () => {
    expect(query({ job: 'j', key: undefined, cursor: '' })).toBe('?job=j');
    expect(query({})).toBe('');
  });
});
