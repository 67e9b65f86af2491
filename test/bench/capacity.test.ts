import { describe, expect, it } from 'vitest';
import { getItemReadUnits, type IndexShape, indexWriteUnits, queryReadUnits, writeUnits } from '../../bench/capacity';
import type { WireItem } from '../../bench/item-size';

const INDEX: IndexShape = { partitionKey: 's', sortKey: 't', projection: 'ALL', tableKeys: ['pk'] };

/** An item of exactly `bytes` bytes in the index (status `status`): pk (2 + 3), s (1 + len), t (1 + 4), pad. */
function item(bytes: number, status = 'RUN', extra: WireItem = {}): WireItem {
  const fixed = 2 + 3 + 1 + status.length + 1 + 4 + 3;
  return { pk: { S: 'a#1' }, s: { S: status }, t: { S: '2026' }, pad: { S: 'x'.repeat(bytes - fixed) }, ...extra };
}

describe('Function: writeUnits', () => {
  it('rounds each item write up to whole kilobytes, the larger of before and after', () => {
    expect(writeUnits(undefined, item(1500), true, INDEX)).toEqual({ table: 2, index: 2 });
    expect(writeUnits(item(900), item(1100), true, INDEX)).toEqual({ table: 2, index: 2 });
    expect(writeUnits(item(1100), item(300), true)).toEqual({ table: 2, index: 0 });
    expect(writeUnits(undefined, item(1024), true)).toEqual({ table: 1, index: 0 });
  });

  it('charges a refused conditional write the existing item (at least 1 unit) and writes no index', () => {
    expect(writeUnits(item(2100), item(2100), false, INDEX)).toEqual({ table: 3, index: 0 });
    expect(writeUnits(undefined, undefined, false, INDEX)).toEqual({ table: 1, index: 0 });
  });

  it('writes the index twice when the write changes its key: a delete and a put', () => {
    expect(writeUnits(item(500, 'RUN'), item(1500, 'DONE'), true, INDEX)).toEqual({ table: 2, index: 1 + 2 });
  });
});

describe('Function: indexWriteUnits', () => {
  it('writes nothing for an item outside a sparse index, or a write that changes no projected attribute', () => {
    const noStatus: WireItem = { pk: { S: 'a' }, t: { S: '2026' } };
    expect(indexWriteUnits(noStatus, { ...noStatus, x: { S: 'y' } }, INDEX)).toBe(0);
    expect(indexWriteUnits(item(400), item(400), INDEX)).toBe(0);
    const keysOnly: IndexShape = { ...INDEX, projection: [] };
    expect(indexWriteUnits(item(400), item(400, 'RUN', { hb: { S: 'now' } }), keysOnly)).toBe(0);
    expect(indexWriteUnits(item(400), item(400, 'RUN', { hb: { S: 'now' } }), INDEX)).toBe(1);
  });

  it('puts an entry when an item enters the index and deletes it when the item leaves', () => {
    const out: WireItem = { pk: { S: 'a#1' }, t: { S: '2026' } };
    expect(indexWriteUnits(out, item(2000), INDEX)).toBe(2);
    expect(indexWriteUnits(item(3000), out, INDEX)).toBe(3);
  });
});

describe('Function: getItemReadUnits / queryReadUnits', () => {
  it('reads 4 KB per unit, half for eventually consistent reads, at least one read', () => {
    expect(getItemReadUnits(item(5000), true)).toBe(2);
    expect(getItemReadUnits(item(5000), false)).toBe(1);
    expect(getItemReadUnits(undefined, true)).toBe(1);
  });

  it('sums a query’s items before rounding', () => {
    expect(queryReadUnits([item(3000), item(3000)], false)).toBe(1);
    expect(queryReadUnits([item(3000), item(3000)], true)).toBe(2);
    expect(queryReadUnits([], false)).toBe(0.5);
  });
});
