/**
 * How an error message or a log line shows a bad input value: as JSON, and when that is long, only its start and
 * its length. An input can be large (a schedule event or queue message of 1 MB, a mistyped setting) and a message
 * that embeds it whole is as large; CloudWatch cuts a log event at 256 KB.
 */

/** The most characters of a bad value a message quotes. */
export const QUOTE_MAX_CHARS = 80;

/**
 * `value` as JSON (what `JSON.stringify` gives for short values, so existing messages keep their text), cut to its
 * first `max` characters with its length when it is longer.
 *
 * @example
 * quoteValue('abc'); // '"abc"'
 * quoteValue('x'.repeat(1_000_000)); // '"xxxx…" (1000000 chars)', 80 x's
 * quoteValue({ a: 'y'.repeat(500) }); // '{"a":"yyy…… (508 chars of JSON)'
 */
export function quoteValue(value: unknown, max: number = QUOTE_MAX_CHARS): string {
  if (typeof value === 'string') {
    return value.length <= max
      ? JSON.stringify(value)
      : `${JSON.stringify(`${cut(value, max)}…`)} (${value.length} chars)`;
  }
  const json = jsonOf(value);
  return json.length <= max ? json : `${cut(json, max)}… (${json.length} chars of JSON)`;
}

function jsonOf(value: unknown): string {
  try {
    // undefined, a function or a symbol have no JSON: String() names them.
    return JSON.stringify(value) ?? String(value);
  } catch {
    // A cycle, or a bigint.
    return String(value);
  }
}

/** The first `max` characters, without half of a surrogate pair at the end. */
function cut(text: string, max: number): string {
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
