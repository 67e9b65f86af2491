import { describe, expect, it } from 'vitest';
import { passesFilters, sqsRecordForFilter, UnsupportedFilterError } from '../../../testing/local/event-filter';

/** The notifier's filter as the stack synthesizes it: the change to SUCCEEDED. */
const NOTIFIER_FILTER = JSON.parse(
  '{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"status":{"S":["SUCCEEDED"]}},"OldImage":{"status":{"S":[{"anything-but":["SUCCEEDED"]}]}}}}',
);

const change = (eventName: string, from: string | undefined, to: string) => ({
  eventName,
  dynamodb: {
    NewImage: { status: { S: to }, jobId: { S: 'daily' } },
    ...(from === undefined ? {} : { OldImage: { status: { S: from } } }),
  },
});

describe('Function: passesFilters', () => {
  it("passes the notifier's records: a change to SUCCEEDED, and nothing else", () => {
    expect(passesFilters(change('MODIFY', 'RUNNING', 'SUCCEEDED'), [NOTIFIER_FILTER])).toBe(true);
    expect(passesFilters(change('MODIFY', 'SUCCEEDED', 'SUCCEEDED'), [NOTIFIER_FILTER])).toBe(false);
    expect(passesFilters(change('MODIFY', 'PENDING', 'RUNNING'), [NOTIFIER_FILTER])).toBe(false);
    expect(passesFilters(change('INSERT', undefined, 'SUCCEEDED'), [NOTIFIER_FILTER])).toBe(false);
  });

  it('passes everything without filters, and a record any one of several patterns matches', () => {
    expect(passesFilters({ a: 1 }, undefined)).toBe(true);
    expect(passesFilters({ a: 1 }, [{ a: [2] }, { a: [1] }])).toBe(true);
  });

  it('knows prefix, suffix, equals-ignore-case, exists, numeric, and matches any element of a list value', () => {
    const record = { key: 'reports/daily.md', size: 12, tags: ['x', 'y'], kind: 'Report' };
    expect(passesFilters(record, [{ key: [{ prefix: 'reports/' }] }])).toBe(true);
    expect(passesFilters(record, [{ key: [{ suffix: '.json' }] }])).toBe(false);
    expect(passesFilters(record, [{ kind: [{ 'equals-ignore-case': 'report' }] }])).toBe(true);
    expect(passesFilters(record, [{ missing: [{ exists: false }], key: [{ exists: true }] }])).toBe(true);
    expect(passesFilters(record, [{ size: [{ numeric: ['>', 10, '<=', 12] }] }])).toBe(true);
    expect(passesFilters(record, [{ size: [{ numeric: ['<', 10] }] }])).toBe(false);
    expect(passesFilters(record, [{ tags: ['y'] }])).toBe(true);
    expect(passesFilters(record, [{ missing: [{ 'anything-but': ['a'] }] }])).toBe(false);
  });

  it("matches an SQS record's body as JSON when it is JSON", () => {
    const pattern = [{ body: { jobId: ['daily'] } }];
    expect(passesFilters(sqsRecordForFilter({ body: '{"jobId":"daily"}' }), pattern)).toBe(true);
    expect(passesFilters(sqsRecordForFilter({ body: 'not json' }), [{ body: ['not json'] }])).toBe(true);
  });

  it('refuses an operator it does not play rather than guess', () => {
    expect(() => passesFilters({ ip: '10.0.0.1' }, [{ ip: [{ cidr: '10.0.0.0/24' }] }])).toThrow(
      UnsupportedFilterError,
    );
  });
});
