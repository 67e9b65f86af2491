/**
 * The read-unit meter (console/server/read-units.ts): it asks each read for its consumed capacity, sums what each
 * request made (not what a concurrent one made), and, where the answer's figure is not the bill (the emulator),
 * estimates it from item sizes the way DynamoDB bills.
 */
import { describe, expect, it } from 'vitest';
import { estimatedUnits, itemBytes, ReadMeter, reportedUnits } from '../../console/server/read-units';

type Middleware = (
  next: (args: { input: object }) => Promise<{ output: unknown }>,
  context: { commandName?: string },
) => (args: { input: object }) => Promise<{ output: unknown }>;

/** A client whose send runs the meter's middleware around a canned answer, recording the input it was sent. */
function fakeClient(answer: (command: string, input: Record<string, unknown>) => unknown) {
  const sent: Record<string, unknown>[] = [];
  let middleware: Middleware | undefined;
  return {
    sent,
    middlewareStack: {
      add: (m: Middleware) => {
        middleware = m;
      },
    },
    async send(command: string, input: object) {
      const handler = (args: { input: object }) => {
        sent.push(args.input as Record<string, unknown>);
        return Promise.resolve({ output: answer(command, args.input as Record<string, unknown>) });
      };
      return middleware ? middleware(handler, { commandName: command })({ input }) : handler({ input });
    },
  };
}

describe('ReadMeter', () => {
  it("asks every read for TOTAL consumed capacity and sums DynamoDB's answer per measured request", async () => {
    const meter = new ReadMeter('reported');
    const client = fakeClient((command) =>
      command === 'BatchGetItemCommand'
        ? { ConsumedCapacity: [{ CapacityUnits: 1.5 }, { CapacityUnits: 2 }] }
        : { ConsumedCapacity: { CapacityUnits: 0.5 } },
    );
    meter.attach(client);
    const { reads } = await meter.measure(async () => {
      await client.send('QueryCommand', { TableName: 't' });
      await client.send('GetItemCommand', { TableName: 't' });
      await client.send('BatchGetItemCommand', {});
      await client.send('PutItemCommand', {}); // a write: not the page's cost, not asked
    });
    expect(reads).toEqual({ units: 4.5, requests: 3 });
    expect(client.sent.map((i) => i.ReturnConsumedCapacity)).toEqual(['TOTAL', 'TOTAL', 'TOTAL', undefined]);
  });

  it('keeps the counts of concurrent requests apart, and counts nothing outside a measure', async () => {
    const meter = new ReadMeter('reported');
    const client = fakeClient(() => ({ ConsumedCapacity: { CapacityUnits: 1 } }));
    meter.attach(client);
    const slow = (n: number) =>
      meter.measure(async () => {
        for (let i = 0; i < n; i++) {
          await new Promise((r) => setImmediate(r));
          await client.send('QueryCommand', {});
        }
      });
    const [a, b] = await Promise.all([slow(3), slow(5)]);
    expect([a.reads.units, b.reads.units]).toEqual([3, 5]);
    await client.send('QueryCommand', {});
    expect(client.sent.at(-1)?.ReturnConsumedCapacity).toBeUndefined();
  });
});

describe('estimatedUnits', () => {
  const item = (bytes: number) => ({ pk: 'x'.repeat(bytes - 2) }); // 'pk' counts 2 bytes

  it('bills a Query by the sum of its items rounded up to 4 KB, half a unit each when eventually consistent', () => {
    expect(itemBytes(item(1000))).toBe(1000);
    const items = Array.from({ length: 20 }, () => item(1000));
    expect(estimatedUnits('QueryCommand', {}, { Items: items })).toBe(2.5); // 20,000 bytes: 5 blocks of 4 KB
    expect(estimatedUnits('QueryCommand', { ConsistentRead: true }, { Items: items })).toBe(5);
    expect(estimatedUnits('QueryCommand', {}, { Items: [] })).toBe(0.5); // an empty Query still costs
  });

  it('bills a GetItem per 4 KB of its item, and a miss as one read', () => {
    expect(estimatedUnits('GetItemCommand', { ConsistentRead: true }, { Item: item(5000) })).toBe(2);
    expect(estimatedUnits('GetItemCommand', {}, {})).toBe(0.5);
  });

  it('bills a BatchGetItem per item, and each key asked for that was found nowhere', () => {
    const input = { RequestItems: { t: { Keys: [{}, {}, {}, {}] } } };
    const output = { Responses: { t: [item(100), item(5000)] }, UnprocessedKeys: { t: { Keys: [{}] } } };
    expect(estimatedUnits('BatchGetItemCommand', input, output)).toBe(0.5 + 1 + 0.5);
  });

  it("reads DynamoDB's figure from one ConsumedCapacity or a list of them", () => {
    expect(reportedUnits({ ConsumedCapacity: { CapacityUnits: 3 } })).toBe(3);
    expect(reportedUnits({})).toBe(0);
  });
});
