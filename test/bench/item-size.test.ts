import { describe, expect, it } from 'vitest';
import { itemSize, numberSize, valueSize } from '../../bench/item-size';

// Hand-computed from "Item sizes and formats" in the DynamoDB developer guide.
describe('Function: itemSize', () => {
  it('adds attribute names (UTF-8 bytes) and string values (UTF-8 bytes)', () => {
    expect(itemSize({ pk: { S: 'job#1' } })).toBe(2 + 5);
    expect(itemSize({ é: { S: 'é' } })).toBe(2 + 2);
  });

  it('sizes numbers as 1 byte per two significant digits plus 1, zeros trimmed', () => {
    expect(numberSize('123')).toBe(3);
    expect(numberSize('0.0100')).toBe(2);
    expect(numberSize('-12345.678')).toBe(5);
    expect(numberSize('1700000000')).toBe(2);
    expect(itemSize({ n: { N: '1700000001' } })).toBe(1 + 6);
  });

  it('sizes binary by its raw bytes and booleans and nulls as 1 byte', () => {
    expect(valueSize({ B: 'AAEC' })).toBe(3);
    expect(itemSize({ ok: { BOOL: true }, no: { NULL: true } })).toBe(2 + 1 + 2 + 1);
  });

  it('gives lists and maps 3 bytes of overhead and 1 byte per element, map keys counted', () => {
    expect(valueSize({ L: [] })).toBe(3);
    expect(valueSize({ L: [{ S: 'ab' }, { N: '1' }] })).toBe(3 + (2 + 1) + (2 + 1));
    expect(valueSize({ M: { a: { S: 'xy' } } })).toBe(3 + (1 + 2 + 1));
    expect(itemSize({ h: { L: [{ M: { at: { S: '2026' } } }] } })).toBe(1 + 3 + (3 + 2 + 4 + 1) + 1);
  });

  it('sizes sets as the sum of their elements', () => {
    expect(valueSize({ SS: ['a', 'bc'] })).toBe(3);
    expect(valueSize({ NS: ['1', '123'] })).toBe(2 + 3);
  });
});
