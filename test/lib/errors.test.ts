import { describe, expect, it } from 'vitest';
import { JobConfigError, LibError } from '../../lib/errors';

describe('Class: LibError', () => {
  it.each([['JobConfigError', new JobConfigError(['jobs[0].id: bad'])]])(
    'is the base of %s, which keeps its own name',
    (name, error) => {
      expect(error).toBeInstanceOf(LibError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
    },
  );

  it('JobConfigError lists every problem in its message', () => {
    const error = new JobConfigError(['a: x', 'b: y']);
    expect(error.problems).toEqual(['a: x', 'b: y']);
    expect(error.message).toBe('invalid job configuration:\n  - a: x\n  - b: y');
  });
});
