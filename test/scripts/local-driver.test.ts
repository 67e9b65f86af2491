import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../functions/protocol/job-settings';
import type { ResolvedJobConfig } from '../../lib/job-config';
import { ensureMotoServer, MOTO_PIN, MotoUnavailableError } from '../../scripts/local/moto-server';
import { fire, planFires } from '../../scripts/local/scheduler';

const job = (id: string, schedule: string, timeZone = 'UTC'): ResolvedJobConfig => ({
  settings: withDefaults({ id }),
  schedule,
  timeZone,
  flexibleWindowMinutes: 0,
  enabled: true,
  schedulerRetry: { maximumRetryAttempts: 185, maximumEventAgeSeconds: 86_400 },
});

describe('planFires (the Scheduler the local run plays)', () => {
  it('fires the next n occurrences of each job from --from, oldest first across jobs', () => {
    const fires = planFires([job('daily', 'cron(0 6 * * ? *)'), job('twice-daily', 'rate(12 hours)')], {
      from: new Date('2026-12-01T00:00:00Z'),
      count: 2,
      now: new Date('2026-11-30T00:00:00Z'),
    });
    expect(fires).toEqual([
      { jobId: 'twice-daily', scheduledTime: '2026-12-01T00:00:00Z' },
      { jobId: 'daily', scheduledTime: '2026-12-01T06:00:00Z' },
      { jobId: 'twice-daily', scheduledTime: '2026-12-01T12:00:00Z' },
      { jobId: 'daily', scheduledTime: '2026-12-02T06:00:00Z' },
    ]);
  });

  it('without --from, fires the n most recent occurrences before now', () => {
    const fires = planFires([job('daily', 'cron(0 6 * * ? *)', 'Europe/Berlin')], {
      count: 2,
      now: new Date('2026-12-03T06:00:00Z'),
    });
    expect(fires.map((f) => f.scheduledTime)).toEqual(['2026-12-02T05:00:00Z', '2026-12-03T05:00:00Z']);
  });
});

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

describe('ensureMotoServer', () => {
  it('says what to install when moto_server is not on the PATH and no venv can be made', () => {
    const venv = path.join(mkdtempSync(path.join(tmpdir(), 'no-moto-')), '.venv');
    let error: unknown;
    try {
      ensureMotoServer(() => undefined, { env: { PATH: '/nonexistent' }, venv });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MotoUnavailableError);
    expect((error as Error).message).toContain(`pip install "${MOTO_PIN}"`);
  });
});
