import { describe, expect, it } from 'vitest';
import { occurrenceDigestJob } from '../../examples/sample-app/jobs/occurrence-digest';
import { defineJob, defineWorker } from '../../functions/index';
import { JobTimeoutError } from '../../functions/protocol/errors';
import type { Occurrence } from '../../functions/protocol/occurrence';
import type { JobDefinition } from '../../functions/protocol/ports';
import { fakeOccurrence, JobDidNotStopError, recordingLogger, testJob } from '../../testing';

const echo: JobDefinition = {
  reportExtension: 'txt',
  async run(occurrence, { logger }) {
    logger.info('started', { attempt: occurrence.attempt });
    logger.warn('slow upstream');
    return { body: `${occurrence.jobId} at ${occurrence.scheduledTime}`, contentType: 'text/plain' };
  },
};

/** Waits `ms` unless the signal aborts first; then rejects with the signal's reason, as a well-behaved job does. */
const waitJob = (ms: number): JobDefinition => ({
  reportExtension: 'txt',
  async run(_occurrence, { signal }) {
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
    return { body: 'done', contentType: 'text/plain' };
  },
});

describe('Function: testJob', () => {
  describe('a run that completes', () => {
    it('returns the report and every log entry with its level, message and fields', async () => {
      const result = await testJob(echo);
      expect(result.aborted).toBe(false);
      expect(result.report).toEqual({ body: 'test-job at 2026-01-01T06:00:00Z', contentType: 'text/plain' });
      expect(result.logs.map(({ level, message, fields }) => ({ level, message, fields }))).toEqual([
        { level: 'info', message: 'started', fields: { attempt: 1 } },
        { level: 'warn', message: 'slow upstream', fields: {} },
      ]);
      expect(result.occurrence.status).toBe('RUNNING');
    });

    it("runs the handler defineJob returns (its definition) on the given occurrence's fields", async () => {
      const handler = defineJob(echo);
      const { report, occurrence } = await testJob(handler, {
        occurrence: { jobId: 'daily', scheduledTime: '2026-11-30T06:00:00Z', attempt: 2 },
      });
      expect(report.body).toBe('daily at 2026-11-30T06:00:00Z');
      expect(occurrence.attempt).toBe(2);
    });

    it('dates the default occurrence and the log entries by the injected clock', async () => {
      const clock = { now: () => Date.parse('2026-03-29T01:30:00.250Z') };
      const { occurrence, logs } = await testJob(echo, { clock });
      expect(occurrence.scheduledTime).toBe('2026-03-29T01:30:00Z');
      expect(logs.map((entry) => entry.at)).toEqual([clock.now(), clock.now()]);
    });

    it('runs the sample digest on rows a fake reader serves, as a job of your own would be tested', async () => {
      const row = (scheduledTime: string, status: Occurrence['status']) =>
        fakeOccurrence({ jobId: 'exports', scheduledTime, status, attempt: 1 });
      const rows = [row('2026-11-29T08:00:00Z', 'SUCCEEDED'), row('2026-11-29T09:00:00Z', 'FAILED')];
      const job = occurrenceDigestJob(
        () => ({
          listByStatus: async (status) => rows.filter((r) => r.status === status && status !== 'SUCCEEDED'),
          listJobNewestFirst: async (jobId) => rows.filter((r) => r.jobId === jobId && r.status === 'SUCCEEDED'),
        }),
        ['exports'],
      );
      const { report, logs } = await testJob(job, { occurrence: { scheduledTime: '2026-11-30T06:00:00Z' } });
      expect(report.contentType).toBe('text/markdown; charset=utf-8');
      expect(report.body).toContain('| exports | 0 | 0 | 0 | 1 | 1 |');
      expect(logs.at(-1)).toMatchObject({ message: 'digest collected', fields: { occurrences: 2 } });
    });
  });

  describe('abort', () => {
    it('aborts the signal after abortAfterMs with a JobTimeoutError, and reports the job that stopped', async () => {
      const result = await testJob(waitJob(10_000), { abortAfterMs: 20 });
      expect(result.aborted).toBe(true);
      expect(result.aborted && result.error).toBeInstanceOf(JobTimeoutError);
      expect(result.durationMs).toBeLessThan(2_000);
    });

    it("aborts when the test's own signal aborts, with its reason", async () => {
      const controller = new AbortController();
      const reason = new Error('lease lost');
      const job: JobDefinition = {
        reportExtension: 'txt',
        async run(occurrence, context) {
          context.logger.info('step 1');
          controller.abort(reason);
          return waitJob(10_000).run(occurrence, context);
        },
      };
      const result = await testJob(job, { signal: controller.signal });
      expect(result).toMatchObject({ aborted: true, error: reason });
      expect(result.logs.map((e) => e.message)).toEqual(['step 1']);
    });

    it('fails with JobDidNotStopError when the job ignores the abort past stopWithinMs', async () => {
      const stubborn: JobDefinition = {
        reportExtension: 'txt',
        run: () => new Promise(() => undefined),
      };
      const run = testJob(stubborn, { abortAfterMs: 10, stopWithinMs: 30 });
      await expect(run).rejects.toBeInstanceOf(JobDidNotStopError);
      await expect(run).rejects.toThrow(/did not stop within 30 ms of its signal's abort/);
    });

    it('returns a report made after the abort with aborted: true (the worker would not commit it)', async () => {
      const late: JobDefinition = {
        reportExtension: 'txt',
        async run(_o, { signal }) {
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
          return { body: 'late', contentType: 'text/plain' };
        },
      };
      expect(await testJob(late, { abortAfterMs: 5 })).toMatchObject({ aborted: true, report: { body: 'late' } });
    });
  });

  describe('a job that throws', () => {
    it("rejects with the job's own error; a recordingLogger of the test's keeps what it logged", async () => {
      const boom = new Error('upstream down');
      const failing: JobDefinition = {
        reportExtension: 'txt',
        async run(_o, { logger }) {
          logger.error('fetching orders failed', { status: 503 });
          throw boom;
        },
      };
      const logger = recordingLogger();
      await expect(testJob(failing, { logger })).rejects.toBe(boom);
      expect(logger.entries).toMatchObject([
        { level: 'error', message: 'fetching orders failed', fields: { status: 503 } },
      ]);
    });

    it('rejects a job that throws before its first await, as the worker counts it a failed attempt', async () => {
      const sync = {
        reportExtension: 'txt',
        run: () => {
          throw new Error('bad config');
        },
      };
      await expect(testJob(sync)).rejects.toThrow('bad config');
    });
  });

  describe('bad input', () => {
    it.each([
      ['nothing', undefined, 'testJob: a job is an object with run(occurrence, { signal, logger })'],
      ['an object without run', { reportExtension: 'md' }, 'testJob: a job is an object with run'],
      [
        'a wrong reportExtension',
        { reportExtension: '.md', run: async () => ({ body: '', contentType: 'text/plain' }) },
        `testJob.reportExtension: must be 1-16 letters or digits such as 'md' or 'json', got ".md"`,
      ],
    ])('rejects %s with a TypeError', async (_what, job, message) => {
      await expect(testJob(job as never)).rejects.toThrow(TypeError);
      await expect(testJob(job as never)).rejects.toThrow(message);
    });

    it("rejects defineWorker's handler: it runs several jobs, so name one", async () => {
      const worker = defineWorker({ jobs: { echo } });
      await expect(testJob(worker as never)).rejects.toThrow(/pass one of its jobs/);
    });

    it('rejects a report that is not { body, contentType }', async () => {
      const wrong = { reportExtension: 'txt', run: async () => 'just text' } as unknown as JobDefinition;
      await expect(testJob(wrong)).rejects.toThrow(
        'testJob: run resolved to "just text"; a job returns its report as { body: string | Uint8Array, contentType: string }',
      );
    });

    it('rejects an abortAfterMs that is not a number of milliseconds', async () => {
      await expect(testJob(echo, { abortAfterMs: -1 })).rejects.toThrow('testJob: abortAfterMs must be');
    });
  });
});
