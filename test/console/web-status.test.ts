import { describe, expect, it } from 'vitest';
import { historySummary, isFinal, STATUS_COLOUR, STATUSES, statusText } from '../../console/web/status';

describe('historySummary', () => {
  it('counts the runs by status in the legend order and names the newest', () => {
    const runs = [
      { status: 'FAILED' as const },
      { status: 'SUCCEEDED' as const },
      { status: 'SKIPPED' as const },
      { status: 'SUCCEEDED' as const },
    ];
    expect(historySummary(runs)).toBe('last 4 runs: 2 succeeded, 1 failed, 1 skipped; the newest failed');
  });

  it('says when there are none', () => {
    expect(historySummary([])).toBe('no runs yet');
  });
});

describe('statuses', () => {
  it('gives every status a colour, and a skip its reason', () => {
    for (const status of STATUSES) expect(STATUS_COLOUR[status]).toMatch(/^#[0-9a-f]{6}$/);
    expect(statusText('SKIPPED', 'overlap')).toBe('Skipped (overlap)');
    expect(statusText('FAILED')).toBe('Failed');
  });

  it('tells a final status from one that can still change', () => {
    expect(STATUSES.filter(isFinal)).toEqual(['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED']);
  });
});
