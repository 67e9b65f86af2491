/**
 * The bench's happy path on moto, counted below the SDK: 10 handler requests (trigger 2, worker 6, of them 2 for the
 * running slot of the default overlap policy, skip, and 1 for the commit point that an operator's cancel respects;
 * notifier 2; no report look-up on a first claim, no read of the row the stream carries). A change to the request floor changes
 * HAPPY_PATH_REQUESTS, and docs/benchmarks.md with it.
 */
import { describe, expect, it } from 'vitest';
import { runOccurrences } from '../../bench/paths';
import { useBenchSession } from '../support/bench-session';

/** Handler requests of one occurrence's happy path (no heartbeat), by service and operation. */
const HAPPY_PATH_REQUESTS = {
  'DynamoDB.PutItem': 1,
  'SQS.SendMessage': 1,
  'DynamoDB.UpdateItem': 6,
  'S3.PutObject': 1,
  'SNS.Publish': 1,
};

/**
 * Write units of the same path: table (2 of them the job-state row's take and release, 1 the commit point) and status
 * index (4: the insert's put, the claim and the completion in place under OPEN#k, the announcement's removal; 6 before
 * the OPEN key; the commit point writes none: committingLease is not projected).
 */
const HAPPY_PATH_WRITE_UNITS = { table: 7, index: 4 };

/**
 * One occurrence of a schedule created at run time with a 2,048-byte input, as bench/cost-model.ts
 * models it: the same requests and one eventually consistent read of the whole job's state row (is the job paused?),
 * each of the row's five writes 3 units (the input is on the row; the commit point is the fifth), the series' slot
 * 1 + 1, the index 4.
 */
const KEYED_PATH_REQUESTS = { ...HAPPY_PATH_REQUESTS, 'DynamoDB.GetItem': 1 };
const KEYED_PATH_UNITS = { table: 5 * 3 + 2, index: 4, read: 0.5 };

describe('bench on moto', () => {
  const session = useBenchSession();

  it('counts the happy path per service and operation, and the event source apart', async () => {
    const happy = await runOccurrences(session(), 'happy path', {});

    expect(happy.requests.handler).toEqual(HAPPY_PATH_REQUESTS);
    expect(happy.requests['event-source']).toMatchObject({ 'SQS.ReceiveMessage': 1, 'SQS.DeleteMessageBatch': 1 });
    expect(happy.capacity.tableWriteUnits).toBe(HAPPY_PATH_WRITE_UNITS.table);
    expect(happy.capacity.indexWriteUnits).toBe(HAPPY_PATH_WRITE_UNITS.index);
  });

  it('counts a keyed occurrence with the largest input as the cost model has it', async () => {
    const keyed = { scheduleKey: 'customer-42', input: { report: 'x'.repeat(2_035) } };
    const path = await runOccurrences(session(), 'keyed happy path', { keyed });

    expect(path.requests.handler).toEqual(KEYED_PATH_REQUESTS);
    expect(path.capacity.tableWriteUnits).toBe(KEYED_PATH_UNITS.table);
    expect(path.capacity.indexWriteUnits).toBe(KEYED_PATH_UNITS.index);
    expect(path.capacity.tableReadUnits + path.capacity.indexReadUnits).toBe(KEYED_PATH_UNITS.read);
  });

  it("times every handler and counts the metrics they record, through the pipeline's instrument hook", async () => {
    const happy = await runOccurrences(session(), 'happy path', {});

    const names = new Set(happy.timings.map((t) => t.name));
    expect([...names].sort()).toEqual(['notifier', 'trigger', 'worker']);
    expect(happy.metrics).toBeGreaterThan(0);
    expect(happy.logLines).toBeGreaterThan(0);
  });
});
