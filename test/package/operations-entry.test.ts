/**
 * The operations entry point (operations/index.ts, `scheduled-jobs-stack/operations`) is enough on its own: an
 * operator's tool that imports nothing else of the package, only the AWS SDK clients, pauses, describes, resumes,
 * runs and retries a deployed job. On moto, with the table, queues and schedules a deployed ScheduledJobs has.
 */
import { GetScheduleCommand } from '@aws-sdk/client-scheduler';
import { STSClient } from '@aws-sdk/client-sts';
import { describe, expect, it } from 'vitest';
import {
  bulkRetry,
  connectJobOperations,
  describeJob,
  JobNotFoundError,
  type JobOperations,
  newBulkId,
  pauseJob,
  resumeJob,
  retryOccurrence,
  runJobNow,
  selectOccurrences,
} from '../../operations';
import { GROUP, HOURLY, messagesIn, OTHER_WORKER, putRows, row, useCliEmulator, WORKER } from '../cli/support';

const emulator = useCliEmulator({ deployed: true });
const MOTO_CREDENTIALS = { accessKeyId: 'l', secretAccessKey: 'l' };
// One instant for every action: no fire time falls between the pause and the resume.
const NOW = Date.parse('2026-12-01T09:15:00Z');

function operations(): JobOperations {
  const { clients, resources } = emulator;
  return connectJobOperations({
    tableName: resources.tableName,
    scheduleGroupName: GROUP,
    workerQueueUrls: { [WORKER]: resources.jobQueueUrl, [OTHER_WORKER]: emulator.otherQueueUrl },
    clients: {
      dynamoDb: clients.dynamo,
      scheduler: clients.scheduler,
      sqs: clients.sqs,
      sts: new STSClient({ endpoint: emulator.moto.endpoint, region: 'us-east-1', credentials: MOTO_CREDENTIALS }),
    },
    clock: { now: () => NOW },
  });
}

async function scheduleState(jobId: string): Promise<string | undefined> {
  const out = await emulator.clients.scheduler.send(new GetScheduleCommand({ GroupName: GROUP, Name: jobId }));
  return out.State;
}

describe('the operations entry point, with only the adapters connectJobOperations builds', () => {
  it('pauses a job (its schedule DISABLED), describes it as paused, refuses to run it, and resumes it', async () => {
    const ops = operations();

    const paused = await pauseJob(ops, HOURLY, { note: 'database migration', by: 'alice' });
    expect(paused).toMatchObject({ outcome: 'paused', state: { pausedBy: 'alice', pauseNote: 'database migration' } });
    expect(await scheduleState(HOURLY)).toBe('DISABLED');

    const job = await ops.job(HOURLY);
    expect(job.route.worker).toBe(WORKER);
    const description = await describeJob(ops, job);
    expect(description.paused).toBe(true);
    expect(description.next[0]).toBe('2026-12-01T10:00:00Z');

    expect(await runJobNow(ops, job, { by: 'alice' })).toMatchObject({ outcome: 'refused' });

    const resumed = await resumeJob(ops, job, { by: 'alice' });
    expect(resumed.outcome).toBe('resumed');
    expect(await scheduleState(HOURLY)).toBe('ENABLED');
  });

  it("runs a job now: an occurrence recorded at now and a message on its worker's queue", async () => {
    const ops = operations();

    const run = await runJobNow(ops, await ops.job(HOURLY), { by: 'alice' });

    expect(run).toEqual({ outcome: 'recorded', scheduledTime: '2026-12-01T09:15:00Z' });
    expect(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)).toEqual([
      expect.objectContaining({ jobId: HOURLY, scheduledTime: '2026-12-01T09:15:00Z' }),
    ]);
  });

  it('retries a FAILED occurrence: reopened as PENDING and enqueued', async () => {
    const ops = operations();
    const scheduledTime = '2026-12-01T08:00:00Z';
    await putRows(emulator.clients, emulator.resources.tableName, [
      row(HOURLY, scheduledTime, 'FAILED', NOW, { lastError: 'upstream down' }),
    ]);

    const job = await ops.job(HOURLY);
    const retried = await retryOccurrence(ops.retryDeps(job), { jobId: HOURLY, scheduledTime }, { force: false });

    expect(retried.outcome).toBe('reopened');
    expect(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)).toEqual([
      expect.objectContaining({ jobId: HOURLY, scheduledTime }),
    ]);
  });

  it('bulk-retries the FAILED occurrences of a range, recording the STS caller as who did it', async () => {
    const ops = operations();
    const times = ['2026-12-01T06:00:00Z', '2026-12-01T07:00:00Z'];
    await putRows(
      emulator.clients,
      emulator.resources.tableName,
      times.map((t) => row(HOURLY, t, 'FAILED', NOW)),
    );
    const job = await ops.job(HOURLY);

    const rows = await selectOccurrences(ops.occurrences, job, {
      jobId: HOURLY,
      statuses: ['FAILED'],
      from: '2026-12-01T00:00:00Z',
      to: '2026-12-02T00:00:00Z',
    });
    const by = await ops.operator();
    const result = await bulkRetry(ops.retryDeps(job), rows, { bulkId: newBulkId(), by });

    // moto answers GetCallerIdentity with its default user.
    expect(by).toMatch(/^.+@.+ \(arn:aws:(iam|sts)::\d{12}:.+\)$/);
    expect(result).toMatchObject({ total: 2, acted: 2, refused: [], failed: [] });
    expect(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)).toHaveLength(2);
  });

  it('names the jobs the schedule group has when asked for one it does not', async () => {
    const error = await operations()
      .job('no-such-job')
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(JobNotFoundError);
    expect((error as JobNotFoundError).message).toContain('hourly-report');
  });
});
