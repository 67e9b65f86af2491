import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseScheduledTime, REPORT_KEY_PREFIX, reportKeyOf } from '../../functions/protocol/occurrence';

const ok = (input: unknown) => {
  const result = normaliseScheduledTime(input);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(input)} to be accepted, got: ${result.error}`);
  return result.value;
};
const error = (input: unknown) => {
  const result = normaliseScheduledTime(input);
  if (result.ok) throw new Error(`expected ${JSON.stringify(input)} to be rejected, got ${result.value}`);
  return result.error;
};

describe('normaliseScheduledTime: one key format, UTC whole seconds with Z', () => {
  it.each([
    ['2026-11-30T06:00:00Z', '2026-11-30T06:00:00Z'],
    ['2026-11-30T07:00:00+01:00', '2026-11-30T06:00:00Z'],
    ['2026-11-30T01:30:00-04:30', '2026-11-30T06:00:00Z'],
    ['2026-11-30T06:00:00.000Z', '2026-11-30T06:00:00Z'],
    ['2026-11-30T06:00:00.000000000+00:00', '2026-11-30T06:00:00Z'],
    ['2026-12-01T00:30:00+01:00', '2026-11-30T23:30:00Z'], // the zone moves it to the previous day
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00Z'], // leap day
  ])('%s -> %s', (input, expected) => {
    expect(ok(input)).toBe(expected);
  });

  it('maps the same instant written in different zones to the same key', () => {
    expect(ok('2026-03-29T03:00:00+02:00')).toBe(ok('2026-03-29T01:00:00Z'));
  });

  it('rejects a non-zero fraction: two sub-second times must not share one key', () => {
    expect(error('2026-11-30T06:00:00.500Z')).toMatch(/whole seconds/);
    expect(error('2026-11-30T06:00:00.001Z')).toMatch(/whole seconds/);
  });

  it.each([
    '2026-02-30T00:00:00Z', // 30 February: Date.parse rolls it over to 2 March
    '2027-02-29T00:00:00Z', // not a leap year
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-30T24:00:00Z', // Date.parse accepts 24:00 as the next midnight
    '2026-11-30T06:60:00Z',
    '2026-11-30T23:59:60Z',
  ])('rejects the impossible date or time %s', (input) => {
    expect(error(input)).toMatch(/not a real date and time/);
  });

  it.each([
    ['2026-11-30T06:00:00', /with a zone/], // no zone: the instant is ambiguous
    ['2026-11-30 06:00:00Z', /with a zone/],
    ['2026-11-30', /with a zone/],
    ['1796018400000', /with a zone/],
    ['', /with a zone/],
  ])('rejects %j as not ISO-8601 with a zone', (input, pattern) => {
    expect(error(input)).toMatch(pattern);
  });

  it.each([
    [undefined, 'nothing'],
    [null, 'null'],
    [1796018400000, 'number'],
    [['2026-11-30T06:00:00Z'], 'an array'],
  ])('rejects the non-string %j, describing what it got', (input, described) => {
    expect(error(input)).toBe(`scheduledTime must be a string, got ${described}`);
  });
});

describe('reportKeyOf', () => {
  it('puts the report at reports/{jobId}/{scheduledTime}.{ext}', () => {
    expect(reportKeyOf({ jobId: 'occurrence-digest', scheduledTime: '2026-11-30T06:00:00Z' }, 'md')).toBe(
      'reports/occurrence-digest/2026-11-30T06:00:00Z.md',
    );
  });

  it('gives different occurrences different report keys', () => {
    const a = reportKeyOf({ jobId: 'a', scheduledTime: '2026-11-30T06:00:00Z' }, 'md');
    expect(reportKeyOf({ jobId: 'b', scheduledTime: '2026-11-30T06:00:00Z' }, 'md')).not.toBe(a);
    expect(reportKeyOf({ jobId: 'a', scheduledTime: '2026-11-30T06:00:01Z' }, 'md')).not.toBe(a);
  });

  it('keeps every report under the prefix the worker may write to', () => {
    expect(
      reportKeyOf({ jobId: 'a', scheduledTime: '2026-11-30T06:00:00Z' }, 'json').startsWith(REPORT_KEY_PREFIX),
    ).toBe(true);
  });
});

describe('normaliseScheduledTime: keys in the years 1970-2199 only', () => {
  const KEY_FORMAT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

  it.each([
    ['9999-12-31T23:59:59-00:01', '+010000-01-01T00:00:59Z'], // its UTC form left the key format
    ['0000-01-01T00:30:00+01:00', '-000001-12-31T23:30:00Z'],
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59Z'], // its deadline would be in year 10000
    ['2200-01-01T00:00:00Z', '2200-01-01T00:00:00Z'],
    ['2199-12-31T23:30:00-01:00', '2200-01-01T00:30:00Z'], // in range as written, not in UTC
    ['1969-12-31T23:59:59Z', '1969-12-31T23:59:59Z'],
    ['1970-01-01T00:30:00+01:00', '1969-12-31T23:30:00Z'],
  ])('rejects %s, whose UTC form %s is outside 1970-2199', (input, utc) => {
    expect(error(input)).toBe(
      `scheduledTime must be from 1970-01-01T00:00:00Z to 2199-12-31T23:59:59Z in UTC, got ${JSON.stringify(input)} (${utc} in UTC)`,
    );
  });

  it.each([
    ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00Z'],
    ['2199-12-31T23:59:59Z', '2199-12-31T23:59:59Z'],
    ['2200-01-01T00:30:00+01:00', '2199-12-31T23:30:00Z'], // out of range as written, in range in UTC
    ['1969-12-31T23:30:00-01:00', '1970-01-01T00:30:00Z'],
  ])('accepts the edge %s as %s', (input, expected) => {
    expect(ok(input)).toBe(expected);
  });

  const dates = (min: string, max: string) => fc.date({ min: new Date(min), max: new Date(max), noInvalidDate: true });

  it('gives every accepted input a key in the key format that normalises to itself and sorts as its instant', () => {
    const offset = fc
      .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
      .map(([sign, h, m]) => `${sign}${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
    const input = fc
      .tuple(
        fc.oneof(
          // Mostly near the range, and near the ends of the four-digit years, where a zone can push the UTC form out.
          { weight: 4, arbitrary: dates('1969-12-30T00:00:00Z', '2200-01-02T00:00:00Z') },
          { weight: 1, arbitrary: dates('0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z') },
          { weight: 1, arbitrary: dates('0000-01-01T00:00:00Z', '0000-01-02T00:00:00Z') },
          { weight: 1, arbitrary: dates('9999-12-31T00:00:00Z', '9999-12-31T23:59:59Z') },
        ),
        fc.oneof(fc.constant('Z'), offset),
      )
      .map(([d, zone]) => `${d.toISOString().slice(0, 19)}${zone}`);
    fc.assert(
      fc.property(input, input, (a, b) => {
        const [na, nb] = [normaliseScheduledTime(a), normaliseScheduledTime(b)];
        for (const n of [na, nb]) {
          if (!n.ok) continue;
          expect(n.value).toMatch(KEY_FORMAT);
          expect(normaliseScheduledTime(n.value)).toEqual(n);
        }
        if (na.ok && nb.ok) {
          expect(na.value < nb.value).toBe(Date.parse(na.value) < Date.parse(nb.value));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
