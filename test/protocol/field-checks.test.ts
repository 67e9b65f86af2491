import { describe, expect, it } from 'vitest';
import {
  checkAll,
  exactly,
  id,
  jsonObject,
  knownOne,
  nonEmptyString,
  optional,
  wholeNumber,
} from '../../functions/protocol/field-checks';

const RANGE = { min: 60, max: 3600 };

describe('field checks (the stack’s own messages, without a schema library)', () => {
  it.each<[unknown, string]>([
    [59, 'got 59'],
    [3601, 'got 3601'],
    [90.5, 'got 90.5'],
    ['90', 'got "90"'],
    [undefined, 'got nothing'],
    [null, 'got null'],
  ])('wholeNumber refuses %j, saying the range and what it got', (value, got) => {
    expect(wholeNumber('leaseSeconds', value, RANGE)).toEqual({
      ok: false,
      error: `leaseSeconds must be a whole number from 60 to 3600, ${got}`,
    });
  });

  it('wholeNumber takes both ends of its range', () => {
    expect(wholeNumber('x', 60, RANGE)).toEqual({ ok: true, value: 60 });
    expect(wholeNumber('x', 3600, RANGE)).toEqual({ ok: true, value: 3600 });
  });

  it('id tells a value that is not a string from a string that is not an id', () => {
    expect(id('jobId', 42)).toEqual({ ok: false, error: 'jobId must be a job or worker id, got 42' });
    expect(id('jobId', '-x')).toMatchObject({ ok: false, error: expect.stringMatching(/^jobId must be 1-64 letters/) });
    expect(id('jobId', 'a'.repeat(65))).toMatchObject({ ok: false });
    expect(id('jobId', 'nightly_export-2')).toEqual({ ok: true, value: 'nightly_export-2' });
  });

  it('knownOne lists what the owner has, and passes on an earlier problem unchanged', () => {
    const known = new Set(['reports', 'exports']);
    expect(knownOne('worker', id('worker', 'nope'), known, "the trigger's workers")).toEqual({
      ok: false,
      error: 'worker "nope" is not one of the trigger\'s workers (it has: reports, exports)',
    });
    expect(knownOne('worker', id('worker', 7), known, 'x')).toEqual(id('worker', 7));
    expect(knownOne('worker', id('worker', 'exports'), known, 'x')).toEqual({ ok: true, value: 'exports' });
    expect(knownOne('worker', id('worker', 'a'), new Set(), 'none here')).toMatchObject({
      error: expect.stringContaining('(it has: none)'),
    });
  });

  it('nonEmptyString, exactly and jsonObject say what they got', () => {
    expect(nonEmptyString('jobId', '')).toEqual({ ok: false, error: 'jobId must be a non-empty string, got ""' });
    expect(exactly('v', 2, 1)).toEqual({ ok: false, error: 'v must be 1, got 2' });
    expect(exactly('v', 1, 1)).toEqual({ ok: true, value: 1 });
    expect(jsonObject([1])).toEqual({ ok: false, error: 'must be a JSON object, got an array' });
    expect(jsonObject({ a: 1 })).toEqual({ ok: true, value: { a: 1 } });
  });

  it('optional lets an absent field through and checks a present one', () => {
    const check = (v: unknown) => wholeNumber('w', v, RANGE);
    expect(optional(undefined, check)).toEqual({ ok: true, value: undefined });
    expect(optional(5, check)).toMatchObject({ ok: false });
  });

  it('checkAll gives every value when all pass, else every problem in the listed order', () => {
    expect(checkAll({ a: wholeNumber('a', 60, RANGE), b: id('b', 'x') })).toEqual({
      ok: true,
      value: { a: 60, b: 'x' },
    });
    const failed = checkAll({ a: wholeNumber('a', 1, RANGE), b: id('b', 'x'), c: exactly('c', 0, 1) });
    expect(failed).toEqual({
      ok: false,
      problems: ['a must be a whole number from 60 to 3600, got 1', 'c must be 1, got 0'],
    });
  });
});
