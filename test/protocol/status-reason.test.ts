import { describe, expect, it } from 'vitest';
import { statusReason } from '../../functions/protocol/status-reason';
import { fakeOccurrence } from '../../testing';

const T = '2026-12-02T05:00:00Z';

describe('Function: statusReason', () => {
  it('names the occurrence a SKIPPED-for-overlap row yielded to', () => {
    const row = fakeOccurrence({ status: 'SKIPPED', skipReason: 'overlap', yieldedTo: T });
    expect(statusReason(row)).toBe(`overlap, yielded to ${T}`);
  });

  it('says how late a missed occurrence was recorded, from its createdAt', () => {
    const row = fakeOccurrence({
      scheduledTime: T,
      status: 'SKIPPED',
      skipReason: 'missed',
      createdAt: '2026-12-02T08:05:00.000Z',
    });
    expect(statusReason(row)).toBe("missed: recorded 3 h 5 min after its time, past the job's catch-up window");
    expect(statusReason({ ...row, createdAt: '2026-12-02T05:00:40.000Z' })).toMatch(/recorded 40 s after/);
  });

  it('says a paused skip was delivered while the job was paused', () => {
    expect(statusReason(fakeOccurrence({ status: 'SKIPPED', skipReason: 'paused' }))).toMatch(/^paused: /);
  });

  it('names the occurrence that cancelled a CANCELLED row', () => {
    expect(statusReason(fakeOccurrence({ status: 'CANCELLED', cancelledBy: T }))).toBe(
      `cancelled by ${T} (overlap cancelOther)`,
    );
  });

  it('says since when a BUFFERED row waits for the slot', () => {
    const row = fakeOccurrence({ status: 'BUFFERED', bufferedAt: '2026-12-02T05:00:01.000Z' });
    expect(statusReason(row)).toBe("waiting for the job's running slot since 2026-12-02T05:00:01.000Z");
  });

  it("gives a FAILED row's lastError on one line, cut to 120 characters", () => {
    const row = fakeOccurrence({ status: 'FAILED', lastError: `boom\n${'x'.repeat(300)}` });
    const reason = statusReason(row);
    expect(reason.startsWith('failed: boom x')).toBe(true);
    expect(reason).not.toContain('\n');
    expect(reason.length).toBe('failed: '.length + 120);
  });

  it('tells a SUCCEEDED row announced from one not announced yet', () => {
    const row = fakeOccurrence({ status: 'SUCCEEDED', reportKey: 'reports/x.md' });
    expect(statusReason(row)).toMatch(/not announced yet/);
    expect(statusReason({ ...row, notifiedAt: '2026-12-02T05:00:09.000Z' })).toBe('report committed and announced');
  });

  it('tells a resumable run between segments and a revoked lease from a held lease', () => {
    expect(statusReason(fakeOccurrence({ leaseId: 'continued:abc' }))).toMatch(/between two segments/);
    expect(statusReason(fakeOccurrence({ leaseId: 'revoked-by-x' }))).toMatch(/revoked/);
    expect(statusReason(fakeOccurrence({ attempt: 2 }))).toMatch(/^attempt 2, lease until /);
  });
});
