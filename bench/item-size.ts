/**
 * DynamoDB item sizes as DynamoDB documents them ("Item sizes and formats",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html), computed from
 * items in the wire format (`{ name: { S: '...' } }`), which is what the bench reads from the emulator.
 */

/** One attribute value in DynamoDB's wire format. */
export type WireValue =
  | { S: string }
  | { N: string }
  | { B: string }
  | { BOOL: boolean }
  | { NULL: true }
  | { SS: string[] }
  | { NS: string[] }
  | { BS: string[] }
  | { L: WireValue[] }
  | { M: WireItem };
export type WireItem = Record<string, WireValue>;

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Size of an item: the sum over its attributes of name bytes plus value bytes. */
export function itemSize(item: WireItem): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + utf8Bytes(name) + valueSize(value), 0);
}

/** List and map: 3 bytes of overhead, plus each element's size, plus 1 byte per element. */
const CONTAINER_OVERHEAD_BYTES = 3;
const ELEMENT_OVERHEAD_BYTES = 1;

export function valueSize(value: WireValue): number {
  if ('S' in value) return utf8Bytes(value.S);
  if ('N' in value) return numberSize(value.N);
  if ('B' in value) return Buffer.from(value.B, 'base64').length;
  if ('BOOL' in value || 'NULL' in value) return 1;
  if ('SS' in value) return value.SS.reduce((sum, s) => sum + utf8Bytes(s), 0);
  if ('NS' in value) return value.NS.reduce((sum, n) => sum + numberSize(n), 0);
  if ('BS' in value) return value.BS.reduce((sum, b) => sum + Buffer.from(b, 'base64').length, 0);
  if ('L' in value) {
    const elements = value.L.reduce((sum, v) => sum + valueSize(v) + ELEMENT_OVERHEAD_BYTES, 0);
    return CONTAINER_OVERHEAD_BYTES + elements;
  }
  const entries = Object.entries(value.M).reduce(
    (sum, [name, v]) => sum + utf8Bytes(name) + valueSize(v) + ELEMENT_OVERHEAD_BYTES,
    0,
  );
  return CONTAINER_OVERHEAD_BYTES + entries;
}

/**
 * A number: 1 byte per two significant digits (leading and trailing zeros trimmed, rounded up), plus 1 byte.
 * DynamoDB calls this "approximately"; it is the rule the documentation gives.
 */
export function numberSize(text: string): number {
  const digits = text
    .replace(/^[-+]/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '');
  const significant = digits.replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(significant.length / 2) + 1;
}
