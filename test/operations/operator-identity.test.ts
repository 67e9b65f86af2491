/**
 * operations/operator-identity.ts: the one identity every operator write records: `<os user>@<host> (<caller ARN>)`,
 * the OS user alone with a warning when STS fails, asked once per process, the console's form, and the length cap.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { MAX_BY_CHARS } from '../../functions/protocol/job-control';
import {
  consoleOperatorName,
  memoizedOperator,
  NO_AWS_IDENTITY_WARNING,
  operatorName,
  resolveOperatorIdentity,
} from '../../operations/operator-identity';

const ARN = 'arn:aws:sts::123456789012:assumed-role/Operators/alice';

describe('resolveOperatorIdentity', () => {
  it('is the OS user, the host and the caller ARN', async () => {
    const identity = await resolveOperatorIdentity({ env: { USER: 'alice' }, callerArn: async () => ARN });

    expect(operatorName(identity)).toBe(`alice@${hostname()} (${ARN})`);
    expect(consoleOperatorName(identity)).toBe(`alice via console (${ARN})`);
  });

  it('falls back to the OS user alone, and warns, when STS fails', async () => {
    const warnings: string[] = [];

    const identity = await resolveOperatorIdentity({
      env: { LOGNAME: 'bob' },
      callerArn: () => Promise.reject(new Error('no credentials')),
      warn: (text) => warnings.push(text),
    });

    expect(operatorName(identity)).toBe(`bob@${hostname()}`);
    expect(warnings).toEqual([NO_AWS_IDENTITY_WARNING]);
  });

  it('asks STS once however often it is asked', async () => {
    let calls = 0;
    const operator = memoizedOperator({
      env: { USER: 'alice' },
      callerArn: async () => {
        calls++;
        return ARN;
      },
    });

    await Promise.all([operator(), operator(), operator()]);

    expect(calls).toBe(1);
  });

  it('is cut to the length a row records', () => {
    const long = operatorName({ user: 'alice', host: 'h', callerArn: `arn:${'x'.repeat(400)}` });
    expect(long).toHaveLength(MAX_BY_CHARS);
  });
});
