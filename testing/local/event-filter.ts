/**
 * Lambda's event filtering (an event source mapping's FilterCriteria), for the records the local event sources
 * deliver: a record passes when any pattern matches it. A pattern is an object whose leaves are lists; a field
 * matches when its value (or any element of it, for a list) equals one of the list's values or meets one of its
 * operators: `anything-but`, `prefix`, `suffix`, `equals-ignore-case`, `exists`, `numeric`. Every field a pattern
 * names must match. An SQS record's body is matched as JSON when it is JSON, as Lambda does.
 */

export class UnsupportedFilterError extends Error {
  override readonly name = 'UnsupportedFilterError';
}

/** Whether the record passes the filters; no filters pass everything. */
export function passesFilters(record: unknown, filters: readonly unknown[] | undefined): boolean {
  return filters === undefined || filters.some((pattern) => matches(record, pattern));
}

/** An SQS record as the filter sees it: the body parsed when it is JSON. */
export function sqsRecordForFilter(record: { readonly body: string }): unknown {
  try {
    return { ...record, body: JSON.parse(record.body) };
  } catch {
    return record;
  }
}

function matches(value: unknown, pattern: unknown): boolean {
  if (Array.isArray(pattern)) return matchesAny(value, pattern);
  if (typeof pattern !== 'object' || pattern === null)
    throw new UnsupportedFilterError(`a filter pattern's leaves are lists, got ${JSON.stringify(pattern)}`);
  return Object.entries(pattern).every(([field, sub]) => {
    const inner = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[field] : undefined;
    return matches(inner, sub);
  });
}

/** A leaf: the value (any element of a list value) meets one of the conditions. */
function matchesAny(value: unknown, conditions: readonly unknown[]): boolean {
  const exists = conditions.find((c) => isOperator(c, 'exists')) as { exists: boolean } | undefined;
  if (exists !== undefined && conditions.length === 1) return (value !== undefined) === exists.exists;
  if (value === undefined) return false;
  const values = Array.isArray(value) ? value : [value];
  return values.some((v) => conditions.some((c) => meets(v, c)));
}

function meets(value: unknown, condition: unknown): boolean {
  if (typeof condition !== 'object' || condition === null) return value === condition;
  const [[operator, argument]] = Object.entries(condition);
  switch (operator) {
    case 'anything-but': {
      if (typeof argument === 'object' && argument !== null && !Array.isArray(argument)) return !meets(value, argument);
      const excluded = Array.isArray(argument) ? argument : [argument];
      return !excluded.includes(value);
    }
    case 'prefix':
      return typeof value === 'string' && value.startsWith(String(argument));
    case 'suffix':
      return typeof value === 'string' && value.endsWith(String(argument));
    case 'equals-ignore-case':
      return typeof value === 'string' && value.toLowerCase() === String(argument).toLowerCase();
    case 'exists':
      return argument === true;
    case 'numeric':
      return typeof value === 'number' && numericMatch(value, argument as unknown[]);
    default:
      throw new UnsupportedFilterError(`the filter operator ${JSON.stringify(operator)} is not played locally`);
  }
}

function numericMatch(value: number, comparisons: readonly unknown[]): boolean {
  for (let i = 0; i < comparisons.length; i += 2) {
    const [op, bound] = [comparisons[i], Number(comparisons[i + 1])];
    const ok =
      op === '='
        ? value === bound
        : op === '<'
          ? value < bound
          : op === '<='
            ? value <= bound
            : op === '>'
              ? value > bound
              : op === '>='
                ? value >= bound
                : undefined;
    if (ok === undefined) throw new UnsupportedFilterError(`numeric comparison ${JSON.stringify(op)}`);
    if (!ok) return false;
  }
  return true;
}

function isOperator(condition: unknown, name: string): boolean {
  return typeof condition === 'object' && condition !== null && name in condition;
}
