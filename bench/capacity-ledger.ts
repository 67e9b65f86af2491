/**
 * Watches every DynamoDB attempt of the handlers (through RequestRecorder's observer) and prices it in capacity
 * units: for a write it reads the item from the emulator just before and just after (inside the emulator lock, so
 * no other write comes between), for a read it sizes the items that came back.
 */
import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { OCCURRENCE_TABLE } from '../functions/protocol/table-schema';
import { batchGetReadUnits, getItemReadUnits, type IndexShape, queryReadUnits, writeUnits } from './capacity';
import { itemSize, type WireItem } from './item-size';
import type { DynamoExchange, DynamoObserver } from './request-recorder';

/** The status index as the stack defines it (functions/protocol/table-schema.ts, lib/occurrence-storage.ts). */
export const STATUS_INDEX: IndexShape = {
  partitionKey: OCCURRENCE_TABLE.statusIndex.partitionKey,
  sortKey: OCCURRENCE_TABLE.statusIndex.sortKey,
  projection: OCCURRENCE_TABLE.statusIndex.nonKeyAttributes,
  tableKeys: [OCCURRENCE_TABLE.partitionKey, OCCURRENCE_TABLE.sortKey],
};

export interface CapacityEntry {
  readonly operation: string;
  readonly succeeded: boolean;
  readonly tableWriteUnits: number;
  readonly indexWriteUnits: number;
  readonly tableReadUnits: number;
  readonly indexReadUnits: number;
  /** The item's size after the write (or as read), bytes. */
  readonly itemBytes?: number;
  /** The item after a write, for the growth figure. */
  readonly after?: WireItem;
}

export interface CapacityTotals {
  tableWriteUnits: number;
  indexWriteUnits: number;
  tableReadUnits: number;
  indexReadUnits: number;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);

export class CapacityLedger implements DynamoObserver {
  readonly entries: CapacityEntry[] = [];
  private pendingBefore: WireItem | undefined;

  constructor(
    private readonly raw: DynamoDBClient,
    private readonly index: IndexShape = STATUS_INDEX,
  ) {}

  async before(operation: string, request: Record<string, unknown>): Promise<void> {
    this.pendingBefore = WRITES.has(operation) ? await this.read(request) : undefined;
  }

  async after(exchange: DynamoExchange): Promise<void> {
    const succeeded = exchange.status === 200;
    if (WRITES.has(exchange.operation)) {
      const after = await this.read(exchange.request);
      const units = writeUnits(this.pendingBefore, after, succeeded, this.index);
      this.push(exchange.operation, succeeded, { tableWriteUnits: units.table, indexWriteUnits: units.index }, after);
    } else if (exchange.operation === 'GetItem' && succeeded) {
      const item = exchange.response?.Item as WireItem | undefined;
      const rcu = getItemReadUnits(item, exchange.request.ConsistentRead === true);
      this.push('GetItem', true, { tableReadUnits: rcu }, undefined, item);
    } else if (exchange.operation === 'Query' && succeeded) {
      const items = (exchange.response?.Items ?? []) as WireItem[];
      const rcu = queryReadUnits(items, exchange.request.ConsistentRead === true);
      const onIndex = typeof exchange.request.IndexName === 'string';
      this.push('Query', true, onIndex ? { indexReadUnits: rcu } : { tableReadUnits: rcu });
    } else if (exchange.operation === 'BatchGetItem' && succeeded) {
      this.push('BatchGetItem', true, { tableReadUnits: batchGetTableReadUnits(exchange) });
    }
    this.pendingBefore = undefined;
  }

  take(): CapacityEntry[] {
    return this.entries.splice(0, this.entries.length);
  }

  private push(
    operation: string,
    succeeded: boolean,
    units: Partial<CapacityTotals>,
    after?: WireItem,
    read?: WireItem,
  ): void {
    const sized = after ?? read;
    this.entries.push({
      operation,
      succeeded,
      tableWriteUnits: units.tableWriteUnits ?? 0,
      indexWriteUnits: units.indexWriteUnits ?? 0,
      tableReadUnits: units.tableReadUnits ?? 0,
      indexReadUnits: units.indexReadUnits ?? 0,
      itemBytes: sized ? itemSize(sized) : undefined,
      after,
    });
  }

  /** The item a write request names (its Key, or the key attributes of its Item), as stored now. */
  private async read(request: Record<string, unknown>): Promise<WireItem | undefined> {
    const key = keyOf(request);
    if (key === undefined) return undefined;
    const got = await this.raw.send(
      new GetItemCommand({ TableName: String(request.TableName), Key: key as never, ConsistentRead: true }),
    );
    return got.Item as WireItem | undefined;
  }
}

/** The read units of a BatchGetItem's answer: every table's items, each table's ConsistentRead as asked. */
function batchGetTableReadUnits(exchange: DynamoExchange): number {
  const responses = (exchange.response?.Responses ?? {}) as Record<string, WireItem[]>;
  const asked = (exchange.request.RequestItems ?? {}) as Record<string, { ConsistentRead?: boolean }>;
  return Object.entries(responses).reduce(
    (sum, [table, items]) => sum + batchGetReadUnits(items, asked[table]?.ConsistentRead === true),
    0,
  );
}

function keyOf(request: Record<string, unknown>): WireItem | undefined {
  if (request.Key) return request.Key as WireItem;
  const item = request.Item as WireItem | undefined;
  if (!item) return undefined;
  const pk = OCCURRENCE_TABLE.partitionKey;
  const sk = OCCURRENCE_TABLE.sortKey;
  return { [pk]: item[pk], [sk]: item[sk] } as WireItem;
}

export function sumCapacity(entries: readonly CapacityEntry[]): CapacityTotals {
  return entries.reduce<CapacityTotals>(
    (t, e) => ({
      tableWriteUnits: t.tableWriteUnits + e.tableWriteUnits,
      indexWriteUnits: t.indexWriteUnits + e.indexWriteUnits,
      tableReadUnits: t.tableReadUnits + e.tableReadUnits,
      indexReadUnits: t.indexReadUnits + e.indexReadUnits,
    }),
    { tableWriteUnits: 0, indexWriteUnits: 0, tableReadUnits: 0, indexReadUnits: 0 },
  );
}
