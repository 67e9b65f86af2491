import { describe, expect, it } from 'vitest';
import { formatHash, occurrenceHash, parseHash, query, timelineHash } from '../../console/web/route';

describe('parseHash', () => {
  it('opens on the attention view (an empty hash, #/, or #/attention), the jobs page one link away at #/jobs', () => {
    expect(parseHash('')).toEqual({ page: 'attention' });
    expect(parseHash('#/')).toEqual({ page: 'attention' });
    expect(parseHash('#/attention')).toEqual({ page: 'attention' });
    expect(formatHash({ page: 'attention' })).toBe('#/');
    expect(parseHash('#/attention/x')).toEqual({ page: 'not-found', hash: '#/attention/x' });
    expect(parseHash('#/jobs')).toEqual({ page: 'jobs' });
    expect(formatHash({ page: 'jobs' })).toBe('#/jobs');
  });

  it("reads the attention view's window and filters, leaving out an unknown window", () => {
    expect(
      parseHash('#/?window=custom&from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z&job=a&kind=failed,late'),
    ).toEqual({
      page: 'attention',
      window: 'custom',
      from: '2026-12-01T00:00:00Z',
      to: '2026-12-02T00:00:00Z',
      job: 'a',
      kind: 'failed,late',
    });
    expect(parseHash('#/?window=1y')).toEqual({ page: 'attention' });
  });

  it('reads the all-jobs timeline at #/timeline with its window, leaving out an unknown one', () => {
    expect(parseHash('#/timeline')).toEqual({ page: 'all-timeline' });
    expect(parseHash('#/timeline?window=31d')).toEqual({ page: 'all-timeline', window: '31d' });
    expect(parseHash('#/timeline?window=2y')).toEqual({ page: 'all-timeline' });
    expect(formatHash({ page: 'all-timeline', window: '1h' })).toBe('#/timeline?window=1h');
    expect(formatHash({ page: 'all-timeline' })).toBe('#/timeline');
    expect(parseHash('#/timeline/x')).toEqual({ page: 'not-found', hash: '#/timeline/x' });
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
    expect(parseHash('#/nowhere')).toEqual({ page: 'not-found', hash: '#/nowhere' });
    expect(parseHash('#/job/%E0%A4%A')).toEqual({ page: 'not-found', hash: '#/job/%E0%A4%A' });
  });
});

describe('formatHash', () => {
  it('is the inverse of parseHash for names that need encoding', () => {
    const routes = [
      { page: 'jobs' as const },
      { page: 'attention' as const, window: '1h' as const, job: 'a b', kind: 'failed,paused' },
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
