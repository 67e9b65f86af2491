import { describe, expect, it } from 'vitest';
import { fire } from '../../scripts/local/scheduler';

describe('fire (Scheduler invoking the trigger asynchronously)', () => {
  const EVENT = {
    jobId: 'daily',
    scheduledTime: '2026-12-01T06:00:00Z',
    worker: 'local',
    deadlineSeconds: 3_600,
    retentionDays: 7,
  };

  it("sends the deployed schedule's input and retries a failed invocation twice, as Lambda does", async () => {
    const inputs: unknown[] = [];
    const flaky = async (event: unknown) => {
      inputs.push(event);
      if (inputs.length < 3) throw new Error('throttled');
      return 'recorded' as const;
    };
    expect(await fire(flaky, EVENT)).toEqual({ ok: true, result: 'recorded', attempts: 3 });
    expect(inputs).toEqual(Array(3).fill(EVENT));
  });

  it('gives up after three attempts with the last error (deployed, the event would go to the trigger DLQ)', async () => {
    const failing = async (): Promise<never> => {
      throw new Error('table missing');
    };
    expect(await fire(failing, EVENT)).toEqual({
      ok: false,
      error: 'table missing',
      attempts: 3,
    });
  });
});
