import { describe, expect, it } from 'vitest';
import { ScheduledJobsError, ValidationError, validatedCall } from '../../lib/errors';

describe('Class: ScheduledJobsError', () => {
  it('is the base of ValidationError, which is named as the CDK names its own validation errors', () => {
    const error = new ValidationError(['addJob(x).timeout: bad']);
    expect(error).toBeInstanceOf(ScheduledJobsError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ValidationError');
  });

  it('ValidationError lists every problem in its message', () => {
    const error = new ValidationError(['a: x', 'b: y']);
    expect(error.problems).toEqual(['a: x', 'b: y']);
    expect(error.message).toBe('invalid configuration:\n  - a: x\n  - b: y');
  });
});

describe('Function: validatedCall', () => {
  function publicMethod(): never {
    return validatedCall(publicMethod, () => {
      throw new ValidationError(['publicMethod(x).y: bad']);
    });
  }

  it("starts a ValidationError's stack trace at the caller of the public method, without the package's frames", () => {
    let stack = '';
    try {
      publicMethod();
    } catch (error) {
      stack = (error as Error).stack ?? '';
    }
    const frames = stack.split('\n').filter((line) => line.trimStart().startsWith('at '));
    expect(frames.length).toBeGreaterThan(0);
    expect(stack).not.toMatch(/at (publicMethod|validatedCall)\b/);
    expect(frames[0]).toContain('errors.test.ts');
  });

  it('passes other errors through with their own stack', () => {
    expect(() =>
      validatedCall(publicMethod, () => {
        throw new TypeError('a bug');
      }),
    ).toThrow(TypeError);
  });
});
