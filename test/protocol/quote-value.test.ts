import { describe, expect, it } from 'vitest';
import { QUOTE_MAX_CHARS, quoteValue } from '../../functions/protocol/quote-value';

describe('quoteValue', () => {
  it.each<[unknown, string]>([
    ['abc', '"abc"'],
    ['', '""'],
    ['say "hi"\n', '"say \\"hi\\"\\n"'],
    [42, '42'],
    [true, 'true'],
    [null, 'null'],
    [undefined, 'undefined'],
    [{ a: 1 }, '{"a":1}'],
    [[1, 'x'], '[1,"x"]'],
  ])('quotes the short value %j as JSON.stringify does', (value, quoted) => {
    expect(quoteValue(value)).toBe(quoted);
  });

  it('quotes a long string by its first 80 characters and its length', () => {
    const quoted = quoteValue('x'.repeat(1_000_000));
    expect(quoted).toBe(`"${'x'.repeat(QUOTE_MAX_CHARS)}…" (1000000 chars)`);
  });

  it('keeps a string of exactly the limit whole, and cuts one character longer', () => {
    expect(quoteValue('y'.repeat(80))).toBe(`"${'y'.repeat(80)}"`);
    expect(quoteValue('y'.repeat(81))).toBe(`"${'y'.repeat(80)}…" (81 chars)`);
    expect(quoteValue('abcdef', 3)).toBe('"abc…" (6 chars)');
  });

  it('does not cut a character in half', () => {
    expect(quoteValue(`${'a'.repeat(79)}😀😀`)).toBe(`"${'a'.repeat(79)}…" (83 chars)`);
  });

  it('quotes a large object or array by the start of its JSON and the JSON length', () => {
    const quoted = quoteValue({ scheduledTime: 'z'.repeat(5_000) });
    expect(quoted).toMatch(/^\{"scheduledTime":"z+… \(5020 chars of JSON\)$/);
    expect(quoted.length).toBeLessThan(120);
  });

  it('quotes what JSON cannot write without throwing', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(quoteValue(circular)).toBe('[object Object]');
    expect(quoteValue(10n)).toBe('10');
    expect(quoteValue(Symbol('s'))).toBe('Symbol(s)');
  });
});
