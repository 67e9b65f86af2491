/**
 * Capacity units the way DynamoDB bills them on demand: a write unit per 1 KB of item (rounded up, per item write,
 * the larger of the item before and after), a read unit per 4 KB read strongly consistently (half for eventually
 * consistent reads, the only kind an index serves). A global secondary index is written whenever a write changes a
 * projected attribute of an item in it; a change of the index key is a delete of the old entry and a put of the new.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html and
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes
 */
import { itemSize, type WireItem } from './item-size';

export const WRITE_UNIT_BYTES = 1024;
export const READ_UNIT_BYTES = 4096;

export interface IndexShape {
  readonly partitionKey: string;
  readonly sortKey: string;
  /** 'ALL', or the attribute names projected besides the keys. */
  readonly projection: 'ALL' | readonly string[];
  /** The table's key attributes, which every index entry carries. */
  readonly tableKeys?: readonly string[];
}

export interface WriteUnits {
  readonly table: number;
  readonly index: number;
}

const units = (bytes: number, perUnit: number): number => Math.max(1, Math.ceil(bytes / perUnit));

/**
 * One item write (PutItem, UpdateItem, DeleteItem). `before`/`after` are the item as stored before and after the
 * write (undefined when absent). A write refused by its condition still costs the table the existing item's size
 * (at least 1 unit) and writes no index.
 */
export function writeUnits(
  before: WireItem | undefined,
  after: WireItem | undefined,
  succeeded: boolean,
  index?: IndexShape,
): WriteUnits {
  const largest = Math.max(before ? itemSize(before) : 0, succeeded && after ? itemSize(after) : 0);
  const table = units(largest, WRITE_UNIT_BYTES);
  if (!succeeded || index === undefined) return { table, index: 0 };
  return { table, index: indexWriteUnits(before, after, index) };
}

export function indexWriteUnits(before: WireItem | undefined, after: WireItem | undefined, index: IndexShape): number {
  const old = before && inIndex(before, index) ? projected(before, index) : undefined;
  const next = after && inIndex(after, index) ? projected(after, index) : undefined;
  if (old === undefined && next === undefined) return 0;
  if (old === undefined) return units(itemSize(next as WireItem), WRITE_UNIT_BYTES);
  if (next === undefined) return units(itemSize(old), WRITE_UNIT_BYTES);
  if (!sameKey(before as WireItem, after as WireItem, index)) {
    return units(itemSize(old), WRITE_UNIT_BYTES) + units(itemSize(next), WRITE_UNIT_BYTES);
  }
  if (sameValues(old, next)) return 0;
  return units(Math.max(itemSize(old), itemSize(next)), WRITE_UNIT_BYTES);
}

/** A sparse index holds only the items that have both of its key attributes. */
function inIndex(item: WireItem, index: IndexShape): boolean {
  return item[index.partitionKey] !== undefined && item[index.sortKey] !== undefined;
}

function sameKey(a: WireItem, b: WireItem, index: IndexShape): boolean {
  return (
    JSON.stringify(a[index.partitionKey]) === JSON.stringify(b[index.partitionKey]) &&
    JSON.stringify(a[index.sortKey]) === JSON.stringify(b[index.sortKey])
  );
}

/** The index entry: every attribute (ALL), or the index and table keys and the listed attributes. */
export function projected(item: WireItem, index: IndexShape): WireItem {
  if (index.projection === 'ALL') return item;
  const keep = new Set([index.partitionKey, index.sortKey, ...(index.tableKeys ?? []), ...index.projection]);
  return Object.fromEntries(Object.entries(item).filter(([name]) => keep.has(name)));
}

function sameValues(a: WireItem, b: WireItem): boolean {
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names].every((n) => JSON.stringify(a[n]) === JSON.stringify(b[n]));
}

/** GetItem: the item's size (an absent item still costs the minimum), halved when eventually consistent. */
export function getItemReadUnits(item: WireItem | undefined, consistent: boolean): number {
  return units(item ? itemSize(item) : 0, READ_UNIT_BYTES) * (consistent ? 1 : 0.5);
}

/**
 * BatchGetItem: each item read as a GetItem would be (its own size rounded up to 4 KB, halved when eventually
 * consistent); a key whose item is absent costs nothing in a batch.
 */
export function batchGetReadUnits(items: readonly WireItem[], consistent: boolean): number {
  return items.reduce((sum, item) => sum + getItemReadUnits(item, consistent), 0);
}

/** Query: the summed size of the items read (not per item), rounded up to 4 KB; an index read is eventual. */
export function queryReadUnits(items: readonly WireItem[], consistent: boolean): number {
  const bytes = items.reduce((sum, item) => sum + itemSize(item), 0);
  return units(bytes, READ_UNIT_BYTES) * (consistent ? 1 : 0.5);
}
