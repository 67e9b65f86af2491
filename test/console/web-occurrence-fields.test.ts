import { describe, expect, it } from 'vitest';
import { attemptHistory, cancellation, knownFields, leaseState } from '../../console/web/occurrence-fields';

const now = Date.parse('2026-12-02T08:00:00Z');

describe('knownFields', () => {
  it('lists the known attributes present, in reading order, times in UTC with how long ago', () => {
    const fields = knownFields(
      {
        ttl: 1,
        status: 'FAILED',
        attempt: 3,
        scheduledTime: '2026-12-02T05:00:00.000Z',
        lastError: 'boom',
        unknown: 'x',
      },
      now,
    );
    expect(fields).toEqual([
      { name: 'status', label: 'Status', value: 'FAILED' },
      { name: 'scheduledTime', label: 'Scheduled', value: '2026-12-02 05:00:00 UTC (3 h ago)' },
      { name: 'attempt', label: 'Attempts', value: '3' },
      { name: 'lastError', label: 'Last error', value: 'boom' },
    ]);
  });
});

describe('attemptHistory', () => {
  it('reads the history records and leaves out what is not one', () => {
    const row = {
      history: [
        { attempt: 1, outcome: 'retry', at: '2026-12-02T05:10:00.000Z', error: 'Timeout' },
        { outcome: 'failed', at: '2026-12-02T05:20:00.000Z' },
        'junk',
        { outcome: 3 },
      ],
    };
    expect(attemptHistory(row)).toEqual([
      { attempt: 1, outcome: 'retry', at: '2026-12-02T05:10:00.000Z', error: 'Timeout' },
      { outcome: 'failed', at: '2026-12-02T05:20:00.000Z' },
    ]);
    expect(attemptHistory({})).toEqual([]);
  });
});

describe('leaseState', () => {
  it("gives the lease's owner, the age of its last heartbeat, and when it expires or expired", () => {
    expect(
      leaseState(
        {
          status: 'RUNNING',
          leaseId: 'l',
          leaseOwner: 'w7',
          heartbeatAt: '2026-12-02T07:59:40.000Z',
          leaseExpiresAt: '2026-12-02T08:04:00.000Z',
        },
        now,
      ),
    ).toEqual({ owner: 'w7', age: '20 s', expires: 'expires in 4 min' });
    expect(
      leaseState(
        {
          status: 'RUNNING',
          leaseId: 'l',
          claimedAt: '2026-12-02T07:00:00.000Z',
          leaseExpiresAt: '2026-12-02T07:30:00.000Z',
        },
        now,
      ),
    ).toEqual({
      age: '1 h',
      expires: 'expired 30 min ago',
    });
  });

  it('is undefined for a row nobody holds: a FAILED or RETRY_WAIT row keeps its last lease, no holder', () => {
    const leftOver = { leaseId: 'l', leaseOwner: 'w7', heartbeatAt: '2026-12-02T07:59:40.000Z' };
    expect(leaseState({ ...leftOver, status: 'FAILED' }, now)).toBeUndefined();
    expect(leaseState({ ...leftOver, status: 'RETRY_WAIT' }, now)).toBeUndefined();
  });

  it('is undefined without a lease', () => {
    expect(leaseState({ status: 'SUCCEEDED' }, now)).toBeUndefined();
  });
});

describe('cancellation', () => {
  it("names the operator, the time and the note of an operator's cancel", () => {
    const row = {
      status: 'CANCELLED',
      cancelledAt: '2026-12-02T06:36:00.000Z',
      cancelledByOperator: 'bob via console',
      cancelNote: 'upstream broken',
    };
    expect(cancellation(row)).toEqual({
      at: '2026-12-02T06:36:00.000Z',
      by: 'bob via console',
      note: 'upstream broken',
    });
    expect(knownFields(row, Date.parse('2026-12-02T08:00:00Z')).map((f) => f.label)).toEqual([
      'Status',
      'Cancelled',
      'Cancelled by',
      'Why cancelled',
    ]);
  });

  it('names the occurrence that cancelled it under cancelOther, and nothing for a row that is not CANCELLED', () => {
    expect(cancellation({ status: 'CANCELLED', cancelledBy: '2026-12-02T04:30:00Z' })).toEqual({
      byOccurrence: '2026-12-02T04:30:00Z',
    });
    expect(cancellation({ status: 'FAILED', cancelledByOperator: 'bob' })).toBeUndefined();
  });
});
