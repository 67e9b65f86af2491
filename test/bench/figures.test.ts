import { describe, expect, it } from 'vitest';
import { difference, itemGrowth, scale } from '../../bench/figures';
import type { WireItem } from '../../bench/item-size';
import { countRequests } from '../../bench/paths';
import type { RecordedRequest } from '../../bench/request-recorder';
import { parseOptions } from '../../bench/run';
import { busyMs } from '../../bench/tick';

describe('Function: difference / scale', () => {
  it('keeps only the operations whose counts differ, and divides per event', () => {
    expect(difference({ a: 3, b: 1 }, { a: 1, b: 1, c: 2 })).toEqual({ a: 2, c: -2 });
    expect(scale({ a: 3 }, 3)).toEqual({ a: 1 });
  });
});

describe('Function: countRequests', () => {
  const request = (over: Partial<RecordedRequest>): RecordedRequest => ({
    service: 'SQS',
    operation: 'ReceiveMessage',
    role: 'event-source',
    status: 200,
    durationMs: 1,
    startMs: 0,
    requestBytes: 0,
    ...over,
  });

  it('counts per role and operation, and an empty receive apart', () => {
    const counted = countRequests([
      request({ messages: 0 }),
      request({ messages: 2 }),
      request({ role: 'handler', service: 'DynamoDB', operation: 'PutItem' }),
      request({ role: 'handler', service: 'DynamoDB', operation: 'PutItem', status: 500 }),
    ]);
    expect(counted.emptyReceives).toBe(1);
    expect(counted.requests.handler).toEqual({ 'DynamoDB.PutItem': 2 });
    expect(counted.requests['event-source']).toEqual({ 'SQS.ReceiveMessage': 1 });
  });
});

describe('Function: itemGrowth', () => {
  it('repeats the measured retry entry, so each attempt adds its size', () => {
    const entry = (outcome: string, attempt: number) => ({
      M: { outcome: { S: outcome }, attempt: { N: String(attempt) }, at: { S: '2026-01-01T00:00:00Z' } },
    });
    const measured: WireItem = {
      pk: { S: 'a' },
      attempt: { N: '2' },
      history: { L: [entry('retry', 1), entry('succeeded', 2)] },
    };
    const [one, three] = itemGrowth(measured, [1, 3]);
    // A map of three: 3 + outcome (7 + 5 + 1) + attempt (7 + 2 + 1) + at (2 + 20 + 1), plus 1 as a list element.
    const retrySize = 3 + (7 + 5 + 1) + (7 + 2 + 1) + (2 + 20 + 1) + 1;
    expect(three.itemBytes - one.itemBytes).toBe(2 * retrySize);
    expect(one.completeWriteUnits).toBe(1);
  });
});

describe('Function: busyMs', () => {
  it('is the length of the union of the intervals inside the window', () => {
    const r = (startMs: number, durationMs: number) => ({ startMs, durationMs });
    expect(busyMs([r(0, 10), r(5, 10), r(30, 5), r(90, 20)], 0, 100)).toBe(15 + 5 + 10);
  });
});

describe('Function: parseOptions', () => {
  it('defaults to every figure and ticks of 10 and 100; --quick and --only narrow it', () => {
    expect(parseOptions([])).toMatchObject({ ticks: [10, 100], pollers: 4 });
    expect(parseOptions(['--quick', '--only', 'requests,cost'])).toMatchObject({
      ticks: [10],
      only: ['requests', 'cost'],
    });
    expect(parseOptions(['--ticks', '10,1000'])).toMatchObject({ ticks: [10, 1000] });
  });

  it('includes the run-time schedules figure, with 500 bulk-created schedules a path (100 with --quick)', () => {
    expect(parseOptions([]).only).toContain('schedules');
    expect(parseOptions([])).toMatchObject({ bulkSchedules: 500 });
    expect(parseOptions(['--quick'])).toMatchObject({ bulkSchedules: 100 });
    expect(parseOptions(['--bulk-schedules', '50'])).toMatchObject({ bulkSchedules: 50 });
  });
});
