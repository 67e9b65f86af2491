import { testJob } from 'scheduled-jobs-stack/testing';
import { describe, expect, it } from 'vitest';
import { dailyDigest } from '../src/jobs/daily-digest';

describe('daily-digest', () => {
  it('names its scheduled time in the report', async () => {
    const { report, logs } = await testJob(dailyDigest, {
      occurrence: { jobId: 'daily-digest', scheduledTime: '2026-11-30T06:00:00Z' },
    });
    expect(report.contentType).toBe('text/markdown; charset=utf-8');
    expect(report.body).toContain('Scheduled for 2026-11-30T06:00:00Z');
    expect(logs.map((entry) => entry.message)).toEqual(['writing the digest']);
  });
});
