/**
 * The console's own DynamoDB cost: the read capacity units and the requests each answer consumed, counted by a
 * middleware on the DynamoDB client and summed per HTTP request (AsyncLocalStorage carries the request's tally
 * through every await down to the SDK's middleware, so concurrent requests do not mix their counts).
 *
 * Two sources, chosen when the meter is made:
 * - `reported`: the middleware asks every read for `ReturnConsumedCapacity: TOTAL` and sums the `CapacityUnits`
 *   DynamoDB answers with. Against AWS this is the bill, exactly.
 * - `estimated`: from the sizes of the items that came back, the way DynamoDB bills reads: a GetItem rounds its item
 *   up to 4 KB, a Query sums its page's items and rounds the sum up to 4 KB, a BatchGetItem rounds each item; one
 *   unit per 4 KB for a consistent read, half for an eventually consistent one; a read that finds nothing still
 *   costs one. For the emulator: moto does answer ConsumedCapacity, but with constants (1 per Query whatever it
 *   read, 0.5 per GetItem), which says nothing about a page of a thousand rows. The estimate counts the bytes that
 *   came back, so with a ProjectionExpression it is a lower bound (DynamoDB bills the whole items a Query reads).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** What one answer read. */
export interface ReadCount {
  /** Read capacity units, to a hundredth. */
  readonly units: number;
  /** DynamoDB read requests (GetItem, Query, BatchGetItem, Scan pages). */
  readonly requests: number;
}

/** Where the units come from: DynamoDB's answer, or an estimate from the items' sizes. */
export type ReadUnitSource = 'reported' | 'estimated';

/** The commands the meter counts: the reads. Writes are the actions' and are not the pages' cost. */
const READS = new Set(['GetItemCommand', 'QueryCommand', 'BatchGetItemCommand', 'ScanCommand']);

const KB4 = 4096;

class Tally {
  units = 0;
  requests = 0;
}

/** A client whose middleware stack the meter can join (DynamoDBClient, DynamoDBDocumentClient). */
export interface MeteredClient {
  readonly middlewareStack: {
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's middleware types vary by client; the meter's is generic.
    add(middleware: any, options: { step: 'initialize'; name: string; override?: boolean }): void;
  };
}

/** Counts the read units of the requests made inside `measure`. */
export class ReadMeter {
  readonly #current = new AsyncLocalStorage<Tally>();

  constructor(
    /** Where the units come from (see the module's comment). */
    readonly source: ReadUnitSource,
  ) {}

  /** Runs `work`, counting the reads it makes through every attached client. */
  async measure<T>(work: () => Promise<T>): Promise<{ readonly value: T; readonly reads: ReadCount }> {
    const tally = new Tally();
    const value = await this.#current.run(tally, work);
    return { value, reads: { units: Math.round(tally.units * 100) / 100, requests: tally.requests } };
  }

  /** Adds the counting middleware to a DynamoDB client (a document client shares its base client's stack). */
  attach(client: MeteredClient): void {
    client.middlewareStack.add(
      (next: (args: { input: object }) => Promise<{ output: unknown }>, context: { commandName?: string }) =>
        async (args: { input: object }) => {
          const tally = this.#current.getStore();
          const command = context.commandName ?? '';
          if (tally === undefined || !READS.has(command)) return next(args);
          const input = { ...args.input, ReturnConsumedCapacity: 'TOTAL' } as Record<string, unknown>;
          const result = await next({ ...args, input });
          tally.requests += 1;
          const output = result.output as Record<string, unknown>;
          tally.units += this.source === 'reported' ? reportedUnits(output) : estimatedUnits(command, input, output);
          return result;
        },
      { step: 'initialize', name: 'consoleReadUnits', override: true },
    );
  }
}

/** The CapacityUnits of a read's ConsumedCapacity (one object, or one per table for a BatchGetItem). */
export function reportedUnits(output: Record<string, unknown>): number {
  const consumed = output.ConsumedCapacity as { CapacityUnits?: number } | { CapacityUnits?: number }[] | undefined;
  const all = Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed];
  return all.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
}

/** What DynamoDB would bill for this read, from the sizes of the items it returned (see the module's comment). */
export function estimatedUnits(
  command: string,
  input: Record<string, unknown>,
  output: Record<string, unknown>,
): number {
  const perUnit = input.ConsistentRead === true ? 1 : 0.5;
  switch (command) {
    case 'GetItemCommand':
      return blocks(output.Item === undefined ? 0 : itemBytes(output.Item)) * perUnit;
    case 'QueryCommand':
    case 'ScanCommand': {
      const items = (output.Items ?? []) as unknown[];
      return blocks(items.reduce((sum: number, item) => sum + itemBytes(item), 0)) * perUnit;
    }
    case 'BatchGetItemCommand': {
      const requested = (input.RequestItems ?? {}) as Record<string, { Keys?: unknown[]; ConsistentRead?: boolean }>;
      const responses = (output.Responses ?? {}) as Record<string, unknown[]>;
      const unprocessed = (output.UnprocessedKeys ?? {}) as Record<string, { Keys?: unknown[] }>;
      let units = 0;
      for (const [table, request] of Object.entries(requested)) {
        const unit = request.ConsistentRead === true ? 1 : 0.5;
        const found = responses[table] ?? [];
        const asked = (request.Keys?.length ?? 0) - (unprocessed[table]?.Keys?.length ?? 0);
        units += found.reduce((sum: number, item) => sum + blocks(itemBytes(item)) * unit, 0);
        units += Math.max(0, asked - found.length) * unit;
      }
      return units;
    }
    default:
      return 0;
  }
}

/** 4 KB blocks, at least one: a read that finds nothing is billed too. */
const blocks = (bytes: number): number => Math.max(1, Math.ceil(bytes / KB4));

/** An item's size as DynamoDB counts it: each attribute's name and value. */
export function itemBytes(item: unknown): number {
  if (item === null || typeof item !== 'object') return 0;
  return Object.entries(item).reduce((sum, [name, value]) => sum + utf8(name) + valueBytes(value), 0);
}

function valueBytes(value: unknown): number {
  if (typeof value === 'string') return utf8(value);
  if (typeof value === 'number' || typeof value === 'bigint') return Math.ceil(String(value).length / 2) + 1;
  if (typeof value === 'boolean' || value === null || value === undefined) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce((sum: number, v) => sum + valueBytes(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + valueBytes(v), 0);
  if (typeof value === 'object') {
    return 3 + Object.entries(value).reduce((sum, [k, v]) => sum + 1 + utf8(k) + valueBytes(v), 0);
  }
  return 0;
}

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');
